"""The ArrNF normalizer and ``arrnf()``: structure of the seed's examples, every TPC-H / TPC-DS query,
the text form (the JVM's, in the JSON), JSON round trips, streaming, bad input, unknown nodes,
explain, views."""
from __future__ import annotations

import re

import json

import pytest

from pyspark_arrnf import ArrnfError, Program, _jvm, arrnf
from pyspark_arrnf.data import queries
from pyspark_arrnf.model import Get, Join, Opaque

ARRANGING = {"ArrangeBy", "Reduce", "Distinct", "TopK", "Threshold"}
STATELESS = {"Map", "Filter", "Project", "FlatMap"}
NCOLS = 21


def seed_l4_sql() -> str:
    cols = ", ".join(f"c{i}" for i in range(2, NCOLS))
    l2cols = ", ".join(f"l2.c{i}" for i in range(2, NCOLS))
    return (f"select {cols} from l1 union all select {cols} from l3 "
            f"except all "
            f"select {l2cols} from l2 join (select distinct c0 from l3) d on l2.c0 = d.c0")


# Where a block's rows come from (README, "Sizes and their sources").
_LEAF = r"(catalog|file metadata(, sketch)?|sketch|cache|exact|data source)"
SOURCE = re.compile(rf"none|unknown(: .+)?|{_LEAF}(; .+)?|estimate: {_LEAF}(, {_LEAF})*|"
                    r"estimate: the plan's shape, such as a global aggregate's one row or a limit")


def check_well_formed(p: Program) -> None:
    """ArrNF's grammar: at most one arrangement-forming operator per block (the head), a stateless
    body of [Negate] Unary* Leaf branches, joins of arranged inputs, blocks in dependency order."""
    seen: dict[str, object] = {}
    for b in p.blocks:
        assert b.head is None or b.head.kind in ARRANGING, b.head
        assert b.branches, b.name
        for br in b.branches:
            assert all(u.op in STATELESS for u in br.unary), (b.name, br.unary)
            leaf = br.leaf
            if isinstance(leaf, Join):
                assert len(leaf.inputs) == 2
                for g in leaf.inputs:
                    assert isinstance(g, Get) and g.source in ("block", "cache"), g
                    if g.source == "block":  # a join input is an arrangement
                        assert seen[g.name].head is not None and seen[g.name].head.kind in ("ArrangeBy", "Reduce", "Distinct"), (b.name, g.name)
        for name in b.reads():
            assert name in seen, f"{b.name} reads {name} before it is defined"
        seen[b.name] = b
        assert b.cost.arrangements == 0 if b.head is None else b.cost.arrangements >= 1
        assert SOURCE.fullmatch(b.cost.source), b.cost.source
        assert (b.cost.rows is None) == (b.cost.source == "none" or b.cost.source.startswith("unknown")), b.cost
    assert len(seen) == len(p.blocks), "block names are unique"


def test_seed_worked_example_l4_with_except_all(spark, seed_tables):
    p = arrnf(seed_l4_sql(), spark, name="l4")
    check_well_formed(p)
    by_kind = {}
    for b in p.blocks:
        by_kind.setdefault(b.head.kind if b.head else None, []).append(b)
    # the seed's l4.tmp0: Distinct (Project #0) of l3
    (distinct,) = by_kind["Distinct"]
    assert distinct.name.startswith("l4.tmp")
    assert distinct.branches[0].leaf == Get("l3", "table")
    assert distinct.cost.arrangements == 1 and distinct.cost.keys == [["#0{c0}"]]
    # l4 itself: Threshold over Union(Project l1, Project l3, Negate Project Join(l2, l4.tmp0))
    l4 = p.block("l4")
    assert p.blocks[-1] is l4 and l4.head.kind == "Threshold" and l4.head.mode == "except"
    pos = [br for br in l4.branches if not br.negate]
    neg = [br for br in l4.branches if br.negate]
    assert sorted(br.leaf.name for br in pos) == ["l1", "l3"]
    assert all(br.unary and br.unary[-1].op == "Project" for br in l4.branches)
    assert len(neg) == 1 and isinstance(neg[0].leaf, Join)
    join = neg[0].leaf
    assert join.type == "inner" and join.on == ["#0{c0} = #20{c0}"]
    left, right = (p.block(g.name) for g in join.inputs)
    assert right is distinct  # the Distinct's output arrangement is reused by the join
    # Spark adds what the seed had already: l2 arranged by its join key
    assert left.head.kind == "ArrangeBy" and left.head.keys == [["#0{c0}"]]
    assert left.branches[0].leaf == Get("l2", "table")
    assert "in l4" in left.cost.why and left.cost.rule.startswith("ArrangeBy")
    assert len(l4.columns) == NCOLS - 2
    assert p.arrangements == 3


@pytest.fixture(scope="module")
def four_tables(spark):
    for i, t in enumerate("abcd"):
        spark.range(100 + i).selectExpr(f"id as {t}k", f"id * 2 as {t}v").createOrReplaceTempView(f"j_{t}")
    yield "abcd"
    for t in "abcd":
        spark.catalog.dropTempView(f"j_{t}")


def test_four_input_join_has_six_arrangements(spark, four_tables):
    p = arrnf("select * from j_a join j_b on ak = bk join j_c on bk = ck join j_d on ck = dk", spark)
    check_well_formed(p)
    arranged = [b for b in p.blocks if b.head and b.head.kind == "ArrangeBy"]
    assert p.arrangements == 6 and len(arranged) == 6
    # 4 inputs and 2 intermediates (arrangements of joins)
    intermediates = [b for b in arranged if isinstance(b.branches[0].leaf, Join)]
    assert len(intermediates) == 2
    assert p.blocks[-1].head is None and isinstance(p.blocks[-1].branches[0].leaf, Join)


def test_shared_join_input_counts_once(spark, four_tables):
    # j_b read twice, arranged by the same key: one arrangement with two consumers
    p = arrnf("select x.ak, y.bv, z.bv from j_a x join j_b y on x.ak = y.bk join j_c w on x.ak = w.ck "
              "join j_b z on x.ak = z.bk", spark)
    check_well_formed(p)
    shared = [b for b in p.blocks if b.sharing > 1]
    assert len(shared) == 1 and shared[0].sharing == 2 and shared[0].cost.arrangements == 1
    assert p.arrangements == 5
    assert len(shared[0].consumers) == 2


