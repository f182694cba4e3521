package arrnf.cost

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeMap, AttributeSet, EqualTo, ExprId, Expression, In, InSet, IsNotNull, Literal, Or, PredicateHelper}
import org.apache.spark.sql.catalyst.plans.logical.{ColumnStat, Statistics}

import arrnf.stats.Sketches

/**
 * What a share of a table's rows keeps: of its rows and distinct values, as a random share or as
 * the sampled rows a filter keeps ([[Sketches.Sample]]); and which columns a filter selects by.
 * Mixed into `object Estimator` (through [[DerivedStatistics]]), whose names callers use.
 */
private[cost] trait KeptShares extends PredicateHelper {
  /** Sampled rows a filter must keep for its share to count beside Spark's estimate (its relative
   *  error is then about 1/√20, a quarter). */
  val MinSampled = 20

  /**
   * Whether a filter's sample refutes Spark's estimate of it: the filter kept `kept` of `size`
   * sampled rows, where Spark's share `estimated / rows` would keep about `e = size × share` of them,
   * and `kept` lies more than four standard deviations of that draw (and a row) from `e`. Spark
   * spreads a range over the column's minimum and maximum: TPC-DS store_returns' return amounts
   * above 10,000 are 39% of the rows by it, 507 of 287,514 by count, 3 or 4 of 2,000 sampled rows.
   * A true estimate gives such a sample less than once in a thousand draws (the binomial's tails
   * over 2,000 rows; the worst case is about 0.4 rows expected and 4 or more kept).
   */
  def refutes(kept: Int, size: Int, estimated: BigInt, rows: BigInt): Boolean = size > 0 && rows > 0 && {
    val share = (BigDecimal(estimated.min(rows)) / BigDecimal(rows)).toDouble
    val e = size * share
    math.abs(kept - e) > 4 * math.sqrt(e * (1 - share)) + 1
  }

  /**
   * The columns whose values `condition` selects rows by. A column tested only `IS NOT NULL` (Spark
   * infers such a test for every join key) keeps each of its values on the rows the other tests
   * keep as on a random share of its rows: TPC-H q15's lineitem over three months of ship dates
   * holds every supplier's key, not the 4% of the keys that its share of the rows is.
   */
  def valueTested(condition: Expression): AttributeSet =
    AttributeSet(splitConjunctivePredicates(condition).filterNot(testsOnlyNulls).flatMap(_.references))

  /** The tests of values of a filter's `condition`, each its conjuncts on the same columns: a range's
   *  two bounds together, as Spark estimates them (TPC-DS q69's months 4 to 6: 2/11 of the year by
   *  Spark's range, a quarter sampled; one bound alone would be refuted). */
  def testsOf(condition: Expression): Seq[Seq[Expression]] = {
    val valued = splitConjunctivePredicates(condition).filter(testsValues)
    valued.map(_.references).distinct.map(on => valued.filter(_.references == on))
  }

  /** Whether `condition` tests a column's values, not only its NULLs (whose counts are exact). */
  def testsValues(condition: Expression): Boolean = splitConjunctivePredicates(condition).exists(!testsOnlyNulls(_))

  // A conjunct Spark infers for every join key: it tests a column's NULLs only.
  private def testsOnlyNulls(conjunct: Expression): Boolean = conjunct match {
    case IsNotNull(_: Attribute) => true
    case _ => false
  }

  /**
   * The distinct values of the columns a filter's `condition` tests only inside an OR, over `n` of
   * its input's rows (`in`). Spark's estimation does not follow an OR into its columns: it scales
   * their counts down with the rows, as if each kept row dropped values (TPC-DS q47's `d_year = 1999
   * OR (d_year = 1998 AND d_moy = 12) OR (d_year = 2000 AND d_moy = 1)`: 2 years and 1 month kept,
   * 14 year-months measured). Per OR, the sum over its branches of the values a branch fixes the
   * column to (`c = v`: one; `c IN (...)`: the list's), or, in a branch that does not test it, the
   * values `n` random rows keep ([[distinctIn]]); the least over the ORs, never above the input's
   * count or `n`. Columns without a distinct count, or that a branch tests otherwise (a range), are
   * left out.
   * {{{
   *   d_year = 1999 OR (d_year = 1998 AND d_moy = 12) OR (d_year = 2000 AND d_moy = 1)
   *     // d_year: 3; d_moy: 12 + 1 + 1, at most its 12 values
   * }}}
   */
  def disjunctiveCounts(condition: Expression, in: Statistics, n: BigInt): Map[ExprId, BigInt] = {
    val (ors, rest) = splitConjunctivePredicates(condition).partition(_.isInstanceOf[Or])
    if (ors.isEmpty) return Map.empty
    val testedAlone = AttributeSet(rest.filterNot(testsOnlyNulls).flatMap(_.references))
    def fixedIn(branch: Expression): Map[ExprId, Int] =
      splitConjunctivePredicates(branch).flatMap(fixedValues).groupMapReduce(_._1.exprId)(_._2)(_ min _)
    ors.flatMap { o =>
      val branches = splitDisjunctivePredicates(o).map(b => (b.references, fixedIn(b)))
      o.references.toSeq.filterNot(testedAlone.contains).flatMap { c =>
        for {
          m <- in.rowCount
          d <- in.attributeStats.get(c).flatMap(_.distinctCount)
          // (a branch testing it otherwise, by a range, keeps some of its values: Spark's count stands)
          if branches.forall { case (reads, fixed) => fixed.contains(c.exprId) || !reads.contains(c) }
        } yield c.exprId -> branches.map(_._2.get(c.exprId).map(BigInt(_)).getOrElse(distinctIn(d, m, n))).sum.min(d).min(n).max(1)
      }
    }.groupMapReduce(_._1)(_._2)(_ min _)
  }

  /** The column a conjunct fixes to literal values and how many: `c = v`, one; `c IN (v1, ...)`,
   *  the list's distinct values (none NULL). None for any other conjunct. */
  def fixedValues(conjunct: Expression): Option[(Attribute, Int)] = conjunct match {
    case EqualTo(c: Attribute, l: Literal) if l.value != null => Some(c -> 1)
    case EqualTo(l: Literal, c: Attribute) if l.value != null => Some(c -> 1)
    case In(c: Attribute, list) if list.nonEmpty && list.forall { case Literal(v, _) => v != null; case _ => false } =>
      Some(c -> list.distinct.size)
    case InSet(c: Attribute, set) if set.nonEmpty && !set.contains(null) => Some(c -> set.size)
    case _ => None
  }

  /** `columns` over `rows` rows: no more distinct values or NULLs than rows. */
  def atMost(columns: Seq[(Attribute, ColumnStat)], rows: BigInt): AttributeMap[ColumnStat] = AttributeMap(columns.map {
    case (a, s) => a -> s.copy(distinctCount = s.distinctCount.map(_.min(rows)), nullCount = s.nullCount.map(_.min(rows)))
  })

  /**
   * The statistics of a filter over a sampled table of `m` rows (`stats`), from the share of the
   * sample it keeps (`kept`): the rows scaled by that share (exact where the sample is the whole
   * table; half a sampled row's worth where no sampled row passes); the distinct values of the
   * columns it tests (`tested`) by the share of their sampled values kept, the others as a random
   * share of the rows.
   */
  def sampledFilter(stats: Statistics, m: BigInt, kept: Sketches.Kept, tested: AttributeSet): Statistics = {
    val n: BigInt =
      if (kept.whole && BigInt(kept.size) == m) BigInt(kept.kept)
      else RoundUp(BigDecimal(m) * BigDecimal(math.max(kept.kept.toDouble, 0.5)) / BigDecimal(math.max(kept.size, 1))).min(m)
    Statistics(sizeInBytes = stats.sizeInBytes, rowCount = Some(n), attributeStats = AttributeMap(stats.attributeStats.toSeq.map {
      case (a, s) =>
        val share = kept.distinctShare.get(a.name.toLowerCase(java.util.Locale.ROOT)).filter(_ => tested.contains(a))
        a -> s.copy(
          distinctCount = s.distinctCount.map(d => share.fold(distinctIn(d, m, n))(x => RoundUp(d.toDouble * x).max(1)).min(n)),
          nullCount = s.nullCount.map(c => RoundUp(BigDecimal(c) * BigDecimal(n) / BigDecimal(m.max(1))).min(n)))
    }))
  }

  /**
   * The distinct values expected among `n` of `m` rows holding `d` distinct values, the `n` rows a
   * random share: each value, on about m/d rows, is kept unless all its rows are dropped. Between
   * Spark's scaled-down count (d·n/m, as if every kept row dropped values) and min(d, n).
   *
   * {{{
   *   distinctIn(1823, 2880404, 3055) == 1483   // dates of TPC-DS store_sales, in 3,055 rows
   *   distinctIn(100, 20000, 20000) == 100
   * }}}
   */
  def distinctIn(d: BigInt, m: BigInt, n: BigInt): BigInt =
    if (d <= 0 || m <= 0 || n >= m) d.min(n.max(0))
    else {
      val kept = 1.0 - math.exp((m.toDouble / d.toDouble) * math.log1p(-(n.toDouble / m.toDouble)))
      RoundUp(d.toDouble * kept).min(d).min(n).max(1)
    }

  /**
   * The distinct values of a column among the rows a test of a key keeps, where the rows come in
   * clusters of one value and one key ([[Clustering]]): `d` values over `clusters` clusters (each
   * value in clusters/d of them, each with another key), a share `kept` of the key's `keys` values
   * kept. A value is lost when none of its keys is kept: drawn without replacement from the keys
   * (a value found with every key, as k with s in a table of every pair, is always kept); with
   * the keys' count unknown, as independent draws.
   * {{{
   *   distinctInClusters(86488, 240000, 0.2, Some(1823), 562207) // about 40,000: customers of a year's tickets
   *   distinctInClusters(100, 1000, 0.1, Some(10), 2000) == 100      // k with each of s's 10 values
   * }}}
   */
  def distinctInClusters(d: BigInt, clusters: BigInt, kept: Double, keys: Option[BigInt], rows: BigInt): BigInt = {
    val perValue = math.max(1.0, clusters.toDouble / d.max(1).toDouble)
    val none = keys.filter(_ > 0).map(_.toDouble) match {
      case Some(k) if perValue < k =>
        val keep = kept * k
        var p = 1.0
        var i = 0
        val draws = math.round(perValue).toInt
        while (i < draws && p > 1e-12) { p *= math.max(0.0, (k - keep - i) / (k - i)); i += 1 }
        p
      case Some(_) => 0.0
      case None => math.pow(1.0 - kept, perValue)
    }
    RoundUp(d.toDouble * (1.0 - none)).min(d).min(rows).max(1)
  }

  /** Whether a column with `distinct` values over `rows` rows is a key (as many values as rows,
   *  within HyperLogLog's error: at least 90%). */
  def nearlyUnique(distinct: BigInt, rows: BigInt): Boolean = rows > 0 && distinct > 0 && distinct * 10 >= rows * 9

  /** `rows` in clusters of `perDraw` rows: the independent draws they make (at least one). */
  def draws(rows: BigInt, perDraw: Double): BigInt =
    if (perDraw <= 1) rows
    else RoundUp(rows.toDouble / perDraw).max(1)
}
