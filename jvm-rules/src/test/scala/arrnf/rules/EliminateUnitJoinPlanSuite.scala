package arrnf.rules

import org.apache.spark.sql.catalyst.dsl.expressions._
import org.apache.spark.sql.catalyst.dsl.plans._
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.{Cross, FullOuter, Inner, LeftAnti, LeftOuter, LeftSemi, RightOuter}
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, LogicalPlan, OneRowRelation, Project}
import org.apache.spark.sql.types._

class EliminateUnitJoinPlanSuite extends RulePlanTest {

  private val q = LocalRelation($"a".int, $"b".long)
  private val Seq(a, b) = (q.output: @unchecked)
  private val oneAlias = Literal(1).as("one").asInstanceOf[Alias]
  private val unit = Project(Seq(oneAlias), OneRowRelation())
  private val one = unit.output.head

  private def run(plan: LogicalPlan) = optimize(EliminateUnitJoin, plan)

  test("Q ⋈ 1 = Q with the unit's literals appended (cross, inner on either side); ids and column order kept") {
    val cross = q.join(unit, Cross, None)
    val optimized = run(cross)
    comparePlans(optimized, Project(q.output :+ oneAlias, q))
    assertSameOutput(optimized, cross)
    val innerLeft = unit.join(q, Inner, Some(a === one))
    val optimizedLeft = run(innerLeft)
    comparePlans(optimizedLeft, Project(oneAlias +: q.output, q).where(a === one))
    assertSameOutput(optimizedLeft, innerLeft)
  }

  test("a bare OneRowRelation is a unit without columns") {
    comparePlans(run(q.join(OneRowRelation(), Inner, None)), Project(q.output, q))
  }

  test("left semi: the condition with the unit's columns replaced by their literals (a IN (SELECT 1))") {
    comparePlans(run(q.join(unit, LeftSemi, Some(a === one))), q.where(a === Literal(1)))
    comparePlans(run(q.join(unit, LeftSemi, None)), q)
  }

  test("left anti: NOT coalesce(θ', false), and empty without a condition") {
    comparePlans(run(q.join(unit, LeftAnti, Some(a === one))),
      q.where(Not(Coalesce(Seq(a === Literal(1), Literal(false))))))
    val input = q.join(unit, LeftAnti, None)
    val optimized = run(input)
    comparePlans(optimized, LocalRelation(q.output))
    assertSameOutput(optimized, input)
  }

  test("outer joins: the unit's columns where θ' holds, NULL elsewhere; the aliases keep their ids") {
    val left = q.join(unit, LeftOuter, Some(a === one))
    val padded = Alias(If(a === Literal(1), Literal(1), Literal(null, IntegerType)), "one")(exprId = oneAlias.exprId)
    val optimized = run(left)
    comparePlans(optimized, Project(q.output :+ padded, q))
    assertSameOutput(optimized, left)
    val right = unit.join(q, RightOuter, Some(a === one))
    comparePlans(run(right), Project(padded +: q.output, q))
    comparePlans(run(q.join(unit, LeftOuter, None)), Project(q.output :+ oneAlias, q))
  }

  test("streaming: the join of a stream with a constant is stateless, the law holds") {
    val stream = LocalRelation(q.output, Nil, isStreaming = true)
    comparePlans(run(stream.join(unit, Cross, None)), Project(stream.output :+ oneAlias, stream))
  }

  test("unchanged: a unit column that is not a literal (rand() would be drawn per row; 1 DIV 0 raised per row)") {
    val rand = q.join(Project(Seq(Rand(Literal(1L)).as("r")), OneRowRelation()), Cross, None)
    comparePlans(run(rand), rand)
    val failing = q.join(Project(Seq(IntegralDivide(Literal(1L), Literal(0L), EvalMode.ANSI).as("z")), OneRowRelation()),
      Inner, None)
    comparePlans(run(failing), failing)
  }

  test("unchanged: a full outer join, and an outer join whose unit has no column under a condition") {
    val full = q.join(unit, FullOuter, Some(a === one))
    comparePlans(run(full), full)
    val noColumns = q.join(OneRowRelation(), LeftOuter, Some(a > Literal(0)))
    comparePlans(run(noColumns), noColumns)
  }

  test("unchanged: an outer join with a non-deterministic condition (evaluated once per unit column after the rewrite)") {
    // Spark's analysis rejects a non-deterministic join condition; the rule declines it by itself.
    val input = q.join(unit, LeftOuter, Some(Rand(Literal(2L)) > Literal(0.5)))
    comparePlans(run(input), input, checkAnalysis = false)
  }

  test("unchanged: an outer join whose condition can fail, or reads a column of Q whose computation can fail") {
    // Pruning drops the padded unit columns when nothing reads them, and with them the condition.
    val failingCondition = q.join(unit, LeftOuter, Some(IntegralDivide(Literal(10L), b, EvalMode.ANSI) > one.cast(LongType)))
    comparePlans(run(failingCondition), failingCondition)
    val failingColumn = q.select(a, IntegralDivide(Literal(10L), b, EvalMode.ANSI).as("d"))
    val d = failingColumn.output(1)
    val readsIt = unit.join(failingColumn, RightOuter, Some(d >= one.cast(LongType)))
    comparePlans(run(readsIt), readsIt)
    // the same condition on a column that cannot fail still fires
    val fine = unit.join(failingColumn, RightOuter, Some(failingColumn.output(0) >= one))
    assert(!run(fine).exists(_.isInstanceOf[org.apache.spark.sql.catalyst.plans.logical.Join]))
  }

  test("unchanged: an anti join without condition whose input can fail, or under a predicate that can fail") {
    val failingQ = q.select(IntegralDivide(Literal(10L), b, EvalMode.ANSI).as("d"))
    val input = failingQ.join(unit, LeftAnti, None)
    comparePlans(run(input), input)
    val above = q.join(unit, LeftAnti, None).where(IntegralDivide(Literal(10L), b, EvalMode.ANSI) > Literal(0L))
    comparePlans(run(above), above)
  }

  test("unchanged: a relation of one row that is not a unit of literals over OneRowRelation") {
    val oneRow = LocalRelation.fromExternalRows(Seq($"c".int), Seq(org.apache.spark.sql.Row(1)))
    val input = q.join(oneRow, Cross, None)
    comparePlans(run(input), input)
  }

  test("the rule's switch: spark.arrnf.EliminateUnitJoin.enabled=false leaves the plan unchanged") {
    assertSwitches(EliminateUnitJoin, q.join(unit, Cross, None), Project(q.output :+ oneAlias, q))
  }
}
