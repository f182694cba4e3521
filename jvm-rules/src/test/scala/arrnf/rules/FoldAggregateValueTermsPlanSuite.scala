package arrnf.rules

import org.apache.spark.sql.catalyst.dsl.expressions._
import org.apache.spark.sql.catalyst.dsl.plans._
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, AggregateFunction, AnyValue, Complete, Count, First, Last, Max, Min, Sum}
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, LogicalPlan}
import org.apache.spark.sql.types._

class FoldAggregateValueTermsPlanSuite extends RulePlanTest {

  private val k = $"k".int
  private val v = $"v".int
  private val s = $"s".string
  private val d = $"d".double
  private val c = AttributeReference("c", StringType("UTF8_LCASE"))()
  private val r = AttributeReference("r", StringType("UTF8_BINARY_RTRIM"))()
  private val rel = LocalRelation(k, v, s, d, c, r)

  private def agg(f: AggregateFunction, filter: Option[Expression] = None) =
    AggregateExpression(f, Complete, isDistinct = false, filter)

  private def run(plan: LogicalPlan) = optimize(FoldAggregateValueTerms, plan)

  test("max/min of a grouping key and of a literal are that value; the aliases keep their ids") {
    val input = rel.groupBy(k)(k, agg(Max(k)).as("mk"), agg(Min(Literal(3))).as("three"), agg(Max(v)).as("mv"))
    val optimized = run(input)
    comparePlans(optimized, rel.groupBy(k)(k, k.as("mk"), Literal(3).as("three"), agg(Max(v)).as("mv")))
    assertSameOutput(optimized, input)
  }

  test("first, last and any_value (either NULL handling) of a key, for several key types") {
    val input = rel.groupBy(k, s)(agg(First(k, ignoreNulls = true)).as("f"), agg(Last(s, ignoreNulls = false)).as("l"),
      agg(AnyValue(k, ignoreNulls = false)).as("x"))
    comparePlans(run(input), rel.groupBy(k, s)(k.as("f"), s.as("l"), k.as("x")))
  }

  test("a grouping expression pulled out into the child projection (PullOutGroupingExpressions' shape)") {
    val child = rel.select(k, v, Remainder(k, Literal(3), EvalMode.ANSI).as("_groupingexpression"))
    val g = child.output(2)
    val input = child.groupBy(g)(g, agg(Max(Remainder(k, Literal(3), EvalMode.ANSI))).as("m"), agg(Max(v)).as("mv"))
    comparePlans(run(input), child.groupBy(g)(g, g.as("m"), agg(Max(v)).as("mv")))
  }

  test("unchanged: a global aggregate (over an empty input max(3) is NULL, not 3)") {
    val input = rel.groupBy()(agg(Max(Literal(3))).as("m"))
    comparePlans(run(input), input)
  }

  test("unchanged: a FILTER clause (a group may have no row passing it)") {
    val input = rel.groupBy(k)(k, agg(Max(k), Some(v > 0)).as("mk"))
    comparePlans(run(input), input)
  }

  test("unchanged: DOUBLE keys (grouping normalizes -0.0 and NaN) and non-binary collations") {
    val input = rel.groupBy(d, c, r)(agg(Max(d)).as("md"), agg(First(c, ignoreNulls = false)).as("fc"),
      agg(Min(r)).as("mr"))
    comparePlans(run(input), input)
  }

  test("a non-deterministic key computed once below the aggregate (PullOutNondeterministic's shape): max of that column folds") {
    // Spark's analysis keeps non-deterministic expressions out of aggregate arguments and grouping
    // expressions: the key is a column of the child, one value per row.
    // (LEGACY casts and sums: nothing here can fail, so the guard on errors leaves the law to show)
    val child = rel.select(k, v, Add(k, Cast(Rand(Literal(1L)), IntegerType, evalMode = EvalMode.LEGACY), EvalMode.LEGACY)
      .as("_nondeterministic"))
    val g = child.output(2)
    val input = child.groupBy(g)(g, agg(Max(g)).as("mg"), agg(Max(k)).as("mk"))
    comparePlans(run(input), child.groupBy(g)(g, g.as("mg"), agg(Max(k)).as("mk")))
  }

  test("unchanged: selecting aggregates of columns that are no key, and non-selecting aggregates of a key") {
    val input = rel.groupBy(k)(k, agg(Max(v)).as("mv"), agg(First(s, ignoreNulls = false)).as("fs"),
      agg(Sum(k)).as("sk"), agg(Count(Seq(k))).as("ck"))
    comparePlans(run(input), input)
  }

  test("unchanged: a streaming aggregate") {
    val stream = LocalRelation(Seq(k, v), Nil, isStreaming = true)
    val input = stream.groupBy(k)(k, agg(Max(k)).as("mk"))
    comparePlans(run(input), input)
  }

  test("the rule's switch: spark.arrnf.FoldAggregateValueTerms.enabled=false leaves the plan unchanged") {
    val input = rel.groupBy(k)(k, agg(Max(k)).as("mk"))
    assertSwitches(FoldAggregateValueTerms, input, rel.groupBy(k)(k, k.as("mk")))
  }
}
