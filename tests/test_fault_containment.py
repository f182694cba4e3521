"""Correctness gate, part 3: a failing rule never fails the user's query, and the kill switch works.

Every rule registered in the extension (``arrnf.ArrnfExtension.ruleNames()`` in the JVM, so rules
merged later are covered without being named) is made to throw with
``spark.arrnf.testing.failRule=<RuleSimpleName>``. For each one: the queries still run and return
what they return without the extension, the optimized plan is the one Spark makes with that rule
switched off (the plan the rule was given is kept), a warning names the rule, and
``arrnf.Api.failureCount`` counts it. The kill switch ``spark.arrnf.enabled=false`` turns every
rule off in the live session: no rule is even called, and the plans equal vanilla Spark's (all of
the extension's rules excluded through ``spark.sql.optimizer.excludedRules``).
"""
from __future__ import annotations

import contextlib

import pytest

from pyspark_arrnf.compare import arrnf_enabled

# Shapes the rules of the extension rewrite (unit joins, union of joins sharing an input,
# EXCEPT ALL / INTERSECT ALL of a relation with itself), and a plain one.
QUERIES = [
    "SELECT t.id, u.one FROM range(10) t CROSS JOIN (SELECT 1 AS one) u",
    "SELECT a.id AS x, b.id AS y FROM range(20) a JOIN range(5) b ON a.id = b.id "
    "UNION ALL SELECT a.id AS x, c.id AS y FROM range(20) a JOIN range(7) c ON a.id = c.id",
    "SELECT id % 3 AS k FROM range(10) EXCEPT ALL SELECT id % 3 AS k FROM range(10)",
    "SELECT id % 4 AS k FROM range(12) INTERSECT ALL SELECT id % 4 AS k FROM range(12)",
    "SELECT k, count(*) AS n FROM (SELECT id % 5 AS k FROM range(30) UNION ALL SELECT id FROM range(3)) GROUP BY k",
]


def rule_names(spark) -> list[str]:
    """Simple names of every rule the extension registers, read from the JVM."""
    seq = spark._jvm.arrnf.ArrnfExtension.ruleNames()
    return [str(seq.apply(i)).rsplit(".", 1)[-1] for i in range(seq.size())]


def full_rule_names(spark) -> list[str]:
    seq = spark._jvm.arrnf.ArrnfExtension.ruleNames()
    return [str(seq.apply(i)) for i in range(seq.size())]


def failures(spark, rule: str) -> int:
    return int(spark._jvm.arrnf.Api.failureCount(rule))


def plan_and_rows(spark, sql):
    df = spark.sql(sql)
    return df._jdf.queryExecution().optimizedPlan(), sorted(tuple(r) for r in df.collect())


@contextlib.contextmanager
def captured_warnings(spark, logger_name="arrnf"):
    """Collects the log lines at WARN and above of ``logger_name`` (log4j2) into a Java StringWriter,
    even though the test session logs only errors."""
    jvm = spark._jvm
    log4j = jvm.org.apache.logging.log4j
    ctx = log4j.LogManager.getContext(False)
    config = ctx.getConfiguration()
    writer = jvm.java.io.StringWriter()
    layout = log4j.core.layout.PatternLayout.newBuilder().withPattern("%p %c %m%n").build()
    appender = log4j.core.appender.WriterAppender.newBuilder().setName("arrnf-gate-test") \
        .setLayout(layout).setTarget(writer).build()
    appender.start()
    logger = log4j.core.config.LoggerConfig(logger_name, log4j.Level.WARN, False)
    logger.addAppender(appender, None, None)
    config.addLogger(logger_name, logger)
    ctx.updateLoggers()
    try:
        yield writer
    finally:
        config.removeLogger(logger_name)
        ctx.updateLoggers()
        appender.stop()


def test_there_are_rules_to_check(spark):
    names = rule_names(spark)
    assert "EliminateUnitJoin" in names and len(set(names)) == len(names), names


