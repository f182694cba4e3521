"""Measured arrangements (measure.py): every stateful physical operator of the final adaptive plan is
attributed to one ArrNF block or listed as unattributed; the block totals are the operators' own
metrics; streaming state per micro-batch; failing queries; results unchanged; the texts; the views."""
from __future__ import annotations

import json

import re

import pytest

import pyspark_arrnf
from pyspark_arrnf.data import queries
from pyspark_arrnf.measure import measure, measure_stream, operators_frame, plot, watch_stream
from pyspark_arrnf.model import Measured, Program

# joins, aggregates, windows, subqueries (scalar, EXISTS / NOT EXISTS, IN), CTEs, reused exchanges
TPCH = ["q1", "q3", "q5", "q11", "q13", "q17", "q18", "q21", "q22"]
TPCDS = ["q1", "q6", "q20", "q28", "q36", "q44", "q59", "q47", "q65", "q98"]

KIND_OF_COUNT = {"sort": "sort", "join": "join", "aggregate": "aggregate", "window": "window"}


def own_metric(o) -> int:
    """The operator's own memory figure, read straight from its SQL metrics (one run's, where Spark
    ran its stage twice to sample a range shuffle's bounds: ``ran_twice``)."""
    m = o.metrics
    if o.kind == "broadcast":
        return m.get("dataSize", 0)
    if o.ran_twice:
        return m.get("peakMemory", 0) // 2 + m.get("buildDataSize", 0) // 2
    return m.get("peakMemory", 0) + m.get("buildDataSize", 0)


def own_spill(o) -> int:
    return o.metrics.get("spillSize", 0) // (2 if o.ran_twice else 1)


def check_attribution(spark, df, p: Program) -> None:
    names = {b.name for b in p.blocks}
    ops = p.measurement.operators
    assert [o.id for o in ops] == list(range(len(ops)))
    # each operator maps to exactly one block, or is listed as unattributed
    for o in ops:
        if o.block is None:
            assert o.id in p.measurement.unattributed, o
        else:
            assert o.block in names, o
            assert o.id not in p.measurement.unattributed
            listed = [b.name for b in p.blocks if o.id in b.measured.operators + b.measured.shared_operators]
            assert listed == [o.block], (o, listed)
    # the operators are the physical plan's stateful operators, counted independently (PlanFacts)
    counts = dict(spark._jvm.arrnf.bench.PlanFacts.physicalCounts(df._jdf))
    mine = {k: 0 for k in counts}
    for o in ops:
        if o.kind in ("exchange", "broadcast"):
            mine["reused_exchange" if o.shared else "exchange"] += 1
        elif o.kind in KIND_OF_COUNT:
            mine[KIND_OF_COUNT[o.kind]] += 1
    assert mine == counts
    # attributed peak memory: block totals == the operators' own metrics
    own = [o for o in ops if not o.shared]
    assert sum(b.measured.peak_memory or 0 for b in p.blocks) == p.measurement.peak_memory
    # unknown memory: only where Spark has no memory metric, and named
    unmeasured = [o for o in own if o.peak_memory is None]
    assert all("peakMemory" not in o.metrics and "buildDataSize" not in o.metrics and o.kind in ("join", "aggregate", "window", "sort", "cache")
               for o in unmeasured), unmeasured
    assert sorted(o.id for o in unmeasured) == sorted(p.measurement.peak_memory_unmeasured)
    assert p.measurement.peak_memory == sum(own_metric(o) for o in own if o.block is not None)
    assert p.measurement.unattributed_peak_memory == sum(own_metric(o) for o in own if o.block is None)
    assert sum(b.measured.spill for b in p.blocks) == sum(own_spill(o) for o in own if o.block)
    assert sum(b.measured.shuffle_bytes for b in p.blocks) == sum(
        o.metrics.get("shuffleBytesWritten", 0) for o in own if o.block)
    # shared state is not new state: a reused exchange points at the exchange that built it
    for o in ops:
        if o.shared:
            assert o.peak_memory == 0 and o.spill == 0 and o.shuffle_bytes == 0
            if o.reuses is not None:
                assert ops[o.reuses].kind == o.kind and not ops[o.reuses].shared
    # aggregates realize Reduce/Distinct/Threshold blocks, windows window Reduce/TopK blocks
    for o in ops:
        if o.block is None:
            continue
        head = p[o.block].head
        if o.kind == "aggregate":
            assert head is not None and head.kind in ("Reduce", "Distinct", "Threshold"), (o, head)
        if o.kind == "window":
            assert head is not None and head.kind in ("Reduce", "TopK"), (o, head)


@pytest.mark.parametrize("name", TPCH)
def test_tpch_operators_attributed(spark, tpch_db, use_db, name):
    use_db(tpch_db)
    df = spark.sql(queries("tpch")[name])
    p = measure(df)
    assert p.measurement.status == "ok" and p.measurement.final_plan is True
    assert p.measurement.operators, "a TPC-H query has stateful operators"
    check_attribution(spark, df, p)
    if name != "q17":  # at this scale q17's join is empty: AQE drops it and the aggregates hold nothing
        assert p.measurement.peak_memory > 0


