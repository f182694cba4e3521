package arrnf.cost

import org.apache.commons.math3.special.Erf
import org.apache.spark.sql.catalyst.expressions.{Add, Alias, Attribute, Cast, Divide, ExprId, Expression, GreaterThan, GreaterThanOrEqual, IsNotNull, LessThan, LessThanOrEqual, Literal, MakeDecimal, Multiply, PredicateHelper, Subtract, UnaryMinus, UnscaledValue}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, AggregateFunction, Average, Complete, Count, Max, Min, Sum}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, LeafNode, LogicalPlan, Project, Statistics}
import org.apache.spark.sql.types.NumericType

import arrnf.stats.Sketches

/**
 * The groups kept by a filter of tests on an aggregate's results, which Spark's estimation has no
 * statistics for (an aggregate's estimate counts only its grouping columns): NULL tests (Spark
 * infers `isnotnull(ctr_total_return)` above TPC-DS q1's `sum(sr_return_amt) AS ctr_total_return`)
 * and tests of the sign (`year_total > 0` in TPC-DS q4, q11 and q74, `item_cnt > 0` in q41). Every
 * block above such a filter was unknown. Mixed into `object Estimator` (through
 * [[DerivedStatistics]]), whose names callers use.
 */
private[cost] trait AggregateTests extends PredicateHelper {

  /**
   * The rows `f` keeps of its input's `groups`, where each of its conjuncts tests a result of a
   * grouped aggregate below it (through projections that pass columns on): that it is not NULL, or
   * above 0 (`x > 0`, `x >= 0`, either way round; `x` perhaps cast to another number type). With
   * `r` the aggregate's input rows per group, its rows taken as independent, a group's value of:
   *  - `count` is never NULL, and above 0 unless each of its `r` rows has a NULL argument;
   *  - a sum, average, minimum or maximum of `x` (times, plus or minus a literal, divided by one not
   *    0, or cast; the NULLs of overflow, where ANSI mode is off, left out) is NULL where all its `x`
   *    are: with `s` the share of input rows whose `x` is NULL, with chance `s^r`. `s` from the
   *    NULL counts of `x`'s columns (taken as independent; a column that is itself an aggregate's
   *    result: that aggregate's groups whose value is NULL), else from the sketch pass's sample;
   *  - for its sign, `x` is evaluated on the sketch pass's sample of the table it reads (under that
   *    table's filters in the plan): a maximum is above 0 where one of its `x` is; a minimum where
   *    all of them (not NULL) are; a sum or average as a maximum where no `x` is below 0 and as a
   *    minimum where none is above, and else, by the central limit theorem, with chance
   *    `Φ(mean × √n / sd)` for the `n` values not NULL of a group, `x`'s mean and standard
   *    deviation those of the sample.
   * The filter keeps `groups × Π kept` (per column its strictest test: `x > 0` implies `x IS NOT
   * NULL`); with whether a sample was read. None where a conjunct tests anything else (`x > 100`,
   * `x > 1.2 * avg`), or neither statistics nor a sample tell a value's NULLs or sign.
   * {{{
   *   Filter isnotnull(total)                                  20,000 rows, 4% of the amounts NULL,
   *   +- Aggregate [customer], [sum(amount) AS total]          5,000 groups of 4 rows:
   *                                                            (1 - 0.04^4) × 5,000 ≈ 5,000 kept
   *
   *   Filter year_total > 0                                    TPC-DS q74, scale factor 1: 16,245
   *   +- Aggregate [customer, year],                           groups estimated (11,552 measured);
   *        [sum(ws_net_paid) AS year_total]                    1.2% of sampled amounts 0, none below,
   *                                                            44 rows a group: all kept
   * }}}
   * (EstimatorSuite's cases; the first's NULLs are whole customers': 4,800 measured. TPC-DS q1's
   * returns at scale factor 1: 46,475 estimated, 49,737 measured.)
   */
  def aggregateTestsKept(f: Filter, groups: BigInt, statsOf: LogicalPlan => Option[Statistics],
      sampleOf: LogicalPlan => Option[Sketches.Sample]): Option[(BigInt, Boolean)] = {
    val tests = splitConjunctivePredicates(f.condition)
    if (tests.isEmpty || groups <= 0) return None
    val results = new AggregateResults(statsOf, sampleOf)
    val kept = tests.map {
      case IsNotNull(a: Attribute) => results.kept(f.child, a.exprId, NotNull).map(a.exprId -> _)
      case SignTest(a, test) => results.kept(f.child, a.exprId, test).map(a.exprId -> _)
      case _ => None
    }
    if (kept.exists(_.isEmpty)) None
    else Some(RoundUp(groups.toDouble * kept.flatten.groupMapReduce(_._1)(_._2)(math.min).values.product).min(groups).max(1) -> results.sampled)
  }
}

