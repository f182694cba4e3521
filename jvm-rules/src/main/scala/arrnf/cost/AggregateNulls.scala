package arrnf.cost

import org.apache.spark.sql.catalyst.expressions.{Add, Alias, Attribute, Cast, Divide, ExprId, Expression, IsNotNull, Literal, MakeDecimal, Multiply, PredicateHelper, Subtract, UnscaledValue}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Average, Count, Max, Min, Sum}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, LogicalPlan, Project, Statistics}

/**
 * The rows kept by a filter of NULL tests on an aggregate's results, which Spark's estimation has
 * no statistics for (an aggregate's estimate counts only its grouping columns): Spark infers
 * `isnotnull(ctr_total_return)` above TPC-DS q1's `sum(sr_return_amt) AS ctr_total_return`, and
 * every block above that filter was unknown. Mixed into `object Estimator` (through
 * [[DerivedStatistics]]), whose names callers use.
 */
private[cost] trait AggregateNulls extends PredicateHelper {

  /**
   * The rows `f` keeps of its input's `groups`, where each of its conjuncts tests that a result of
   * a grouped aggregate below it (through projections that pass columns on) is not NULL: a `count`
   * never is; a sum, average, minimum or maximum of `x` (times, plus or minus a literal, divided by
   * one not 0, or cast; the NULLs of overflow, where ANSI mode is off, left out) is NULL only in a
   * group whose every `x` is. With `share` the rows of the aggregate's input
   * (`input`: its statistics) on which `x` is NULL (one of its columns NULL, the columns taken as
   * independent) and `r` its input rows per group, a group's `x` are all NULL with chance
   * `share^r` (its rows taken as independent): the filter keeps `groups × Π (1 - share^r)`. None
   * where a conjunct tests anything else, or a column's NULLs are not counted.
   * {{{
   *   Filter isnotnull(total)                                  20,000 rows, 4% of the amounts NULL,
   *   +- Aggregate [customer], [sum(amount) AS total]          5,000 groups of 4 rows:
   *                                                            (1 - 0.04^4) × 5,000 ≈ 5,000 kept
   * }}}
   * (EstimatorSuite's case, where the NULLs are whole customers': 4,800 measured. TPC-DS q1's
   * returns at scale factor 1: 46,475 estimated, 49,737 measured.)
   */
  def notNullKept(f: Filter, groups: BigInt, input: Aggregate => Option[Statistics]): Option[BigInt] = {
    val tests = splitConjunctivePredicates(f.condition)
    if (tests.isEmpty || groups <= 0) return None
    val shares = tests.map {
      case IsNotNull(a: Attribute) => resultOf(f.child, a.exprId).flatMap { case (g, e) =>
        for (in <- input(g); rows <- in.rowCount if rows > 0; allNull <- nullShare(e, in, rows, groups)) yield 1.0 - allNull
      }
      case _ => None
    }
    if (shares.exists(_.isEmpty)) None
    else Some(RoundUp(groups.toDouble * shares.flatten.product).min(groups).max(1))
  }

  /** The aggregate below `p` (through projections passing columns on) that computes column `id`,
   *  with the expression it computes it by. */
  private def resultOf(p: LogicalPlan, id: ExprId): Option[(Aggregate, Expression)] = p match {
    case Project(list, child) => list.collectFirst {
      case c: Attribute if c.exprId == id => resultOf(child, id)
      case al @ Alias(c: Attribute, _) if al.exprId == id => resultOf(child, c.exprId)
    }.flatten
    case g: Aggregate if g.groupingExpressions.nonEmpty => g.aggregateExpressions.collectFirst {
      case al @ Alias(e, _) if al.exprId == id => (g, e)
    }
    case _ => None
  }

  /** The chance that a group's value of `e` (an aggregate's result expression) is NULL, over an
   *  input of `rows` rows (`in`) in `groups` groups; None where it cannot be told. */
  private def nullShare(e: Expression, in: Statistics, rows: BigInt, groups: BigInt): Option[Double] = e match {
    case AggregateExpression(_: Count, _, _, None, _) => Some(0.0)
    case AggregateExpression(fn @ (_: Sum | _: Average | _: Min | _: Max), _, false, None, _) =>
      valueNullShare(fn.children.head, in, rows).map(s => math.pow(s, math.max(1.0, rows.toDouble / groups.toDouble)))
    case Multiply(x, _: Literal, _) => nullShare(x, in, rows, groups)
    case Multiply(_: Literal, x, _) => nullShare(x, in, rows, groups)
    case Add(x, _: Literal, _) => nullShare(x, in, rows, groups)
    case Subtract(x, _: Literal, _) => nullShare(x, in, rows, groups)
    case Divide(x, Literal(v, _), _) if v != null && v.toString.toDouble != 0.0 => nullShare(x, in, rows, groups)
    case c: Cast => nullShare(c.child, in, rows, groups)
    // Spark's DecimalAggregates sums a short decimal as its unscaled long: `MakeDecimal(sum(UnscaledValue(x)))`
    case m: MakeDecimal => nullShare(m.child, in, rows, groups)
    case _ => None
  }

  /** The share of rows on which `x` (columns, literals and their sums, differences and products)
   *  is NULL: one of its columns NULL, the columns taken as independent. */
  private def valueNullShare(x: Expression, in: Statistics, rows: BigInt): Option[Double] = x match {
    case a: Attribute => in.attributeStats.get(a).flatMap(_.nullCount).map(n => math.min(1.0, n.toDouble / rows.toDouble))
    case l: Literal => Some(if (l.value == null) 1.0 else 0.0)
    case _: Add | _: Subtract | _: Multiply | _: Cast | _: UnscaledValue =>
      x.children.foldLeft(Option(0.0)) { (none, c) =>
        for (s <- none; t <- valueNullShare(c, in, rows)) yield 1.0 - (1.0 - s) * (1.0 - t)
      }
    case _ => None
  }
}
