package arrnf.rules

import org.apache.spark.sql.catalyst.dsl.expressions._
import org.apache.spark.sql.catalyst.dsl.plans._
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.optimizer.{ReplaceExceptWithAntiJoin, ReplaceIntersectWithSemiJoin}
import org.apache.spark.sql.catalyst.plans.{LeftAnti, LeftSemi}
import org.apache.spark.sql.catalyst.plans.logical.{Distinct, LocalRelation, LogicalPlan}
import org.apache.spark.sql.types._

class EliminateSelfSemiAntiJoinPlanSuite extends RulePlanTest {

  private val x = LocalRelation($"a".int, $"b".long)
  private val nn = LocalRelation($"i".int.notNull, $"j".int)
  private val Seq(a, b) = (x.output: @unchecked)
  // The analyzer's repeated subtree: the same relation with fresh expression ids.
  private val x2 = x.newInstance()
  private val Seq(a2, b2) = (x2.output: @unchecked)

  private def run(plan: LogicalPlan) = optimize(EliminateSelfSemiAntiJoin, plan)

  test("Q EXCEPT Q: the anti join of twins on <=> of every column is empty (the join's output ids kept)") {
    val input = x.join(x2, LeftAnti, Some(a <=> a2 && b <=> b2))
    val optimized = run(input)
    comparePlans(optimized, LocalRelation(x.output))
    assertSameOutput(optimized, input)
  }

  test("Q INTERSECT Q: the semi join of twins is its left input") {
    val input = x.join(x2, LeftSemi, Some(a <=> a2 && b <=> b2))
    val optimized = run(input)
    comparePlans(optimized, x)
    assertSameOutput(optimized, input)
  }

  test("seen through renaming projections, a subset of the columns, or no condition at all") {
    val renamed = x2.select(a2.as("p"), b2.as("q"))
    val Seq(p, q) = (renamed.output: @unchecked)
    comparePlans(run(x.join(renamed, LeftAnti, Some(b <=> q && a <=> p))), LocalRelation(x.output))
    comparePlans(run(x.join(renamed, LeftSemi, Some(p <=> a))), x)
    val leftRenamed = x.select(b.as("q0"), a.as("p0"))
    val Seq(q0, p0) = (leftRenamed.output: @unchecked)
    comparePlans(run(leftRenamed.join(x2, LeftSemi, Some(p0 <=> a2 && q0 <=> b2))), leftRenamed)
    comparePlans(run(x.join(x2, LeftAnti, None)), LocalRelation(x.output))
  }

  test("= on non-nullable columns holds between a row and its twin") {
    val nn2 = nn.newInstance()
    val input = nn.join(nn2, LeftAnti, Some(nn.output.head === nn2.output.head))
    comparePlans(run(input), LocalRelation(nn.output))
  }

  test("from SQL's EXCEPT / INTERSECT: after Spark's Replace*WithAnti/SemiJoin, a Distinct of the empty relation / of Q") {
    val replace = once(ReplaceExceptWithAntiJoin, ReplaceIntersectWithSemiJoin)
    val except = x.except(x2, isAll = false).analyze
    comparePlans(executor(replace, fixedPoint(EliminateSelfSemiAntiJoin)).execute(except), Distinct(LocalRelation(x.output)))
    val intersect = x.intersect(x2, isAll = false).analyze
    comparePlans(executor(replace, fixedPoint(EliminateSelfSemiAntiJoin)).execute(intersect), Distinct(x))
  }

  test("unchanged: = on a nullable column (a NULL row does not match its twin) and columns crossed") {
    val eqNullable = x.join(x2, LeftAnti, Some(a === a2 && b <=> b2))
    comparePlans(run(eqNullable), eqNullable)
    val swapped = LocalRelation($"u".int, $"w".int)
    val swapped2 = swapped.newInstance()
    val crossed = swapped.join(swapped2, LeftSemi, Some(swapped.output(0) <=> swapped2.output(1)))
    comparePlans(run(crossed), crossed)
  }

  test("unchanged: inputs that can fail (10 DIV a under ANSI): the anti join would drop the error") {
    def q(r: LogicalPlan) = r.select(IntegralDivide(Literal(10L), r.output.head.cast(LongType), EvalMode.ANSI).as("q"))
    val (l, r) = (q(x), q(x2))
    val input = l.join(r, LeftAnti, Some(l.output.head <=> r.output.head))
    comparePlans(run(input), input)
    val semi = l.join(r, LeftSemi, Some(l.output.head <=> r.output.head))
    comparePlans(run(semi), semi)
  }

  test("unchanged: inputs that vary (rand) are not twins") {
    def q(r: LogicalPlan) = r.select(r.output.head, Rand(Literal(5L)).as("r"))
    val (l, r) = (q(x), q(x2))
    val input = l.join(r, LeftAnti, Some(l.output.head <=> r.output.head && l.output(1) <=> r.output(1)))
    comparePlans(run(input), input)
  }

  test("unchanged: a predicate above that can fail (Spark pushes it into both inputs, where it raises)") {
    val anti = x.join(x2, LeftAnti, Some(a <=> a2 && b <=> b2))
    val failing = anti.where(IntegralDivide(Literal(10L), b, EvalMode.ANSI) > Literal(0L))
    comparePlans(run(failing), failing)
    val safe = anti.where(b > Literal(0L))
    comparePlans(run(safe), LocalRelation(x.output).where(b > Literal(0L)))
  }

  test("unchanged: different inputs of the same types, and streaming inputs") {
    val other = LocalRelation($"a".int, $"b".long)
    val y = LocalRelation.fromExternalRows(other.output, Seq(org.apache.spark.sql.Row(1, 2L)))
    val input = x.join(y, LeftAnti, Some(a <=> y.output(0) && b <=> y.output(1)))
    comparePlans(run(input), input)
    val s = LocalRelation(x.output, Nil, isStreaming = true)
    val s2 = s.newInstance()
    val streaming = s.join(s2, LeftSemi, Some(s.output(0) <=> s2.output(0)))
    comparePlans(run(streaming), streaming)
  }

  test("the rule's switch: spark.arrnf.EliminateSelfSemiAntiJoin.enabled=false leaves the plan unchanged") {
    assertSwitches(EliminateSelfSemiAntiJoin, x.join(x2, LeftAnti, Some(a <=> a2 && b <=> b2)), LocalRelation(x.output))
  }
}
