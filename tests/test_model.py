"""The data model (model.py) without Spark: JSON read and written back unchanged, the text form and
the arrangements taken from the JSON as they are (Python renders neither), measured reports, and
JSON from a jar that does not match the package."""
from __future__ import annotations

import json

import pytest

from pyspark_arrnf.examples import EXAMPLE_JSON, EXAMPLE_MEASURED_JSON
from pyspark_arrnf.model import Measured, Measurement, Program


@pytest.mark.parametrize("raw", [EXAMPLE_JSON, EXAMPLE_MEASURED_JSON], ids=["plain", "measured"])
def test_json_round_trips_unchanged(raw):
    p = Program.from_json(raw)
    assert p.to_json() == raw
    again = Program.from_json(p.to_json())
    assert again == p and again.to_json() == raw
    assert json.loads(p.to_json(indent=2)) == json.loads(raw)


def test_texts_and_arrangements_are_read_not_rendered():
    """Whatever the JSON says is what ``str()`` and ``arrangements`` give, and what is written back."""
    d = json.loads(EXAMPLE_MEASURED_JSON)
    d["text"], d["arrangements"] = "PROGRAM TEXT\n", 41
    d["blocks"][0]["text"], d["blocks"][1]["text"] = "BLOCK 0", "BLOCK 1\n  -- a note"
    p = Program.from_dict(d)
    assert str(p) == "PROGRAM TEXT\n" and p.arrangements == 41 and "41 arrangements" in repr(p)
    assert [str(b) for b in p.blocks] == ["BLOCK 0", "BLOCK 1\n  -- a note"]
    assert json.loads(p.to_json()) == d
    # the pieces of the model have no text form of their own
    for piece in (p.blocks[0].head, p.blocks[1].branches[0], p.blocks[1].branches[0].unary[0],
                  p.blocks[0].measured, p.measurement):
        assert "__str__" not in type(piece).__dict__, type(piece)


@pytest.mark.parametrize("where", ["program", "block"])
def test_json_without_texts_is_from_a_jar_that_does_not_match(where):
    d = json.loads(EXAMPLE_JSON)
    (d if where == "program" else d["blocks"][1]).pop("text")
    with pytest.raises(ValueError, match=r"jar is older than this pyspark-arrnf package.*dev/setup"):
        Program.from_dict(d)


def test_other_format_checks():
    d = json.loads(EXAMPLE_JSON)
    with pytest.raises(ValueError, match="not an ArrNF program"):
        Program.from_dict({**d, "format": "other"})
    with pytest.raises(ValueError, match="version 4 is newer"):
        Program.from_dict({**d, "version": 4})


def test_measured_report():
    p = Program.from_json(EXAMPLE_MEASURED_JSON)
    assert isinstance(p.blocks[0].measured, Measured) and isinstance(p.measurement, Measurement)
    assert p["q.tmp0"].measured.operators == [0, 1] and p.measurement.operator(1).node == "Exchange"
    assert str(p["q.tmp0"]).splitlines()[1].startswith("  -- measured: rows=10  bytes=800B  peak=800B")
    assert str(p).rstrip("\n").splitlines()[-1].startswith("-- measured: 2 stateful operators")
    m = p["q.tmp0"].measured
    assert (m.rows, m.bytes, m.state_operator) == (10, 800, 0) and p["q"].measured.bytes is None
    assert [(o.what, o.state_rows, o.state_bytes) for o in p.measurement.operators] == [
        ("hash aggregate (final)", 10, 800), ("shuffle", 10, 160)]
    frame = p.cost_frame()
    assert list(frame["peak_memory"]) == [800, 0] and list(frame["measured_bytes"])[0] == 800
    assert round(list(frame["ratio"])[0], 2) == 6.67
    assert list(frame["spark"]) == ["hash aggregate (final), shuffle", "none"]
    assert (p.realized, p.built_blocks) == (2, 1) and repr(p).endswith(
        "2 blocks, Spark builds 2 stateful operators in 1 blocks (differential model: 1 arrangements), 0 opaque>")
    plain = Program.from_json(EXAMPLE_JSON)
    assert "peak_memory" not in plain.cost_frame().columns


def test_stream_fields_are_kept_and_collected_rows_are_not_json():
    d = json.loads(EXAMPLE_MEASURED_JSON)
    d["measurement"].update({"batch_id": 4, "settled": False})
    p = Program.from_dict(d)
    assert (p.measurement.batch_id, p.measurement.settled) == (4, False)
    p.measurement.rows = [(1,), (2,)]
    assert json.loads(p.to_json()) == d and Program.from_json(p.to_json()) == p


def test_fields_of_a_newer_jar_are_written_back_in_their_places():
    """Fields may be added within a version: the ones this package does not read are kept where
    they were (``unknown``), so a newer jar's JSON still round-trips byte for byte."""
    d = json.loads(EXAMPLE_MEASURED_JSON)
    d = {"first": 0, **d}
    d = {k: v for pair in d.items() for k, v in ([pair, ("later", 3)] if pair[0] == "arrangements" else [pair])}
    b = d["blocks"][0]
    d["blocks"][0] = {k: v for pair in b.items()
                      for k, v in ([pair, ("later", [{"id": 0, "what": "hash table"}])]
                                   if pair[0] == "notes" else [pair])}
    d["blocks"][0]["branches"][0]["leaf"]["stats"] = {"rows": 10}
    d["measurement"]["operators"][1] = {**d["measurement"]["operators"][1], "what": "shuffle files"}
    raw = json.dumps(d, ensure_ascii=False, separators=(",", ":"))
    p = Program.from_json(raw)
    assert p.to_json() == raw and Program.from_json(p.to_json()) == p
    assert p.unknown["later"] == ("arrangements", 3) and p.blocks[0].unknown["later"][0] == "notes"
    assert str(p) == d["text"] and "unknown" not in repr(p.blocks[0])


def test_pictures_name_the_extra_they_need(monkeypatch):
    """Without matplotlib or graphviz, one message naming ``pyspark-arrnf[viz]``, not an ImportError."""
    import sys

    import pyspark_arrnf
    from pyspark_arrnf import ArrnfSetupError

    p = Program.from_json(EXAMPLE_MEASURED_JSON)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    with pytest.raises(ArrnfSetupError, match=r"^plot\(\) needs matplotlib: pip install 'pyspark-arrnf\[viz\]'$"):
        pyspark_arrnf.measure.plot(p)
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(ArrnfSetupError, match=r"^to_svg\(\) needs the graphviz Python package: pip install 'pyspark-arrnf\[viz\]'"):
        p.to_svg()
    assert p.to_dot().startswith("digraph arrnf {")  # needs neither


def test_measure_plot_as_the_readme_calls_it():
    """``pyspark_arrnf.measure`` is the function; ``pyspark_arrnf.measure.plot`` is the chart."""
    import pyspark_arrnf
    from pyspark_arrnf.measure import plot

    assert pyspark_arrnf.measure.plot is plot
    fig = pyspark_arrnf.measure.plot(Program.from_json(EXAMPLE_MEASURED_JSON))
    assert fig.axes[0].get_title().startswith("ArrNF q:")