@pytest.mark.parametrize("kind", ["tpch", "tpcds"])
def test_every_workload_query_normalizes(spark, tpch_db, tpcds_db, use_db, kind, capsys):
    use_db(kind)
    opaque, failures, blocks, arrangements = 0, [], 0, 0
    texts = queries(kind)
    for name, sql in sorted(texts.items()):
        try:
            p = arrnf(sql, spark, name=name)
        except ArrnfError as e:
            failures.append(f"{name}: {e}")
            continue
        check_well_formed(p)
        assert str(p) == json.loads(p.to_json())["text"]
        opaque += p.opaque + sum(isinstance(br.leaf, Opaque) for b in p.blocks for br in b.branches)
        blocks += len(p.blocks)
        arrangements += p.arrangements
    with capsys.disabled():
        print(f"\n[arrnf] {kind}: {len(texts)} queries, {blocks} blocks, {arrangements} arrangements, "
              f"{opaque} Opaque terms, {len(failures)} failures")
    assert not failures, failures
    assert opaque == 0


def test_programs_reach_python_deflated_in_pieces_of_one_socket_write(spark, tpcds_db, use_db):
    """The JVM sends a program's JSON deflated, in pieces (``Api.jsonPieces``) small enough for one
    write of py4j's socket each: a reply of more than 8 KB waited 40 ms for TCP's delayed
    acknowledgement. Joined, the pieces are the JSON itself: q3's in one piece, q64's 160 KB in several."""
    use_db("tpcds")
    api = spark._jvm.arrnf.Api
    for name, several in (("q3", False), ("q64", True)):
        df = spark.sql(queries("tpcds")[name])
        text = api.json(df._jdf, name)
        assert len(text.encode()) > 8192  # as one reply, more than one write
        pieces = api.jsonPieces(df._jdf, name)
        sizes = [len(bytes(p)) for p in pieces]
        assert all(0 < n <= api.PieceBytes() for n in sizes) and (len(sizes) > 1) == several, sizes
        assert _jvm._joined(pieces) == text
        assert arrnf(df, name=name).to_dict() == Program.from_dict(json.loads(text)).to_dict()


def test_str_is_the_jvm_text_form(spark, tpcds_db, use_db):
    """Python renders no text: ``str(program)`` is the JVM's text form, ``str(block)`` the JVM's text
    of that block, a slice of it in order; the program's arrangements are the JVM's too."""
    use_db("tpcds")
    api = spark._jvm.arrnf.Api
    for name in ("q14a", "q23b", "q64", "q77", "q49"):
        df = spark.sql(queries("tpcds")[name])
        raw = json.loads(api.json(df._jdf, name))
        p = Program.from_dict(raw)
        assert str(p) == raw["text"] == api.text(df._jdf, name)
        assert str(p).splitlines()[0] == f"-- ArrNF {name}: {p.totals()}"
        assert p.totals().startswith(f"{len(p.blocks)} blocks, Spark builds {p.realized} stateful operators")
        assert p.arrangements == raw["arrangements"] == sum(b.cost.arrangements for b in p.blocks)
        # what Spark builds: its stateful operators, each attributed to one block or to none
        own = [r for b in p.blocks for r in (b.realization or []) if not r["shared"]]
        assert 0 < len(own) <= p.realized and len({r["id"] for r in own}) == len(own)
        assert p.outside_blocks == p.realized - len(own)
        assert p.built_blocks == sum(1 for b in p.blocks if any(not r["shared"] for r in b.realization or []))
        for b, rb in zip(p.blocks, raw["blocks"]):
            assert str(b) == rb["text"] and str(b).startswith(f"[{b.name}]  arrangements={b.cost.arrangements} ")
        # the program's text: its header line, then each block's text in order, then finishing
        header, _, rest = str(p).partition("\n\n")
        blocks = "\n\n".join(str(b) for b in p.blocks)
        assert header.startswith("-- ArrNF ") and rest.startswith(blocks), name
        tail = rest[len(blocks):]
        assert tail == "\n" or tail.startswith("\n\n-- finishing: "), tail[:200]


def test_json_round_trips_unchanged(spark, tpcds_db, use_db, seed_tables):
    use_db("tpcds")
    for sql in (queries("tpcds")["q2"], queries("tpcds")["q14a"], queries("tpcds")["q47"]):
        raw = spark._jvm.arrnf.Api.json(spark.sql(sql)._jdf, "q")
        p = Program.from_json(raw)
        assert json.loads(p.to_json()) == json.loads(raw)
        assert p.to_json() == raw
        again = Program.from_json(p.to_json())
        assert again == p and again.to_json() == raw
    assert all(type(b).__name__ == "Block" for b in p.blocks)


def test_cost_rows_and_frame(spark, tpch_db, use_db):
    use_db("tpch")
    p = arrnf(queries("tpch")["q1"], spark)
    rows = p.cost()
    (reduce,) = [r for r in rows if r["head"] == "Reduce"]
    assert reduce["arrangements"] == 1 and reduce["rule"] == "Reduce: accumulable 1" and True
    # q1 filters lineitem on l_shipdate: without column statistics its rows are unknown, not a guess
    assert reduce["source"].startswith("unknown: ") and reduce["rows"] is None and reduce["bytes"] is None
    assert "rows=unknown" in str(p)
    # so do the notebook table and the picture (empty cells and no line before)
    html = p._repr_html_()
    assert "<td>unknown</td><td>unknown</td><td>unknown: " in html
    assert f'"{reduce["block"]}" [label=' in p.to_dot() and "rows=unknown" in p.to_dot()
    frame = p.cost_frame()
    assert list(frame["block"]) == [b.name for b in p.blocks]
    assert int(frame["arrangements"].sum()) == p.arrangements
    assert [u.op for u in p.finishing] == ["Sort"]


