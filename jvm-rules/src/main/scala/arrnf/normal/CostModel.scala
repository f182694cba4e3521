package arrnf.normal

import scala.util.Try

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, Expression}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.internal.SQLConf

/**
 * Cost of one block (design §3).
 *
 * Differential counts, after the seed `arrangement-costs.md` and Materialize's own counting:
 *  - ArrangeBy: 1 per key set;
 *  - Threshold: 1 (one reduce);
 *  - Distinct: 1 (one reduce);
 *  - Reduce: +1 per DISTINCT aggregate, 1 stage if any accumulable aggregate (sum, count, avg, …),
 *    16 stages if any hierarchical one (min, max), 1 per basic aggregate (everything else), and a
 *    final collation +1 when more than one of these kinds is present; a window Reduce is 1;
 *  - TopK: 16 stages;
 *  - a block without head (Union, Map, Filter, Project, FlatMap, Join of arranged inputs): 0.
 *
 * Estimated size of the arrangement: rows × (key width + value width + 32), 32 bytes being
 * Materialize's bound on the per-update overhead. Rows come from Catalyst's `stats.rowCount` when
 * CBO statistics exist (source `rowCount`), else from `sizeInBytes / row width` (source
 * `sizeInBytes`); when Spark knows neither, rows and bytes are absent (source `unknown`).
 * For ArrangeBy the arranged collection is the block's own rows; for the other heads it is the
 * head's input, arranged by the head's keys (the state a reduce holds).
 */
object CostModel {
  val UpdateOverhead = 32L
  val TopKStages = 16
  val HierarchicalStages = 16

  def counts(head: Option[Head]): (Int, String) = head match {
    case None => (0, "no arrangement-forming operator")
    case Some(h) => h.kind match {
      case "ArrangeBy" => (h.keys.size, s"ArrangeBy: 1 per key set (${h.keys.size})")
      case "Threshold" => (1, "Threshold: 1 reduce")
      case "Distinct" => (1, "Distinct: 1 reduce")
      case "TopK" => (TopKStages, s"TopK: $TopKStages reduce stages")
      case "Reduce" if h.mode.contains("window") => (1, "Reduce (window): 1 reduce per partition key")
      case "Reduce" =>
        val distinct = h.aggregates.count(_.distinct)
        val acc = h.aggregates.exists(_.kind == "accumulable")
        val hier = h.aggregates.exists(_.kind == "hierarchical")
        val basic = h.aggregates.count(_.kind == "basic")
        val kinds = Seq(acc, hier, basic > 0).count(identity)
        val parts = Seq(
          if (distinct > 0) Some(s"distinct $distinct") else None,
          if (acc) Some("accumulable 1") else None,
          if (hier) Some(s"hierarchical $HierarchicalStages") else None,
          if (basic > 0) Some(s"basic $basic") else None,
          if (kinds > 1) Some("collation 1") else None).flatten
        val n = distinct + (if (acc) 1 else 0) + (if (hier) HierarchicalStages else 0) + basic + (if (kinds > 1) 1 else 0)
        (math.max(n, 1), "Reduce: " + (if (parts.isEmpty) "1" else parts.mkString(" + ")))
      case other => (1, s"$other: 1")
    }
  }

  def cost(
      head: Option[Head],
      plan: LogicalPlan,
      input: LogicalPlan,
      planOut: Seq[Attribute],
      inputOut: Seq[Attribute],
      arrangeKeys: Seq[Seq[Expression]],
      consumers: Seq[Consumer],
      streaming: Boolean,
      unknownLeaf: LogicalPlan => Boolean): Cost = {
    val (n, rule) = counts(head)
    val why = head match {
      case _ if consumers.isEmpty => "the query's result"
      case Some(hd) if hd.kind == "ArrangeBy" =>
        consumers.map(_.detail).distinct.mkString("; ")
      case Some(hd) =>
        s"${hd.kind.toLowerCase(java.util.Locale.ROOT)} state, read by " + consumers.map(_.block).distinct.mkString(", ")
      case None => "read by " + consumers.map(c => s"${c.block} (${c.role})").distinct.mkString(", ")
    }
    if (n == 0) return Cost(0, rule, Nil, Nil, None, None, "none", why)
    val h = head.get
    val (keyCols, arranged, arrangedOut): (Seq[Expression], LogicalPlan, Seq[Attribute]) =
      if (h.kind == "ArrangeBy") (arrangeKeys.flatten, plan, planOut) else (Nil, input, inputOut)
    val keyWidth = if (h.kind == "ArrangeBy") keyCols.map(e => Try(e.dataType.defaultSize).getOrElse(8)).sum
      else {
        val keyTexts = h.keys.flatten
        Try(inputOut.filter { a => val braced = "{" + a.name + "}"; keyTexts.exists(_.contains(braced)) }
          .map(_.dataType.defaultSize).sum).getOrElse(0)
      }
    val refs = AttributeSet(keyCols.flatMap(_.references))
    val all = arrangedOut
    val values: Seq[Attribute] = if (h.kind == "ArrangeBy") all.filterNot(refs.contains) else all
    val valueWidth = values.map(a => Try(a.dataType.defaultSize).getOrElse(8)).sum
    val (rows, source) = if (streaming) (None, "unknown") else estimateRows(arranged, arrangedOut, unknownLeaf)
    val bytes = rows.map(r => (BigInt(r) * (keyWidth + valueWidth + UpdateOverhead)).min(BigInt(Long.MaxValue)).toLong)
    Cost(n, rule, h.keys, values.map(_.name), rows, bytes, source, why)
  }

  /**
   * Whether a leaf below a node has a size Spark does not know (Spark then assumes
   * `defaultSizeInBytes`, and every size above it is a guess), answered once per node of one plan:
   * the blocks of a program nest, so asking each block's subtree afresh would walk the plan once per
   * block. One per normalized program.
   */
  def unknownLeafTest(): LogicalPlan => Boolean = {
    val default = BigInt(SQLConf.get.defaultSizeInBytes)
    val memo = new java.util.IdentityHashMap[LogicalPlan, java.lang.Boolean]()
    def unknown(p: LogicalPlan): Boolean = {
      val known = memo.get(p)
      if (known != null) known.booleanValue
      else {
        val u = if (p.children.isEmpty) Try(p.stats.sizeInBytes >= default).getOrElse(true)
          else p.children.exists(unknown)
        memo.put(p, u)
        u
      }
    }
    unknown
  }

  def estimateRows(p: LogicalPlan, output: Seq[Attribute],
      unknownLeaf: LogicalPlan => Boolean): (Option[Long], String) = Try(p.stats).toOption match {
    case None => (None, "unknown")
    case Some(s) => s.rowCount match {
      case Some(rc) => (Some(rc.toLong), "rowCount")
      case None =>
        val default = BigInt(SQLConf.get.defaultSizeInBytes)
        if (s.sizeInBytes >= default || s.sizeInBytes <= 0 || unknownLeaf(p)) (None, "unknown")
        else {
          val width = 8 + output.map(_.dataType.defaultSize).sum
          (Some((s.sizeInBytes / width).max(1).min(BigInt(Long.MaxValue)).toLong), "sizeInBytes")
        }
    }
  }
}
