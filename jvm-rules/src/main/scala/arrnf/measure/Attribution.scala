package arrnf.measure

import scala.collection.mutable
import scala.util.Try

import org.apache.spark.sql.catalyst.expressions.{Attribute, UnsafeRow}
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight}
import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan}
import org.apache.spark.sql.catalyst.plans.physical.RangePartitioning
import org.apache.spark.sql.catalyst.trees.TreeNodeTag
import org.apache.spark.sql.execution.{CollectLimitExec, ColumnarToRowExec, DataSourceScanExec, GlobalLimitExec, InputAdapter, LocalLimitExec, ProjectExec, ReusedSubqueryExec, SortExec, SparkPlan, TakeOrderedAndProjectExec, WholeStageCodegenExec}
import org.apache.spark.sql.execution.adaptive.{AQEShuffleReadExec, AdaptiveSparkPlanExec, LogicalQueryStage, QueryStageExec}
import org.apache.spark.sql.execution.aggregate.BaseAggregateExec
import org.apache.spark.sql.execution.QueryExecution
import org.apache.spark.sql.execution.columnar.{InMemoryRelation, InMemoryTableScanExec}
import org.apache.spark.sql.execution.exchange.{BroadcastExchangeLike, Exchange, ReusedExchangeExec, ShuffleExchangeLike}
import org.apache.spark.sql.execution.joins.{BaseJoinExec, BroadcastHashJoinExec, CartesianProductExec, BroadcastNestedLoopJoinExec, HashJoin, ShuffledHashJoinExec}
import org.apache.spark.sql.execution.window.WindowExecBase
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.DecimalType

import arrnf.normalize.BlockIndex

/**
 * Which block each stateful physical operator realizes (design §3): every stateful operator of a
 * physical plan (query stages opened, subqueries included), with its Spark SQL metrics and what
 * state it holds ([[Realization]]), attributed to the ArrNF block it realizes. A plan that has not
 * run gives the operators Spark will run (zero figures); measured reports read the final plan.
 *
 * Stateful operators: sort, aggregate, join, window, shuffle exchange, broadcast exchange; a reused
 * exchange and a cached relation (InMemoryTableScan) are listed as `shared` (an existing
 * arrangement read again: no new state, figures not added to any block).
 *
 * Attribution: an operator whose `logicalLink` (LOGICAL_PLAN_TAG, or the inherited tag of a partial
 * aggregate) is a node the normalizer placed belongs to that block ([[BlockIndex.blockOf]]); an
 * operator without a link of its own (exchanges and sorts added by EnsureRequirements) belongs to the
 * block of its nearest linked ancestor, except below a join, where each side belongs to the
 * arrangement the join reads on that side ([[BlockIndex.joinInputsOf]]). A join belongs to its build
 * side's arrangement (a sort-merge join to its buffered, right, side). When AQE re-planned, links
 * point into the re-optimized logical plan; its query stages are replaced by their logical plans
 * before the look-up. What is still not found is listed as unattributed, with the reason.
 */
object Attribution {

  final case class Op(
      id: Int,
      node: String,
      kind: String,
      block: Option[String],
      shared: Boolean,
      reuses: Option[Int],
      reason: String,
      rows: Option[Long],
      peakMemory: Option[Long],
      spill: Long,
      shuffleBytes: Long,
      metrics: Map[String, Long],
      what: String = "",
      stateRows: Option[Long] = None,
      stateBytes: Option[Long] = None,
      ranTwice: Boolean = false,
      limitedAbove: Boolean = false,
      spillMeasured: Boolean = true)

  /** SQL metrics of `p` by name, as Spark reports them (values never negative: an unset size metric reads as 0). */
  def rawMetricsOf(p: SparkPlan): Map[String, Long] =
    Try(p.metrics.map { case (k, m) => k -> math.max(m.value, 0L) }).getOrElse(Map.empty)

  /** SQL metrics of `p` for one run of it: those Spark counted over two runs ([[markStages]]) halved. */
  def metricsOf(p: SparkPlan): Map[String, Long] =
    if (p.getTagValue(RanTwice).isEmpty) rawMetricsOf(p)
    else rawMetricsOf(p).map { case (k, v) =>
      k -> (if (PerRun(k) && !p.metrics.get(k).exists(_.metricType == "average")) v / 2 else v)
    }

