package arrnf.cost

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeMap, AttributeSet, DayOfMonth, DayOfWeek, DayOfYear, Expression, GetDateField, Literal, Month, NamedExpression, Pmod, Quarter, Remainder, SubqueryExpression, WeekDay, Year}
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, ColumnStat, Expand, Statistics}
import org.apache.spark.sql.types.{ByteType, DataType, DateType, IntegerType, LongType, ShortType}

/**
 * Statistics of the columns Spark's estimation drops: a ROLLUP's, a projection's or an aggregate's
 * computed columns, a UNION ALL's. Mixed into `object Estimator` (through [[DerivedStatistics]]),
 * whose names callers use.
 */
private[cost] trait ComputedColumns {
  /**
   * Column statistics of an Expand's output (ROLLUP, CUBE, GROUPING SETS), which Spark does not
   * derive: a column that is one input column in some projections and NULL in the others keeps that
   * column's distinct count, its NULL count growing by the input's rows per NULL projection; a
   * column of non-NULL literals (the grouping id) has as many distinct values as literals.
   */
  def expandColumns(e: Expand, in: Statistics): AttributeMap[ColumnStat] = {
    val rows = in.rowCount.getOrElse(BigInt(0))
    def isNull(x: Expression) = x match {
      case Literal(null, _) => true
      case _ => false
    }
    AttributeMap(e.output.indices.flatMap { i =>
      val column = e.projections.map(_(i))
      val nulls = column.count(isNull)
      column.filterNot(isNull).distinct match {
        case Seq(a: Attribute) =>
          in.attributeStats.get(a).filter(s => s.distinctCount.isDefined && s.nullCount.isDefined).map(s =>
            e.output(i) -> ColumnStat(distinctCount = s.distinctCount, nullCount = Some(
              s.nullCount.get * (column.size - nulls) + rows * nulls), min = s.min, max = s.max))
        case literals if nulls == 0 && literals.nonEmpty && literals.forall(_.isInstanceOf[Literal]) =>
          Some(e.output(i) -> ColumnStat(distinctCount = Some(BigInt(literals.size)), nullCount = Some(BigInt(0))))
        case _ => None
      }
    })
  }

  /**
   * Column statistics of a projection's computed columns, which Spark's estimation drops (it keeps
   * only columns and their aliases), from `in`, its input's statistics: a date's year, quarter,
   * month, day or weekday takes the values its range spans (no more than the date's distinct
   * count); any other deterministic expression of counted columns the values `sampled` finds in
   * the sketch pass's sample ([[arrnf.stats.Sketches.Sample.valuesOf]]), where it tells, else at
   * most their combinations and the rows (as if it kept every difference: an upper estimate). Its
   * NULLs: none where it cannot be NULL, else its arguments' NULLs.
   *
   * {{{
   *   year(d_date) over dates 1900-01-02 .. 2100-01-01 (73,049 values): 201 values
   *   ss_quantity - coalesce(sr_return_quantity, 0): min(100 * 101, rows) values
   *   id % 7 (id ≥ 0): 7 values; k % 7: 13; pmod(k, 7): 7
   *   substr(s, 1, 1) of 20,000 numbers' texts: 20,000 values; sampled, 10
   * }}}
   */
  def derivedColumns(list: Seq[NamedExpression], in: Statistics,
      sampled: Expression => Option[BigInt] = _ => None): Seq[(Attribute, ColumnStat)] = list.flatMap {
    case al @ Alias(e, _) if !e.isInstanceOf[Attribute] && e.deterministic && e.references.nonEmpty &&
        !SubqueryExpression.hasSubquery(e) =>
      val refs = e.references.toSeq.map(a => in.attributeStats.get(a))
      if (!refs.forall(_.exists(s => s.distinctCount.isDefined && s.nullCount.isDefined))) None
      else {
        val stats = refs.flatten
        val combinations = stats.map(_.distinctCount.get).product
        def span(days: Int, lo: java.time.LocalDate, hi: java.time.LocalDate): BigInt = e match {
          case _: Year => hi.getYear - lo.getYear + 1
          case _: Quarter => math.min(4, (hi.getYear - lo.getYear) * 4 + (hi.getMonthValue - 1) / 3 - (lo.getMonthValue - 1) / 3 + 1)
          case _: Month => math.min(12, (hi.getYear - lo.getYear) * 12 + hi.getMonthValue - lo.getMonthValue + 1)
          case _: DayOfMonth => math.min(31, days)
          case _: DayOfWeek | _: WeekDay => math.min(7, days)
          case _: DayOfYear => math.min(366, days)
          case _ => combinations
        }
        val byRange = e match {
          case f: GetDateField if f.children.head.isInstanceOf[Attribute] && f.children.head.dataType == DateType =>
            for {
              s <- stats.headOption
              lo <- s.min.collect { case d: Int => d }
              hi <- s.max.collect { case d: Int => d }
            } yield span(hi - lo + 1, java.time.LocalDate.ofEpochDay(lo), java.time.LocalDate.ofEpochDay(hi))
          // A remainder by a constant: no more values than the divisor's (both signs where the dividend may be negative).
          case Remainder(x, Literal(d, t), _) if integral(t) && integral(x.dataType) && d != null =>
            val m = BigInt(d.toString).abs
            val nonNegative = x match {
              case a: Attribute => in.attributeStats.get(a).flatMap(_.min).exists(v => BigInt(v.toString) >= 0)
              case _ => false
            }
            Option.when(m > 0)(if (nonNegative) m else m * 2 - 1)
          case Pmod(x, Literal(d, t), _) if integral(t) && integral(x.dataType) && d != null && BigInt(d.toString) != 0 => Some(BigInt(d.toString).abs)
          case _ => None
        }
        val distinct = byRange.orElse(sampled(e)).getOrElse(combinations).min(combinations).min(in.rowCount.getOrElse(combinations)).max(1)
        Some(al.toAttribute -> ColumnStat(distinctCount = Some(distinct),
          nullCount = Some(if (!e.nullable) BigInt(0) else stats.map(_.nullCount.get).sum.min(in.rowCount.getOrElse(BigInt(Long.MaxValue))))))
      }
    case _ => None
  }

  private def integral(t: DataType): Boolean = t match {
    case ByteType | ShortType | IntegerType | LongType => true
    case _ => false
  }

  /**
   * Column statistics of an aggregate's results that are expressions of its grouping columns (Spark
   * puts the projection `concat('store', s_store_id) AS id` above TPC-DS q5's and q80's aggregates
   * into them), from `in`, its input's statistics ([[derivedColumns]]).
   */
  def groupedColumns(a: Aggregate, in: Statistics): Seq[(Attribute, ColumnStat)] = {
    val grouped = AttributeSet(a.groupingExpressions.flatMap(_.references))
    derivedColumns(a.aggregateExpressions.filter(e => !e.isInstanceOf[Attribute] &&
      !e.exists(_.isInstanceOf[AggregateExpression]) && e.references.subsetOf(grouped)), in)
  }

  /**
   * Column statistics of a UNION ALL's output from its inputs' (`inputs`: each input's columns in
   * the union's order, with its statistics), which Spark's estimation does not derive beyond
   * ranges: NULLs add up; the distinct values lie between the most any input holds (every value
   * in the others too) and their sum (no value in two inputs), and the estimate is the geometric
   * mean of the two, so within a factor √k of the truth for k inputs.
   */
  def unionColumns(output: Seq[Attribute], inputs: Seq[(Seq[Attribute], Statistics)]): Seq[(Attribute, ColumnStat)] =
    output.indices.flatMap { i =>
      val per = inputs.map { case (out, st) => st.attributeStats.get(out(i)) }
      if (!per.forall(_.exists(s => s.distinctCount.isDefined && s.nullCount.isDefined))) None
      else {
        val counts = per.flatten.map(_.distinctCount.get)
        val mean = RoundUp(math.sqrt(counts.max.toDouble * counts.sum.toDouble))
        Some(output(i) -> ColumnStat(distinctCount = Some(mean.max(counts.max).min(counts.sum)),
          nullCount = Some(per.flatten.map(_.nullCount.get).sum)))
      }
    }
}