@pytest.mark.parametrize("name", TPCDS)
def test_tpcds_operators_attributed(spark, tpcds_db, use_db, name):
    use_db(tpcds_db)
    df = spark.sql(queries("tpcds")[name])
    p = measure(df)
    assert p.measurement.status == "ok"
    check_attribution(spark, df, p)


def test_reused_exchange_is_shared_not_new_state(spark, tpch_db, use_db):
    use_db(tpch_db)
    p = measure(queries("tpch")["q18"], spark=spark)
    shared = [o for o in p.measurement.operators if o.shared]
    assert shared, "q18 reads the same arranged lineitem aggregate twice"
    for o in shared:
        assert o.block is not None and o.id in p[o.block].measured.shared_operators
        assert o.id not in p[o.block].measured.operators


def test_a_reused_exchange_is_counted_alike_before_and_after_the_run(spark, conf, tmp_path):
    """Before a query runs, its plan (adaptive execution's first) holds an exchange twice where the
    run reads one shuffle again: ``arrnf()`` counts the second as shared, as ``measure()`` does, and
    the run's summary counts what Spark builds as the header does (7 built and 1 shared here; before,
    ``arrnf()`` said 9 and the summary 8)."""
    conf({"spark.sql.autoBroadcastJoinThreshold": "-1", "spark.sql.exchange.reuse": "true",
          "spark.sql.adaptive.enabled": "true"})
    spark.range(0, 10000).selectExpr("id % 100 AS k", "id AS v").write.parquet(str(tmp_path / "x"))
    spark.read.parquet(str(tmp_path / "x")).createOrReplaceTempView("reused_x")
    sql = "WITH t AS (SELECT k, sum(v) s FROM reused_x GROUP BY k) SELECT * FROM t a JOIN t b ON a.k = b.k"
    before = pyspark_arrnf.arrnf(spark.sql(sql))
    after = measure(spark.sql(sql))
    shared_before = [r for b in before.blocks for r in b.realization or [] if r["shared"]]
    assert len(shared_before) == 1 and shared_before[0]["what"] == "shuffle, reused", before
    built = [o for o in after.measurement.operators if not o.shared]
    assert before.realized == after.realized == len(built) == 7, (before.realized, after.realized, len(built))
    summary = str(after).split("\n\n")[-1]
    assert summary.startswith("-- measured: 7 stateful operators (and 1 shared: "), summary


def test_a_broadcast_read_again_to_prune_a_scan_is_where_it_was_built(spark, conf, tmp_path):
    """Dynamic partition pruning: the dimension's broadcast is read again by a subquery of the fact
    table's scan, which Spark only streams. The fact's block read ``spark=[broadcast relation,
    reused (existing)]`` (a tester): it reads none before the run or after, and the measured run lists
    the reused broadcast in the dimension's block, beside the broadcast it reads."""
    conf({"spark.sql.optimizer.dynamicPartitionPruning.enabled": "true"})
    spark.range(20000).selectExpr("id", "id % 5 AS p", "id % 97 AS k").write.partitionBy("p").parquet(str(tmp_path / "fact"))
    spark.range(5).selectExpr("id AS p", "id * 10 AS attr").write.parquet(str(tmp_path / "dim"))
    spark.read.parquet(str(tmp_path / "fact")).createOrReplaceTempView("dpp_fact")
    spark.read.parquet(str(tmp_path / "dim")).createOrReplaceTempView("dpp_dim")
    sql = "SELECT f.k, count(*) FROM dpp_fact f JOIN dpp_dim d ON f.p = d.p WHERE d.attr = 20 GROUP BY f.k"
    assert "dynamicpruning" in spark.sql(sql)._jdf.queryExecution().executedPlan().toString().lower()
    for p in (pyspark_arrnf.arrnf(spark.sql(sql)), measure(spark.sql(sql))):
        fact = next(b for b in p.blocks if b.head and b.head.kind == "ArrangeBy" and "Get fact" in str(b))
        assert not fact.realization, fact
    # (before the run the pruning subquery holds no exchange yet: adaptive execution adds it)
    dim = next(b for b in p.blocks if b.head and b.head.kind == "ArrangeBy" and "Get dim" in str(b))
    whats = [r["what"] for r in dim.realization]
    assert "broadcast relation" in whats and "broadcast relation, reused" in whats, whats


def test_a_pruning_subquerys_own_aggregate_is_in_no_block(spark, conf, tmp_path):
    """Dynamic partition pruning without a broadcast to reuse (broadcast joins off, ``reuseBroadcastOnly``
    false): the subquery aggregates the dimension's join keys itself. Those aggregates were the fact
    scan's block's (a tester: ``measured rows=2`` for its 4,000); they are in no block, listed with why."""
    conf({"spark.sql.autoBroadcastJoinThreshold": "-1",
          "spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly": "false"})
    spark.range(16000).selectExpr("id", "id % 10 AS k", "CAST(id % 8 AS INT) AS p").write.partitionBy("p").parquet(
        str(tmp_path / "fact"))
    spark.range(8).selectExpr("CAST(id AS INT) AS dp", "IF(id < 2, 'keep', 'drop') AS tag").write.parquet(str(tmp_path / "dim"))
    spark.read.parquet(str(tmp_path / "fact")).createOrReplaceTempView("dpq_fact")
    spark.read.parquet(str(tmp_path / "dim")).createOrReplaceTempView("dpq_dim")
    p = measure("SELECT f.id, f.k FROM dpq_fact f JOIN dpq_dim d ON f.p = d.dp WHERE d.tag = 'keep'", spark=spark)
    fact = next(b for b in p.blocks if b.head and b.head.kind == "ArrangeBy" and "Get fact" in str(b))
    assert fact.measured.rows == 4000 and "aggregate" not in fact.spark, (fact.measured, fact.spark)
    pruning = [o for o in p.measurement.operators if o.kind.startswith("hash") or "aggregate" in o.kind]
    assert pruning and all(o.block is None and "a subquery pruning the files of" in o.reason for o in pruning), pruning