  /** On a node Spark ran twice in one query: its stage feeds a range-partitioned shuffle (a global
   *  ORDER BY), whose partitioner first runs the stage to sample its ranges and then runs it again
   *  to write the shuffle (RangePartitioner: every row of every partition is read for the sample).
   *  Its rows, memory and spill are counted over both runs: a 7-group aggregate under ORDER BY
   *  reports 14 rows and twice its peak memory. */
  val RanTwice: TreeNodeTag[Unit] = TreeNodeTag[Unit]("arrnf.measure.ranTwice")
  // The figures of an operator's work each run repeats (not the driver's, such as a shuffle read's partitions).
  private val PerRun = Set("numOutputRows", "peakMemory", "spillSize", "buildDataSize")

  /** On a node whose output a LIMIT above it, in its stage, stops reading: an aggregate's output
   *  rows are then not its groups (`SELECT … GROUP BY g LIMIT 5` reports 5 of 1,000 groups held). */
  val LimitedAbove: TreeNodeTag[Unit] = TreeNodeTag[Unit]("arrnf.measure.limitedAbove")

  /** Tags with [[RanTwice]] every node of a stage whose output a range-partitioned shuffle of more
   *  than one partition samples (with one, Spark takes no sample): down to the stage's inputs
   *  (exchanges, query stages, a cached relation's scan, tagged itself), not into subqueries (run
   *  once); and with [[LimitedAbove]] every node under a LIMIT in its stage. */
  def markStages(plan: SparkPlan): Unit = {
    def go(p: SparkPlan, twice: Boolean, limited: Boolean): Unit = p match {
      case a: AdaptiveSparkPlanExec => go(a.executedPlan, twice, limited)
      case q: QueryStageExec => go(q.plan, twice = false, limited = false)
      case _: ReusedExchangeExec | _: ReusedSubqueryExec =>
      case x: ShuffleExchangeLike => x.children.foreach(go(_, twice = x.outputPartitioning match {
        case r: RangePartitioning => r.numPartitions > 1
        case _ => false
      }, limited = false))
      case x: BroadcastExchangeLike => x.children.foreach(go(_, twice = false, limited = false))
      case i: InMemoryTableScanExec => if (twice) i.setTagValue(RanTwice, ())
      case _ =>
        if (twice && !p.isInstanceOf[AQEShuffleReadExec]) p.setTagValue(RanTwice, ())
        if (limited) p.setTagValue(LimitedAbove, ())
        val limits = p match {
          case _: LocalLimitExec | _: GlobalLimitExec | _: CollectLimitExec => true
          case _ => limited
        }
        p.children.foreach(go(_, twice, limits))
        p.subqueries.foreach(go(_, twice = false, limited = false))
    }
    go(plan, twice = false, limited = false)
  }

  /** Rows `p` produces, read through the nodes that keep their input's rows (code generation
   *  wrappers, query stages, AQE's shuffle reads, reused exchanges, projections). */
  private[measure] def rowsOf(p: SparkPlan): Option[Long] = through(p) { x =>
    val m = metricsOf(x)
    m.get("numOutputRows").orElse(m.get("shuffleRecordsWritten"))
  }

  /** Bytes of the rows `p` produces where Spark measured them: a shuffle's `dataSize`; a broadcast's
   *  rows times their size as UnsafeRows where every column has a fixed width (exact). A broadcast's
   *  own `dataSize` is its hash map's allocation (a 64 MB page for four rows: peak memory, not the
   *  rows); with strings or other variable-width columns their bytes are unknown. */
  private[measure] def bytesOf(p: SparkPlan): Option[Long] = through(p) {
    case x: ShuffleExchangeLike => metricsOf(x).get("dataSize")
    case x: BroadcastExchangeLike =>
      for (rows <- metricsOf(x).get("numOutputRows"); size <- fixedRowSize(x.output)) yield rows * size
    case _ => None
  }

