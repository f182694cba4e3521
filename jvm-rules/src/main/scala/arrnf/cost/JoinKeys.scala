package arrnf.cost

import org.apache.spark.sql.catalyst.expressions.{And, Attribute, AttributeSet, EqualTo, ExprId, GreaterThanOrEqual, LessThanOrEqual, Literal}
import org.apache.spark.sql.catalyst.planning.ExtractEquiJoinKeys
import org.apache.spark.sql.catalyst.plans.{Inner, LeftAnti, LeftSemi}
import org.apache.spark.sql.catalyst.plans.logical.{ColumnStat, Filter, Join, JoinHint, LeafNode, LogicalPlan, Project, Statistics}
import org.apache.spark.sql.catalyst.util.TypeUtils
import org.apache.spark.sql.types.{ByteType, DataType, IntegerType, LongType, ShortType}

import arrnf.stats.Sketches

/**
 * What an inner join's keys tell beyond Spark's join estimation, where a side is a table's rows
 * (through filters and projections of columns): which of the table's values can match the other
 * side's key range ([[rangeCaps]]), and how many rows join when the table is filtered and the other
 * side's keys are independent of that filter ([[independent]]; for semi and anti joins,
 * [[semiDomain]]).
 *
 * For one [[Estimator]]: `sampleOf` gives the sketch pass's sample of a table (a leaf), `statsOf` the
 * statistics it found for that table; `children` are the join's sides as the estimator copied them,
 * carrying their estimated statistics.
 */