def test_window_blocks_measured(spark, tpcds_db, use_db):
    use_db(tpcds_db)
    p = measure(queries("tpcds")["q98"], spark=spark)
    windows = [o for o in p.measurement.operators if o.kind == "window"]
    assert windows and all(o.block is not None for o in windows)
    wblock = p[windows[0].block]
    assert wblock.head.mode == "window"
    assert windows[0].id in wblock.measured.operators


def test_cached_relation_is_shared(spark):
    cached = spark.range(0, 2000).selectExpr("id % 20 as k", "id as v").cache()
    try:
        cached.count()
        df = cached.groupBy("k").count()
        p = measure(df)
        caches = [o for o in p.measurement.operators if o.kind == "cache"]
        assert len(caches) == 1 and caches[0].shared and caches[0].block is not None
        assert caches[0].id not in p[caches[0].block].measured.operators
        assert any(o.kind == "aggregate" and o.block for o in p.measurement.operators)
    finally:
        cached.unpersist()


@pytest.mark.parametrize("kind,name", [("tpch", "q3"), ("tpch", "q22"), ("tpcds", "q20"), ("tpcds", "q65")])
def test_measuring_does_not_change_results(spark, tpch_db, tpcds_db, use_db, kind, name):
    use_db(kind)
    sql = queries(kind)[name]
    plain = spark.sql(sql).collect()
    p = measure(sql, spark=spark, collect=True)
    assert p.measurement.rows == plain  # same rows, same order (the queries are ordered)
    assert p.measurement.result_rows == len(plain)
    counted = measure(sql, spark=spark)
    assert counted.measurement.result_rows == len(plain) and counted.measurement.rows is None


def test_a_cache_the_measured_run_builds_is_its_own_state(spark):
    """A cache not materialized before the run is built by it: the run's own state (not shared),
    with the rows and bytes Spark's storage holds for it, and its memory in the block's peak. Read
    again, it is an existing arrangement (shared)."""
    cached = spark.range(0, 20000).selectExpr("id % 20 as k", "id as v").cache()
    try:
        df = cached.groupBy("k").count()
        p = measure(df)
        cache = next(o for o in p.measurement.operators if o.kind == "cache")
        rdd = next(r for r in spark.sparkContext._jsc.sc().getRDDStorageInfo() if r.numCachedPartitions() > 0)
        assert not cache.shared and "built by this query's first run" in cache.reason, cache
        assert cache.state_rows == 20000 and cache.state_bytes == rdd.memSize() + rdd.diskSize() > 0, cache
        assert cache.peak_memory == rdd.memSize() and cache.id in p[cache.block].measured.operators
        assert p[cache.block].measured.peak_memory >= cache.peak_memory

        again = measure(cached.groupBy("k").count())
        cache = next(o for o in again.measurement.operators if o.kind == "cache")
        assert cache.shared and cache.peak_memory == 0 and "existing arrangement" in cache.reason, cache
    finally:
        cached.unpersist()


def test_failing_query_reports_failure_and_keeps_measurements(spark, conf):
    conf({"spark.sql.ansi.enabled": "true"})
    sql = ("select g, sum(k) / (g - 2) as r from (select id % 5 as g, id as k from range(0, 5000)) t "
           "group by g")
    with pytest.raises(Exception):
        spark.sql(sql).collect()
    p = measure(sql, spark=spark)
    assert p.measurement.status == "failed"
    assert "DIVIDE_BY_ZERO" in p.measurement.error
    aggs = [o for o in p.measurement.operators if o.kind == "aggregate"]
    assert aggs and any((o.rows or 0) > 0 for o in aggs), "what ran before the failure is kept"
    assert "FAILED" in str(p)
    again = Program.from_json(p.to_json())
    assert again.measurement.status == "failed" and again.measurement.error == p.measurement.error


def test_texts_show_the_measured_figures(spark):
    """The JVM writes the measured lines into the texts: one per block after its header line, the
    run's summary and its unattributed operators at the end."""
    p = measure("select k % 3 g, count(*) from range(100) t(k) group by 1 order by 1", spark=spark, name="m")
    for b in p.blocks:
        header, line = str(b).splitlines()[:2]
        assert header.startswith(f"[{b.name}]  ") and line.startswith("  -- measured: ")
        assert f"(operators {', '.join(map(str, b.measured.operators)) or 'none'}" in line
    m = p.measurement
    summary = str(p).split("\n\n")[-1]
    assert not any(o.shared for o in m.operators)
    assert summary.startswith(f"-- measured: {len(m.operators)} stateful operators, {len(m.unattributed)} unattributed, ")
    assert ", 3 result rows" in summary and m.result_rows == 3 and m.status == "ok" and "FAILED" not in summary
    assert m.unattributed and all(f"\n--   unattributed #{i} " in summary for i in m.unattributed)


