package arrnf.cost

import scala.util.Try

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, AttributeSet, Expression}
import org.apache.spark.sql.catalyst.expressions.aggregate._
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, LocalLimit, LogicalPlan, Project, RepartitionOperation}
import org.apache.spark.sql.catalyst.plans.logical.statsEstimation.EstimationUtils

import arrnf.model.{AggKind, Consumer, Cost, Head, HeadKind, Mode}

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
 * The counts are the seed's model, shown beside what Spark builds (the block's realization). The
 * estimated rows and bytes are those of the state Spark holds for the block (issue 21): an
 * ArrangeBy's rows (the sorted, hashed, broadcast or shuffled copy of the block), the groups of a
 * Reduce, Distinct or Threshold (Spark's hash aggregate holds its groups, not its input), the input
 * of a window Reduce (Spark's window buffer and its sort hold every row) and of a TopK (bounded by
 * its limit when it has no groups: Spark keeps the first rows of each task of its input); a rank
 * limit's (`rank() … <= k`, Spark's WindowGroupLimit) are the rows it keeps, k per window partition: Spark
 * sorts each task's input, keeps the first k of each window partition, and sorts those again
 * after the shuffle (its state measured: TPC-DS q67's 2,225 rows of 5 million). Bytes are Spark's
 * row size (an UnsafeRow: 8 bytes of header, 8 per column, strings' lengths; Catalyst's
 * `EstimationUtils.getSizePerRow`) of the columns held (a Reduce's or Distinct's: its grouping keys and
 * its functions' buffers, whatever it outputs) times rows. Rows come from [[Estimator]], labelled with their
 * source (catalog, file metadata, sketch, cache, exact, or an estimate from those); when nothing is
 * known, rows and bytes are absent and the source says `unknown` and why.
 */
object CostModel {
  val TopKStages = 16
  val HierarchicalStages = 16

  /** How an aggregate function's state grows (the seed's kinds). */
  def aggKind(f: AggregateFunction): AggKind = f match {
    case _: Sum | _: Count | _: Average | _: CountIf | _: CentralMomentAgg | _: Covariance |
         _: Corr | _: First | _: Last | _: AnyValue => AggKind.Accumulable
    case _: Min | _: Max | _: MinBy | _: MaxBy => AggKind.Hierarchical
    case _ => AggKind.Basic
  }

  def counts(head: Option[Head]): (Int, String) = head match {
    case None => (0, "no arrangement-forming operator")
    case Some(h) => h.kind match {
      case HeadKind.ArrangeBy => (h.keys.size, s"ArrangeBy: 1 per key set (${h.keys.size})")
      case HeadKind.Threshold => (1, "Threshold: 1 reduce")
      case HeadKind.Distinct => (1, "Distinct: 1 reduce")
      case HeadKind.TopK => (TopKStages, s"TopK: $TopKStages reduce stages")
      case HeadKind.Reduce if h.mode.contains(Mode.Window) => (1, "Reduce (window): 1 reduce per partition key")
      case HeadKind.Reduce =>
        val distinct = h.aggregates.count(_.distinct)
        val acc = h.aggregates.exists(_.kind == AggKind.Accumulable)
        val hier = h.aggregates.exists(_.kind == AggKind.Hierarchical)
        val basic = h.aggregates.count(_.kind == AggKind.Basic)
        val kinds = Seq(acc, hier, basic > 0).count(identity)
        val parts = Seq(
          if (distinct > 0) Some(s"distinct $distinct") else None,
          if (acc) Some("accumulable 1") else None,
          if (hier) Some(s"hierarchical $HierarchicalStages") else None,
          if (basic > 0) Some(s"basic $basic") else None,
          if (kinds > 1) Some("collation 1") else None).flatten
        val n = distinct + (if (acc) 1 else 0) + (if (hier) HierarchicalStages else 0) + basic + (if (kinds > 1) 1 else 0)
        (math.max(n, 1), "Reduce: " + (if (parts.isEmpty) "1" else parts.mkString(" + ")))
    }
  }

  /** The cost of a block with `head` (None: none) holding `plan`'s rows, its head reading `input`;
   *  `keys`: an ArrangeBy's key expressions, or what the other heads are keyed by. */
  def cost(
      head: Option[Head],
      plan: LogicalPlan,
      input: LogicalPlan,
      planOut: Seq[Attribute],
      inputOut: Seq[Attribute],
      keys: Seq[Expression],
      consumers: Seq[Consumer],
      streaming: Boolean,
      estimate: LogicalPlan => Estimate): Cost = {
    val (n, rule) = counts(head)
    val why = head match {
      case _ if consumers.isEmpty => "the query's result"
      case Some(hd) if hd.kind == HeadKind.ArrangeBy =>
        consumers.map(_.detail).distinct.mkString("; ")
      case Some(hd) =>
        s"${hd.kind.name.toLowerCase(java.util.Locale.ROOT)} state, read by " + consumers.map(_.block).distinct.mkString(", ")
      case None => "read by " + consumers.map(c => s"${c.block} (${c.role})").distinct.mkString(", ")
    }
    if (n == 0) return Cost(0, rule, Nil, Nil, None, None, "none", why)
    val h = head.get
    val (arranged, arrangedOut) = h.kind match {
      case HeadKind.ArrangeBy => (plan, planOut)
      case HeadKind.Reduce if h.mode.contains(Mode.Window) => (input, inputOut)
      case HeadKind.TopK => (input, inputOut)
      case _ => (plan, planOut)
    }
    val refs = AttributeSet(keys.flatMap(_.references))
    val values: Seq[Attribute] = arrangedOut.filterNot(refs.contains)
    val ranked = h.kind == HeadKind.TopK && h.mode.exists(_.isInstanceOf[Mode.RankedBy])
    val (estimated, source) = if (streaming) (None, "unknown: a stream") else estimateRows(if (ranked) plan else arranged, estimate)
    // Spark's LIMIT and TakeOrderedAndProject keep at most limit + offset rows per task of their
    // input and shuffle them to one: where the input has more, at least that many, as many times as
    // it has tasks (known when it runs; the plan's shape: no statistic tells the limit's rows as such).
    // A repartition in the block shuffles every row of its input first: that is its largest state.
    val limit = h.limit.filter(_ => h.kind == HeadKind.TopK && h.keys.forall(_.isEmpty) && h.mode.isEmpty)
      .map(_ + h.offset.getOrElse(0L))
    val repartitioned = limit.flatMap(_ => repartitionIn(input)).map(estimateRows(_, estimate))
    val (rows, rowsSource) = (limit, estimated) match {
      // (its rows unknown: so is the block's state)
      case (Some(l), _) if repartitioned.exists(_._1.forall(_ > l)) => repartitioned.get
      case (Some(l), Some(e)) if e <= l => (Some(e), source)
      case (Some(l), _) => (Some(l), Estimator.PlanShape)
      case (None, e) => (e, source)
    }
    val held = arranged match {
      case a: Aggregate if h.kind == HeadKind.Distinct || (h.kind == HeadKind.Reduce && !h.mode.contains(Mode.Window)) =>
        a.groupingExpressions.map {
          case at: Attribute => at
          case e => AttributeReference("key", e.dataType)()
        } ++ a.aggregateExpressions.flatMap(_.collect { case ae: AggregateExpression => ae }).distinctBy(_.canonicalized)
          .flatMap(_.aggregateFunction.aggBufferAttributes)
      case _ => arrangedOut
    }
    val rowSize = Try(EstimationUtils.getSizePerRow(held)).getOrElse(BigInt(8 + 8 * held.size))
    val bytes = rows.map(r => (BigInt(r) * rowSize).min(BigInt(Long.MaxValue)).toLong)
    Cost(n, rule, h.keys, values.map(_.name), rows, bytes, rowsSource, why)
  }

  /** A repartition (`repartition(n)`, `REPARTITION` hint) below `p` through its projections and filters: in `p`'s block. */
  private def repartitionIn(p: LogicalPlan): Option[LogicalPlan] = p match {
    case r: RepartitionOperation => Some(r)
    case _: Project | _: Filter | _: LocalLimit => repartitionIn(p.children.head)
    case _ => None
  }

  /** Rows of `p` from [[Estimator]] (None and `unknown` where nothing is known). */
  def estimateRows(p: LogicalPlan, estimate: LogicalPlan => Estimate): (Option[Long], String) = {
    val e = estimate(p)
    (e.rows.map(_.min(BigInt(Long.MaxValue)).toLong), e.source)
  }
}
