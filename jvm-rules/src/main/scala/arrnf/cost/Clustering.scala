package arrnf.cost

import java.util.Locale

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute}
import org.apache.spark.sql.catalyst.planning.ExtractEquiJoinKeys
import org.apache.spark.sql.catalyst.plans.Inner
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LeafNode, LogicalPlan, Project, Statistics}

import arrnf.stats.Sketches

/**
 * Rows that come in clusters: the rows of one TPC-DS ticket (store_sales' 2.9 million rows, about
 * 240,000 tickets) share their customer and their date. A filter or join that keeps some dates
 * keeps whole tickets, so the customers it keeps are those of the kept tickets, not of as many
 * independent rows: 562,207 rows of one year hold about 38,000 customers, where as many random rows
 * would hold nearly all 86,000.
 *
 * [[rowsPerDraw]] gives, for a column `a` of a node's input whose rows are kept by a test of one
 * column `key`, the input's rows per combination of `a` and `key` in their table (from the sketch
 * pass's sample, [[Sketches.Sample.rowsPerCombination]]): the kept rows are then that many times
 * fewer independent draws of `a`'s values ([[Estimator.distinctInClusters]]). A column
 * of a dimension joined on its unique key (customer's id through `c_customer_sk = ss_customer_sk`)
 * is drawn as that key is in the table. None where the table has no sample, the column cannot be
 * followed to it, or the sample shows no clusters.
 */