private sealed trait ResultTest
private case object NotNull extends ResultTest
private final case class Positive(strict: Boolean) extends ResultTest

// `x > 0`, `x >= 0`, `0 < x`, `0 <= x`: x a column, perhaps cast to another number type.
private object SignTest {
  def unapply(e: Expression): Option[(Attribute, ResultTest)] = e match {
    case GreaterThan(Column(a), Zero()) => Some(a -> Positive(strict = true))
    case LessThan(Zero(), Column(a)) => Some(a -> Positive(strict = true))
    case GreaterThanOrEqual(Column(a), Zero()) => Some(a -> Positive(strict = false))
    case LessThanOrEqual(Zero(), Column(a)) => Some(a -> Positive(strict = false))
    case _ => None
  }
  /** A cast of a number to a number: it keeps the number's sign (but for rounding). */
  def numbers(c: Cast): Boolean = c.child.dataType.isInstanceOf[NumericType] && c.dataType.isInstanceOf[NumericType]

  private object Column {
    def unapply(e: Expression): Option[Attribute] = e match {
      case a: Attribute => Some(a)
      case c: Cast if numbers(c) => unapply(c.child)
      case _ => None
    }
  }
  private object Zero {
    def unapply(e: Expression): Boolean = e match {
      case Literal(v, _: NumericType) => Sketches.number(v).contains(0.0)
      case _ => false
    }
  }
}

// An aggregate `g` whose `rows` input rows (statistics `in`) make `groups` groups.
private final case class AggregateGroups(g: Aggregate, in: Statistics, rows: BigInt, groups: BigInt) {
  def rowsPerGroup: Double = math.max(1.0, rows.toDouble / groups.toDouble)
}

/** The share of an aggregate's groups whose result passes a test ([[AggregateTests.aggregateTestsKept]]). */
private final class AggregateResults(statsOf: LogicalPlan => Option[Statistics], sampleOf: LogicalPlan => Option[Sketches.Sample]) {

  /** Whether a sample told a share. */
  def sampled: Boolean = told.values.exists(_.isDefined)

  /** The share of the rows of `p` whose column `id`, a grouped aggregate's result below `p`, passes `test`. */
  def kept(p: LogicalPlan, id: ExprId, test: ResultTest): Option[Double] = for {
    (g, e) <- resultOf(p, id)
    in <- statsOf(g.child)
    rows <- in.rowCount if rows > 0
    groups <- statsOf(g).flatMap(_.rowCount) if groups > 0
    share <- keptShare(e, test, AggregateGroups(g, in, rows, groups))
  } yield share

  // The aggregate below `p` (through projections passing columns on) that computes column `id`,
  // with the expression it computes it by.
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

