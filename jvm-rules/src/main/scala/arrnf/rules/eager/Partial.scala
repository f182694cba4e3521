package arrnf.rules.eager

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate._
import org.apache.spark.sql.catalyst.util.CollationFactory
import org.apache.spark.sql.types._

/**
 * One aggregate function split in two for eager aggregation: `inner` is computed per group of the
 * aggregated side before the join, `outer` combines the inner results after it and gives exactly
 * the original's value, type and nullability.
 *
 * The other side is never aggregated, so no multiplicity is multiplied in: each of its rows meets
 * the one pre-aggregated row of its key, as it met each row of that group before.
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
 *  - Not split (the rule does not fire): `avg`, DISTINCT aggregates, aggregates with a `FILTER`,
 *    and every other function.
 */
private[rules] final case class Partial(original: AggregateExpression, inner: Alias, outer: Expression)

private[rules] object Partial {

  /** The split of `a`, or why it cannot be split. */
  def of(a: AggregateExpression): Either[String, Partial] = {
    if (a.isDistinct) return scala.util.Left(s"${a.sql} is DISTINCT")
    if (a.filter.isDefined) return scala.util.Left(s"${a.sql} has a FILTER")
    if (a.mode != Complete) return scala.util.Left(s"${a.sql} is already partial")
    def part(f: AggregateFunction, name: String) = Alias(f.toAggregateExpression(), name)()
    a.aggregateFunction match {
      case s: Sum =>
        val mode = s.evalContext.evalMode
        s.child.dataType match {
          case _ if mode == EvalMode.TRY => scala.util.Left(s"${a.sql} is try_sum")
          case ByteType | ShortType | IntegerType =>
            val p = part(Sum(s.child, s.evalContext), "arrnf_sum")
            scala.util.Right(Partial(a, p, Sum(p.toAttribute, s.evalContext).toAggregateExpression()))
          // Spark's DecimalAggregates sums a DECIMAL(p <= 8) as its unscaled LONG: the decimal's bound.
          case LongType if mode == EvalMode.LEGACY || smallUnscaled(s.child) =>
            val p = part(Sum(s.child, s.evalContext), "arrnf_sum")
            scala.util.Right(Partial(a, p, Sum(p.toAttribute, s.evalContext).toAggregateExpression()))
          case d: DecimalType if d.precision + 10 <= DecimalType.MAX_PRECISION =>
            val p = part(Sum(s.child, s.evalContext), "arrnf_sum")
            val outer = Sum(p.toAttribute, s.evalContext).toAggregateExpression()
            scala.util.Right(Partial(a, p, Cast(outer, s.dataType, None, mode)))
          case t => scala.util.Left(s"${a.sql} sums ${t.simpleString}" + (if (t == LongType) " with ANSI on" else ""))
        }
      case c: Count =>
        val p = part(Count(c.children), "arrnf_count")
        val sum = Sum(p.toAttribute, NumericEvalContext(EvalMode.LEGACY)).toAggregateExpression()
        scala.util.Right(Partial(a, p, Coalesce(Seq(sum, Literal(0L)))))
      case m: Min if comparable(m.child.dataType) =>
        val p = part(Min(m.child), "arrnf_min")
        scala.util.Right(Partial(a, p, Min(p.toAttribute).toAggregateExpression()))
      case m: Max if comparable(m.child.dataType) =>
        val p = part(Max(m.child), "arrnf_max")
        scala.util.Right(Partial(a, p, Max(p.toAttribute).toAggregateExpression()))
      case f => scala.util.Left(s"${a.sql}: ${f.prettyName} is not split")
    }
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
