package arrnf.measure

import scala.util.Try

import org.json4s._
import org.json4s.jackson.JsonMethods

import org.apache.spark.sql.classic.Dataset
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec
import org.apache.spark.sql.execution.streaming.operators.stateful.StateStoreWriter
import org.apache.spark.sql.execution.streaming.runtime.{StreamExecution, StreamingQueryWrapper}
import org.apache.spark.sql.streaming.StreamingQuery

import arrnf.guard.DeepStack
import arrnf.model.{ArrnfProgram, Block}
import arrnf.normalize.{BlockIndex, Normalizer}
import arrnf.render.{JsonFormat, TextFormat}

/**
 * Measured arrangements (design §3, issue 7): after a query ran, every stateful physical operator of
 * its FINAL plan (the adaptive plan's `executedPlan`) with its Spark SQL metrics, attributed to the
 * ArrNF block it realizes ([[Attribution]]).
 *
 * Figures per operator: `rows` (numOutputRows, or shuffleRecordsWritten for a shuffle), the rows
 * and bytes of the state it holds ([[Attribution.stateOf]]), `peakMemory` (the operator's
 * peakMemory metric; buildDataSize for a shuffled hash join's hash table; dataSize for a broadcast,
 * the relation every executor holds; None, unknown, where Spark measures none: [[Attribution.memoryOf]]), `spill` (spillSize), `shuffleBytes` (shuffleBytesWritten).
 * Spark sums peakMemory over tasks, so the figure is the sum of each task's peak. A block's measured
 * rows and bytes are its arrangement's: those of its principal operator's state; its peak memory
 * (allocation) is the sum over its own (non-shared) operators, a column of its own.
 */
object Measure {
  import Attribution._

  def opJson(o: Op): JValue = JObject(
    "id" -> JInt(o.id), "node" -> JString(o.node), "kind" -> JString(o.kind),
    "block" -> o.block.map(JString(_)).getOrElse(JNull), "shared" -> JBool(o.shared),
    "reuses" -> o.reuses.map(i => JInt(i)).getOrElse(JNull), "reason" -> JString(o.reason),
    "rows" -> o.rows.map(JLong(_)).getOrElse(JNull), "peak_memory" -> o.peakMemory.map(JLong(_)).getOrElse(JNull),
    "spill" -> (if (o.spillMeasured) JLong(o.spill) else JNull), "shuffle_bytes" -> JLong(o.shuffleBytes), "what" -> JString(o.what),
    "state_rows" -> o.stateRows.map(JLong(_)).getOrElse(JNull), "state_bytes" -> o.stateBytes.map(JLong(_)).getOrElse(JNull),
    "ran_twice" -> JBool(o.ranTwice), "limited_above" -> JBool(o.limitedAbove),
    "metrics" -> JObject(o.metrics.toList.sortBy(_._1).map { case (k, v) => k -> JLong(v) }))