def test_sketch_pass_gives_estimates_with_their_source(spark, tpch_db, use_db):
    from pyspark_arrnf import forget_statistics, statistics

    use_db("tpch")
    try:
        (line, _) = statistics(spark, ["lineitem", "part"])
        assert line.startswith("lineitem: ") and "rows" in line
        assert statistics(spark, "no_such_table")[0].startswith("no_such_table: not sketched")
        p = arrnf(queries("tpch")["q1"], spark)
        (reduce,) = [b for b in p.blocks if b.head and b.head.kind == "Reduce"]
        lineitem = spark.table("lineitem").count()
        filtered = spark.sql(queries("tpch")["q1"].split("group by")[0].replace(
            queries("tpch")["q1"].split("from")[0], "select count(*) ")).head()[0]
        # a Reduce holds its groups (Spark's hash aggregate): q1's (returnflag, linestatus) pairs
        groups = spark.sql(queries("tpch")["q1"]).count()
        # (q1's date filter keeps about 98% of the rows: many sampled rows pass, their share counts)
        assert reduce.cost.source == "estimate: file metadata, sketch, sample"
        assert groups / 2 <= reduce.cost.rows <= min(2 * groups, filtered), (reduce.cost, groups)
        scan = arrnf("select l_orderkey, count(*) from lineitem group by 1", spark)
        orders = spark.sql("select count(distinct l_orderkey) from lineitem").head()[0]
        assert abs(scan.blocks[-1].cost.rows - orders) <= 0.1 * orders, (scan.blocks[-1].cost, orders)
        assert scan.blocks[-1].cost.source == "estimate: file metadata, sketch"
        # a LIKE, which Spark's estimation does not cover: the share of the sketch's sample it keeps
        like = arrnf("select p_partkey from part join lineitem on p_partkey = l_partkey where p_name like '%green%'", spark)
        green = spark.sql("select count(*) from part where p_name like '%green%'").head()[0]
        (kept,) = [b.cost for b in like.blocks if b.cost.source == "estimate: file metadata, sketch, sample"]
        assert green / 2 <= kept.rows <= 2 * green, (kept, green)
        # groups of a computed key: the values the sample finds (9 first digits of the 50 sizes; before, the
        # column's 50 values, an upper bound printed as an estimate)
        for key in ("substr(cast(p_size as string), 1, 1)", "p_size div 10"):
            computed = arrnf(f"select {key} k, count(*) from part group by 1", spark).blocks[-1].cost
            truth = spark.sql(f"select count(distinct {key}) from part").head()[0]
            assert computed.source == "estimate: file metadata, sketch, sample", computed
            assert truth / 2 <= computed.rows <= 2 * truth, (key, computed, truth)
        # a join input holds the scan's rows, known exactly from the footers
        join = arrnf("select o_orderkey from orders join lineitem on o_orderkey = l_orderkey", spark)
        assert lineitem in [b.cost.rows for b in join.blocks if b.head and b.head.kind == "ArrangeBy"]
    finally:
        forget_statistics(spark)
    last = arrnf(queries("tpch")["q1"], spark).blocks[-1].cost.source
    assert last == "none" or last.startswith("unknown"), last


def test_reduce_counts_follow_the_rules(spark):
    p = arrnf("select id % 3 k, sum(id), min(id), count(distinct id % 5), collect_list(id) from range(10) group by 1",
              spark)
    (r,) = [b for b in p.blocks if b.head and b.head.kind == "Reduce"]
    # distinct 1 + accumulable 1 + hierarchical 16 + basic 1 + collation 1
    assert r.cost.arrangements == 20, r.cost.rule
    assert {a.kind for a in r.head.aggregates} == {"accumulable", "hierarchical", "basic"}
    topk = arrnf("select * from (select * from range(10) order by id desc limit 3) union all select 1", spark)
    (t,) = [b for b in topk.blocks if b.head and b.head.kind == "TopK"]
    assert t.cost.arrangements == 16 and t.head.limit == 3 and t.head.order


def test_intersect_all_is_a_threshold(spark):
    p = arrnf("select id from range(10) intersect all select id from range(5)", spark)
    check_well_formed(p)
    (t,) = p.blocks
    assert t.head.kind == "Threshold" and t.head.mode == "intersect"
    assert [br.negate for br in t.branches] == [False, True]


def test_cached_dataframe_is_an_existing_arrangement(spark):
    cached = spark.range(20).selectExpr("id as ck").cache()
    cached.createOrReplaceTempView("cached_t")
    try:
        p = arrnf("select * from cached_t join range(5) r on cached_t.ck = r.id", spark)
        check_well_formed(p)
        (join,) = [br.leaf for b in p.blocks for br in b.branches if isinstance(br.leaf, Join)]
        assert join.inputs[0].source == "cache"
        assert p.arrangements == 1  # only the range is arranged anew
    finally:
        cached.unpersist()


def test_subqueries_and_ctes_are_blocks(spark):
    p = arrnf("select * from range(10) where id > (select avg(id) from range(4))", spark)
    check_well_formed(p)
    sub, root = p.blocks
    assert sub.head.kind == "Reduce" and sub.consumers[0].role == "subquery"
    assert f"scalar({sub.name})" in root.branches[0].unary[0].args[0]


def test_streaming_dataframe_normalizes(spark):
    s = spark.readStream.format("rate").load().selectExpr("value % 10 as k").groupBy("k").count()
    p = arrnf(s)
    check_well_formed(p)
    assert p.streaming
    (b,) = p.blocks
    assert b.head.kind == "Reduce" and b.head.keys == [["#0{k}"]]
    assert b.branches[0].leaf == Get("rate", "stream") and b.cost.source == "unknown: a stream"
    assert b.realization is None and p.realized is None  # no physical plan before the stream starts
    d = spark.readStream.format("rate").load().dropDuplicates(["value"])
    assert arrnf(d).blocks[-1].head.kind == "Distinct"


def test_query_that_does_not_analyze_gives_one_clear_message(spark):
    with pytest.raises(ArrnfError, match=r"^the query does not analyze.*no_such_table") as e:
        arrnf("select * from no_such_table", spark)
    assert "\n" not in str(e.value)
    with pytest.raises(ArrnfError, match="does not analyze"):
        arrnf("selec 1", spark)


def test_unknown_node_is_opaque(spark):
    df = spark.range(10).mapInPandas(lambda it: it, "id long")
    p = arrnf(df)
    check_well_formed(p)
    assert p.opaque == 1
    leaf = p.blocks[-1].branches[0].leaf
    assert isinstance(leaf, Opaque) and leaf.node == "MapInPandas" and leaf.inputs
    assert "Opaque MapInPandas" in str(p)


def test_explain_shows_the_arrnf_program(spark, capsys):
    spark.sql("select id % 3 k, count(*) from range(10) group by 1").explain(mode="extended")
    out = capsys.readouterr().out
    assert "== Extended Information (ArrNF) ==" in out and f"built for Spark {spark.version}" in out
    assert "Reduce keys=[" in out and "-- ArrNF query:" in out


def _recorded_description(spark) -> str:
    """The plan description Spark recorded for the last executed query (SQL tab, event log)."""
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    return str(executions.apply(executions.size() - 1).physicalPlanDescription())


