package arrnf.rules

import org.apache.spark.sql.catalyst.dsl.expressions._
import org.apache.spark.sql.catalyst.dsl.plans._
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, AggregateFunction, Complete, Count, Max, Min, Sum}
import org.apache.spark.sql.catalyst.plans.{Inner, LeftOuter, LeftSemi}
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.types._

import arrnf.ArrnfConf

/**
 * A leaf with the statistics of an analyzed table: its rows, and for the columns named in `columns`
 * their distinct count, no NULLs and, for INT and DOUBLE columns, the range [1, distinct count] (what Spark's cost-based
 * estimation needs for equi-joins and aggregates). Test data only: the rule's estimates come from it.
 */
private[rules] final case class EagerStatsLeaf(output: Seq[Attribute], rows: BigInt, columns: Map[String, Int])
    extends LeafNode {
  override def computeStats(): Statistics = Statistics(
    sizeInBytes = rows * 8 * output.size + 1,
    rowCount = Some(rows),
    attributeStats = AttributeMap(output.flatMap(a => columns.get(a.name).map { n =>
      val (lo, hi): (Option[Any], Option[Any]) = a.dataType match {
        case IntegerType => (Some(1), Some(n))
        case DoubleType => (Some(1.0), Some(n.toDouble))
        case _ => (None, None)
      }
      a -> ColumnStat(distinctCount = Some(BigInt(n)), min = lo, max = hi, nullCount = Some(BigInt(0)),
        avgLen = Some(a.dataType.defaultSize.toLong), maxLen = Some(a.dataType.defaultSize.toLong))
    })))
}

/**
 * A table of unknown rows, as a file relation is to Spark (no `maxRows`), with an empty local
 * relation's size. The suites' inputs: an empty `LocalRelation` has no rows, and the rule leaves an
 * aggregate over a join with an empty input to Spark's PropagateEmptyRelation.
 */
private[rules] final case class Table(output: Seq[Attribute]) extends LeafNode {
  override def computeStats(): Statistics = LocalRelation(output).computeStats()
}

private[rules] object Table {
  def apply(first: Attribute, rest: Attribute*): Table = Table(first +: rest)
}

/** The relations and helpers the eager aggregation plan suites share. */
trait EagerAggregationPlanTest extends RulePlanTest {

  // The aggregated side R (a fact table) and the other side S (a dimension).
  protected val fact = Table($"fk".int, $"x".int, $"p".decimal(7, 2), $"y".long, $"w".double)
  protected val Seq(fk, x, p, y, w) = (fact.output: @unchecked)
  protected val dim = Table($"dk".int, $"g".string)
  protected val Seq(dk, g) = (dim.output: @unchecked)

  // A star: sales joined to two dimensions.
  protected val sales = Table($"s_d1".int, $"s_d2".int, $"amount".int)
  protected val Seq(s1, s2, amount) = (sales.output: @unchecked)
  protected val d1 = Table($"k1".int, $"a".string)
  protected val Seq(k1, a) = (d1.output: @unchecked)
  protected val d2 = Table($"k2".int, $"b".string)
  protected val Seq(k2, b) = (d2.output: @unchecked)

  /** The star with statistics: sales' 1000 rows (`salesD1` distinct s_d1, 5 distinct s_d2), d1's
   *  100 rows (100 keys, `d1Values` distinct a), d2's `d2Rows` rows (5 keys, 5 distinct b). */
  protected final case class StatsStar(sales: EagerStatsLeaf, d1: EagerStatsLeaf, d2: EagerStatsLeaf) {
    /** sales ⋈ d1 (s_d1 = k1) ⋈ d2 (s_d2 = k2) */
    def joined: LogicalPlan = sales.join(d1, Inner, Some(s1 === k1)).join(d2, Inner, Some(s2 === k2))
  }

  protected def statsStar(salesD1: Int = 100, d1Values: Int = 2, d2Rows: Int = 5): StatsStar = StatsStar(
    EagerStatsLeaf(sales.output, 1000, Map("s_d1" -> salesD1, "s_d2" -> 5)),
    EagerStatsLeaf(d1.output, 100, Map("k1" -> 100, "a" -> d1Values)),
    EagerStatsLeaf(d2.output, d2Rows, Map("k2" -> 5, "b" -> 5)))

  protected def run(plan: LogicalPlan) = executor(once(EagerAggregation)).execute(plan)

  /** The law without the cost guard (no statistics here), ANSI on as in Spark 4's default. The
   *  plans are built inside: a `sum` takes its ANSI mode from the settings when it is made. */
  protected def fires[T](body: => T): T =
    withConf(ArrnfConf.EagerMinReduction -> "0", "spark.sql.ansi.enabled" -> "true")(body)

  protected val ansi = NumericEvalContext(EvalMode.ANSI)
  protected val legacy = NumericEvalContext(EvalMode.LEGACY)

  protected def agg(f: AggregateFunction): AggregateExpression = f.toAggregateExpression()

  /** A pre-aggregated part, as the rule names it. */
  protected def part(f: AggregateFunction, name: String): Alias = Alias(agg(f), name)()

  /** `e` under the name and expression id of `input`'s output column `name`. */
  protected def kept(input: LogicalPlan, name: String, e: Expression): Alias =
    Alias(e, name)(exprId = input.output.find(_.name == name).get.exprId)

  /** sum(sum), coalesce(sum(count), 0), min(min), max(max): the outer aggregates. */
  protected def sumOf(part: Alias, ctx: NumericEvalContext = ansi) = agg(Sum(part.toAttribute, ctx))
  protected def countOf(part: Alias) = Coalesce(Seq(agg(Sum(part.toAttribute, legacy)), Literal(0L)))

  /** The output (ids, names, types and nullability) is the input's. */
  protected def assertSameTypedOutput(actual: LogicalPlan, input: LogicalPlan): Unit = {
    assertSameOutput(actual, input)
    assert(actual.output.map(_.nullable) == input.output.map(_.nullable),
      s"nullability changed:\n${actual.output.map(_.toString)}\n${input.output.map(_.toString)}")
  }

  protected def declinedWhy(plan: LogicalPlan): Option[String] =
    plan.collectFirst { case agg: Aggregate => agg.getTagValue(EagerAggregation.DeclinedTag) }.flatten

  /** The rule leaves `input` as it is, saying why (`why` a part of the reason; None: not considered at all). */
  protected def declines(input: LogicalPlan, why: Option[String], checkAnalysis: Boolean = true): Unit = {
    val optimized = run(input)
    comparePlans(optimized, input, checkAnalysis)
    assert(!optimized.exists(_.getTagValue(EagerAggregation.Tag).isDefined), "a node tagged as rewritten")
    why match {
      case Some(reason) =>
        assert(declinedWhy(optimized).exists(_.contains(reason)), s"declined for ${declinedWhy(optimized)}; expected: $reason")
      case None => assert(declinedWhy(optimized).isEmpty, s"considered: ${declinedWhy(optimized)}")
    }
  }
}