def test_measured_rows_and_bytes_are_the_state_the_block_holds(spark, conf, tmp_path):
    """Issue 21: a broadcast block's measured rows are the broadcast relation's (not the join's
    output), a Reduce's are its groups, a merge join input's are the rows its sort holds; bytes are
    the data Spark measured for that state (a broadcast's: its rows as UnsafeRows where their width
    is fixed, else unknown: Spark's own ``dataSize`` of a broadcast is its hash map's allocation);
    the streamed side holds nothing; peak memory (what Spark allocated) stays a column of its own."""
    spark.range(20000).selectExpr("id", "id % 100 AS k").write.parquet(str(tmp_path / "fact"))
    spark.range(100).selectExpr("id", "CAST(id AS STRING) AS s", "id * 2 AS v").write.parquet(str(tmp_path / "dim"))
    spark.read.parquet(str(tmp_path / "fact")).createOrReplaceTempView("m_fact")
    spark.read.parquet(str(tmp_path / "dim")).createOrReplaceTempView("m_dim")
    sql = "SELECT d.s, count(*) FROM m_fact f JOIN m_dim d ON f.k = d.id GROUP BY d.s"
    p = measure(sql, spark=spark, name="b")
    by_what = {b.spark: b for b in p.blocks if b.spark}
    bcast = next(b for b in p.blocks if b.spark and "broadcast relation" in b.spark)
    assert bcast.measured.rows == 100, str(bcast)  # not the 20000 rows the join produced
    op = p.measurement.operator(bcast.measured.state_operator)
    # (id, s): a string's bytes are not measured; the page Spark allocated is peak memory, not bytes
    assert op.what == "broadcast relation" and bcast.measured.bytes is None and bcast.measured.ratio is None
    assert bcast.measured.peak_memory >= op.metrics["dataSize"] > 100 * 24
    # (id, v): two BIGINTs, 24 bytes a row (8 of NULL bits), 100 rows
    fixed = measure("SELECT d.v, count(*) FROM m_fact f JOIN m_dim d ON f.k = d.id GROUP BY d.v", spark=spark, name="f")
    fixed_bcast = next(b for b in fixed.blocks if b.spark and "broadcast relation" in b.spark)
    assert fixed_bcast.measured.rows == 100 and fixed_bcast.measured.bytes == 2400, str(fixed_bcast)
    streamed = [b for b in p.blocks if b.spark == "none"]
    assert streamed and all(b.measured.operators == [] for b in streamed), by_what
    reduce = p.blocks[-1]
    assert reduce.head.kind == "Reduce" and reduce.measured.rows == 100, str(reduce)
    state = p.measurement.operator(reduce.measured.state_operator)
    shuffle = next(p.measurement.operator(i) for i in reduce.measured.operators
                   if p.measurement.operator(i).what == "shuffle")
    row = shuffle.metrics["dataSize"] / shuffle.metrics["shuffleRecordsWritten"]  # keys + buffers, as shuffled
    assert state.what == "hash aggregate (final)" and reduce.measured.bytes == round(100 * row)
    # what Spark allocated (pages) is a column of its own, not the arrangement's size
    assert reduce.measured.peak_memory > 100 * reduce.measured.bytes
    # without broadcasts: both inputs are sorted for the merge join; each holds its side's rows
    conf({"spark.sql.autoBroadcastJoinThreshold": -1, "spark.sql.adaptive.enabled": False})
    m = measure(sql, spark=spark, name="s")
    sides = sorted(b.measured.rows for b in m.blocks if b.spark and "sort for merge join" in b.spark)
    assert sides == [100, 20000], str(m)
    for b in m.blocks:
        if b.spark and "sort for merge join" in b.spark:
            state = m.measurement.operator(b.measured.state_operator)
            assert state.what == "sort for merge join" and b.measured.bytes and b.measured.bytes > 0


def test_tpcds_q12_fails_under_ansi_and_is_still_measured(spark, tpcds_db, use_db):
    """At the test scale q12 divides by a zero window sum (ANSI on): the report keeps the operators."""
    use_db(tpcds_db)
    df = spark.sql(queries("tpcds")["q12"])
    p = measure(df)
    assert p.measurement.status == "failed" and "DIVIDE_BY_ZERO" in p.measurement.error
    check_attribution(spark, df, p)
    assert any(o.kind == "window" and o.block for o in p.measurement.operators)


def test_query_that_does_not_analyze(spark):
    with pytest.raises(pyspark_arrnf.ArrnfError, match="does not analyze"):
        measure("select nope from nowhere", spark=spark)


