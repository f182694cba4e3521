package arrnf.rules

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.dsl.expressions._
import org.apache.spark.sql.catalyst.dsl.plans._
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Complete, Sum}
import org.apache.spark.sql.catalyst.optimizer.RewriteExceptAll
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, LogicalPlan, Project, Union}
import org.apache.spark.sql.types._

class NegationCancelsPlanSuite extends RulePlanTest {

  // Relations with data: two empty relations of the same types have the same result.
  private val x = LocalRelation.fromExternalRows(Seq($"a".int, $"b".string), Seq(Row(1, "x"), Row(0, null)))
  private val y = LocalRelation.fromExternalRows(Seq($"c".int, $"d".string), Seq(Row(3, "y")))
  // What the analyzer makes of a repeated subtree: the same relation with fresh expression ids.
  private def twin(p: LogicalPlan): LogicalPlan = p match {
    case r: LocalRelation => r.newInstance()
    case other => other
  }

  /** A union branch of the ±1 multiplicity encoding (RewriteExceptAll's `Project [±1 AS vcol, cols…]`). */
  private def term(sign: Long, body: LogicalPlan): LogicalPlan = Project(Literal(sign).as("vcol") +: body.output, body)

  /** The threshold over `child`, whose first column is the marker: `Filter (sum > 0) Aggregate [cols], [cols, sum(vcol)]`. */
  private def threshold(child: LogicalPlan, cond: Attribute => Expression = _ > Literal(0L),
                        distinct: Boolean = false): LogicalPlan = {
    val marker +: cols = (child.output: @unchecked)
    val sum = Alias(AggregateExpression(Sum(marker), Complete, distinct), "sum")()
    child.groupBy(cols: _*)(cols :+ sum: _*).where(cond(sum.toAttribute))
  }

  /** `child` re-aliased to carry the expression ids of `ids` (how the rule keeps a union's output). */
  private def renamedTo(ids: Seq[Attribute], child: LogicalPlan): LogicalPlan =
    Project(ids.zip(child.output).map { case (old, now) => Alias(now, old.name)(exprId = old.exprId) }, child)

  private def run(plan: LogicalPlan) = optimize(NegationCancels, plan)

  test("Q EXCEPT ALL Q: every branch cancels, the union becomes an empty relation with its output") {
    val u = Union(term(1, x), term(-1, twin(x)))
    val input = threshold(u)
    val optimized = run(input)
    comparePlans(optimized, threshold(LocalRelation(u.output)))
    assertSameOutput(optimized, input)
  }

  test("(A UNION ALL B) EXCEPT ALL B is A: A's branch kept as it is when it comes first") {
    val plusX = term(1, x)
    val u = Union(Seq(plusX, term(1, y), term(-1, twin(y))))
    comparePlans(run(threshold(u)), threshold(plusX))
  }

  test("(B UNION ALL A) EXCEPT ALL B: the union's old output ids are kept by a renaming projection") {
    val plusY = term(1, y)
    val plusX = term(1, x)
    val u = Union(Seq(plusY, plusX, term(-1, twin(y))))
    val input = threshold(u)
    val optimized = run(input)
    comparePlans(optimized, threshold(renamedTo(u.output, plusX)))
    assertSameOutput(optimized, input)
  }

  test("bag semantics: terms cancel pairwise, +X +Y -X +Y' keeps +Y +Y' (under the old ids)") {
    val plusY = term(1, y)
    val plusY2 = term(1, twin(y))
    val u = Union(Seq(term(1, x), plusY, term(-1, twin(x)), plusY2))
    comparePlans(run(threshold(u)), threshold(renamedTo(u.output, Union(plusY, plusY2))))
    // +X +X -X: one +X stays.
    val secondX = term(1, twin(x))
    val u2 = Union(Seq(term(1, x), secondX, term(-1, twin(x))))
    comparePlans(run(threshold(u2)), threshold(renamedTo(u2.output, secondX)))
  }

  test("from SQL's EXCEPT ALL: after Spark's RewriteExceptAll, Q EXCEPT ALL Q keeps no union") {
    val input = x.except(twin(x), isAll = true).analyze
    val rewritten = executor(once(RewriteExceptAll)).execute(input)
    assert(rewritten.exists(_.isInstanceOf[Union]), rewritten.treeString)
    val optimized = executor(once(RewriteExceptAll), fixedPoint(NegationCancels)).execute(input)
    comparePlans(optimized, rewritten.transform { case u: Union => LocalRelation(u.output) })
    assertSameOutput(optimized, input)
  }