  /** A block's measured figures. `rows` and `bytes` are those of the state it holds: the figures of
   *  its principal operator ([[principal]]); `peak` (allocation), `spill` and `shuffle` are sums over
   *  its own operators (shared ones listed apart); `ratio` = measured state bytes / estimated bytes. */
  final case class Figures(own: Seq[Op], shared: Seq[Op], estimatedBytes: Option[Long]) {
    val main: Option[Op] = principal(own)
    val rows: Option[Long] = main.flatMap(_.stateRows)
    val bytes: Option[Long] = main.flatMap(_.stateBytes)
    val ratio: Option[Double] = for (e <- estimatedBytes; m <- bytes) yield m.toDouble / e
    /** Own operators that hold rows in memory but whose memory Spark does not measure. */
    val unmeasured: Seq[Op] = own.filter(_.peakMemory.isEmpty)
    /** Sum of the measured memory; None where the operators Spark measured hold none (a window's
     *  exchange's 0 beside the window itself: "≥0B" says nothing). */
    val peak: Option[Long] = {
      val known = own.flatMap(_.peakMemory).sum
      if (unmeasured.nonEmpty && known == 0) None else Some(known)
    }
    val spill: Long = own.map(_.spill).sum
    /** Own operators that can spill where Spark has no spill metric (a cartesian product's buffer). */
    val spillUnmeasured: Seq[Op] = own.filterNot(_.spillMeasured)
    val shuffle: Long = own.map(_.shuffleBytes).sum

    def json: JValue = JObject(
      "operators" -> JArray(own.map(o => JInt(o.id)).toList),
      "shared_operators" -> JArray(shared.map(o => JInt(o.id)).toList),
      "rows" -> rows.map(JLong(_)).getOrElse(JNull),
      "bytes" -> bytes.map(JLong(_)).getOrElse(JNull),
      "state_operator" -> main.map(o => JInt(o.id)).getOrElse(JNull),
      "peak_memory" -> peak.map(JLong(_)).getOrElse(JNull),
      "peak_memory_unmeasured" -> JArray(unmeasured.map(o => JInt(o.id)).toList),
      "spill" -> JLong(spill),
      "spill_unmeasured" -> JArray(spillUnmeasured.map(o => JInt(o.id)).toList),
      "shuffle_bytes" -> JLong(shuffle),
      "ratio" -> ratio.map(JDouble(_)).getOrElse(JNull))

    /** The line the text form prints under the block's header. */
    def line: String = {
      val h = TextFormat.human _
      val parts = rows.map(r => s"rows=${h(r, "")}").toSeq ++ bytes.map(b => s"bytes=${h(b, "B")}") ++
        Seq(peakText, spillText, s"shuffle=${h(shuffle, "B")}") ++
        ratio.map(r => "ratio=" + String.format(java.util.Locale.ROOT, "%.2f", Double.box(r)))
      val ids = if (own.isEmpty) "none" else own.map(_.id).mkString(", ")
      val alsoShared = if (shared.isEmpty) "" else "; shared " + shared.map(_.id).mkString(", ")
      val of = main.map(o => s"; state of ${o.id} ${o.what}").getOrElse("")
      val twice = if (own.exists(_.ranTwice)) "; Spark ran the stage of " + own.filter(_.ranTwice).map(_.id).mkString(", ") +
        " twice, first to sample the ranges of the range shuffle it feeds: one run's figures" else ""
      val limited = main.filter(o => o.limitedAbove && o.stateRows.isEmpty)
        .fold("")(o => s"; rows unknown: a LIMIT above ${o.id} stopped reading its ${if (o.kind == "window") "rows" else "groups"}")
      val unmeasuredNote = (if (unmeasured.isEmpty) "" else "; Spark measures no memory of " +
        named(unmeasured)) + (if (spillUnmeasured.isEmpty) "" else
        "; Spark measures no spill of " + named(spillUnmeasured))
      "measured: " + parts.mkString("  ") + s" (operators $ids$alsoShared$of$twice$limited$unmeasuredNote)"
    }

    /** `spill=` as `peak=`: `≥` beside an operator whose spill is not measured, unknown where nothing else spilled. */
    private def spillText: String =
      if (spillUnmeasured.isEmpty) s"spill=${TextFormat.human(spill, "B")}"
      else if (spill == 0) "spill=unknown" else s"spill≥${TextFormat.human(spill, "B")}"

    /** `peak=`: the sum Spark measured; `≥` where an operator's memory is not measured; unknown where none is. */
    private def peakText: String = peak match {
      case None => "peak=unknown"
      case Some(b) if unmeasured.nonEmpty => s"peak≥${TextFormat.human(b, "B")}"
      case Some(b) => s"peak=${TextFormat.human(b, "B")}"
    }
  }

  /** The operator whose state is the block's arrangement: a final aggregate, window, broadcast
   *  relation, hash join build or sort before a partial aggregate or a shuffle (which hold copies
   *  on the way to it); the largest among equals. */
  def principal(own: Seq[Op]): Option[Op] = {
    def rank(o: Op): Int = o.what match {
      case w if w.startsWith("state store") => 0
      case w if w == "sort" || w.startsWith("sort for ") => 3 // (before the aggregates: "sort for aggregate" is a sort)
      case w if w.contains("aggregate") && !w.contains("partial") => 0
      case "window buffer" => 0
      case "broadcast relation" => 1
      case w if w.contains("hash table") => 2
      case w if w.contains("aggregate") => 4
      case "shuffle" => 5
      case _ => 6
    }
    // (among equals the largest: a rank limit's local sort of every row, not its final sort of the kept ones)
    // (an aggregate a LIMIT stopped reading is still the block's state, its rows unknown)
    own.filter(o => o.stateRows.isDefined || o.limitedAbove).sortBy(o => (rank(o), -o.stateRows.getOrElse(0L)))
      .headOption.orElse(own.headOption)
  }

  def figures(b: Block, ops: Seq[Op]): Figures = {
    val mine = ops.filter(o => o.block.contains(b.name))
    Figures(mine.filterNot(_.shared), mine.filter(_.shared), b.cost.bytes.filter(_ > 0))
  }