def test_streaming_aggregation_reports_state_rows_per_batch(spark):
    df = (spark.readStream.format("rate").option("rowsPerSecond", 200).load()
          .selectExpr("value % 7 as k").groupBy("k").count())
    q = df.writeStream.format("memory").queryName("arrnf_measure_stream").outputMode("complete") \
        .trigger(processingTime="500 milliseconds").start()
    try:
        reports = []
        for p in watch_stream(q, batches=8, timeout=120):
            if reports or any((o.rows or 0) > 0 for o in p.measurement.operators):
                reports.append(p)
            if len(reports) == 3:
                break
        assert len(reports) == 3, "three micro-batches with data"
        assert all(isinstance(p.measurement.settled, bool) for p in reports)
        ids = [p.measurement.batch_id for p in reports]
        assert ids == sorted(set(ids)), "one report per micro-batch"
        for p in reports:
            ops = p.measurement.operators
            assert ops and all(o.kind == "state" for o in ops)
            for o in ops:
                assert o.block is not None and p[o.block].head.kind == "Reduce"
                assert 0 < o.rows <= 7, "at most seven groups held in the state store"
                assert o.peak_memory > 0
            assert p.measurement.peak_memory == sum(o.peak_memory for o in ops)
        rows = [p.measurement.operators[0].rows for p in reports]
        assert rows == sorted(rows) and rows[-1] == 7, rows
        progress = q.lastProgress
        last = measure_stream(q)
        if last.measurement.batch_id == progress["batchId"]:
            assert [o.rows for o in last.measurement.operators] == [
                s["numRowsTotal"] for s in progress["stateOperators"]]
    finally:
        q.stop()


def test_views_show_measured_columns(spark, tpch_db, use_db, tmp_path):
    use_db(tpch_db)
    p = measure(queries("tpch")["q3"], spark=spark)
    text = str(p)
    assert "measured: " in text and "-- measured: " in text
    raw = p.to_json()
    again = Program.from_json(raw)
    assert again == p and again.to_json() == raw
    d = json.loads(raw)
    assert "measurement" in d and all("measured" in b for b in d["blocks"])
    assert isinstance(again.blocks[0].measured, Measured)
    frame = p.cost_frame()
    assert {"peak_memory", "ratio", "measured_rows"} <= set(frame.columns)
    assert frame["peak_memory"].sum() == p.measurement.peak_memory
    assert len(operators_frame(p)) == len(p.measurement.operators)
    html = p._repr_html_()
    assert "peak memory" in html and "measured/estimated" in html
    png, svg = tmp_path / "m.png", tmp_path / "m.svg"
    plot(p, str(png))
    plot(p, str(svg))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in svg.read_bytes()[:2000]
    # an unmeasured program keeps its old form: no measured fields at all
    plain = pyspark_arrnf.arrnf(queries("tpch")["q3"], spark=spark)
    assert "measurement" not in json.loads(plain.to_json()) and "peak_memory" not in plain.cost_frame().columns


def test_anything_but_a_dataframe_or_text_is_a_type_error(spark):
    for given, named in ((123, "int"), (None, "NoneType"), (spark.range(3).toPandas(), "pandas.core.frame.DataFrame")):
        with pytest.raises(TypeError, match=rf"^measure\(\) takes a Spark DataFrame or SQL text, not {named}\b"):
            measure(given, spark=spark)


def test_a_query_that_fails_while_planned_says_so_in_one_line(spark, conf):
    """Under ANSI, Spark folds 1/0 while planning: nothing ran, there is no plan to measure."""
    conf({"spark.sql.ansi.enabled": "true"})
    with pytest.raises(pyspark_arrnf.ArrnfError) as e:
        measure("select 1/0 as x", spark=spark)
    assert str(e.value).startswith("the query failed while Spark planned it, before it ran: there is no plan to "
                                   "measure: ArithmeticException: [DIVIDE_BY_ZERO] Division by zero.")
    assert "\n" not in str(e.value)


def test_arrnf_says_a_query_that_fails_while_planned_is_the_querys_failure(spark, conf):
    """arrnf() of such a query raised "could not normalize the plan", which reads as ArrNF's own failure."""
    conf({"spark.sql.ansi.enabled": "true"})
    for given in ("select 1/0 as x", spark.sql("select 1/0 as x")):
        with pytest.raises(pyspark_arrnf.ArrnfPlanningError) as e:
            pyspark_arrnf.arrnf(given, spark)
        assert str(e.value).startswith("the query failed while Spark planned it, before it ran: there is no plan to "
                                       "normalize: ArithmeticException: [DIVIDE_BY_ZERO] Division by zero.")
        assert "\n" not in str(e.value) and "could not normalize" not in str(e.value)


def test_a_streaming_dataframe_is_sent_to_measure_stream(spark):
    df = spark.readStream.format("rate").load().selectExpr("value % 3 as g").groupBy("g").count()
    with pytest.raises(pyspark_arrnf.ArrnfError) as e:
        measure(df)
    assert str(e.value) == ("measure() runs a batch query, and this one reads a stream: start it "
                            "(query = df.writeStream...start()) and call measure_stream(query)")


# joined on counts: the join's input rows are unknown to the estimate, measured all the same
UNKNOWN_ESTIMATE = ("with a as (select k % 10 as g, count(*) as c from range(1000) t(k) group by 1) "
                    "select * from a x join a y on x.c = y.c where x.c > 5")


def test_measured_cost_frame_counts_are_integers(spark):
    import pandas as pd

    p = measure(UNKNOWN_ESTIMATE, spark=spark)
    frame = p.cost_frame()
    for c in ("rows", "bytes", "measured_rows", "measured_bytes", "peak_memory", "spill", "shuffle_bytes"):
        assert str(frame[c].dtype) == "Int64", c
    assert frame["rows"].isna().any() and frame["measured_rows"].notna().any()
    # the ratio: a nullable float, unknown where the estimate is (it was object: None here, NaN there)
    assert str(frame["ratio"].dtype) == "Float64" and frame["ratio"].isna().any()
    assert [None if v is pd.NA else v for v in frame["measured_rows"]] == [
        b.measured.rows if b.measured else None for b in p.blocks]