def test_recorded_plan_descriptions_skip_the_section_unless_asked(spark, conf, capsys):
    sql = "select id % 3 k, count(*) from range(10) group by 1"
    spark.sql(sql).collect()
    recorded = _recorded_description(spark)
    # Spark asks every explain provider at each execution; by default the section is not built.
    assert "== Extended Information (ArrNF) ==" in recorded and "spark.arrnf.explain.sqlUi=true" in recorded
    assert "Reduce keys=[" not in recorded
    # explain() and the EXPLAIN command still show it in full
    spark.sql(sql).explain(mode="extended")
    assert "Reduce keys=[" in capsys.readouterr().out
    assert "Reduce keys=[" in spark.sql("EXPLAIN EXTENDED " + sql).collect()[0][0]
    conf({"spark.arrnf.explain.sqlUi": "true"})
    spark.sql(sql).collect()
    assert "Reduce keys=[" in _recorded_description(spark)


def test_the_section_is_built_once_per_optimized_plan(spark):
    df = spark.sql("select id % 3 k, count(*) from range(10) group by 1")
    jvm, plan = spark._jvm, df._jdf.queryExecution().executedPlan()
    provider = jvm.arrnf.ArrnfExplainProvider()
    first = provider.generateExtendedInfo(plan)
    assert "Reduce keys=[" in first
    # Kept on the optimized plan: adaptive re-plans ask again for the same query.
    optimized = df._jdf.queryExecution().optimizedPlan()
    assert optimized.getTagValue(jvm.arrnf.ArrnfExplainProvider.SectionTag()).isDefined()
    assert provider.generateExtendedInfo(plan) == first


def test_views(spark, four_tables):
    import shutil

    from pyspark_arrnf.views import _human, _label

    p = arrnf("select ak, count(*) from j_a join j_b on ak = bk group by ak", spark)
    dot = p.to_dot()
    assert dot.startswith("digraph arrnf {") and dot.count("->") >= 2
    # each node shows the block's name and its operator line, the first body line of the JVM's text
    for b in p.blocks:
        body = [line for line in str(b).splitlines()[1:] if not line.startswith("  -- ")]
        op = _label(body[0]) if b.head else "(no arrangement)"
        assert f'"{b.name}" [label="{_label("[" + b.name + "]")}\\n{op}\\n' in dot, (b.name, dot)
    html = p._repr_html_()
    assert "<table>" in html and "ArrangeBy" in html
    # estimated sizes read as estimates, as in the text form
    assert all(f"<td>≈{_human(b.cost.rows, '')}</td>" in html for b in p.blocks if b.cost.rows is not None)
    assert (f"{len(p.blocks)} blocks, Spark builds {p.realized} stateful operators in {p.built_blocks} blocks "
            f"(differential model: {p.arrangements} arrangements)") in html
    # what Spark builds for each block is a column of the table and a line of its node in the picture
    assert "<th>spark</th>" in html and all(f"<td>{b.spark}</td>" in html for b in p.blocks)
    assert all(f"spark={b.spark}" in dot for b in p.blocks if b.spark)
    if shutil.which("dot"):
        assert p.to_svg().lstrip().startswith(("<?xml", "<svg"))


def test_a_command_is_refused_before_it_runs(spark, tmp_path):
    """``spark.sql`` runs a command at once; explaining or measuring one must not drop a table."""
    from pyspark_arrnf import ArrnfError, measure

    spark.sql(f"CREATE TABLE arrnf_kept USING parquet LOCATION '{tmp_path / 'kept'}' AS SELECT 1 AS x")
    try:
        with pytest.raises(ArrnfError, match=r"^the text is a command \(DropTable\), not a query"):
            arrnf("DROP TABLE arrnf_kept", spark)
        with pytest.raises(ArrnfError, match=r"is a command .*not a query"):
            measure("INSERT INTO arrnf_kept SELECT 2", spark)
        with pytest.raises(ArrnfError, match=r"is a command .*not a query"):
            arrnf("CACHE TABLE arrnf_kept", spark)
        assert [r.x for r in spark.table("arrnf_kept").collect()] == [1]
        assert not spark.catalog.isCached("arrnf_kept")
        assert arrnf("TABLE arrnf_kept", spark).blocks  # a query in any form is fine
    finally:
        spark.sql("DROP TABLE IF EXISTS arrnf_kept")


@pytest.mark.parametrize("given, named", [(123, "int"), (None, "NoneType"), ("pandas", "pandas.core.frame.DataFrame")])
def test_anything_but_a_dataframe_or_text_is_a_type_error(spark, given, named):
    """Not "could not normalize the plan: 'int' object has no attribute '_jdf'"."""
    given = spark.range(3).toPandas() if given == "pandas" else given
    for session in (spark, None):  # (without a session, the active one is looked up from it)
        with pytest.raises(TypeError, match=rf"^arrnf\(\) takes a Spark DataFrame or SQL text, not {named}\b"):
            arrnf(given, session)


def test_cost_frame_counts_are_integers_unknown_where_unknown(spark):
    """Rows and bytes are pandas' nullable integers, <NA> where unknown: not floats (``150368.0``, NaN)."""
    import pandas as pd

    q = ("with a as (select k % 10 as g, count(*) as c from range(1000) t(k) group by 1) "
         "select * from a x join a y on x.c = y.c where x.c > 5")  # joined on counts: rows unknown
    p = arrnf(q, spark)
    frame = p.cost_frame()
    assert str(frame["rows"].dtype) == str(frame["bytes"].dtype) == "Int64"
    assert [None if v is pd.NA else v for v in frame["rows"]] == [b.cost.rows for b in p.blocks]
    assert [None if v is pd.NA else v for v in frame["bytes"]] == [b.cost.bytes for b in p.blocks]
    assert frame["rows"].isna().any() and frame["rows"].notna().any()


def test_the_header_counts_a_finishing_sorts_operators_outside_the_blocks(spark):
    """A global ORDER BY's sort and its range shuffle are in no block (finishing, not an
    arrangement): the header says so, so that its total is the blocks' operators plus those; the
    text (JVM), the notebook table and ``repr`` (Python) agree."""
    from pyspark_arrnf.measure import measure

    sql = "SELECT k % 7 AS g, sum(k) AS s FROM range(1000) t(k) GROUP BY 1"
    for text, outside in ((sql + " ORDER BY s", 2), (sql, 0)):
        for p in (arrnf(text, spark), measure(text, spark=spark)):
            in_blocks = sum(1 for b in p.blocks for x in (b.realization or []) if not x["shared"])
            assert p.outside_blocks == outside and p.realized == in_blocks + outside, str(p)
            totals = p.totals()
            assert str(p).splitlines()[0] == f"-- ArrNF {p.name}: {totals}"
            assert totals in p._repr_html_() and totals in repr(p)
            if outside:
                assert (f"Spark builds {p.realized} stateful operators: {in_blocks} in {p.built_blocks} blocks, "
                        f"{outside} outside any block (") in totals, totals
            else:
                assert f"Spark builds {p.realized} stateful operators in {p.built_blocks} blocks (" in totals, totals