  /** The size of an UnsafeRow of `columns` where it does not depend on the values: the NULL bits,
   *  8 bytes a column, and 16 more for a DECIMAL too wide for a long. */
  private[measure] def fixedRowSize(columns: Seq[Attribute]): Option[Long] = {
    val extra = columns.map(_.dataType match {
      case t if UnsafeRow.isFixedLength(t) => Some(0L)
      case d: DecimalType => Some(16L) // precision > 18: its bytes, in 16 reserved
      case _ => None
    })
    Option.when(extra.forall(_.isDefined))(UnsafeRow.calculateBitSetWidthInBytes(columns.size).toLong + 8L * columns.size + extra.flatten.sum)
  }

  /** The measured size of one row `p` produces where it is a shuffle: data size / records. */
  private def shuffledRowSize(p: SparkPlan): Option[Double] = through(p) {
    case x: ShuffleExchangeLike =>
      val m = metricsOf(x)
      for (r <- m.get("shuffleRecordsWritten").filter(_ > 0); d <- m.get("dataSize")) yield d.toDouble / r
    case _ => None
  }

  private def through[T](p: SparkPlan)(f: SparkPlan => Option[T]): Option[T] = p match {
    case s: QueryStageExec => through(s.plan)(f)
    case r: ReusedExchangeExec => through(r.child)(f)
    case a: AdaptiveSparkPlanExec => through(a.executedPlan)(f)
    case _: WholeStageCodegenExec | _: InputAdapter | _: AQEShuffleReadExec | _: ProjectExec |
         _: ColumnarToRowExec => through(p.children.head)(f)
    case x => f(x)
  }

  /**
   * The rows and bytes of the state `p` holds (seed `arrangement-costs.md`: what an arrangement
   * holds), where Spark measured them: a shuffle's records and data size, a broadcast relation's
   * rows and their bytes ([[bytesOf]]), a sort's input (the rows of the exchange it reads), a hash join's build
   * side (a shuffled one's `buildDataSize`), an aggregate's groups and their size (groups × the size
   * of a row of the shuffle below it, which carries the same keys and buffers; none without one:
   * `peakMemory` counts the pages Spark allocated, not what they hold), a window's rows. A
   * sort-merge join holds one key's rows at a time: none.
   */
  private[measure] def stateOf(p: SparkPlan, m: Map[String, Long]): (Option[Long], Option[Long]) = p match {
    case _: ShuffleExchangeLike => (m.get("shuffleRecordsWritten"), m.get("dataSize"))
    case b: BroadcastExchangeLike => (m.get("numOutputRows"), bytesOf(b))
    case s: SortExec => (rowsOf(s.child), bytesOf(s.child))
    // (its `buildDataSize` is the hash map's allocation, pages of 64 MB for a few rows: memory, as a broadcast's)
    case h: ShuffledHashJoinExec =>
      val build = if (h.buildSide == BuildLeft) h.left else h.right
      (rowsOf(build), bytesOf(build))
    case h: HashJoin =>
      val build = if (h.buildSide == BuildLeft) h.left else h.right
      (rowsOf(build), bytesOf(build))
    case _: BaseJoinExec => (None, None)
    // A LIMIT above stopped reading its groups: how many it held is unknown.
    case _: BaseAggregateExec | _: WindowExecBase if p.getTagValue(LimitedAbove).isDefined => (None, None)
    case a: BaseAggregateExec =>
      // The hash map holds its groups, each a row of the grouping keys and aggregation buffers: the
      // rows the shuffle below it carried (the partial aggregate's), whose size Spark measured.
      val groups = m.get("numOutputRows")
      (groups, for (g <- groups; size <- shuffledRowSize(a.child)) yield math.round(g * size))
    // A window holds each partition's rows; Spark counts none of its own: those it reads.
    case w: WindowExecBase => (m.get("numOutputRows").orElse(rowsOf(w.child)), None)
    // Each task keeps its best limit + offset rows, shuffled to one partition (none: one partition only, rows unknown).
    case _: TakeOrderedAndProjectExec => (m.get("shuffleRecordsWritten").filter(_ > 0), None)
    case i: InMemoryTableScanExec => cacheSize(i).fold((m.get("numOutputRows"), Option.empty[Long])) { case (r, mem, disk) => (Some(r), Some(mem + disk)) }
    case _ => (m.get("numOutputRows"), None)
  }