  /** How the run ended and what it is: the query's error (None: it ran), its result rows, the
   *  micro-batch of a stream, whether the adaptive plan was final, whether a stream's figures are its
   *  last progress's (`settled`). */
  final case class Run(
      error: Option[String] = None,
      resultRows: Option[Long] = None,
      batchId: Option[Long] = None,
      finalPlan: Option[Boolean] = None,
      settled: Option[Boolean] = None)

  /** The program JSON with `measured` in each block, a top-level `measurement`, and texts that show them. */
  def report(program: ArrnfProgram, ops: Seq[Op], run: Run): String = {
    val p = Realization.attach(program, ops)
    val figs = p.blocks.map(b => b.name -> figures(b, ops)).toMap
    val attributed = ops.filter(o => o.block.isDefined && !o.shared)
    val unattributed = ops.filter(_.block.isEmpty)
    val peak = attributed.flatMap(_.peakMemory).sum
    val unattributedPeak = unattributed.filterNot(_.shared).flatMap(_.peakMemory).sum
    val unmeasured = ops.filter(_.peakMemory.isEmpty)
    val spillUnmeasured = ops.filterNot(_.spillMeasured)
    val spill = attributed.map(_.spill).sum
    val shuffle = attributed.map(_.shuffleBytes).sum
    val unattributedOwn = unattributed.filterNot(_.shared)
    val (unattributedSpill, unattributedShuffle) = (unattributedOwn.map(_.spill).sum, unattributedOwn.map(_.shuffleBytes).sum)
    val h = TextFormat.human _
    // (counted as the header counts what Spark builds: a reused exchange or an existing cache apart)
    val shared = ops.count(_.shared)
    val summary = (Seq(s"-- measured: ${ops.size - shared} stateful operators" +
      (if (shared > 0) s" (and $shared shared: read again, built before or elsewhere)" else "") + s", ${unattributed.size} unattributed, " +
      s"peak memory ${h(peak, "B")} attributed + ${h(unattributedPeak, "B")} unattributed" +
      (if (unmeasured.isEmpty) "" else " (and unknown: Spark measures no memory of " +
        named(unmeasured) + ")") +
      s", spill ${h(spill, "B")}" + (if (unattributedSpill > 0) s" + ${h(unattributedSpill, "B")} unattributed" else "") +
      (if (spillUnmeasured.isEmpty) "" else " (and unknown: Spark measures no spill of " +
        named(spillUnmeasured) + ")") +
      s", shuffle ${h(shuffle, "B")}" + (if (unattributedShuffle > 0) s" + ${h(unattributedShuffle, "B")} unattributed" else "") + run.batchId.map(b => s", micro-batch $b").getOrElse("") +
      run.resultRows.map(r => s", $r result rows").getOrElse("")) ++
      run.error.map(e => s"-- the query FAILED: $e") ++
      unattributed.map(o => s"--   unattributed #${o.id} ${o.node}: ${o.reason}")).mkString("\n")
    val base = JsonFormat.toJValue(p, b => Some(figs(b.name).line), Some(summary))
    val blocks = JArray(p.blocks.map(b =>
      JsonFormat.block(b, Some(figs(b.name).line)) ~~ ("measured" -> figs(b.name).json)).toList)
    val measurement = JObject(List(
      "operators" -> JArray(ops.map(opJson).toList),
      "unattributed" -> JArray(unattributed.map(o => JInt(o.id)).toList),
      "peak_memory" -> JLong(peak),
      "unattributed_peak_memory" -> JLong(unattributedPeak),
      "peak_memory_unmeasured" -> JArray(unmeasured.map(o => JInt(o.id)).toList),
      "spill" -> JLong(spill),
      "shuffle_bytes" -> JLong(shuffle),
      "unattributed_spill" -> JLong(unattributedSpill),
      "spill_unmeasured" -> JArray(spillUnmeasured.map(o => JInt(o.id)).toList),
      "unattributed_shuffle_bytes" -> JLong(unattributedShuffle),
      "status" -> JString(if (run.error.isDefined) "failed" else "ok"),
      "error" -> run.error.map(JString(_)).getOrElse(JNull),
      "final_plan" -> run.finalPlan.map(JBool(_)).getOrElse(JNull),
      "result_rows" -> run.resultRows.map(JLong(_)).getOrElse(JNull)) ++
      run.batchId.map(b => "batch_id" -> JLong(b)) ++
      run.settled.map(s => "settled" -> JBool(s)))
    val fields = base.obj.map {
      case ("blocks", _) => "blocks" -> blocks
      case other => other
    } :+ ("measurement" -> measurement)
    JsonMethods.compact(JsonMethods.render(JObject(fields)))
  }