  private def keptShare(e: Expression, test: ResultTest, at: AggregateGroups): Option[Double] = (e, test) match {
    case (AggregateExpression(_: Count, _, _, None, _), NotNull | Positive(false)) => Some(1.0)
    case (AggregateExpression(c: Count, _, _, None, _), Positive(true)) =>
      c.children.foldLeft(Option(0.0))((none, x) => for (s <- none; t <- nullShare(x, at)) yield 1.0 - (1.0 - s) * (1.0 - t))
        .map(s => 1.0 - math.pow(s, at.rowsPerGroup))
    case (AggregateExpression(fn @ (_: Sum | _: Average | _: Min | _: Max), _, false, None, _), NotNull) =>
      nullShare(fn.children.head, at).map(s => 1.0 - math.pow(s, at.rowsPerGroup)).orElse(partsOf(fn, at).flatMap {
        case (y, rows) => nullShare(y, rows).map(s => 1.0 - math.pow(s, rows.rowsPerGroup)) })
    case (AggregateExpression(fn @ (_: Sum | _: Average | _: Min | _: Max), _, false, None, _), Positive(strict)) =>
      signs(fn.children.head, at).map(s => aboveZero(fn, s, strict, at.rowsPerGroup)).orElse(partsOf(fn, at).flatMap {
        case (y, rows) => signs(y, at).map(s => aboveZero(fn, s, strict, rows.rowsPerGroup)) })
    case (Multiply(x, Literal(v, _), _), _) if positive(v) => keptShare(x, test, at)
    case (Multiply(Literal(v, _), x, _), _) if positive(v) => keptShare(x, test, at)
    case (Divide(x, Literal(v, _), _), _) if positive(v) => keptShare(x, test, at)
    case (Divide(x, Literal(v, _), _), NotNull) if nonZero(v) => keptShare(x, test, at)
    case (Multiply(x, _: Literal, _), NotNull) => keptShare(x, test, at)
    case (Multiply(_: Literal, x, _), NotNull) => keptShare(x, test, at)
    case (Add(x, _: Literal, _), NotNull) => keptShare(x, test, at)
    case (Subtract(x, _: Literal, _), NotNull) => keptShare(x, test, at)
    case (c: Cast, NotNull) => keptShare(c.child, test, at)
    // (a number cast to another keeps its sign, but for rounding)
    case (c: Cast, _) if SignTest.numbers(c) => keptShare(c.child, test, at)
    // Spark's DecimalAggregates sums a short decimal as its unscaled long: `MakeDecimal(sum(UnscaledValue(x)))`
    case (m: MakeDecimal, _) => keptShare(m.child, test, at)
    case _ => None
  }

  // Where `fn` (a sum, minimum or maximum) reads parts that a finer aggregate below computed by the
  // same function (`sum(part)` over `sum(y) AS part`: EagerAggregation's pre-aggregate, or a rollup
  // of a rollup), a group's value (and whether it is NULL) is `fn` of `y` over the rows its parts
  // stand for: `y`, with the group's rows counted as that aggregate's input rows per part (TPC-DS
  // q11's `year_total > 0` where the rule fired, a join between the two aggregates; the sample
  // cannot evaluate a part).
  private def partsOf(fn: AggregateFunction, at: AggregateGroups): Option[(Expression, AggregateGroups)] = for {
    part <- Some(fn.children.head).collect { case a: Attribute => a }
    (inner, e) <- at.g.child.collect { case g: Aggregate => g.aggregateExpressions.collectFirst {
      case al @ Alias(e, _) if al.exprId == part.exprId => g -> e } }.flatten.headOption
    y <- ((fn, e match { case m: MakeDecimal => m.child; case other => other }) match {
      case (_: Sum, AggregateExpression(s: Sum, Complete, false, None, _)) => Some(s.child)
      case (_: Min, AggregateExpression(m: Min, Complete, false, None, _)) => Some(m.child)
      case (_: Max, AggregateExpression(m: Max, Complete, false, None, _)) => Some(m.child)
      case _ => None
    })
    in <- statsOf(inner.child).flatMap(_.rowCount)
    parts <- statsOf(inner).flatMap(_.rowCount) if parts > 0
  } yield y -> at.copy(rows = (at.rows * in / parts).max(at.rows))