  /** The memory `p` allocated, by its one-run metrics `m`: None where Spark measures none of an
   *  operator that holds rows in memory (a sort-merge join's rows of one key, a window's partition,
   *  an object hash aggregate's map, a sort aggregate's group, which `collect_list` makes as large
   *  as the group, a cartesian product's buffer): unknown, not 0. */
  def memoryOf(p: SparkPlan, m: Map[String, Long]): Option[Long] = p match {
    case _: BroadcastExchangeLike => m.get("dataSize") // the relation each executor holds
    case _ if m.contains("peakMemory") || m.contains("buildDataSize") =>
      Some(m.getOrElse("peakMemory", 0L) + m.getOrElse("buildDataSize", 0L))
    case _: ShuffleExchangeLike => Some(0L) // its rows are on disk: shuffle bytes
    case _: BroadcastHashJoinExec | _: BroadcastNestedLoopJoinExec => Some(0L) // its table is the broadcast's
    case i: InMemoryTableScanExec => cacheSize(i).map(_._2) // the batches it built, in memory (shared: counted where built)
    case _ => None
  }

  /** Rows and bytes of a materialized cache: its rows, and its blocks' bytes in memory and on disk
   *  as Spark's storage holds them (compressed columns: not the cache's own size statistic, which
   *  counts the values uncompressed). */
  private def cacheSize(i: InMemoryTableScanExec): Option[(Long, Long, Long)] = {
    val b = i.relation.cacheBuilder
    if (!b.isCachedColumnBuffersLoaded) None
    else Try {
      val id = b.cachedColumnBuffers.id
      val held = i.session.sparkContext.getRDDStorageInfo.find(_.id == id)
      for (r <- i.relation.computeStats().rowCount; h <- held) yield (r.toLong, h.memSize, h.diskSize)
    }.toOption.flatten
  }

  /** The stateful operator kind of `p`, if it holds state: the one classification, which
   *  `PlanFacts.physicalCounts` counts with too. */
  def kindOf(p: SparkPlan): Option[String] = p match {
    case _: ShuffleExchangeLike => Some("exchange")
    case _: BroadcastExchangeLike => Some("broadcast")
    case _: SortExec | _: TakeOrderedAndProjectExec => Some("sort")
    case _: BaseJoinExec => Some("join")
    case _: BaseAggregateExec => Some("aggregate")
    case _: WindowExecBase => Some("window")
    case _ => None
  }

  /** The caches each query to measure found not materialized before it ran (by identity), so that
   *  they count as its own state once it has built them ([[noteCachesToBuild]]). */
  private val cachesToBuild =
    java.util.Collections.synchronizedMap(new java.util.WeakHashMap[QueryExecution, java.util.Set[AnyRef]]())