  test("a predicate above that cannot fail does not stop it; one that can fail (ANSI DIV) does") {
    val u = Union(term(1, x), term(-1, twin(x)))
    val a = u.output(1)
    val safe = threshold(u).where(a > Literal(0))
    comparePlans(run(safe), threshold(LocalRelation(u.output)).where(a > Literal(0)))
    val failing = threshold(u).where(IntegralDivide(Literal(10L), a.cast(LongType), EvalMode.ANSI) > Literal(0L))
    comparePlans(run(failing), failing)
  }

  test("unchanged: a cancelled term that can fail (10 DIV (a - 3) under ANSI raises and still must)") {
    def q(r: LogicalPlan) = r.select(IntegralDivide(Literal(10L),
      Subtract(r.output.head, Literal(3), EvalMode.ANSI).cast(LongType), EvalMode.ANSI).as("q"))
    val input = threshold(Union(term(1, q(x)), term(-1, q(twin(x)))))
    comparePlans(run(input), input)
  }

  test("unchanged: a term that varies (rand) is not its own twin") {
    def q(r: LogicalPlan) = r.select(r.output.head, Rand(Literal(7L)).as("r"))
    val input = threshold(Union(term(1, q(x)), term(-1, q(twin(x)))))
    comparePlans(run(input), input)
  }

  test("unchanged: columns under a non-binary collation (a group shows whichever equal value came first)") {
    val lcase = LocalRelation(AttributeReference("s", StringType("UTF8_LCASE"))())
    val input = threshold(Union(term(1, lcase), term(-1, twin(lcase))))
    comparePlans(run(input), input)
  }

  test("unchanged: not the threshold (sum >= 0 keeps the groups that would lose all their rows; sum(DISTINCT))") {
    val u = Union(term(1, x), term(-1, twin(x)))
    val atLeast = threshold(u, _ >= Literal(0L))
    comparePlans(run(atLeast), atLeast)
    val distinct = threshold(u, distinct = true)
    comparePlans(run(distinct), distinct)
  }

  test("unchanged: a conjunct of the threshold's own filter that can fail (Spark pushes it into every branch)") {
    val u = Union(term(1, x), term(-1, twin(x)))
    val a = u.output(1)
    val input = threshold(u, s => s > Literal(0L) && IntegralDivide(Literal(10L), a.cast(LongType), EvalMode.ANSI) > Literal(0L))
    comparePlans(run(input), input)
  }

  test("unchanged: terms that are not twins (X and Y of the same types)") {
    val input = threshold(Union(term(1, x), term(-1, y)))
    comparePlans(run(input), input)
  }

  test("the rule's switch: spark.arrnf.NegationCancels.enabled=false leaves the plan unchanged") {
    val u = Union(term(1, x), term(-1, twin(x)))
    assertSwitches(NegationCancels, threshold(u), threshold(LocalRelation(u.output)))
  }

  test("a non-deterministic grouping expression (twin rows would land in different groups): unchanged") {
    // Not reachable from SQL (the analyzer pulls a non-deterministic grouping expression out into a
    // projection, which Spark does not push through a union); the rule declines any grouping that is not a column.
    val u = Union(Seq(term(1, x), term(1, y), term(-1, twin(x))))
    val Seq(marker, a, _) = (u.output: @unchecked)
    val g = Add(a, Rand(Literal(3L)).cast(IntegerType), EvalMode.LEGACY)
    val sum = Alias(AggregateExpression(Sum(marker), Complete, isDistinct = false), "sum")()
    // Filter (sum > 0) Aggregate [a + rand(3)], [sum(vcol)] over +X +Y -X': an X row and its twin
    // mostly land in different groups, whose sums are then 1 and -1: vanilla keeps the first.
    val input = u.groupBy(g)(sum).where(sum.toAttribute > Literal(0L))
    comparePlans(run(input), input, checkAnalysis = false)
  }

  test("a grouping expression that can fail (10 DIV a; it would no longer be evaluated on the cancelled rows): unchanged") {
    // Not reachable from SQL either: PullOutGroupingExpressions moves it into a projection, which
    // Spark pushes into the branches, where the rule sees it; over the union directly it declines.
    val u = Union(Seq(term(1, x), term(1, y), term(-1, twin(x))))
    val Seq(marker, a, _) = (u.output: @unchecked)
    val g = IntegralDivide(Literal(10L), a.cast(LongType), EvalMode.ANSI)
    val sum = Alias(AggregateExpression(Sum(marker), Complete, isDistinct = false), "sum")()
    val input = u.groupBy(g)(sum).where(sum.toAttribute > Literal(0L))
    comparePlans(run(input), input)
  }
}