  /** Operators by id and node, as the measured lines name them: `#0 Window, #3 SortMergeJoin`. */
  private def named(ops: Seq[Op]): String = ops.map(o => s"#${o.id} ${o.node}").mkString(", ")

  private implicit class Merge(o: JObject) {
    def ~~(kv: (String, JValue)): JObject = JObject(o.obj :+ kv)
  }

  /**
   * The measured report of a batch Dataset that has run (or failed: `error`, its first line; what ran
   * is measured). Reads the Dataset's own QueryExecution, the one `collect()` used; it does not run
   * anything itself.
   */
  def json(df: Dataset[_], name: String, error: Option[String], resultRows: Option[Long]): String = {
    val qe = df.queryExecution
    val (built, n) = Normalizer.build(qe.optimizedPlan, name)
    val program = built.copy(rules = arrnf.ArrnfExplainProvider.ruleLines(qe))
    val physical = qe.executedPlan
    val isFinal = physical match {
      case a: AdaptiveSparkPlanExec => Some(Try(a.isFinalPlan).getOrElse(false))
      case _ => None
    }
    report(program, operators(physical, n, Some(qe)), Run(error, resultRows, finalPlan = isFinal))
  }

  /** Runs `df` without bringing its rows to the driver (every partition is read, rows dropped). */
  def run(df: Dataset[_]): Long = df.queryExecution.toRdd.map(_ => 1L).fold(0L)(_ + _)

  /**
   * The measured report of a streaming query's last micro-batch: the state-store operators of its
   * last incremental execution attributed to the blocks of that execution's optimized plan, with the
   * figures of `lastProgress.stateOperators` (numRowsTotal → rows, memoryUsedBytes → peak memory;
   * Spark lists the same operators in the same order). `settled` is false while the last progress
   * is not yet that batch's (a micro-batch is running): the figures are then the operators' metrics.
   * The query's exception, if it stopped with one, is the run's error.
   */
  def streamJson(q: StreamingQuery, name: String): String = {
    val se: StreamExecution = q match {
      case wrapper: StreamingQueryWrapper => wrapper.streamingQuery
      case s: StreamExecution => s
      case other => throw new IllegalArgumentException(s"not a micro-batch streaming query: ${other.getClass.getName}")
    }
    val exec = se.lastExecution
    if (exec == null) return JsonMethods.compact(JsonMethods.render(JObject("error" -> JString("no micro-batch has run yet"))))
    val progress = Option(q.lastProgress)
    val (built, n) = Normalizer.build(exec.optimizedPlan, name)
    val program = built.copy(rules = arrnf.ArrnfExplainProvider.ruleReasons(exec.optimizedPlan))
    val w = new Walker(n)
    val writers = exec.executedPlan.collect { case s: StateStoreWriter => s }
    val states = progress.filter(_.batchId == exec.currentBatchId).map(_.stateOperators.toSeq)
      .filter(_.size == writers.size)
    val ops = writers.zipWithIndex.map { case (s, i) =>
      val m = metricsOf(s)
      val b = w.blockOfLink(s)
      val (rows, peak) = states match {
        case Some(st) => (Some(st(i).numRowsTotal), st(i).memoryUsedBytes)
        case None => (m.get("numTotalStateRows"), m.getOrElse("stateMemory", 0L))
      }
      Op(i, s.nodeName, "state", b, shared = false, None,
        if (b.isDefined) "logical link" else "its logical node is in no block", rows, Some(peak), 0L, 0L, m, "state store",
        stateRows = rows, stateBytes = Some(peak))
    }
    val error = q.exception.map(e => firstLine(e.getMessage, e))
    report(program, ops, Run(error, batchId = Some(exec.currentBatchId), finalPlan = Some(true),
      settled = Some(states.isDefined)))
  }

  /** The first non-blank line of a message (the exception's class when it has none). */
  def firstLine(message: String, e: Throwable): String =
    Option(message).flatMap(_.linesIterator.map(_.trim).find(_.nonEmpty)).getOrElse(e.getClass.getSimpleName)

  /** A report that never throws: the message instead. */
  def safely(f: => String): String = try f catch {
    case e @ DeepStack.Contained() =>
      JsonMethods.compact(JsonMethods.render(JObject("error" ->
        JString(s"${e.getClass.getSimpleName}: ${String.valueOf(e.getMessage)}"))))
  }
}
