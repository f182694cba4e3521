package arrnf.rules.eager

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate._
import org.apache.spark.sql.catalyst.util.CollationFactory
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._

/**
 * One aggregate function split in two for eager aggregation: `inner` is computed per group of the
 * aggregated side before the join, `outer` combines the inner results after it and gives exactly
 * the original's value, type and nullability.
 *
 * Where the other side is not aggregated, each of its rows meets the one pre-aggregated row of its
 * key, as it met each row of that group before: nothing is multiplied. Where it is aggregated too
 * (by its join keys and grouping columns, with `c = count(*)`), each of its rows stands for `c`
 * rows, and `outerWith(Some(c))` weights every sum and count part by it (`sum(r' * c)`, the ring's
 * product of multiplicities); `min`, `max` and DISTINCT aggregates ignore multiplicities.
 *
 *  - `sum(x)` = `sum(sum(x))` for BYTE/SHORT/INT (a LONG sum of at most 2^31-bit values: it
 *    overflows only past 2^32 rows of one group), for BIGINT only with ANSI off (LEGACY wraps, and
 *    wrapped addition is associative; with ANSI on a pre-aggregated group of rows that join nothing
 *    could overflow where the original never added them), and for DECIMAL(p, s) with p + 10 <= 38
 *    (Spark sums into DECIMAL(p + 10, s): 10^10 rows of one group before it can overflow, as for
 *    Spark's own sum; also as the LONG sum of its unscaled values that Spark's DecimalAggregates
 *    makes of it); the outer decimal sum is cast back to DECIMAL(p + 10, s) in the sum's own
 *    mode (an overflow is an error with ANSI on and NULL with it off, as Spark's sum). FLOAT/DOUBLE
 *    sums are not split: the additions would be regrouped and the last bits of the result change.
 *    `try_sum` (TRY mode) is not split either (an overflowed part would read as NULL and be skipped).
 *  - `count(*)`, `count(x…)` = `coalesce(sum(count(…)), 0)`: a count is never NULL, and a global
 *    aggregate over no rows counts 0.
 *  - `min(x)`, `max(x)` = `min(min(x))`, `max(max(x))` for numbers other than FLOAT/DOUBLE, dates,
 *    timestamps, booleans, binary strings and bytes; not for collated strings nor FLOAT/DOUBLE
 *    (values that compare equal but differ, `'a'`/`'A'` or `0.0`/`-0.0`, would be picked in
 *    another order).
 *  - `avg(x)` = the original's evaluation over `sum(sum(x))` and `sum(count(x))`, for BYTE/SHORT/INT
 *    and DECIMAL(p <= 8, s). Spark averages these in DOUBLE: an integer's sum, and (its
 *    `DecimalAggregates`) a small decimal's unscaled sum, cast to DECIMAL(p + 4, s + 4) after dividing
 *    by 10^s; the split sums exactly (LONG, DECIMAL(p + 10, s)) and rounds once, which is the same
 *    DOUBLE while every sum of the group stays within 2^53 (4 million INT values near their limit, 900
 *    million DECIMAL(7, 2) ones). Beyond that Spark's own DOUBLE sum depends on the order its tasks'
 *    partial sums arrive in. Not split: LONG, FLOAT/DOUBLE and DECIMAL(p > 8) averages (LONG values
 *    round as DOUBLE before they are added; Spark averages larger decimals exactly), `try_avg`, and
 *    a decimal average where `DecimalAggregates` is excluded (Spark then averages it exactly).
 *  - DISTINCT aggregates (`count`, `sum`, `avg`, `min`, `max`): unchanged above the join, their
 *    arguments' columns of the aggregated side added to its grouping (`keys`). They read each
 *    distinct argument value once, and the pre-aggregate keeps every combination of its keys and
 *    those columns, so each group of the original sees the same values. Not for FLOAT/DOUBLE sums
 *    and averages (the additions' order).
 *  - Not split (the rule does not fire): aggregates with a `FILTER`, and every other function.
 */
