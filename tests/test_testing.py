"""The DataFrame-equality helper (``pyspark_arrnf.testing``) as a user's test calls it: it compares
what it should, fails with a message saying which side is which, and refuses what it cannot test
rather than passing without testing anything."""
from __future__ import annotations

import pytest

from pyspark_arrnf import set_enabled
from pyspark_arrnf.testing import assert_same_both_ways

# NegationCancels removes it: the two sides' plans differ, their results do not.
CANCELS = "select * from range(5) except all select * from range(5)"


def test_mistakes_in_the_test_are_raised_not_compared(spark):
    """Each of these raised the same error on both sides and passed, testing nothing."""
    with pytest.raises(TypeError, match="not a DataFrame: a DataFrame keeps the plan"):
        assert_same_both_ways(spark, spark.sql(CANCELS))
    with pytest.raises(TypeError, match="not int"):
        assert_same_both_ways(spark, 123)
    with pytest.raises(ValueError, match="empty SQL text"):
        assert_same_both_ways(spark, "  ")
    with pytest.raises(ZeroDivisionError):
        assert_same_both_ways(spark, lambda: 1 / 0)
    with pytest.raises(TypeError, match="returned NoneType, not a DataFrame"):
        assert_same_both_ways(spark, lambda: None)
    with pytest.raises(TypeError, match="reads a stream"):
        assert_same_both_ways(spark, lambda: spark.readStream.format("rate").load())
    with pytest.raises(TypeError, match="SparkSession first"):
        assert_same_both_ways(None, CANCELS)
    with pytest.raises(ValueError, match="precision"):
        assert_same_both_ways(spark, CANCELS, precision="x")
    with pytest.raises(TypeError, match="ordered"):
        assert_same_both_ways(spark, CANCELS, ordered="no")
    assert spark.conf.get("spark.arrnf.enabled") == "true"


def test_a_dataframe_of_another_session_is_refused(spark):
    """Only the session given is switched: the other's rules ran on both sides."""
    other = spark.newSession()
    with pytest.raises(ValueError, match="another Spark session"):
        assert_same_both_ways(spark, lambda: other.sql(CANCELS))
    on, off = assert_same_both_ways(spark, lambda: spark.sql(CANCELS))
    assert on.plan != off.plan  # the rule fired on one side only


def test_maps_and_repeated_or_dotted_column_names_are_compared(spark):
    """chispa sorts by column name and cannot sort a MAP: these failed inside the helper."""
    spark.range(3).selectExpr("id % 2 AS k").createOrReplaceTempView("testing_k")
    assert_same_both_ways(spark, "select map(id, 'a', id + 1, 'b') m, id from range(3)")
    assert_same_both_ways(spark, "select a.k, b.k from testing_k a join testing_k b on a.k = b.k")
    assert_same_both_ways(spark, "select 1.5d, id as `a.b` from range(2)")


def test_a_difference_is_an_assertion_that_says_which_side_is_which(spark):
    def differs():
        return spark.sql("select 1 as x" if spark.conf.get("spark.arrnf.enabled") == "true" else "select 2 as x")

    with pytest.raises(AssertionError, match="df1 is with the extension, df2 without") as e:
        assert_same_both_ways(spark, differs)
    assert "\x1b[" not in str(e.value)

    def renamed():
        return spark.sql("select 1 as x" if spark.conf.get("spark.arrnf.enabled") == "true" else "select 1 as y")

    with pytest.raises(AssertionError, match=r"different column names: \['x'\] with the extension, \['y'\] without"):
        assert_same_both_ways(spark, renamed)

    def fails_off():
        on = spark.conf.get("spark.arrnf.enabled") == "true"
        return spark.sql("select 1 as x" if on else "select * from testing_no_such_table")

    with pytest.raises(AssertionError, match=r"without: AnalysisException: \[TABLE_OR_VIEW_NOT_FOUND\]"):
        assert_same_both_ways(spark, fails_off)


def test_set_enabled_refuses_text(spark):
    """``set_enabled(spark, "no")`` left the rewrites on."""
    with pytest.raises(TypeError, match="True or False"):
        set_enabled(spark, "no")
    assert spark.conf.get("spark.arrnf.enabled") == "true"


def _differs(spark, with_it: str, without: str):
    """A query function giving ``with_it`` with the rewrites on, ``without`` off (a rewrite that changed a value)."""
    return lambda: spark.sql(with_it if spark.conf.get("spark.arrnf.enabled") == "true" else without)


def test_floating_point_is_compared_exactly_unless_a_tolerance_is_given(spark):
    """An absolute tolerance of 1e-6 by default passed these differences (the tester's repro)."""
    for a, b in (("cast(9e-7 as double)", "cast(1e-7 as double)"), ("cast('-0.0' as double)", "cast('0.0' as double)"),
                 ("array(cast(1e-300 as double))", "array(cast(0 as double))")):
        with pytest.raises(AssertionError, match="df1 is with the extension"):
            assert_same_both_ways(spark, _differs(spark, f"select {a} as z", f"select {b} as z"))
    assert_same_both_ways(spark, "select cast('NaN' as double) as z, array(cast('NaN' as float)) as a")
    assert_same_both_ways(spark, _differs(spark, "select cast(9e-7 as double) as z", "select cast(1e-7 as double) as z"),
                          precision=1e-6)


def test_the_same_dataframe_returned_both_times_is_refused(spark):
    """``lambda: df`` of a DataFrame built before compared one plan with itself, and passed."""
    df = spark.sql(CANCELS)
    with pytest.raises(TypeError, match="returned the same DataFrame both times"):
        assert_same_both_ways(spark, lambda: df)


def test_variants_are_compared_and_nested_maps_refused_in_one_line(spark):
    """Both failed inside the helper, with errors naming expressions the user never wrote (hash(c0))."""
    assert_same_both_ways(spark, """select parse_json('{"a": 1}') as v""")
    with pytest.raises(AssertionError, match="df1 is with the extension"):
        assert_same_both_ways(spark, _differs(spark, """select parse_json('{"a": 1}') as v""",
                                              """select parse_json('{"a": 2}') as v"""))
    for q in ("select array(map(1, 'a')) as am", "select named_struct('m', map(1, 'a')) as sm",
              "select map(1, map(2, 'b')) as mm"):
        with pytest.raises(TypeError, match=r"cannot compare column '\w+' of type .*a MAP inside another type"):
            assert_same_both_ways(spark, q)