private[cost] final class Clustering(sampleOf: LeafNode => Option[Sketches.Sample], statsOf: LeafNode => Option[Statistics]) {

  /** Rows of `side` per independent draw of `a`'s values where its rows are kept by a test of `key`. */
  def rowsPerDraw(side: LogicalPlan, key: Attribute, a: Attribute): Option[Double] = for {
    table <- tableOf(side, key)
    sample <- sampleOf(table)
    k <- column(side, key, table)
    o <- column(side, a, table) if o.exprId != k.exprId
    r <- sample.rowsPerCombination(Seq(o, k).map(_.name.toLowerCase(Locale.ROOT)))
  } yield r

  /**
   * The combinations of `columns` of `plan`'s `rows` rows, where each is determined by a column of
   * one sampled table under `plan` (itself or a dimension's unique key, as in [[rowsPerDraw]]), and
   * every join and filter between them tests only that table's columns: its rows reach `plan` as
   * whole clusters of those columns and the tested ones, so the groups are at most `plan`'s rows
   * over the table's rows per combination of both ([[testedColumns]]). TPC-DS q38's distinct
   * customers' names and dates of one year's store sales: its rows over the rows per customer and
   * date (about 12 per ticket): 29,787 estimated, 47,682 measured, where every one of the 520,275
   * rows was counted as a group. TPC-DS q79 groups a ticket's rows kept by their date, store and
   * household: a ticket has one of each, so its rows stay together (7,013 measured; 82,685
   * estimated, one per row, where the tested columns had to be grouping columns).
   */
  def combinations(plan: LogicalPlan, columns: Seq[Attribute], rows: BigInt): Option[BigInt] = {
    val tables = leavesOf(plan).filter(l => sampleOf(l).exists(!_.whole))
    tables.iterator.flatMap { table =>
      for {
        sample <- sampleOf(table)
        of <- columns.foldLeft(Option(Vector.empty[Attribute])) { (found, c) => found.flatMap(f => column(plan, c, table).map(f :+ _)) }
        distinct = of.distinctBy(_.exprId)
        // (one column: its own distinct count, from the sketch, says more)
        if distinct.size > 1
        tested <- testedColumns(plan, table)
        // clusters of the grouping columns and the columns tested on the way: where a ticket's
        // columns determine its date, a filter of dates keeps whole tickets
        all = (distinct ++ tested).distinctBy(_.exprId)
        r <- sample.rowsPerCombination(all.map(_.name.toLowerCase(Locale.ROOT)))
      } yield Estimator.draws(rows, r)
    }.nextOption()
  }

  /**
   * The rows of inner join `j` on two or more columns, its sides' rows `rows`, by the distinct
   * combinations of its keys on each side ([[keyCombinations]]): `rows_l × rows_r / max(combinations)`,
   * containment as Spark counts it for one key, for the combination. Spark's estimation divides by
   * the distinct values of one key alone: a return joined to its sale by ticket and item (TPC-DS
   * q17, q25, q29: store_sales ⋈ store_returns) is counted as matching every sale of its ticket,
   * 2.9 million rows estimated for 198,000 measured. None where a side's combinations are not told.
   */
  def compositeJoin(j: Join, rows: (BigInt, BigInt)): Option[BigInt] = j match {
    case ExtractEquiJoinKeys(Inner, leftKeys, rightKeys, None, _, left, right, _)
        if leftKeys.size > 1 && (leftKeys ++ rightKeys).forall(_.isInstanceOf[Attribute]) =>
      for {
        l <- keyCombinations(left, leftKeys.map(_.asInstanceOf[Attribute]), rows._1)
        r <- keyCombinations(right, rightKeys.map(_.asInstanceOf[Attribute]), rows._2)
      } yield RoundUp(BigDecimal(rows._1) * BigDecimal(rows._2) / BigDecimal(l.max(r).max(1)))
    case _ => None
  }

  /**
   * The distinct combinations of `keys` among `plan`'s `rows` rows, where every key follows to one
   * sampled table under `plan` (itself or a dimension's unique key, as in [[rowsPerDraw]]): the
   * rows over the table's rows per combination of those columns
   * ([[Sketches.Sample.rowsPerCombination]]: exact where the sample is the whole table), or one per
   * row where no sampled pair of rows shares one (a sale's ticket and item); never more than the
   * table holds. Keys that go together show as clusters and are not counted as independent:
   * an item and its category hold as many combinations as items, not items × categories. None
   * where a key does not follow to the table or is not sampled.
   */
  def keyCombinations(plan: LogicalPlan, keys: Seq[Attribute], rows: BigInt): Option[BigInt] = for {
    first <- keys.headOption
    table <- tableOf(plan, first)
    sample <- sampleOf(table)
    tableRows <- statsOf(table).flatMap(_.rowCount)
    of <- keys.foldLeft(Option(Vector.empty[Attribute])) { (found, k) => found.flatMap(f => column(plan, k, table).map(f :+ _)) }
    names = of.distinctBy(_.exprId).map(_.name.toLowerCase(Locale.ROOT))
    if names.size > 1 && names.forall(sample.names.contains)
  } yield {
    val perCombination = BigDecimal(sample.rowsPerCombination(names).getOrElse(1.0).max(1.0))
    def over(n: BigInt) = RoundUp(BigDecimal(n) / perCombination)
    over(rows).min(over(tableRows)).max(1)
  }

  /** The columns of `table` that the joins and filters between it and the top of `plan` test,
   *  where every one tests only `table`'s own columns (an inner join's keys on its side, a
   *  filter's columns); None where another operator or test is on the way. */
  private def testedColumns(plan: LogicalPlan, table: LeafNode): Option[Seq[Attribute]] = plan match {
    case leaf: LeafNode => Option.when(leaf eq table)(Nil)
    case Project(list, child) if list.forall(_.isInstanceOf[Attribute]) => testedColumns(child, table)
    case f: Filter if f.condition.references.subsetOf(table.outputSet) => testedColumns(f.child, table).map(_ ++ f.condition.references)
    case ExtractEquiJoinKeys(Inner, leftKeys, rightKeys, None, _, left, right, _) =>
      val (mine, keys) = if (under(left, table)) (left, leftKeys) else (right, rightKeys)
      val own = keys.collect { case k: Attribute if table.outputSet.contains(k) => k }
      if (own.size == keys.size) testedColumns(mine, table).map(_ ++ own) else None
    case _ => None
  }

  /** The table (a leaf) of `plan` that `key` comes from, through filters, projections and joins. */
  private def tableOf(plan: LogicalPlan, key: Attribute): Option[LeafNode] = plan match {
    case leaf: LeafNode => Option.when(leaf.outputSet.contains(key))(leaf)
    case Project(list, child) => renamed(list, key).flatMap(tableOf(child, _))
    case f: Filter => tableOf(f.child, key)
    case j @ ExtractEquiJoinKeys(Inner, _, _, _, _, left, right, _) if j.outputSet.contains(key) =>
      tableOf(if (left.outputSet.contains(key)) left else right, key)
    case _ => None
  }

  /** The column of `table` under `plan` that determines `a`: `a` itself, or the key of `table` a
   *  dimension holding `a` is joined to on that dimension's unique key. */
  private def column(plan: LogicalPlan, a: Attribute, table: LeafNode): Option[Attribute] = plan match {
    case leaf: LeafNode => Option.when((leaf eq table) && leaf.outputSet.contains(a))(a)
    case Project(list, child) => renamed(list, a).flatMap(column(child, _, table))
    case f: Filter => column(f.child, a, table)
    case ExtractEquiJoinKeys(Inner, leftKeys, rightKeys, _, _, left, right, _) =>
      val (mine, mineKeys, other, otherKeys) =
        if (under(left, table)) (left, leftKeys, right, rightKeys) else (right, rightKeys, left, leftKeys)
      if (mine.outputSet.contains(a)) column(mine, a, table)
      else if (!other.outputSet.contains(a)) None
      else otherKeys.zip(mineKeys).collectFirst {
        case (theirs: Attribute, ours: Attribute) if uniqueWith(other, theirs, a) => ours
      }.flatMap(column(mine, _, table))
    case _ => None
  }

  /** Whether `plan` is a table's rows (through filters and projections of columns) holding `a`,
   *  whose `key` is unique there (as many distinct values as rows: a dimension's key). */
  private def uniqueWith(plan: LogicalPlan, key: Attribute, a: Attribute): Boolean = (for {
    leaf <- JoinKeys.tableUnder(plan) if leaf.outputSet.contains(key) && leaf.outputSet.contains(a)
    stats <- statsOf(leaf)
    rows <- stats.rowCount
    d <- stats.attributeStats.get(key).flatMap(_.distinctCount)
  } yield Estimator.nearlyUnique(d, rows)).getOrElse(false)

  // The tables under each node, once per node (asked at every join on the way down, per column).
  private val leaves = new java.util.IdentityHashMap[LogicalPlan, Seq[LeafNode]]()
  private def leavesOf(p: LogicalPlan): Seq[LeafNode] = Option(leaves.get(p)).getOrElse {
    val found: Seq[LeafNode] = p match {
      case l: LeafNode => Seq(l)
      case _ => p.children.flatMap(leavesOf)
    }
    leaves.put(p, found)
    found
  }
  private def under(p: LogicalPlan, table: LeafNode): Boolean = leavesOf(p).exists(_ eq table)

  /** The input column a projection's output `a` passes on (a column or its alias). */
  private def renamed(list: Seq[org.apache.spark.sql.catalyst.expressions.NamedExpression], a: Attribute): Option[Attribute] =
    list.collectFirst {
      case x: Attribute if x.exprId == a.exprId => x
      case al @ Alias(x: Attribute, _) if al.exprId == a.exprId => x
    }
}