  /** Before `qe` runs: notes the caches it reads that are not materialized yet. After the run Spark
   *  says they are loaded, but this run built them: its own state, not an existing arrangement. */
  def noteCachesToBuild(qe: QueryExecution): Unit = Try {
    val unbuilt = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap[AnyRef, java.lang.Boolean]())
    qe.optimizedPlan.collectWithSubqueries { case r: InMemoryRelation => r.cacheBuilder }
      .filterNot(_.isCachedColumnBuffersLoaded).foreach(unbuilt.add)
    cachesToBuild.put(qe, unbuilt)
  }

  private[measure] final class Walker(n: BlockIndex, builtByRun: java.util.Set[AnyRef] = java.util.Collections.emptySet()) {
    val ops = mutable.ArrayBuffer[Op]()
    private val seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap[SparkPlan, java.lang.Boolean]())
    private val idOf = new java.util.IdentityHashMap[SparkPlan, Integer]()
    private val pendingReuse = mutable.ArrayBuffer[(Int, SparkPlan)]()

    /** Query stages replaced by the logical plans they ran, so a re-planned link finds its block. */
    private def destaged(l: LogicalPlan): LogicalPlan = Try(l.transformUp {
      case s: LogicalQueryStage => destaged(s.logicalPlan) // a stage's plan may hold stages itself
    }).getOrElse(l)

    def blockOfLink(p: SparkPlan): Option[String] = p.logicalLink.flatMap { l =>
      val staged = l.exists(_.isInstanceOf[LogicalQueryStage])
      n.blockOf(l)
        .orElse(if (staged) n.blockOf(destaged(l)) else None)
        .orElse(n.blockOfShape(l))
        .orElse(if (staged) n.blockOfShape(destaged(l)) else None)
    }

    private def joinSides(p: SparkPlan): Option[(Option[String], Option[String])] = p.logicalLink.flatMap {
      case j: Join =>
        n.joinInputsOf(j).orElse(destaged(j) match {
          case d: Join => n.joinInputsOf(d)
          case _ => None
        }).orElse(n.joinInputsOfShape(j)).map { case (l, r) => (Some(l), Some(r)) }
      case _ => None
    }

    private def emit(p: SparkPlan, parent: Option[SparkPlan], kind: String, block: Option[String], shared: Boolean,
        reason: String): Int = {
      val m = metricsOf(p)
      val rows = m.get("numOutputRows").orElse(m.get("shuffleRecordsWritten"))
      val twice = p.getTagValue(RanTwice).isDefined
      val peak = if (shared) Some(0L) else memoryOf(p, m)
      val spill = if (shared) 0L else m.getOrElse("spillSize", 0L)
      val shuffle = if (shared) 0L else m.getOrElse("shuffleBytesWritten", 0L)
      val (stateRows, stateBytes) = Try(stateOf(p, m)).getOrElse((None, None))
      val id = ops.size
      ops += Op(id, p.nodeName, kind, block, shared, None, reason, rows, peak, spill, shuffle, rawMetricsOf(p), Realization.what(p, parent),
        stateRows, stateBytes, twice, p.getTagValue(LimitedAbove).isDefined && kind != "exchange",
        // A cartesian product's buffer spills past its threshold, and Spark has no spill metric for it.
        spillMeasured = shared || !p.isInstanceOf[CartesianProductExec] || m.contains("spillSize"))
      idOf.put(p, id)
      id
    }

    private val exchanges = mutable.HashMap[SparkPlan, Exchange]() // by their canonical form

    private var scanSubqueries = 0 // the depth of scans' subqueries being visited
    private val readToPrune = mutable.Set[Int]()

    private def reused(r: ReusedExchangeExec, ctx: Option[String], parent: Option[SparkPlan]): Unit = {
      val kind = if (r.child.isInstanceOf[BroadcastExchangeLike]) "broadcast" else "exchange"
      val id = emit(r, parent, kind, ctx, shared = true, "reused exchange: an existing arrangement read again")
      if (scanSubqueries > 0) readToPrune += id
      pendingReuse += ((id, r.child))
    }

    /** `ctx`: the block of the nearest linked ancestor (or of the join side), and why. */
    def visit(p: SparkPlan, ctx: Option[String], why: String, parent: Option[SparkPlan] = None): Unit = {
      if (!seen.add(p)) return
      p match {
        case a: AdaptiveSparkPlanExec => visit(a.executedPlan, ctx, why, parent); return
        case s: QueryStageExec => visit(s.plan, ctx, why, parent); return
        case _: ReusedSubqueryExec => return // the subquery's operators are measured where it first ran
        case r: ReusedExchangeExec => reused(r, ctx, parent); return
        // A plan that has not run (adaptive execution's first plan): Spark reads an exchange equal to
        // one met before again when it runs (its stage cache), it does not build it twice.
        case e: Exchange if SQLConf.get.exchangeReuseEnabled =>
          val first = Try(exchanges.getOrElseUpdate(e.canonicalized, e)).getOrElse(e)
          if (first ne e) { reused(ReusedExchangeExec(e.output, first), ctx, parent); return }
        case i: InMemoryTableScanExec =>
          // Not materialized before the run (or still not: the run failed), the cache is built by this run.
          val built = i.relation.cacheBuilder.isCachedColumnBuffersLoaded && !builtByRun.contains(i.relation.cacheBuilder)
          emit(i, parent, "cache", ctx, shared = built, s"cached relation ${i.relation.cacheBuilder.tableName.getOrElse("")}".trim +
            (if (built) ": an existing arrangement" else ": built by this query's first run (not materialized yet)"))
          return
        case _ =>
      }
      val own = blockOfLink(p)
      val (here, reason) = own match {
        case Some(b) => (Some(b), "logical link")
        case None if p.logicalLink.isDefined && ctx.isEmpty =>
          (None, s"its logical node ${p.logicalLink.get.nodeName} is in no block ($why)")
        case None =>
          val unknown = p.logicalLink.map(l => s"; its logical node ${l.nodeName} is in no block").getOrElse("")
          (ctx, (if (ctx.isDefined) why else s"no block above it ($why)") + unknown)
      }
      val sides = p match {
        case _: BaseJoinExec => joinSides(p)
        case _ => None
      }
      kindOf(p).foreach { kind =>
        val (b, r) = (p, sides) match {
          case (h: HashJoin, Some((l, rr))) => if (h.buildSide == BuildLeft) (l, "build side (left)") else (rr, "build side (right)")
          case (nl: BroadcastNestedLoopJoinExec, Some((l, rr))) =>
            if (nl.buildSide == BuildLeft) (l, "build side (left)") else (rr, "build side (right)")
          case (_: BaseJoinExec, Some((_, rr))) => (rr, "buffered side (right)")
          case _ => (here, reason)
        }
        emit(p, parent, kind, b, shared = false, r)
      }
      sides match {
        case Some((l, r)) if p.children.size == 2 =>
          visit(p.children(0), l.orElse(here), "below a join: the left input's arrangement", Some(p))
          visit(p.children(1), r.orElse(here), "below a join: the right input's arrangement", Some(p))
        case _ =>
          val childWhy = if (own.isDefined) s"inherits from ${p.nodeName}" else why
          // Code generation wrappers are not the parent that says what a sort is for.
          val above = p match {
            case _: WholeStageCodegenExec | _: InputAdapter => parent
            case _ => Some(p)
          }
          // Below a grouped operator (applyInPandas, cogroup), the shuffle and sort Spark adds are its
          // input's arrangement, as below a join: not the result's block.
          val inputs = p.logicalLink.flatMap(n.groupedInputsOf).filter(_.size == p.children.size)
          p.children.zipWithIndex.foreach { case (c, i) =>
            inputs.flatMap(_(i)) match {
              case Some(b) => visit(c, Some(b), s"below ${p.nodeName}: its input's arrangement", above)
              case None => visit(c, here, childWhy, above)
            }
          }
      }
      // A scan's subqueries prune its files (dynamic partition pruning): a broadcast they read again is
      // the state of the join that built it, and an aggregate of the join's keys they build (without a
      // broadcast to reuse) is in no block; neither is the state of the scan's block, which Spark only streams.
      val pruning = p.isInstanceOf[DataSourceScanExec]
      if (pruning) scanSubqueries += 1
      try p.subqueries.foreach(s => if (pruning) visit(s, None, s"a subquery pruning the files of ${p.nodeName}", Some(p))
        else visit(s, here, s"subquery of ${p.nodeName}", Some(p)))
      finally if (pruning) scanSubqueries -= 1
    }

    def finish(): Seq[Op] = {
      pendingReuse.foreach { case (id, orig) =>
        val target = Option(idOf.get(orig)).map(_.intValue)
        ops(id) = ops(id).copy(reuses = target)
        // read again to prune a scan's files: listed where it was built
        target.filter(t => readToPrune.contains(id) && ops(t).block.isDefined).foreach(t => ops(id) = ops(id).copy(
          block = ops(t).block, reason = s"reused exchange: read again to prune a scan's files (dynamic partition pruning)"))
      }
      ops.toSeq
    }
  }

  /** The stateful operators of `physical`, attributed to the blocks of `n` (the normalized plan's index). */
  def operators(physical: SparkPlan, n: BlockIndex, qe: Option[QueryExecution] = None): Seq[Op] = {
    markStages(physical)
    val w = new Walker(n, qe.flatMap(q => Option(cachesToBuild.get(q))).getOrElse(java.util.Collections.emptySet()))
    w.visit(physical, None, "the query's root")
    w.finish()
  }
}