def test_the_program_names_the_rules_that_changed_the_plan(spark):
    """The ring-law rules leave no reason in the plan (EagerAggregation and the factorization do):
    ``rules`` names each that changed it, from Spark's planning tracker; none with the rewrites off."""
    from pyspark_arrnf.compare import arrnf_enabled
    from pyspark_arrnf.measure import measure

    q = "select id from range(5) except all select id from range(5)"
    assert arrnf(q, spark).rules == ["NegationCancels changed the plan"]
    assert measure(q, spark=spark).rules == ["NegationCancels changed the plan"]
    assert arrnf("select t.id, u.x from range(3) t cross join (select 1 as x) u", spark).rules == [
        "EliminateUnitJoin changed the plan"]
    with arrnf_enabled(spark, False):
        assert arrnf(q, spark).rules == []


def test_a_view_that_filters_is_not_sketched_for_its_table(spark, tmp_path):
    """The sketch pass stores a sketch by the files it read: one taken of a view that filters them
    would be every query's sketch of the table (a tester's ``cs WHERE id < 100``: the table read
    ``rows≈100 (sketch)``, 1,000 true). Such a view is refused; one that only selects columns is
    sketched; the same CSV folder read with and without a header has two sketches."""
    from pyspark_arrnf import forget_statistics, statistics

    spark.range(1000).selectExpr("id", "id % 10 AS k").write.parquet(str(tmp_path / "pq"))
    spark.read.parquet(str(tmp_path / "pq")).createOrReplaceTempView("sk_pq")
    spark.sql("CREATE OR REPLACE TEMP VIEW sk_small AS SELECT * FROM sk_pq WHERE id < 100")
    spark.sql("CREATE OR REPLACE TEMP VIEW sk_ids AS SELECT id FROM sk_pq")
    spark.sql("CREATE OR REPLACE TEMP VIEW sk_renamed AS SELECT id AS other FROM sk_pq")
    spark.range(1000).selectExpr("id").write.option("header", "true").csv(str(tmp_path / "cs"))
    spark.read.option("header", "true").option("inferSchema", "true").csv(str(tmp_path / "cs")).createOrReplaceTempView("sk_cs")
    spark.read.option("inferSchema", "true").csv(str(tmp_path / "cs")).createOrReplaceTempView("sk_cs_raw")
    try:
        (small, renamed) = statistics(spark, ["sk_small", "sk_renamed"])
        assert small.startswith("sk_small: not sketched: a view that filters"), small
        assert renamed.startswith("sk_renamed: not sketched: a view that filters, computes or renames"), renamed
        ratio = arrnf("select id from sk_pq where id >= 500", spark).blocks[-1].cost
        assert ratio.rows is None or ratio.rows >= 250, ratio  # not the view's 100 rows' sample
        (ids,) = statistics(spark, ["sk_ids"])
        assert ids.startswith("sk_ids: 1000 rows, 1 columns sketched"), ids
        (cs,) = statistics(spark, ["sk_cs"])
        assert cs.startswith("sk_cs: 1000 rows"), cs
        # the folder read without a header (each file's header line a row) has no sketch
        raw = arrnf("select * from sk_cs_raw a join sk_cs_raw b on a._c0 = b._c0", spark)
        assert all("sketch" not in (b.cost.source or "").replace("the sketch pass", "") for b in raw.blocks), [b.cost for b in raw.blocks]
    finally:
        forget_statistics(spark)


def test_an_offset_of_rows_not_known_is_unknown(spark, tmp_path):
    """Spark's estimate of an OFFSET counts an input whose rows it does not know as 0 rows: ArrNF said
    ``rows≈0 (estimate: file metadata)`` where 1,657 rows pass (a tester). Unknown now, with the input's
    reason; an OFFSET of known rows (a LIMIT's) keeps its estimate."""
    spark.range(5000).selectExpr("id", "id % 7 AS k").write.parquet(str(tmp_path / "pq"))
    spark.read.parquet(str(tmp_path / "pq")).createOrReplaceTempView("off_pq")
    window = "SELECT k, id, row_number() OVER (PARTITION BY k ORDER BY id) rn FROM ({})"
    unknown = arrnf(window.format("SELECT * FROM off_pq WHERE id % 3 = 0 OFFSET 10"), spark).blocks[-1].cost
    assert unknown.rows is None and unknown.source.startswith("unknown"), unknown
    known = arrnf(window.format("SELECT * FROM off_pq WHERE id % 3 = 0 LIMIT 100 OFFSET 10"), spark).blocks[-1].cost
    assert known.rows == 100, known


def test_a_null_test_not_counted_beside_a_counted_one_is_unknown(spark, tmp_path):
    """A NULL test of a column the footers count no NULLs of (one some files lack), ANDed with one they
    count (the ``isnotnull(k)`` Spark adds below every inner join): the rank-limit estimate read it as
    keeping every row, labelled plain ``file metadata`` (800 for 0, a tester). Unknown, as the test alone
    is; both tests counted keep their estimate."""
    spark.range(0, 500).selectExpr("id", "id % 7 AS k").write.parquet(str(tmp_path / "m" / "part=a"))
    spark.range(0, 300).selectExpr("id", "id % 7 AS k", "CAST(NULL AS BIGINT) AS extra").write.parquet(
        str(tmp_path / "m" / "part=b"))
    spark.read.option("mergeSchema", "true").parquet(str(tmp_path / "m")).createOrReplaceTempView("nt_merged")
    window = "SELECT k, id, row_number() OVER (PARTITION BY k ORDER BY id) rn FROM nt_merged WHERE {}"
    for test in ("extra IS NOT NULL AND k IS NOT NULL", "extra IS NOT NULL"):
        cost = arrnf(window.format(test), spark).blocks[-1].cost
        assert cost.rows is None and cost.source.startswith("unknown"), (test, cost)
    counted = arrnf(window.format("id IS NOT NULL AND k IS NOT NULL"), spark).blocks[-1].cost
    assert counted.rows == 800, counted