private[rules] final case class Partial(original: AggregateExpression, inner: Seq[Alias], outer: Expression,
    keys: AttributeSet = AttributeSet.empty, weighted: Option[Attribute => Expression] = None) {

  /** The outer form where the other side is aggregated too, each of its rows standing for `count`
   *  rows: every part weighted by that multiplicity. None where the function cannot carry it. */
  def outerWith(count: Option[Attribute]): Option[Expression] = count match {
    case None => Some(outer)
    case Some(c) => weighted.map(_(c))
  }
}

private[rules] object Partial {

  /** The split of `a`, or why it cannot be split. */
  def of(a: AggregateExpression): Either[String, Partial] = {
    if (a.filter.isDefined) return scala.util.Left(s"${a.sql} has a FILTER")
    if (a.mode != Complete) return scala.util.Left(s"${a.sql} is already partial")
    if (a.isDistinct) return distinct(a)
    def split(parts: Seq[Alias])(outer: Option[Attribute] => Expression) = splitInto(a, parts)(outer)
    a.aggregateFunction match {
      case s: Sum =>
        val mode = s.evalContext.evalMode
        s.child.dataType match {
          case _ if mode == EvalMode.TRY => scala.util.Left(s"${a.sql} is try_sum")
          case ByteType | ShortType | IntegerType =>
            val p = part(Sum(s.child, s.evalContext), "arrnf_sum")
            split(Seq(p))(w => sumOf(p.toAttribute, s.evalContext, w))
          // Spark's DecimalAggregates sums a DECIMAL(p <= 8) as its unscaled LONG: the decimal's bound.
          case LongType if mode == EvalMode.LEGACY || smallUnscaled(s.child) =>
            val p = part(Sum(s.child, s.evalContext), "arrnf_sum")
            split(Seq(p))(w => sumOf(p.toAttribute, s.evalContext, w))
          case d: DecimalType if d.precision + 10 <= DecimalType.MAX_PRECISION =>
            val p = part(Sum(s.child, s.evalContext), "arrnf_sum")
            split(Seq(p))(w => Cast(sumOf(p.toAttribute, s.evalContext, w), s.dataType, None, mode))
          case t => scala.util.Left(s"${a.sql} sums ${t.simpleString}" + (if (t == LongType) " with ANSI on" else ""))
        }
      case c: Count =>
        val p = part(Count(c.children), "arrnf_count")
        split(Seq(p))(w => Coalesce(Seq(sumOf(p.toAttribute, Legacy, w), Literal(0L))))
      case m: Min if comparable(m.child.dataType) =>
        val p = part(Min(m.child), "arrnf_min")
        split(Seq(p))(_ => Min(p.toAttribute).toAggregateExpression())
      case m: Max if comparable(m.child.dataType) =>
        val p = part(Max(m.child), "arrnf_max")
        split(Seq(p))(_ => Max(p.toAttribute).toAggregateExpression())
      case avg: Average => average(a, avg)
      case f @ (_: Min | _: Max) => scala.util.Left(s"${a.sql}: ${f.prettyName} of ${f.children.head.dataType.simpleString} " +
        "is not split (values that compare equal but differ, 0.0 and -0.0, or 'a' and 'A' in a collation, may be picked otherwise)")
      case f => scala.util.Left(s"${a.sql}: ${f.prettyName} is not split")
    }
  }

  private val Legacy = NumericEvalContext(EvalMode.LEGACY)

  private def part(f: AggregateFunction, name: String): Alias = Alias(f.toAggregateExpression(), name)()

  /** `a` split into `parts`, with `outer` for each multiplicity: none (the other side is not
   *  aggregated) or a count column of the other side. */
  private def splitInto(a: AggregateExpression, parts: Seq[Alias])(outer: Option[Attribute] => Expression) =
    scala.util.Right(Partial(a, parts, outer(None), weighted = Some(c => outer(Some(c)))))

  /**
   * `sum(part)`, or `sum(part * c)` where each row stands for `c` rows. A part times its multiplicity
   * is a sum of the original's values over the joined rows it stands for: it overflows only where
   * those rows' sum of magnitudes does (2^32 joined rows of INT values, 10^10 of a DECIMAL(p <= 28)),
   * as the original's own sum. A decimal is multiplied without losing scale (Spark's precision loss
   * would round it): DECIMAL(min(38, p + 21), s).
   */
  private def sumOf(part: Attribute, ctx: NumericEvalContext, weight: Option[Attribute]): Expression = {
    val value = weight.fold[Expression](part) { c =>
      part.dataType match {
        case _: DecimalType => Multiply(part, Cast(c, DecimalType(20, 0)), NumericEvalContext(ctx.evalMode, false))
        case _ => Multiply(part, c, ctx)
      }
    }
    Sum(value, ctx).toAggregateExpression()
  }

  private def average(a: AggregateExpression, avg: Average): Either[String, Partial] = {
    val mode = avg.evalMode
    val context = NumericEvalContext(mode)
    lazy val sum = part(Sum(avg.child, context), "arrnf_sum")
    lazy val count = part(Count(Seq(avg.child)), "arrnf_count")
    // Spark's Average divides with its LEGACY mode: a group without values is NULL, not an error.
    def mean(total: Expression, w: Option[Attribute]) = Divide(Cast(total, DoubleType),
      Cast(sumOf(count.toAttribute, Legacy, w), DoubleType), Legacy)
    def split(outer: Option[Attribute] => Expression) = splitInto(a, Seq(sum, count))(outer)
    avg.child.dataType match {
      case _ if mode == EvalMode.TRY => scala.util.Left(s"${a.sql} is try_avg")
      case ByteType | ShortType | IntegerType => split(w => mean(sumOf(sum.toAttribute, context, w), w))
      case d: DecimalType if d.precision + 10 <= Decimal.MAX_LONG_DIGITS && !decimalAggregatesExcluded =>
        // As Spark's DecimalAggregates: the DOUBLE average of the unscaled values, divided by 10^s.
        split { w =>
          val total = Cast(sumOf(sum.toAttribute, context, w), sum.dataType, None, mode)
          val value = Divide(mean(UnscaledValue(total), w), Literal.create(math.pow(10.0, d.scale), DoubleType))
          Cast(value, DecimalType(d.precision + 4, d.scale + 4), Option(SQLConf.get.sessionLocalTimeZone))
        }
      case t => scala.util.Left(s"${a.sql} averages ${t.simpleString} (split only over INT and DECIMAL of at most " +
        s"${Decimal.MAX_LONG_DIGITS - 10} digits, which Spark averages in DOUBLE)")
    }
  }

  private def decimalAggregatesExcluded: Boolean = SQLConf.get.optimizerExcludedRules.exists(
    _.split(",").map(_.trim).contains("org.apache.spark.sql.catalyst.optimizer.DecimalAggregates"))

  /** A DISTINCT aggregate, kept as it is above the join: its columns join the pre-aggregate's keys. */
  private def distinct(a: AggregateExpression): Either[String, Partial] = a.aggregateFunction match {
    case _: Count | _: Min | _: Max => scala.util.Right(Partial(a, Nil, a, a.references, Some(_ => a)))
    case f @ (_: Sum | _: Average) if !f.children.exists(c => c.dataType == FloatType || c.dataType == DoubleType) =>
      scala.util.Right(Partial(a, Nil, a, a.references, Some(_ => a)))
    case f => scala.util.Left(s"${a.sql} is DISTINCT (${f.prettyName} of ${f.children.map(_.dataType.simpleString).mkString(", ")})")
  }

  private def smallUnscaled(e: Expression): Boolean = e match {
    case UnscaledValue(d) => d.dataType match {
      case t: DecimalType => t.precision + 10 <= Decimal.MAX_LONG_DIGITS
      case _ => false
    }
    case _ => false
  }

  /** A type whose equal values are the same bytes and whose order is total: min/max of parts is
   *  the min/max of all. Also what the pre-aggregation may group by. */
  def comparable(t: DataType): Boolean = t match {
    case ByteType | ShortType | IntegerType | LongType | BooleanType | DateType | TimestampType |
         TimestampNTZType | BinaryType => true
    case _: DecimalType => true
    case s: StringType =>
      val c = CollationFactory.fetchCollation(s.collationId)
      c.supportsBinaryEquality && c.supportsBinaryOrdering && !s.isInstanceOf[CharType] && !s.isInstanceOf[VarcharType]
    case _ => false
  }
}