  private def positive(v: Any): Boolean = Sketches.number(v).exists(_ > 0.0)
  private def nonZero(v: Any): Boolean = Sketches.number(v).exists(_ != 0.0)

  // The chance that `fn` over a group of `r` rows, whose argument's values fall as `s`, is above 0
  // (or at least 0 where not `strict`).
  private def aboveZero(fn: Expression, s: Sketches.Signs, strict: Boolean, r: Double): Double = {
    val n = s.size.toDouble
    val nulls = s.nulls / n
    val passes = (s.above + (if (strict) 0 else s.zero)) / n
    fn match {
      // passes where one value does (so does a sum where no value is below 0) ...
      case _: Max => 1.0 - math.pow(1.0 - passes, r)
      // ... or where every value not NULL does (a sum where no value is above 0)
      case _: Min => math.pow(nulls + passes, r) - math.pow(nulls, r)
      case _ if s.below == 0 => 1.0 - math.pow(1.0 - passes, r)
      case _ if s.above == 0 => math.pow(nulls + passes, r) - math.pow(nulls, r)
      case _ =>
        val values = r * (1.0 - nulls)
        val z = if (s.sd > 0) s.mean * math.sqrt(values) / s.sd else if (s.mean > 0) 40.0 else -40.0
        (1.0 - math.pow(nulls, r)) * 0.5 * Erf.erfc(-z / math.sqrt(2.0))
    }
  }

  // How `x` (an aggregate's argument) falls on the sample of the one table whose columns it reads,
  // under the filter directly above that table in the plan.
  // (once per aggregate and argument: a value's NULL and sign tests both ask, each a walk of the plan)
  private val told = scala.collection.mutable.Map.empty[(Aggregate, Expression), Option[Sketches.Signs]]
  private def signs(x: Expression, at: AggregateGroups): Option[Sketches.Signs] = told.getOrElseUpdate((at.g, x), {
    val leaf = at.g.child.collectLeaves().find(l => x.references.nonEmpty && x.references.subsetOf(l.outputSet))
    val filter = leaf.flatMap(l => at.g.child.collectFirst { case f: Filter if f.child eq l => f.condition })
    val answer = for (l <- leaf; sample <- sampleOf(l); s <- sample.signs(x, filter, l.output) if s.size > 0) yield s
    answer
  })

  // The share of input rows on which `x` (columns, literals, their sums, differences, products,
  // negations and quotients by a literal) is NULL: one of its columns NULL, the columns taken as
  // independent. A column without a NULL count that is an aggregate's result: that aggregate's
  // groups whose value is NULL. Any other number: the share of the sampled rows it is NULL on.
  private def nullShare(x: Expression, at: AggregateGroups): Option[Double] = x match {
    case a: Attribute => at.in.attributeStats.get(a).flatMap(_.nullCount).map(n => math.min(1.0, n.toDouble / at.rows.toDouble))
      .orElse(kept(at.g.child, a.exprId, NotNull).map(1.0 - _)).orElse(sampledNulls(x, at))
    case l: Literal => Some(if (l.value == null) 1.0 else 0.0)
    case _: Add | _: Subtract | _: Multiply | _: UnaryMinus | _: Cast | _: UnscaledValue =>
      x.children.foldLeft(Option(0.0)) { (none, c) =>
        for (s <- none; t <- nullShare(c, at)) yield 1.0 - (1.0 - s) * (1.0 - t)
      }.orElse(sampledNulls(x, at))
    case Divide(y, Literal(v, _), _) if nonZero(v) => nullShare(y, at).orElse(sampledNulls(x, at))
    case _ => sampledNulls(x, at)
  }

  // The share of the sampled rows on which the number `x` is NULL.
  private def sampledNulls(x: Expression, at: AggregateGroups): Option[Double] = signs(x, at).map(s => s.nulls.toDouble / s.size)
}