def test_catalog_statistics_of_files_changed_since_are_stale(spark, conf, tmp_path):
    """ANALYZE TABLE's row count was read as long as the catalog kept it: after files were added to the
    table's folder (and REFRESH TABLE) a tester read ``rows≈1.5k (catalog)`` for 3,500 rows. The files'
    bytes listed now differ from those ANALYZE TABLE counted: the footers' rows then, labelled stale.
    Fresh statistics (a table, a partitioned table) stay the catalog's."""
    conf({"spark.sql.autoBroadcastJoinThreshold": "-1"})
    spark.sql("DROP TABLE IF EXISTS stale_t")
    spark.sql("DROP TABLE IF EXISTS stale_p")
    try:
        spark.range(1500).selectExpr("id", "id % 7 AS k").write.saveAsTable("stale_t")
        spark.range(1500).selectExpr("id", "id % 3 AS p").write.partitionBy("p").saveAsTable("stale_p")
        for t in ("stale_t", "stale_p"):
            spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS FOR ALL COLUMNS")
        window = "SELECT id, row_number() OVER (PARTITION BY {} ORDER BY id) rn FROM {}"
        for t, key in (("stale_t", "k"), ("stale_p", "p")):
            (cost,) = [b.cost for b in arrnf(window.format(key, t), spark).blocks if b.cost.rule.startswith("Reduce (window)")]
            assert (cost.rows, cost.source) == (1500, "catalog"), (t, cost)
        location = spark.sql("DESCRIBE TABLE EXTENDED stale_t").where("col_name = 'Location'").head()[1]
        spark.range(5000, 7000).selectExpr("id", "id % 7 AS k").write.mode("append").parquet(location)
        spark.sql("REFRESH TABLE stale_t")
        (cost,) = [b.cost for b in arrnf(window.format("k", "stale_t"), spark).blocks if b.cost.rule.startswith("Reduce (window)")]
        assert cost.rows == 3500 and cost.source.startswith("file metadata; its catalog statistics are stale"), cost
        # A partitioned table's every partition's files are listed (as its scan lists them): one added is told too.
        location = spark.sql("DESCRIBE TABLE EXTENDED stale_p").where("col_name = 'Location'").head()[1]
        spark.range(5000, 5600).selectExpr("id").write.mode("append").parquet(location + "/p=1")
        spark.sql("REFRESH TABLE stale_p")
        (cost,) = [b.cost for b in arrnf(window.format("p", "stale_p"), spark).blocks if b.cost.rule.startswith("Reduce (window)")]
        assert cost.rows == 2100 and cost.source.startswith("file metadata; its catalog statistics are stale"), cost
    finally:
        spark.sql("DROP TABLE IF EXISTS stale_t")
        spark.sql("DROP TABLE IF EXISTS stale_p")


def test_pruned_partitions_read_their_files_and_the_whole_tables_statistics(spark, conf):
    """Partition pruning gives the relation an index of the kept partitions and drops the table's
    statistics: a tester read ``rows=unknown (…; take the sketch pass or ANALYZE TABLE …)`` for 4,000 rows
    just after taking both. Now the kept files' footers count the rows and the whole table's sketch (or
    catalog column statistics) its columns, restricted to the kept partitions; a dynamic pruning filter
    is estimated without it, and says so."""
    from pyspark_arrnf import forget_statistics, statistics
    conf({"spark.sql.autoBroadcastJoinThreshold": "-1"})
    for t in ("pp_fact", "pp_dim", "pp_pdim"):
        spark.sql(f"DROP TABLE IF EXISTS {t}")
    try:
        spark.range(20000).selectExpr("id", "id % 5 AS p", "id % 97 AS k").write.partitionBy("p").saveAsTable("pp_fact")
        spark.range(97).selectExpr("id AS k").write.saveAsTable("pp_dim")
        spark.range(5).selectExpr("id AS p", "id * 10 AS attr").write.saveAsTable("pp_pdim")

        def fact_side(query):
            (cost,) = [b.cost for b in arrnf(query, spark).blocks if "Get default.pp_fact" in str(b) and "ArrangeBy" in str(b)]
            return cost
        pruned = "SELECT * FROM pp_fact JOIN pp_dim USING (k) WHERE p = 1"
        also = "SELECT * FROM pp_fact JOIN pp_dim USING (k) WHERE p IN (1, 2) AND id >= 10000"
        dynamic = "SELECT f.id, d.attr FROM pp_fact f JOIN pp_pdim d ON f.p = d.p WHERE d.attr = 20"
        cost = fact_side(pruned)  # no sketch: the footers' rows, the partition column's kept values
        assert (cost.rows, cost.source) == (4000, "file metadata"), cost
        assert fact_side(also).rows is None  # id's values unknown
        statistics(spark, ["pp_fact", "pp_dim", "pp_pdim"])
        cost = fact_side(pruned)  # (the partition's test keeps every sampled row: a share of the sample, said so)
        assert (cost.rows, cost.source) == (4000, "estimate: file metadata, sketch of every partition, sample"), cost
        cost = fact_side(also)  # 4,000 of p = 1 or 2 with id >= 10000: the sample of those partitions only
        assert 2800 <= cost.rows <= 5600 and "sketch of every partition" in cost.source, cost
        cost = fact_side(dynamic)
        assert cost.rows == 20000 and cost.source.endswith("; dynamic partition pruning not counted (fewer rows where it prunes)"), cost
        forget_statistics(spark)
        for t in ("pp_fact", "pp_dim", "pp_pdim"):
            spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS FOR ALL COLUMNS")
        cost = fact_side(pruned)
        assert (cost.rows, cost.source) == (4000, "file metadata, catalog columns"), cost
        cost = fact_side(also)
        assert 2800 <= cost.rows <= 5600, cost
        # Files added to the kept partition since ANALYZE (or a partition added): its column figures are stale.
        location = spark.sql("DESCRIBE TABLE EXTENDED pp_fact").where("col_name = 'Location'").head()[1]
        spark.range(100000, 100400).selectExpr("id", "id % 97 AS k").write.mode("append").parquet(location + "/p=1")
        spark.sql("REFRESH TABLE pp_fact")
        cost = fact_side(pruned)
        assert cost.rows == 4400 and cost.source.startswith("file metadata; its catalog statistics are stale"), cost
        assert spark.sql(pruned).count() == 4400
    finally:
        forget_statistics(spark)
        for t in ("pp_fact", "pp_dim", "pp_pdim"):
            spark.sql(f"DROP TABLE IF EXISTS {t}")


def test_analyze_without_columns_keeps_the_footers_null_counts(spark, conf):
    """ANALYZE TABLE without FOR COLUMNS gives the catalog a row count and no column statistics: read
    alone it left a join input (Spark's isnotnull(k) over it) unknown where the footers had estimated it
    (a tester). Where the footers count the catalog's rows, they are read, with their NULL counts."""
    conf({"spark.sql.autoBroadcastJoinThreshold": "-1"})
    spark.sql("DROP TABLE IF EXISTS nocols_t")
    try:
        spark.range(1000).selectExpr("id", "id % 7 AS k").write.saveAsTable("nocols_t")
        spark.sql("ANALYZE TABLE nocols_t COMPUTE STATISTICS")
        p = arrnf("SELECT * FROM nocols_t t JOIN range(7) r ON t.k = r.id", spark)
        (side,) = [b.cost for b in p.blocks if b.head and b.head.kind == "ArrangeBy" and "nocols_t" in str(b)]
        assert (side.rows, side.source) == (1000, "file metadata"), side
    finally:
        spark.sql("DROP TABLE IF EXISTS nocols_t")