private[cost] final class JoinKeys(sampleOf: LeafNode => Option[Sketches.Sample], statsOf: LeafNode => Option[Statistics]) {
  import JoinKeys.tableUnder

  /**
   * Where a side of inner join `j` on one key holds that key once per row (a dimension's), each of
   * its other columns takes at most as many values in the join's rows as the key does there (the
   * fewer of both sides' distinct counts, as Spark's join estimation counts the key): a row of that
   * side is its key's. Spark scales those columns with the rows instead: TPC-DS q5's catalog pages
   * joined to two weeks' sales took as many page ids as rows (8,700 of 11,718), where the sales'
   * page keys are about 6,000.
   */
  def uniqueKeyCaps(j: Join, children: Seq[LogicalPlan], used: AttributeSet): Map[ExprId, BigInt] = j match {
    case ExtractEquiJoinKeys(Inner, Seq(l: Attribute), Seq(r: Attribute), _, _, _, _, _) =>
      val stats = children.map(_.stats)
      (for (dl <- distinctOf(stats.head, l); dr <- distinctOf(stats(1), r)) yield {
        Seq((0, l, dl), (1, r, dr)).flatMap { case (i, key, d) =>
          val unique = stats(i).rowCount.exists(n => Estimator.nearlyUnique(d, n))
          if (!unique) Nil
          else children(i).output.filter(c => c.exprId != key.exprId && used.contains(c)).map(_.exprId -> dl.min(dr).max(1))
        }
      }).getOrElse(Nil).toMap
    case _ => Map.empty
  }

  /**
   * Where a side of inner join `j` is a sampled table's rows (through filters and projections of
   * columns) and the other side (`children`: both sides' copies) holds its key only within a range
   * of values, the rows that can match are those with their key in that range: each of the side's
   * other columns keeps at most the share of the sample's values found on the sampled rows within
   * the range (where at least [[Estimator.MinSampled]] of them are, or the sample is the table).
   * Spark's join estimation keeps the side's distinct counts: TPC-DS store_sales ⋈ date_dim keeps
   * five of date_dim's 200 years, and 261 of its 10,436 weeks.
   */
  def rangeCaps(j: Join, children: Seq[LogicalPlan], used: AttributeSet): Map[ExprId, BigInt] = j match {
    case ExtractEquiJoinKeys(Inner, leftKeys, rightKeys, _, _, _, _, _) =>
      val sides = IndexedSeq((j.left, children(1)), (j.right, children.head))
      val pairs = leftKeys.zip(rightKeys).collect {
        case (l: Attribute, r: Attribute) if l.dataType == r.dataType => Seq((0, l, r), (1, r, l))
      }.flatten
      pairs.flatMap { case (i, own, other) =>
        val (side, theirs) = sides(i)
        val caps = for {
          leaf <- tableUnder(side) if leaf.outputSet.contains(own)
          sample <- sampleOf(leaf)
          range <- theirs.stats.attributeStats.get(other)
          lo <- range.min
          hi <- range.max
          table <- statsOf(leaf)
          // Only where the range leaves out some of the table's keys (date_dim's, not item's): the
          // sample is not evaluated for nothing.
          if !covers(lo, hi, table.attributeStats.get(own), own.dataType)
          columns = side.output.filterNot(_.exprId == own.exprId).filter(used.contains)
          kept <- sample.share(And(GreaterThanOrEqual(own, Literal(lo, own.dataType)),
            LessThanOrEqual(own, Literal(hi, own.dataType))), leaf.output, columns)
          if kept.kept < kept.size && (kept.whole || kept.kept >= Estimator.MinSampled)
        } yield columns.flatMap { c =>
          for {
            share <- kept.distinctShare.get(c.name.toLowerCase(java.util.Locale.ROOT))
            d <- table.attributeStats.get(c).flatMap(_.distinctCount)
          } yield c.exprId -> RoundUp(d.toDouble * share).max(1)
        }
        caps.getOrElse(Nil)
      }.groupMapReduce(_._1)(_._2)(_ min _)
    case _ => Map.empty
  }

  /**
   * The rows of inner join `j` (`children`: its sides' copies) on one key where one side is a
   * table's rows kept by a filter and the table's key is unique (a dimension: as many distinct
   * keys as rows), with the other side's keys spanning the table's whole key range, taken as
   * independent of that filter: each row of the other side finds its key among the kept ones with
   * the share of the table's keys kept. Spark's estimate assumes the side with fewer keys has all
   * of them in the other (containment), so where the other side holds some of the table's keys
   * only (sales of 30 days, three of ten item categories) it counts every kept key as sold.
   * With the keys the join keeps: the other side's distinct keys times that share. None where the
   * shape differs or a figure is unknown.
   */
  def independent(j: Join, children: Seq[LogicalPlan]): Option[(BigInt, BigInt)] = j match {
    case ExtractEquiJoinKeys(Inner, Seq(l: Attribute), Seq(r: Attribute), None, _, _, _, _) if l.dataType == r.dataType =>
      Seq((j.left, children.head, l, children(1), r), (j.right, children(1), r, children.head, l)).flatMap {
        case (side, mine, key, theirs, other) => for {
          leaf <- tableUnder(side) if leaf.outputSet.contains(key) && !(side eq leaf)
          table <- statsOf(leaf)
          tableRows <- table.rowCount
          keyStats <- table.attributeStats.get(key)
          u <- keyStats.distinctCount if Estimator.nearlyUnique(u, tableRows)
          kept <- mine.stats.rowCount if kept < tableRows
          otherStats = theirs.stats
          rows <- otherStats.rowCount
          otherKey <- otherStats.attributeStats.get(other)
          d <- otherKey.distinctCount
          lo <- otherKey.min
          hi <- otherKey.max
          if covers(lo, hi, Some(keyStats), key.dataType) // not a range of the table's keys (dates of five years)
        } yield {
          val share = BigDecimal(kept.min(u)) / BigDecimal(u)
          (RoundUp(BigDecimal(rows) * share).max(1), RoundUp(BigDecimal(d) * share).max(1))
        }
      }.minByOption(_._1)
    case _ => None
  }

  /**
   * The rows of inner join `j` on several pairs of columns where one pair's column is unique on its
   * side (a dimension's key: `inv_date_sk = d2.d_date_sk`) and the other pairs compare that side's
   * other columns (`d1.d_week_seq = d2.d_week_seq`): the join on the unique key alone (Spark's
   * estimate: each row of the other side meets its key's one row), of which each further pair keeps
   * one in as many values as its more varied column takes there, taken as independent. The unique
   * side's column takes no more values than the keys it is matched by (the other side's distinct
   * keys). Spark's estimation divides by one pair's values alone, the pair that keeps fewest: TPC-DS
   * q72's inventory joined to its date by key and to the sale's week, 1.3 million result rows
   * estimated for 2,063 measured (each inventory row's date is in its sale's week for one of the 261
   * weeks its dates take). With the rows, the distinct count of the keys they keep (at most the
   * rows). None where no pair's column is unique on its side or a count is unknown.
   */
  def uniqueKeyAndEqualities(j: Join, children: Seq[LogicalPlan]): Option[(BigInt, BigInt)] = j match {
    case ExtractEquiJoinKeys(Inner, lks, rks, None, _, _, _, _) if lks.size > 1 && (lks ++ rks).forall(_.isInstanceOf[Attribute]) =>
      val stats = children.map(_.stats)
      val keys = Seq(lks.map(_.asInstanceOf[Attribute]), rks.map(_.asInstanceOf[Attribute]))
      def distinct(side: Int, k: Int): Option[BigInt] = distinctOf(stats(side), keys(side)(k))
      Seq(0, 1).flatMap { u =>
        val o = 1 - u
        for {
          uRows <- stats(u).rowCount
          k <- keys(u).indices.find(k => distinct(u, k).exists(d => Estimator.nearlyUnique(d, uRows)))
          matchedBy <- distinct(o, k)
          byKey <- Join(children.head, children(1), Inner, Some(EqualTo(lks(k), rks(k))), JoinHint.NONE).stats.rowCount
          share <- keys(u).indices.filter(_ != k).foldLeft(Option(BigDecimal(1))) { (kept, i) =>
            for (s <- kept; du <- distinct(u, i); dO <- distinct(o, i)) yield s / BigDecimal(dO.max(du.min(matchedBy)).max(1))
          }
        } yield {
          val rows = RoundUp(BigDecimal(byKey) * share).max(1)
          (rows, rows) // each kept row has its own combination of keys: u's key is unique, so the distinct keys kept are the rows
        }
      }.minByOption(_._1)
    case _ => None
  }

  /**
   * The values a semi or anti join's left key is drawn from, where the left side is a table's rows
   * ([[JoinKeys.tableUnder]] through the left sides of other semi or anti joins), the
   * key is unique in the table (a dimension's key: customer's id) and the right side's keys
   * (`children(1)`: its copy) span the table's key range (95% of it, [[coversMost]]): the table's
   * distinct keys. The right's keys are then taken as independent of what kept the left's rows:
   * TPC-DS q69 keeps customers of three states without a quarter's web sales and without its
   * catalog sales; by containment (every key the right holds among the left's) half and then nine
   * tenths of the kept customers went, and the result read 30 rows for 550 measured (611 by
   * independence). Where the right's keys span less (a fact table's dates over a few of
   * date_dim's years) the left may be kept by those very keys: None, and containment stays.
   */
  def semiDomain(j: Join, children: Seq[LogicalPlan]): Option[BigInt] = j match {
    case ExtractEquiJoinKeys(LeftSemi | LeftAnti, Seq(l: Attribute), Seq(r: Attribute), None, _, _, _, _)
        if l.dataType == r.dataType =>
      for {
        leaf <- tableUnder(j.left, throughSemiJoins = true) if leaf.outputSet.contains(l)
        table <- statsOf(leaf)
        tableRows <- table.rowCount
        keyStats <- table.attributeStats.get(l)
        u <- keyStats.distinctCount if Estimator.nearlyUnique(u, tableRows)
        otherKey <- children(1).stats.attributeStats.get(r)
        lo <- otherKey.min
        hi <- otherKey.max
        if coversMost(lo, hi, keyStats, l.dataType)
      } yield u
    case _ => None
  }

  /** Whether [lo, hi] holds all but at most 5% of the range of an integral column with statistics
   *  `column` (a sales table's customers need not include the first and the last: TPC-DS web_sales'
   *  bill customers run from 2 to 100,000); for other types, every value ([[covers]]). */
  private def coversMost(lo: Any, hi: Any, column: ColumnStat, t: DataType): Boolean = {
    def integral(t: DataType) = t match {
      case ByteType | ShortType | IntegerType | LongType => true
      case _ => false
    }
    def number(x: Any): Option[Double] = x match {
      case n: java.lang.Number if integral(t) => Some(n.doubleValue)
      case _ => None
    }
    val overlap = for {
      min <- column.min.flatMap(number)
      max <- column.max.flatMap(number) if max > min
      l <- number(lo)
      h <- number(hi)
    } yield (math.min(h, max) - math.max(l, min)) / (max - min) >= 0.95
    overlap.getOrElse(covers(lo, hi, Some(column), t))
  }

  /** Whether [lo, hi] holds every value of a column with statistics `column` (its range known). */
  private def covers(lo: Any, hi: Any, column: Option[ColumnStat], t: DataType): Boolean = {
    val order = TypeUtils.getInterpretedOrdering(t)
    column.exists(c => c.min.zip(c.max).exists { case (min, max) => order.lteq(lo, min) && order.gteq(hi, max) })
  }

  /** A column's distinct count in `stats`, where known. */
  private def distinctOf(stats: Statistics, column: Attribute): Option[BigInt] =
    stats.attributeStats.get(column).flatMap(_.distinctCount)
}

private[cost] object JoinKeys {
  /** The table `p` reads, where `p` is its rows through filters and projections of columns (and,
   *  with `throughSemiJoins`, the left sides of semi, anti and existence joins, which keep some or all of its rows). */
  def tableUnder(p: LogicalPlan, throughSemiJoins: Boolean = false): Option[LeafNode] = p match {
    case s: Join if throughSemiJoins && Estimator.isSemi(s) => tableUnder(s.left, throughSemiJoins)
    case f: Filter => tableUnder(f.child, throughSemiJoins)
    case Project(list, child) if list.forall(_.isInstanceOf[Attribute]) => tableUnder(child, throughSemiJoins)
    case leaf: LeafNode => Some(leaf)
    case _ => None
  }
}
