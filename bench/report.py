"""Turns ``report.json`` into ``report.md`` (headline ratios, then every query) and ``ratios.png``.

Ratios are vanilla ÷ extension, so above 1 means the extension is faster. Queries where no rule
fired run the same plan both ways: their ratios are pure run-to-run noise, and their central 95%
(2.5th to 97.5th percentile, per broadcast setting) is the report's noise band. A query where a rule
fired counts as slower beyond noise when its ratio is below that band and also below 1 by more than
twice its own noise (relative median absolute deviation of either side's timed runs).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd


def _geomean(xs) -> float:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def statistics_line(stats: dict | None) -> str:
    """One sentence on the statistics the rules' cost guards saw: the sketch pass's time per kind and
    broadcast setting (each setting is its own Spark process and takes its own pass), or none.

    >>> print(statistics_line({"setting": "sketch", "sketch_s": {"on": {"tpch": 1.31}, "off": {"tpch": 1.0}},
    ...                        "sketched": {"tpch": 8}, "not_sketched": []}))  # doctest: +NORMALIZE_WHITESPACE
    Statistics: the sketch pass over every table (tpch 8), taken once per Spark process before anything
    was planned or timed (in no query's time): broadcast on: tpch 1.3 s; broadcast off: tpch 1.0 s.
    >>> print(statistics_line({"setting": "none"})[:37])
    Statistics: none (`--statistics none`
    """
    if not stats:
        return "Statistics: not recorded (a report from before `--statistics`)."
    if stats["setting"] == "none":
        return ("Statistics: none (`--statistics none`): no sketch pass, estimates from file metadata only; "
                "rules whose cost guard needs row and distinct counts do not fire.")
    if not stats.get("sketched"):
        return "Statistics: sketch pass asked for, but no TPC-H / TPC-DS tables in this run (synthetic tables are not files)."
    times = "; ".join(f"broadcast {b}: " + ", ".join(f"{k} {v:.1f} s" for k, v in ks.items())
                      for b, ks in stats["sketch_s"].items())
    kinds = ", ".join(f"{k} {n}" for k, n in stats["sketched"].items())
    line = (f"Statistics: the sketch pass over every table ({kinds}), taken once per Spark process before "
            f"anything was planned or timed (in no query's time): {times}.")
    if stats.get("not_sketched"):
        line += " Not sketched: " + "; ".join(stats["not_sketched"]) + "."
    return line


def rules_fired(results: list[dict]) -> list[str]:
    """Markdown lines: per rule, the queries it fired on (with their ratios, vanilla ÷ extension), and
    per broadcast setting the geometric mean of those ratios with how many queries it is over.

    >>> e = lambda n, b, f, r: {"kind": "tpch", "name": n, "broadcast": b, "fired": f, "ratio": r}
    >>> print("\\n".join(rules_fired([e("q1", "on", ["A"], 2.0), e("q2", "on", ["A", "B"], 0.5),
    ...                               e("q3", "on", [], 1.0), e("q1", "off", ["A"], 1.0)])))
    * `A`: tpch:q1 (broadcast on 2.00, off 1.00), tpch:q2 (broadcast on 0.50)
      * geomean ratio, broadcast on: 1.000 over 2 queries; broadcast off: 1.000 over 1 query
    * `B`: tpch:q2 (broadcast on 0.50)
      * geomean ratio, broadcast on: 0.500 over 1 query
    >>> rules_fired([e("q3", "on", [], 1.0)])
    ['No rule fired on any query.']
    """
    by: dict[str, dict[str, dict[str, float | None]]] = {}  # rule -> query -> broadcast -> ratio
    for e in results:
        if "error" in e:
            continue
        for rule in e.get("fired") or []:
            by.setdefault(rule, {}).setdefault(f"{e['kind']}:{e['name']}", {})[e["broadcast"]] = e.get("ratio")
    if not by:
        return ["No rule fired on any query."]
    lines = []
    for rule in sorted(by):
        qs = by[rule]
        listed = []
        for q, rs in qs.items():
            shown = ", ".join(f"{b} {r:.2f}" if r is not None else f"{b} planned only" for b, r in rs.items())
            listed.append(f"{q} (broadcast {shown})")
        lines.append(f"* `{rule}`: " + ", ".join(listed))
        means = []
        for b in dict.fromkeys(b for rs in qs.values() for b in rs):
            ratios = [rs[b] for rs in qs.values() if rs.get(b) is not None]
            if ratios:
                means.append(f"broadcast {b}: {_geomean(ratios):.3f} over {len(ratios)} quer{'y' if len(ratios) == 1 else 'ies'}")
        if means:
            lines.append("  * geomean ratio, " + "; ".join(means))
    return lines


def _tpc_by_broadcast(results: list[dict]) -> dict[str, list[dict]]:
    """The TPC-H and TPC-DS entries that planned without error, per broadcast setting."""
    by: dict[str, list[dict]] = {}
    for e in results:
        if "error" not in e and e["kind"] in ("tpch", "tpcds"):
            by.setdefault(e["broadcast"], []).append(e)
    return by


def planning_summary(results: list[dict]) -> pd.DataFrame:
    """Planning overhead per broadcast setting, over the TPC-H and TPC-DS queries planned both ways
    (the synthetic cases are the rules' own showcases, not a workload): the optimizer
    phase (sum of per-query medians) with the rewrites off and on; the extension's rules' own time as
    Spark's tracker attributes it; the explain provider as Spark calls it for every executed query
    (the description it records: a one-line pointer unless ``spark.arrnf.explain.sqlUi=true``); and
    the ArrNF explain section, built when a plan is explained. Also the statistics' part of the
    extension's planning (its cost guards' estimates, ``statistics_ms``) and its share of that whole
    planning (every phase, sums of per-query medians).

    >>> e = {"kind": "tpch", "broadcast": "on", "off": {"optimization_ms": 100},
    ...      "on": {"optimization_ms": 104, "planning_ms": 150, "rules_ms": 2.0, "recorded_description_ms": 0.5,
    ...             "explain_ms": 10.0, "statistics_ms": 3.0}}
    >>> cols = ["measured ratio", "rules ratio", "rules + recorded description ratio", "rules + explain ratio",
    ...         "statistics share of planning"]
    >>> planning_summary([e])[cols].round(3).values.tolist()
    [[1.04, 1.02, 1.025, 1.12, 0.02]]
    """
    rows = []
    for b, es in _tpc_by_broadcast(results).items():
        off = sum(e["off"]["optimization_ms"] for e in es)
        on = sum(e["on"]["optimization_ms"] for e in es)
        rules = sum(e["on"].get("rules_ms") or 0.0 for e in es)
        recorded = sum(e["on"].get("recorded_description_ms") or 0.0 for e in es)
        explain = sum(e["on"].get("explain_ms") or 0.0 for e in es)
        spark_explain = sum(e["on"].get("spark_explain_ms") or 0.0 for e in es)
        statistics = sum(e["on"].get("statistics_ms") or 0.0 for e in es)
        planning = sum(e["on"].get("planning_ms") or 0 for e in es)
        rows.append({
            "broadcast": b, "queries": len(es), "vanilla optimizer ms": off, "extension optimizer ms": on,
            "measured ratio": on / off, "rules ms (tracker)": rules, "rules ratio": (off + rules) / off,
            "recorded description ms": recorded, "rules + recorded description ratio": (off + rules + recorded) / off,
            "explain ms": explain, "rules + explain ratio": (off + rules + explain) / off,
            "Spark's explain ms": spark_explain,
            "statistics in planning ms": statistics,
            "statistics share of planning": statistics / planning if planning else None,
        })
    return pd.DataFrame(rows)


def planning_by_rule(results: list[dict]) -> pd.DataFrame:
    """Each rule's own planning time per broadcast setting (Spark's tracker; sums over the TPC-H and
    TPC-DS queries of per-query medians), and its share of vanilla's optimizer time: where the
    rules' overhead goes.

    >>> e = {"kind": "tpcds", "broadcast": "on", "off": {"optimization_ms": 200},
    ...      "on": {"rule_ms": {"EagerAggregation": 6.0, "FoldValueTerms": 2.0}}}
    >>> planning_by_rule([e]).values.tolist()
    [['on', 'EagerAggregation', 6.0, 0.03], ['on', 'FoldValueTerms', 2.0, 0.01]]
    """
    rows = []
    for b, es in _tpc_by_broadcast(results).items():
        off = sum(e["off"]["optimization_ms"] for e in es) or 1
        totals: dict[str, float] = {}
        for e in es:
            for rule, ms in (e["on"].get("rule_ms") or {}).items():
                totals[rule] = totals.get(rule, 0.0) + ms
        for rule, ms in sorted(totals.items(), key=lambda x: -x[1]):
            rows.append({"broadcast": b, "rule": rule, "ms (tracker)": ms, "share of vanilla optimizer": ms / off})
    return pd.DataFrame(rows, columns=["broadcast", "rule", "ms (tracker)", "share of vanilla optimizer"])


def frame(results: list[dict]) -> pd.DataFrame:
    rows = []
    for e in results:
        if "error" in e:
            rows.append({"kind": e["kind"], "query": e["name"], "broadcast": e["broadcast"], "error": e["error"]})
            continue
        off, on = e["off"], e["on"]
        arr_off, arr_on = off.get("arrnf") or {}, on.get("arrnf") or {}
        rows.append({
            "kind": e["kind"], "query": e["name"], "broadcast": e["broadcast"],
            "vanilla_s": off["median_s"], "arrnf_s": on["median_s"], "ratio": e["ratio"],
            "runs": len(on["runs_s"]), "noise": max(off["noise"], on["noise"]),
            "opt_ms_vanilla": off["optimization_ms"], "opt_ms_arrnf": on["optimization_ms"],
            "explain_ms": on.get("explain_ms", 1000 * (on.get("arrnf_s") or 0)),
            "exchange": f"{off['physical']['exchange']}→{on['physical']['exchange']}",
            "sort": f"{off['physical']['sort']}→{on['physical']['sort']}",
            "join": f"{off['physical']['join']}→{on['physical']['join']}",
            "aggregate": f"{off['physical']['aggregate']}→{on['physical']['aggregate']}",
            "arrangements": f"{arr_off.get('arrangements', '?')}→{arr_on.get('arrangements', '?')}",
            "est_bytes": f"{arr_off.get('bytes', '?')}→{arr_on.get('bytes', '?')}",
            "fired": ",".join(e.get("fired") or []),
            "error": "",
        })
    df = pd.DataFrame(rows)
    if "ratio" not in df:
        return df
    # The noise band of each broadcast setting: identical plans differ from ratio 1 by noise only.
    same = df[(df["fired"] == "") & df["ratio"].notna()]
    lo = same.groupby("broadcast")["ratio"].quantile(0.025)
    hi = same.groupby("broadcast")["ratio"].quantile(0.975)
    df["band_lo"] = df["broadcast"].map(lo).fillna(1.0)
    df["band_hi"] = df["broadcast"].map(hi).fillna(1.0)
    df["slower"] = (df["fired"] != "") & (df["ratio"] < df["band_lo"]) & (df["ratio"] < 1 / (1 + 2 * df["noise"]))
    return df


def write_report(folder: Path) -> None:
    data = json.loads((folder / "report.json").read_text())
    df = frame(data["queries"])
    m = data["machine"]
    ok = df[df["error"] == ""] if "error" in df else df
    lines = [
        "# pyspark-arrnf vs vanilla Spark",
        "",
        f"Machine: {m['cpus']} cores, {m['memory_gib']} GiB, {m['platform']}; {m['java']}; PySpark {m['pyspark']}; "
        f"master {m['master']}, driver memory {m['driver_memory']}, {m['shuffle_partitions']} shuffle partitions.",
        f"Data: TPC-H / TPC-DS at scale factor {m['scale_factor']:g} (tpchgen-cli / tpcgen-cli), synthetic cases at "
        f"{m['synthetic_scale']:g}× their issue size. {m['warmup']} untimed warm-up run(s) of each side, then {m['runs']} timed runs "
        f"of each side where a rule fired and {m.get('same_plan_runs', m['runs'])} where none did (same plan: the noise "
        f"control), alternating; planning timed {m.get('plan_runs', m['runs'])}× per side without executing. "
        f"One Spark process per broadcast setting. Run {m['date']}.",
        statistics_line(data.get("statistics")),
        "Ratios are vanilla time ÷ extension time (above 1: the extension is faster). Not official TPC results.",
        "",
        "## Headline",
        "",
        "| broadcast | queries | rules fired in | geomean ratio, all | geomean ratio, where a rule fired | best | worst where a rule fired | noise band (same plan, 2.5–97.5%) | slower beyond noise |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for b, g in ok.groupby("broadcast", sort=False):
        best = g.loc[g["ratio"].idxmax()]
        f = g[g["fired"] != ""]
        worst = f.loc[f["ratio"].idxmin()] if len(f) else None
        slower = g[g["slower"]]
        lines.append(
            f"| {b} | {len(g)} | {len(f)} | {_geomean(g['ratio']):.3f} | {_geomean(f['ratio']):.3f} | "
            f"{best['kind']}:{best['query']} {best['ratio']:.2f} | "
            f"{f'{worst.kind}:{worst.query} {worst.ratio:.2f}' if worst is not None else '-'} | "
            f"{g['band_lo'].iloc[0]:.2f}–{g['band_hi'].iloc[0]:.2f} | "
            f"{', '.join(f'{r.kind}:{r.query} {r.ratio:.2f}' for r in slower.itertuples()) or 'none'} |"
        )
    lines += ["", "## Planning overhead", "",
              "Sums over the TPC-H and TPC-DS queries of per-query medians. \"measured\": the optimizer phase timed with the rewrites "
              "off and on; \"rules\": vanilla plus the extension's rules' own time (Spark's tracker); \"recorded description\": "
              "the explain provider as Spark calls it for every executed query (for the plan description it records, at the "
              "start and after each adaptive re-plan; timed per call): a one-line pointer by default, the section with "
              "`spark.arrnf.explain.sqlUi=true`; \"explain\": the ArrNF explain section, timed inside the JVM: built when a "
              "plan is explained (`df.explain()`, `EXPLAIN`), once per plan. \"Spark's explain\": "
              "for scale, Spark's own `explain(\"extended\")` text of the same plans, timed the same way.", "",
              planning_summary(data["queries"]).to_markdown(index=False, floatfmt=".3f")]
    by_rule = planning_by_rule(data["queries"])
    if len(by_rule):
        lines += ["", "Per rule:", "", by_rule.to_markdown(index=False, floatfmt=".3f")]
    fired = ok[ok["fired"] != ""]
    lines += ["", "## Where rules fired", "", "Per rule, the queries it fired on with their ratios (vanilla ÷ extension), "
              "and per broadcast setting the geometric mean of those ratios.", "", *rules_fired(data["queries"])]
    if len(fired):
        lines += ["", "Every query where a rule fired:", "",
                  fired.drop(columns=["error", "slower", "band_lo", "band_hi"]).to_markdown(index=False, floatfmt=".3f")]
    errors = df[df["error"] != ""] if "error" in df else df.iloc[0:0]
    if len(errors):
        lines += ["", "## Errors", ""] + [f"* {r.kind}:{r.query} ({r.broadcast}): {r.error}" for r in errors.itertuples()]
    lines += ["", "## Every query", "", ok.drop(columns=["error", "band_lo", "band_hi"]).to_markdown(index=False, floatfmt=".3f"), ""]
    (folder / "report.md").write_text("\n".join(lines))
    _plot(ok, folder / "ratios.png")


def _plot(df: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(10, len(df) * 0.06), 4.5))
    for (b, g), color in zip(df.groupby("broadcast", sort=False), ("tab:blue", "tab:orange")):
        x = range(len(g))
        same = (g["fired"] == "").to_numpy()
        ax.plot([i for i in x if same[i]], g["ratio"][same], marker=".", linestyle="", markersize=3, color=color,
                alpha=0.5, label=f"broadcast {b}: same plan (noise)")
        ax.plot([i for i in x if not same[i]], g["ratio"][~same], marker="o", linestyle="", markersize=6,
                color=color, label=f"broadcast {b}: a rule fired")
        ax.axhspan(g["band_lo"].iloc[0], g["band_hi"].iloc[0], color=color, alpha=0.08)
        for i, (q, r) in enumerate(zip(g["query"], g["ratio"])):
            if not same[i]:
                ax.annotate(q, (i, r), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("vanilla ÷ extension run time (log)")
    ax.set_xlabel("query (TPC-H, TPC-DS, synthetic in order)")
    ax.set_title("pyspark-arrnf: per-query run-time ratio (above 1 = faster)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
