package arrnf.bench

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.Dataset
import org.apache.spark.sql.execution.{ExtendedMode, SparkPlan, SubqueryExec}
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanExec, QueryStageExec}
import org.apache.spark.sql.execution.exchange.ReusedExchangeExec

import arrnf.{ArrnfExplainProvider, ArrnfExtension}
import arrnf.measure.Attribution

/**
 * Facts about how Spark planned and ran a query, for benchmarks and reports: the planning phases
 * (Spark's `QueryPlanningTracker`), which of the extension's rules changed the plan, and how many
 * stateful operators the physical plan holds (the final adaptive plan once the query has run).
 */
object PlanFacts {

  /** Duration in milliseconds of each planning phase: parsing, analysis, optimization, planning. */
  def phaseMillis(df: Dataset[_]): java.util.Map[String, java.lang.Long] = {
    df.queryExecution.executedPlan // plan fully, if not yet
    df.queryExecution.tracker.phases.map { case (k, v) => k -> java.lang.Long.valueOf(v.durationMs) }.asJava
  }

  /** The extension's rules (simple names) that changed this query's plan at least once. */
  def firedRules(df: Dataset[_]): java.util.List[String] =
    arrnf.ArrnfExplainProvider.changedRules(df.queryExecution).asJava

  /** Time spent in each of the extension's rules (simple names, milliseconds) while this query was
   *  optimized, as Spark's `QueryPlanningTracker` attributes it: the rules' own share of the
   *  optimization phase, free of the run-to-run noise of the phase as a whole. */
  def ruleMillis(df: Dataset[_]): java.util.Map[String, java.lang.Double] = {
    df.queryExecution.optimizedPlan
    val names = ArrnfExtension.ruleNames.toSet
    df.queryExecution.tracker.rules.collect {
      case (name, summary) if names(name) =>
        name.substring(name.lastIndexOf('.') + 1) -> java.lang.Double.valueOf(summary.totalTimeNs / 1e6)
    }.asJava
  }

  /** Milliseconds the ArrNF section of `df.explain("extended")` takes to build, timed inside the
   *  JVM: timed from Python, the py4j transfer of a long section (over about 16 KB) adds a ~40 ms
   *  socket delay that is no part of the section's cost. */
  def explainMillis(df: Dataset[_]): Double = {
    val plan = df.queryExecution.executedPlan
    val provider = new ArrnfExplainProvider()
    millis(provider.generateExtendedInfo(plan))
  }

  /** Milliseconds the explain provider takes when Spark asks it for the plan description it records
   *  for an executed query (the SQL tab, the event log: once when the query starts, again after each
   *  adaptive re-plan), with the session's settings: by default the one-line pointer, including the
   *  stack walk that tells this call from `df.explain()`; the whole section (built once per plan)
   *  with `spark.arrnf.explain.sqlUi=true`. What the explain provider adds to every executed query. */
  def recordedDescriptionMillis(df: Dataset[_]): Double = {
    val plan = df.queryExecution.executedPlan
    val provider = new ArrnfExplainProvider()
    // Called from here the stack walk answers "no": it is timed as Spark's call pays it, and the
    // provider is then given the answer Spark's call gets.
    millis { ArrnfExplainProvider.forRecordedDescription; provider.describe(plan, recorded = true) }
  }

  /** For scale beside [[explainMillis]]: milliseconds of Spark's own `df.explain("extended")` text
   *  (parsed, analyzed, optimized and physical plans), timed inside the JVM. The ArrNF section is
   *  built first and kept on the plan, so the extended explain finds it ready and this is Spark's part. */
  def sparkExplainMillis(df: Dataset[_]): Double = {
    ArrnfExplainProvider.section(df.queryExecution.executedPlan)
    millis(df.queryExecution.explainString(ExtendedMode))
  }

  private def millis(body: => Any): Double = {
    val start = System.nanoTime()
    body
    (System.nanoTime() - start) / 1e6
  }

  /** Counts of Exchange (shuffle and broadcast) / Sort / Join / Aggregate / Window operators in the
   *  physical plan, classified by `Attribution.kindOf`; a reused exchange is counted apart. */
  def physicalCounts(df: Dataset[_]): java.util.Map[String, java.lang.Integer] = {
    val counts = scala.collection.mutable.LinkedHashMap(
      "exchange" -> 0, "reused_exchange" -> 0, "sort" -> 0, "join" -> 0, "aggregate" -> 0, "window" -> 0)
    def visit(p: SparkPlan): Unit = {
      p match {
        case a: AdaptiveSparkPlanExec => visit(a.executedPlan); return
        case s: QueryStageExec => visit(s.plan); return
        case _: ReusedExchangeExec => counts("reused_exchange") += 1; return
        case s: SubqueryExec => visit(s.child); return
        case other => Attribution.kindOf(other).foreach(k => counts(if (k == "broadcast") "exchange" else k) += 1)
      }
      p.children.foreach(visit)
      p.subqueries.foreach(visit)
    }
    visit(df.queryExecution.executedPlan)
    counts.map { case (k, v) => k -> java.lang.Integer.valueOf(v) }.asJava
  }
}