def test_plot_draws_no_bar_for_an_unknown_size_and_its_title_fits(spark, tmp_path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    p = measure(UNKNOWN_ESTIMATE, spark=spark)
    drawn = [b for b in p.blocks if b.spark not in (None, "none")]
    unknown = [b for b in drawn if b.cost.bytes is None] + [b for b in drawn if b.measured is None or b.measured.bytes is None]
    assert any(b.cost.bytes is None and b.measured and b.measured.bytes for b in drawn), "an unknown estimate"
    fig = plot(p, str(tmp_path / "c.png"))
    ax = fig.axes[0]
    heights = [bar.get_height() for bar in ax.patches]
    assert len(heights) == 2 * len(drawn) - len(unknown) and 0 not in heights, heights  # no 0-byte bars
    assert [t.get_text() for t in ax.texts] == ["unknown"] * len(unknown)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    title = ax.title.get_window_extent(canvas.get_renderer())
    assert 0 <= title.x0 and title.x1 <= fig.bbox.width and title.y1 <= fig.bbox.height, (title, fig.bbox)


@pytest.mark.parametrize("adaptive", [True, False])
def test_a_stage_spark_runs_twice_for_a_global_sort_is_counted_once(spark, conf, adaptive):
    """A global ORDER BY's range-partitioned shuffle first runs the stage below it to sample its
    ranges, then again to write: Spark's metrics of that stage count both runs (a 7-group aggregate
    reports 14 rows). The block's figures are one run's, and its line says so; Spark's own counts
    stay in ``metrics``. With one partition Spark samples nothing: counted as they are."""
    conf({"spark.sql.adaptive.enabled": adaptive, "spark.sql.shuffle.partitions": 4})
    sql = "SELECT k % 7 AS g, sum(k) AS s FROM range(1000) t(k) GROUP BY 1"
    for ordered in (sql + " ORDER BY s", sql):
        p = measure(ordered, spark=spark, name="q")
        reduce = next(b for b in p.blocks if b.head and b.head.kind == "Reduce")
        state = p.measurement.operator(reduce.measured.state_operator)
        assert state.what == "hash aggregate (final)" and reduce.measured.rows == 7, str(p)
        twice = "ORDER BY" in ordered
        assert state.ran_twice == twice and state.metrics["numOutputRows"] == (14 if twice else 7), state
        assert ("first to sample the ranges of the range shuffle it feeds: one run's figures" in str(reduce)) == twice, str(reduce)
    conf({"spark.sql.shuffle.partitions": 1})
    p = measure(sql + " ORDER BY s", spark=spark, name="q")
    state = p.measurement.operator(next(b for b in p.blocks if b.head and b.head.kind == "Reduce").measured.state_operator)
    assert not state.ran_twice and state.metrics["numOutputRows"] == 7, state


def test_a_dataframe_already_run_is_measured_on_its_own_run(spark):
    """Spark's SQL metrics add up on an executed plan that runs again: measured after a
    ``collect()`` of the same DataFrame, the figures read twice the rows and memory."""
    df = spark.sql("SELECT k % 1000 AS g, count(*) AS c FROM range(20000) t(k) GROUP BY 1")
    first = measure(df)
    df.collect()
    df.collect()
    again = measure(df)
    for p in (first, again):
        reduce = next(b for b in p.blocks if b.head and b.head.kind == "Reduce")
        assert reduce.measured.rows == 1000 and p.measurement.result_rows == 1000, str(p)
    assert [o.rows for o in again.measurement.operators] == [o.rows for o in first.measurement.operators]


def test_the_state_is_what_spark_held_under_a_limit_a_hash_join_and_a_rank_limit(spark, conf, tmp_path):
    """Three figures Spark's metrics would misstate, read as the state each operator held:
    * an aggregate under a LIMIT in its stage: its output rows are the few the limit read, not its
      groups: unknown, and the line says why;
    * a shuffled hash join's ``buildDataSize`` is its hash map's allocation (pages of 64 MB): memory,
      not the state's bytes, which are its build input's shuffled bytes;
    * a rank limit's block holds its local sort of every row, not only its final sort of the kept ones."""
    conf({"spark.sql.adaptive.enabled": False, "spark.sql.autoBroadcastJoinThreshold": -1})
    spark.range(20000).selectExpr("id % 1000 AS g", "id AS v").write.parquet(str(tmp_path / "t"))
    spark.read.parquet(str(tmp_path / "t")).createOrReplaceTempView("lim_t")

    p = measure("SELECT * FROM (SELECT g, count(*) AS c FROM lim_t GROUP BY g) LIMIT 5", spark=spark)
    reduce = next(b for b in p.blocks if b.head and b.head.kind == "Reduce")
    state = p.measurement.operator(reduce.measured.state_operator)
    assert state.what == "hash aggregate (final)" and state.limited_above and state.state_rows is None, state
    assert reduce.measured.rows is None and "rows unknown: a LIMIT above" in str(reduce), str(reduce)
    assert p.measurement.result_rows == 5

    p = measure("SELECT /*+ SHUFFLE_HASH(d) */ t.v, d.v FROM lim_t t JOIN "
                "(SELECT id AS g, id * 2 AS v FROM range(1000)) d ON t.g = d.g", spark=spark)
    build = next(b for b in p.blocks if b.spark and "shuffled hash table" in b.spark)
    op = p.measurement.operator(build.measured.state_operator)
    shuffle = next(p.measurement.operator(i) for i in build.measured.operators
                   if p.measurement.operator(i).what == "shuffle")
    assert op.what == "shuffled hash table" and build.measured.rows == 1000, str(build)
    assert build.measured.bytes == shuffle.metrics["dataSize"] < op.metrics["buildDataSize"], str(build)
    assert build.measured.peak_memory >= op.metrics["buildDataSize"]

    p = measure("SELECT * FROM (SELECT g, v, row_number() OVER (PARTITION BY g ORDER BY v) AS r FROM lim_t) "
                "WHERE r <= 3", spark=spark)
    top = next(b for b in p.blocks if b.head and b.head.kind == "TopK")
    sorts = [p.measurement.operator(i) for i in top.measured.operators if p.measurement.operator(i).kind == "sort"]
    # (the final sort reads what each task's local limit kept: 3 rows a group a task)
    assert len(sorts) == 2 and sorted(s.state_rows for s in sorts)[1] == 20000 > sorted(s.state_rows for s in sorts)[0]
    assert top.measured.rows == 20000, str(top)


def test_memory_spark_does_not_measure_is_unknown_not_zero(spark, conf):
    """A window, an object hash aggregate and a sort-merge join hold rows in memory, but Spark has
    no memory metric for them: their peak is unknown (None, ``peak=unknown``), and a block whose
    sort Spark measures beside them shows a lower bound (``peak≥``), naming the operators left out."""
    conf({"spark.sql.adaptive.enabled": False, "spark.sql.autoBroadcastJoinThreshold": -1})
    spark.range(20000).selectExpr("id % 100 AS g", "id AS v", "CAST(id AS STRING) AS s").createOrReplaceTempView("mem_t")

    p = measure("SELECT g, collect_list(s) AS l FROM mem_t GROUP BY g", spark=spark)
    reduce = next(b for b in p.blocks if b.head and b.head.kind == "Reduce")
    aggs = [p.measurement.operator(i) for i in reduce.measured.operators if p.measurement.operator(i).kind == "aggregate"]
    assert aggs and all(o.node == "ObjectHashAggregate" and o.peak_memory is None and "peakMemory" not in o.metrics
                        for o in aggs), aggs
    assert reduce.measured.peak_memory is None and "peak=unknown" in str(reduce), str(reduce)
    assert {o.id for o in aggs} <= set(reduce.measured.peak_memory_unmeasured)
    assert set(p.measurement.peak_memory_unmeasured) >= {o.id for o in aggs}
    assert "Spark measures no memory of" in str(p)
    frame = operators_frame(p)
    assert str(frame["peak_memory"].dtype) == "Int64" and frame["peak_memory"].isna().sum() == len(aggs)

    p = measure("SELECT g, v, sum(v) OVER (PARTITION BY g ORDER BY v) AS c FROM mem_t", spark=spark)
    window = next(p.measurement.operator(i) for b in p.blocks if b.measured for i in b.measured.operators
                  if p.measurement.operator(i).kind == "window")
    block = next(b for b in p.blocks if b.measured and window.id in b.measured.operators)
    sort = next(p.measurement.operator(i) for i in block.measured.operators if p.measurement.operator(i).kind == "sort")
    assert window.peak_memory is None and sort.peak_memory == sort.metrics["peakMemory"] > 0
    assert block.measured.peak_memory == sort.peak_memory and block.measured.peak_memory_unmeasured == [window.id]
    assert "peak≥" in str(block) and f"Spark measures no memory of #{window.id} Window" in str(block), str(block)
    from pyspark_arrnf.views import _peak  # the notebook view's cell
    assert _peak(block.measured).startswith("≥") and _peak(reduce.measured) == "unknown"

    p = measure("SELECT /*+ MERGE(b) */ a.v, b.v FROM mem_t a JOIN mem_t b ON a.v = b.v", spark=spark)
    smj = next(o for o in p.measurement.operators if o.node == "SortMergeJoin")
    assert smj.peak_memory is None
    assert smj.id in p.measurement.peak_memory_unmeasured


def test_a_top_k_spark_takes_per_task_is_the_blocks_state(spark, conf):
    """``ORDER BY … LIMIT`` inside a query is a TopK block Spark realizes by TakeOrderedAndProject:
    each task keeps its best limit + offset rows and shuffles them to one partition. It was shown as
    ``spark=none`` with no figures; at the root (finishing, no block) it is listed, unattributed."""
    conf({"spark.sql.adaptive.enabled": False})
    spark.range(0, 20000, 1, 2).selectExpr("id % 100 AS g", "id AS v").createOrReplaceTempView("topk_t")
    p = measure("SELECT * FROM topk_t WHERE v > (SELECT v FROM topk_t ORDER BY v DESC LIMIT 1 OFFSET 3)", spark=spark)
    top = next(b for b in p.blocks if b.head and b.head.kind == "TopK")
    assert [r["what"] for r in top.realization] == ["top-4 rows per task"], top.realization
    op = p.measurement.operator(top.measured.state_operator)
    assert op.node == "TakeOrderedAndProject" and op.state_rows == 2 * 4 and op.shuffle_bytes > 0, op
    assert op.peak_memory is None and top.measured.rows == 8 and top.measured.shuffle_bytes == op.shuffle_bytes
    assert p.measurement.result_rows == 3

    p = measure("SELECT g, sum(v) AS s FROM topk_t GROUP BY g ORDER BY s DESC LIMIT 5", spark=spark)
    root = next(o for o in p.measurement.operators if o.node == "TakeOrderedAndProject")
    assert root.block is None and root.id in p.measurement.unattributed


def test_the_totals_count_the_finishing_sort_and_a_sort_aggregate_holds_its_groups(spark, conf):
    """A global ORDER BY's sort and shuffle are in no block: the totals had their spill and shuffle
    nowhere (``shuffle 0B`` for a query that shuffled). A sort aggregate's block read the rows of
    the sort below it ("sort for aggregate" was ranked as a final aggregate): its groups now, and its
    memory unknown (Spark measures none; a ``collect_list`` group holds all its values)."""
    conf({"spark.sql.adaptive.enabled": False})
    spark.range(0, 20000, 1, 2).selectExpr("id % 1000 AS g", "CAST(id AS STRING) AS s").createOrReplaceTempView("fin_t")
    p = measure("SELECT g, s FROM fin_t ORDER BY s", spark=spark)
    shuffles = [o for o in p.measurement.operators if o.kind == "exchange" and o.block is None]
    assert shuffles and p.measurement.unattributed_shuffle_bytes == sum(o.shuffle_bytes for o in shuffles) > 0
    assert re.search(r"shuffle \S+ \+ \S+ unattributed", str(p)), str(p)

    p = measure("SELECT g, max(s) AS m FROM fin_t GROUP BY g", spark=spark)
    agg = next(o for o in p.measurement.operators if o.node == "SortAggregate" and "final" in o.what)
    block = p[agg.block]
    assert block.measured.state_operator == agg.id and block.measured.rows == 1000, str(block)
    assert agg.peak_memory is None and agg.id in block.measured.peak_memory_unmeasured


def test_spill_spark_does_not_measure_is_unknown_not_zero(spark, conf):
    """A cartesian product's buffer spills past its threshold, but Spark has no spill metric for it
    (the stage's task metrics showed 64 MB spilled, ArrNF printed ``spill=0B``: a tester)."""
    conf({"spark.sql.autoBroadcastJoinThreshold": -1, "spark.sql.adaptive.enabled": False})
    a = spark.range(20).selectExpr("id AS a").repartition(2)
    b = spark.range(2000).selectExpr("id AS b").repartition(2)
    p = measure(a.crossJoin(b).selectExpr("max(a + b) AS m"))
    cp = next(o for o in p.measurement.operators if o.node == "CartesianProduct")
    assert cp.spill is None and "spillSize" not in cp.metrics and cp.id in p.measurement.spill_unmeasured
    block = p[cp.block]
    assert cp.id in block.measured.spill_unmeasured and "spill=unknown" in str(block), str(block)
    from pyspark_arrnf.views import _spill  # the notebook view's cell
    assert _spill(block.measured) == "unknown"
    frame = operators_frame(p)
    assert str(frame["spill"].dtype) == "Int64" and frame["spill"].isna().sum() == 1


def test_a_grouped_python_functions_input_holds_the_shuffle_and_sort(spark, conf):
    """applyInPandas and cogroup arrange each input by its grouping keys (the normalizer's ArrangeBy
    blocks); the shuffle and sort Spark builds for that were attributed to the result block, and the
    arrangement read ``spark=none`` (a tester)."""
    import pandas as pd

    conf({"spark.sql.adaptive.enabled": False})
    df = spark.range(0, 2000, 1, 2).selectExpr("id % 10 AS k", "id AS v")

    def count(g: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({"k": [g.k.iloc[0]], "n": [len(g)]})

    def both(l: pd.DataFrame, r: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({"n": [len(l) + len(r)]})

    for grouped in (df.groupBy("k").applyInPandas(count, "k long, n long"),
                    df.groupBy("k").cogroup(df.groupBy("k")).applyInPandas(both, "n long")):
        p = measure(grouped)
        arranged = [b for b in p.blocks if b.head and b.head.kind == "ArrangeBy"]
        assert arranged, str(p)
        for b in arranged:
            whats = [p.measurement.operator(i).what for i in b.measured.operators]
            assert "shuffle" in whats and any(w.startswith("sort") for w in whats), str(b)
            assert b.measured.rows == 2000, str(b)


def test_a_python_function_that_raises_is_named_in_the_failure(spark):
    """A Python UDF's error was kept as ``PythonException: An exception was thrown from the Python
    worker:``, its cause (``ZeroDivisionError``) dropped from the report and the notebook view (a tester)."""
    from pyspark.sql.functions import udf

    inverse = udf(lambda x: 1 / x, "double")
    p = measure(spark.range(5).select(inverse("id").alias("z")).groupBy("z").count())
    assert p.measurement.status == "failed", p.measurement
    assert p.measurement.error == "PythonException: ZeroDivisionError: division by zero", p.measurement.error