def test_a_sketch_over_files_that_cannot_be_read_says_so(spark, conf, tmp_path):
    """A sketch is read while its files are listed as sketched; where their footers cannot be read now
    (a file deleted or made unreadable since), the label said only ``sketch`` and the query then failed
    on the file (a tester). The label says what could not be read."""
    import shutil

    from pyspark_arrnf import forget_statistics, statistics

    conf({"spark.sql.autoBroadcastJoinThreshold": "-1"})
    spark.range(3000).selectExpr("id", "id % 7 AS k").write.parquet(str(tmp_path / "gone"))
    spark.read.parquet(str(tmp_path / "gone")).createOrReplaceTempView("gone_v")
    try:
        statistics(spark, ["gone_v"])
        shutil.rmtree(tmp_path / "gone")
        p = arrnf("SELECT * FROM gone_v g JOIN range(7) r ON g.k = r.id", spark)
        (side,) = [b.cost for b in p.blocks if b.head and b.head.kind == "ArrangeBy" and "gone" in str(b)]
        assert side.rows == 3000 and side.source.startswith("sketch; its Parquet footers could not be read"), side
    finally:
        forget_statistics(spark)


def test_an_empty_table_joined_makes_no_rows(spark, conf, tmp_path):
    """An empty Parquet table's files keep no column statistics, so its join input (``isnotnull(k)``)
    read ``rows=unknown (…; take the sketch pass …)`` and so did everything above it. No rows: no values
    and no NULLs in any column, no joined rows and no groups."""
    conf({"spark.sql.autoBroadcastJoinThreshold": "-1"})
    spark.range(1000).selectExpr("id", "id % 7 AS k").write.parquet(str(tmp_path / "full"))
    spark.range(0).selectExpr("id", "id % 7 AS k").write.parquet(str(tmp_path / "empty"))
    spark.read.parquet(str(tmp_path / "full")).createOrReplaceTempView("et_full")
    spark.read.parquet(str(tmp_path / "empty")).createOrReplaceTempView("et_empty")
    for kind in ("INNER", "LEFT OUTER"):
        program = arrnf(f"SELECT f.k, count(*) FROM et_full f {kind} JOIN et_empty e ON f.k = e.k GROUP BY f.k", spark)
        (empty,) = [b.cost for b in program.blocks if "Get empty" in str(b) and "ArrangeBy" in str(b)]
        assert (empty.rows, empty.source) == (0, "file metadata"), empty
        result = program.blocks[-1].cost
        if kind == "INNER":
            assert result.rows == 0 and result.source == "estimate: file metadata", result
        else:  # the full side's rows are kept: its groups are not counted
            assert result.rows != 0, result


def test_a_null_partition_and_dynamic_pruning_below_an_aggregate(spark, conf):
    """Kept partitions whose value is NULL hold NULLs only: ``s IS NULL`` over catalog columns was
    unknown ("a filter Spark's estimation does not cover", a tester), where the footers count its rows.
    And an aggregate over a scan that dynamic partition pruning filters says so, as the scan does."""
    from pyspark_arrnf import forget_statistics, statistics
    conf({"spark.sql.autoBroadcastJoinThreshold": "-1",
          "spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly": "false"})
    for t in ("np_fact", "np_dim"):
        spark.sql(f"DROP TABLE IF EXISTS {t}")
    try:
        spark.range(12000).selectExpr("id", "id % 10 AS k", "CAST(id % 3 AS INT) AS p",
                                      "IF(id % 4 = 0, NULL, CAST(id % 2 AS STRING)) AS s").write.partitionBy("p", "s").saveAsTable("np_fact")
        spark.range(3).selectExpr("CAST(id AS INT) AS dp", "IF(id = 0, 'keep', 'drop') AS tag").write.saveAsTable("np_dim")
        for t in ("np_fact", "np_dim"):
            spark.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS FOR ALL COLUMNS")
        window = "SELECT id, row_number() OVER (PARTITION BY k ORDER BY id) rn FROM np_fact WHERE {}"
        for test, rows in (("s IS NULL", 3000), ("p = 1 AND s IS NULL", 1000), ("s IS NOT NULL", 9000)):
            (cost,) = [b.cost for b in arrnf(window.format(test), spark).blocks if b.cost.rule.startswith("Reduce (window)")]
            assert (cost.rows, cost.source) == (rows, "file metadata, catalog columns"), (test, cost)
        statistics(spark, ["np_fact", "np_dim"])
        program = arrnf("SELECT f.k, count(*) FROM np_fact f JOIN np_dim d ON f.p = d.dp WHERE d.tag = 'keep' GROUP BY f.k", spark)
        over = [b.cost for b in program.blocks if "Get default.np_fact" in str(b)]
        assert over and all(c.source.endswith("; dynamic partition pruning not counted (fewer rows where it prunes)")
                            for c in over), over
    finally:
        forget_statistics(spark)
        for t in ("np_fact", "np_dim"):
            spark.sql(f"DROP TABLE IF EXISTS {t}")


def test_pruned_partitions_of_a_csv_table_count_the_kept_share_of_the_sample(spark, conf):
    """A CSV table keeps no row count: after the sketch pass, pruned to one partition, its rows are the kept
    partition's share of the sketch's sample, labelled so (it read ``sketch of every partition``, as exact).
    A filter whose share of the sample keeps every sampled row says ``sample`` too (it kept its input's label)."""
    from pyspark_arrnf import forget_statistics, statistics
    conf({"spark.sql.autoBroadcastJoinThreshold": "-1"})
    spark.sql("DROP TABLE IF EXISTS cp_fact")
    try:
        spark.range(8000).selectExpr("id", "id % 7 AS k", "id % 4 AS p").write.format("csv").partitionBy("p").saveAsTable("cp_fact")
        window = "SELECT id, row_number() OVER (PARTITION BY k ORDER BY id) rn FROM cp_fact WHERE p = 1"
        (cost,) = [b.cost for b in arrnf(window, spark).blocks if b.cost.rule.startswith("Reduce (window)")]
        assert cost.rows is None and cost.source.endswith("(only Parquet footers): the sketch pass counts them"), cost
        statistics(spark, ["cp_fact"])
        (cost,) = [b.cost for b in arrnf(window, spark).blocks if b.cost.rule.startswith("Reduce (window)")]
        assert 1500 <= cost.rows <= 2500 and cost.source == "estimate: sample, sketch of every partition (rows: its sample's share)", cost
    finally:
        forget_statistics(spark)
        spark.sql("DROP TABLE IF EXISTS cp_fact")


