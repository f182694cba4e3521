package arrnf.rules

import org.apache.spark.sql.catalyst.dsl.expressions._
import org.apache.spark.sql.catalyst.dsl.plans._
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, LogicalPlan}
import org.apache.spark.sql.types._

class FoldValueTermsPlanSuite extends RulePlanTest {

  private val a = $"a".int.notNull
  private val n = $"n".long
  private val d = $"d".double
  private val m = $"m".decimal(10, 2)
  private val m34 = $"m34".decimal(34, 0)
  private val m35 = $"m35".decimal(35, 0)
  private val b = $"b".int.notNull
  private val rel = LocalRelation(a, n, d, m, m34, m35, b)

  private def neg(e: Expression, failOnError: Boolean) = UnaryMinus(e, failOnError)
  private def sub(x: Expression, y: Expression) = Subtract(x, y, EvalMode.ANSI)
  private def mul(x: Expression, y: Expression, mode: EvalMode.Value = EvalMode.ANSI) = Multiply(x, y, mode)
  private def zeroUnlessNull(x: Expression, t: DataType) = If(IsNull(x), Literal(null, t), Literal.default(t))

  private def run(plan: LogicalPlan) = optimize(FoldValueTerms, plan)

  test("-(-x) is x for DOUBLE and for DECIMAL up to 34 digits; the alias keeps its id") {
    val input = rel.select(neg(neg(d, true), true).as("v"), neg(neg(m, true), true).as("w"),
      neg(neg(m34, true), true).as("x"))
    val optimized = run(input)
    comparePlans(optimized, rel.select(d.as("v"), m.as("w"), m34.as("x")))
    assertSameOutput(optimized, input)
  }

  test("-(-x) on an integral column folds when neither negation fails (ANSI off: wrapping is an involution)") {
    val input = rel.select(neg(neg(a, false), false).as("v"), neg(neg(n, false), false).as("w"))
    comparePlans(run(input), rel.select(a.as("v"), n.as("w")))
  }

  test("x - x is 0 for a non-nullable column, NULL-preserving for a nullable one") {
    val input = rel.select(sub(a, a).as("z"), sub(n, n).as("y"), sub(m, m).as("x"))
    val optimized = run(input)
    val mType = sub(m, m).dataType
    comparePlans(optimized, rel.select(Literal(0).as("z"), zeroUnlessNull(n, LongType).as("y"),
      zeroUnlessNull(m, mType).as("x")))
    assertSameOutput(optimized, input)
  }

  test("x * 0 and 0 * x for a nullable integral or DECIMAL column") {
    val zeroDec = Literal(Decimal(0), DecimalType(1, 0))
    val input = rel.select(mul(n, Literal(0L)).as("y"), mul(zeroDec, m).as("x"))
    val mType = mul(zeroDec, m).dataType
    comparePlans(run(input), rel.select(zeroUnlessNull(n, LongType).as("y"), zeroUnlessNull(m, mType).as("x")))
  }

  test("x - x folds over a definition that cannot fail (LEGACY multiplication), also below a filter") {
    val defined = rel.select(mul(n, Literal(Long.MaxValue), EvalMode.LEGACY).as("p"))
    val p = defined.output.head
    val input = defined.where(sub(p, p) === Literal(0L)).select(sub(p, p).as("z"))
    comparePlans(run(input),
      defined.where(zeroUnlessNull(p, LongType) === Literal(0L)).select(zeroUnlessNull(p, LongType).as("z")))
  }

  test("a term anywhere in an expression is found: under a cast, on either side of a comparison, in a CASE and a COALESCE, in a filter below") {
    val input = rel
      .where(Coalesce(Seq(Literal(1L), sub(n, n))) > Literal(0L))
      .select(Cast(neg(neg(d, true), true), StringType).as("c"), (Literal(1.0) < neg(neg(d, true), true)).as("l"),
        CaseWhen(Seq((a > 1, mul(n, Literal(0L)))), Some(Literal(2L))).as("w"))
    val expected = rel
      .where(Coalesce(Seq(Literal(1L), zeroUnlessNull(n, LongType))) > Literal(0L))
      .select(Cast(d, StringType).as("c"), (Literal(1.0) < d).as("l"),
        CaseWhen(Seq((a > 1, zeroUnlessNull(n, LongType))), Some(Literal(2L))).as("w"))
    comparePlans(run(input), expected)
  }

  test("streaming: row-wise laws hold for streams as well") {
    val stream = LocalRelation(rel.output, Nil, isStreaming = true)
    comparePlans(run(stream.select(sub(a, a).as("z"), neg(neg(d, true), true).as("v"))),
      stream.select(Literal(0).as("z"), d.as("v")))
  }

  test("unchanged: -(-x) on an integral column when a negation fails on overflow (ANSI): -(-MIN) raises") {
    val input = rel.select(neg(neg(a, true), true).as("v"), neg(neg(n, false), true).as("w"),
      neg(neg(n, true), false).as("x"))
    comparePlans(run(input), input)
  }

  test("unchanged: -(-x) on a DECIMAL of 35 digits (Spark's negation rounds there)") {
    val input = rel.select(neg(neg(m35, true), true).as("v"))
    comparePlans(run(input), input)
  }

  test("unchanged: x - x and x * 0 on a DOUBLE (inf - inf and NaN * 0 are NaN)") {
    val input = rel.select(Subtract(d, d, EvalMode.ANSI).as("z"), Multiply(d, Literal(0.0), EvalMode.ANSI).as("y"))
    comparePlans(run(input), input)
  }

  test("unchanged: x - x and x * 0 when x's definition can fail (ANSI multiplication): the error would go") {
    val defined = rel.select(mul(n, Literal(Long.MaxValue), EvalMode.ANSI).as("p"))
    val p = defined.output.head
    val input = defined.select(sub(p, p).as("z"), mul(p, Literal(0L)).as("y"))
    comparePlans(run(input), input)
  }

  test("unchanged: a - b of different columns, x * 1, and a difference of two rand() (not a column)") {
    val input = rel.select(sub(a, b).as("z"), mul(n, Literal(1L)).as("y"),
      Subtract(Rand(Literal(1L)), Rand(Literal(1L)), EvalMode.ANSI).as("r"))
    comparePlans(run(input), input)
  }

  test("the rule's switch: spark.arrnf.FoldValueTerms.enabled=false leaves the plan unchanged") {
    val input = rel.select(sub(a, a).as("z"), neg(neg(d, true), true).as("v"))
    assertSwitches(FoldValueTerms, input, rel.select(Literal(0).as("z"), d.as("v")))
  }
}
