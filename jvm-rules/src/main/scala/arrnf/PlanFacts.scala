package arrnf

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.Dataset
import org.apache.spark.sql.execution.{SparkPlan, SubqueryExec}
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanExec, QueryStageExec}
import org.apache.spark.sql.execution.aggregate.BaseAggregateExec
import org.apache.spark.sql.execution.exchange.{BroadcastExchangeLike, ReusedExchangeExec, ShuffleExchangeLike}
import org.apache.spark.sql.execution.joins.BaseJoinExec
import org.apache.spark.sql.execution.SortExec
import org.apache.spark.sql.execution.window.WindowExecBase

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
  def firedRules(df: Dataset[_]): java.util.List[String] = {
    df.queryExecution.optimizedPlan
    val names = ArrnfExtension.ruleNames.toSet
    df.queryExecution.tracker.rules.collect {
      case (name, summary) if names(name) && summary.numEffectiveInvocations > 0 =>
        name.substring(name.lastIndexOf('.') + 1)
    }.toSeq.sorted.asJava
  }

  /** Counts of Exchange / Sort / Join / Aggregate / Window operators in the physical plan. */
  def physicalCounts(df: Dataset[_]): java.util.Map[String, java.lang.Integer] = {
    val counts = scala.collection.mutable.LinkedHashMap(
      "exchange" -> 0, "reused_exchange" -> 0, "sort" -> 0, "join" -> 0, "aggregate" -> 0, "window" -> 0)
    def visit(p: SparkPlan): Unit = {
      p match {
        case a: AdaptiveSparkPlanExec => visit(a.executedPlan); return
        case s: QueryStageExec => visit(s.plan); return
        case _: ReusedExchangeExec => counts("reused_exchange") += 1; return
        case s: SubqueryExec => visit(s.child); return
        case _: ShuffleExchangeLike | _: BroadcastExchangeLike => counts("exchange") += 1
        case _: SortExec => counts("sort") += 1
        case _: BaseJoinExec => counts("join") += 1
        case _: BaseAggregateExec => counts("aggregate") += 1
        case _: WindowExecBase => counts("window") += 1
        case _ =>
      }
      p.children.foreach(visit)
      p.subqueries.foreach(visit)
    }
    visit(df.queryExecution.executedPlan)
    counts.map { case (k, v) => k -> java.lang.Integer.valueOf(v) }.asJava
  }
}