@pytest.mark.parametrize("sql", QUERIES)
def test_a_failing_rule_never_fails_the_query(spark, conf, sql):
    with arrnf_enabled(spark, False):
        _, expected = plan_and_rows(spark, sql)
    for rule in rule_names(spark):
        # the plan Spark makes with only this rule switched off
        conf({f"spark.arrnf.{rule}.enabled": "false", "spark.arrnf.testing.failRule": ""})
        without_rule, _ = plan_and_rows(spark, sql)
        conf({f"spark.arrnf.{rule}.enabled": "true", "spark.arrnf.testing.failRule": rule})
        before = failures(spark, rule)
        with captured_warnings(spark) as log:
            plan, rows = plan_and_rows(spark, sql)
        assert rows == expected, f"{rule} failing changed the result of {sql}"
        assert plan.sameResult(without_rule), (
            f"{rule} failing did not keep the plan it was given:\n{plan}\nwith the rule off:\n{without_rule}")
        assert failures(spark, rule) > before, f"the failure of {rule} was not counted"
        text = str(log.toString())
        assert f"rule arrnf.rules.{rule} failed and was skipped" in text, text[:2000]
        assert f"spark.arrnf.{rule}.enabled=false" in text
    conf({"spark.arrnf.testing.failRule": ""})


def test_failure_counter_is_reported_per_rule_to_python(spark, conf):
    import pyspark_arrnf

    for rule in rule_names(spark):
        conf({"spark.arrnf.testing.failRule": rule})
        spark.sql(QUERIES[0]).collect()
        assert pyspark_arrnf.rule_failures(spark).get(rule, 0) >= 1
    conf({"spark.arrnf.testing.failRule": ""})


def test_kill_switch_stops_every_rule_from_running(spark, conf):
    """With ``spark.arrnf.enabled=false`` no rule is called at all: an injected failure never fires."""
    for rule in rule_names(spark):
        conf({"spark.arrnf.testing.failRule": rule, "spark.arrnf.enabled": "false"})
        before = failures(spark, rule)
        for sql in QUERIES:
            spark.sql(sql).collect()
        assert failures(spark, rule) == before, f"{rule} ran with the kill switch off"
        # and the rule's own switch does the same for that rule alone
        conf({"spark.arrnf.enabled": "true", f"spark.arrnf.{rule}.enabled": "false"})
        for sql in QUERIES:
            spark.sql(sql).collect()
        assert failures(spark, rule) == before, f"{rule} ran with spark.arrnf.{rule}.enabled=false"
        conf({f"spark.arrnf.{rule}.enabled": "true"})
    conf({"spark.arrnf.testing.failRule": ""})


def test_kill_switch_gives_vanilla_plans_at_runtime(spark, conf):
    """Off, the plans are vanilla Spark's; on again, the rewrites come back (same live session)."""
    for sql in QUERIES:
        conf({"spark.sql.optimizer.excludedRules": ",".join(full_rule_names(spark))})
        vanilla, vanilla_rows = plan_and_rows(spark, sql)
        conf({"spark.sql.optimizer.excludedRules": ""})
        with arrnf_enabled(spark, False):
            off, off_rows = plan_and_rows(spark, sql)
        assert off.sameResult(vanilla), f"kill switch off is not vanilla for {sql}:\n{off}\n{vanilla}"
        assert off_rows == vanilla_rows
    # the unit join is rewritten with the switch on, in the same session, after it was off
    with arrnf_enabled(spark, True):
        on, _ = plan_and_rows(spark, QUERIES[0])
    with arrnf_enabled(spark, False):
        off0, _ = plan_and_rows(spark, QUERIES[0])
    assert "Join" in str(off0.toString()) and "Join" not in str(on.toString())


def test_a_failing_normalizer_never_fails_the_query_or_explain(spark, conf, capsys):
    """The normalizer made to throw (``spark.arrnf.testing.failRule=Normalizer``): the query runs,
    ``explain`` still has its ArrNF section (a one-line message), ``arrnf()`` raises one clear error."""
    from pyspark_arrnf import ArrnfError, arrnf

    sql = QUERIES[1]
    with arrnf_enabled(spark, False):
        _, expected = plan_and_rows(spark, sql)
    conf({"spark.arrnf.testing.failRule": "Normalizer"})
    df = spark.sql(sql)
    df.explain(mode="extended")  # must not raise
    out = capsys.readouterr().out
    assert "== Extended Information (ArrNF) ==" in out
    assert "ArrNF: could not normalize this plan (IllegalStateException: failure injected into Normalizer" in out, out
    assert sorted(tuple(r) for r in df.collect()) == expected
    with pytest.raises(ArrnfError, match="could not normalize the plan: .*failure injected into Normalizer"):
        arrnf(df)
    conf({"spark.arrnf.testing.failRule": ""})
    # a plan the normalizer cannot know: explain still answers with a section, never an exception
    spark.range(3).createOrReplaceTempView("gate_norm_t")
    df = spark.sql("SELECT explode(array(id, id)) AS x FROM gate_norm_t")
    text = spark._jvm.arrnf.normalize.Arrnf.explain(df._jdf.queryExecution().executedPlan())
    assert str(text).strip()