def test_a_filter_keeping_every_sampled_row_is_an_estimate(spark, conf, tmp_path):
    """A filter whose share of the sketch's sample is every sampled row kept its input's label,
    ``file metadata, sketch``, as if its rows were exact (30,000 for 29,999, a tester). A share of a
    sample is an estimate, and says so; a NULL test the footers count exactly keeps the label."""
    from pyspark_arrnf import forget_statistics, statistics
    conf({"spark.sql.autoBroadcastJoinThreshold": "-1"})
    spark.range(30000).selectExpr("id", "IF(id = 7, 9, 1) AS k").write.parquet(str(tmp_path / "all"))
    spark.read.parquet(str(tmp_path / "all")).createOrReplaceTempView("ke_all")
    window = "SELECT id, row_number() OVER (PARTITION BY k ORDER BY id) rn FROM ke_all WHERE {}"
    try:
        statistics(spark, ["ke_all"])
        (cost,) = [b.cost for b in arrnf(window.format("k = 1"), spark).blocks if b.cost.rule.startswith("Reduce (window)")]
        assert cost.rows == 30000 and cost.source == "estimate: file metadata, sketch, sample", cost
        (cost,) = [b.cost for b in arrnf(window.format("k IS NOT NULL"), spark).blocks if b.cost.rule.startswith("Reduce (window)")]
        assert (cost.rows, cost.source) == (30000, "file metadata, sketch"), cost
    finally:
        forget_statistics(spark)


def test_pruned_partitions_figures_a_tester_broke(spark, conf, tmp_path):
    """What a tester made the kept partitions' figures say, each a confident number far from the truth:
    a NaN partition read as a range [NaN, NaN] (0 rows for 10,000); a partition column ``P`` and a data
    column ``p`` (case-sensitive) sharing figures (0 for 4,793); ANALYZE's NULL counts of the whole table
    scaled over the footers' exact ones (1,250 for 5,000); and a filter over stale catalog columns not
    saying why it is unknown."""
    conf({"spark.sql.autoBroadcastJoinThreshold": "-1"})
    window = "SELECT v, row_number() OVER (PARTITION BY v ORDER BY v) rn FROM {} WHERE {}"

    def estimate(table, test):
        (cost,) = [b.cost for b in arrnf(window.format(table, test), spark).blocks if b.cost.rule.startswith("Reduce (window)")]
        return cost
    for t in ("tb_nan", "tb_case", "tb_nulls"):
        spark.sql(f"DROP TABLE IF EXISTS {t}")
    try:
        spark.range(20000).selectExpr("id % 1000 AS v", "IF(id % 2 = 0, double('NaN'), 1.0D) AS d").write.partitionBy("d").saveAsTable("tb_nan")
        cost = estimate("tb_nan", "d = double('NaN')")
        assert spark.sql("SELECT count(*) FROM tb_nan WHERE d = double('NaN')").head()[0] == 10000
        assert cost.rows is None or cost.rows >= 1000, cost

        conf({"spark.sql.caseSensitive": "true"})
        spark.range(10000).selectExpr("id % 100 AS v", "id % 97 AS p", "CAST(id % 3 AS INT) AS P").write.partitionBy("P").saveAsTable("tb_case")
        truth = spark.sql("SELECT count(*) FROM tb_case WHERE P = 1 AND p > 3").head()[0]
        cost = estimate("tb_case", "P = 1 AND p > 3")
        assert truth > 3000 and (cost.rows is None or cost.rows >= truth / 10), (truth, cost)
        conf({"spark.sql.caseSensitive": "false"})

        spark.range(20000).selectExpr("id % 100 AS v", "IF(id % 4 = 0, NULL, id) AS w", "id % 4 AS p").write.partitionBy("p").saveAsTable("tb_nulls")
        spark.sql("ANALYZE TABLE tb_nulls COMPUTE STATISTICS FOR ALL COLUMNS")
        for test, rows in (("p = 0 AND w IS NULL", 5000), ("p = 0 AND w IS NOT NULL", 0), ("p = 1 AND w IS NOT NULL", 5000)):
            assert estimate("tb_nulls", test).rows == rows, (test, estimate("tb_nulls", test))
        location = spark.sql("DESCRIBE TABLE EXTENDED tb_nulls").where("col_name = 'Location'").head()[1]
        spark.range(100).selectExpr("id % 100 AS v", "id AS w").write.mode("append").parquet(location + "/p=2")
        spark.sql("REFRESH TABLE tb_nulls")
        cost = estimate("tb_nulls", "p = 2 AND v < 10")
        assert cost.rows is None and "catalog statistics are stale" in cost.source and "run it again" in cost.source, cost
    finally:
        conf({"spark.sql.caseSensitive": "false"})
        for t in ("tb_nan", "tb_case", "tb_nulls"):
            spark.sql(f"DROP TABLE IF EXISTS {t}")


def test_the_sketch_pass_takes_names_that_sql_must_quote(spark, tmp_path):
    """``statistics(spark, ["tbl with space"])`` answered ``not sketched: [PARSE_SYNTAX_ERROR]`` (a
    tester; a unicode name ``INVALID_IDENTIFIER``), and a view named ``a.b`` was read as table ``b``
    of database ``a``: such a name is the one view it names, as the command line registers a folder
    ``my table``. A name as written comes first (``db.t``); one that names nothing still says so."""
    from pyspark_arrnf import forget_statistics, statistics

    spark.range(20).selectExpr("id", "id % 4 AS k").write.parquet(str(tmp_path / "pq"))
    for view in ("tbl with space", "a.b", "données"):
        spark.read.parquet(str(tmp_path / "pq")).createOrReplaceTempView("`" + view + "`")
    try:
        lines = statistics(spark, ["tbl with space", "a.b", "données", "`tbl with space`", "nosuch_view"])
        for view, line in zip(("tbl with space", "a.b", "données", "`tbl with space`"), lines):
            assert line.startswith(f"{view}: 20 rows, 2 columns sketched"), line
        assert lines[-1].startswith("nosuch_view: not sketched: [TABLE_OR_VIEW_NOT_FOUND]"), lines[-1]
    finally:
        forget_statistics(spark)
        for view in ("tbl with space", "a.b", "données"):
            spark.catalog.dropTempView(view)
