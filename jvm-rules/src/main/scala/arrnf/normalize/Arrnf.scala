package arrnf.normalize

import scala.util.Try

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.classic.Dataset
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec

import arrnf.guard.DeepStack
import arrnf.measure.Realization
import arrnf.model.ArrnfProgram
import arrnf.render.{JsonFormat, TextFormat}

/**
 * Entry points (also for Python through py4j): `Arrnf.text(df)`, `Arrnf.json(df)`, and the same for
 * an optimized logical plan. The normalizer reads the *optimized* plan (what runs).
 */
object Arrnf {
  def program(plan: LogicalPlan, name: String): ArrnfProgram = Normalizer(plan, name)
  /** `withSql = false`: without the SQL forms (all the text form needs; most of the cost). */
  def program(plan: LogicalPlan, name: String, withSql: Boolean): ArrnfProgram = Normalizer(plan, name, withSql)
  def program(df: Dataset[_], name: String): ArrnfProgram = ofDataset(df, name)

  /**
   * The program of `df`, each block with what Spark builds for it in the physical plan Spark chose
   * (planned now if it was not yet: the same plan running `df` uses). A streaming Dataset has no
   * physical plan before it starts: no realization.
   */
  def ofDataset(df: Dataset[_], name: String, withSql: Boolean = true): ArrnfProgram =
    if (df.isStreaming) {
      val plan = optimized(df)
      Normalizer(plan, name, withSql).copy(rules = arrnf.ArrnfExplainProvider.ruleReasons(plan))
    } else {
      val plan = df.queryExecution.optimizedPlan
      val (p, index) = Normalizer.build(plan, name, withSql)
      realize(p.copy(rules = arrnf.ArrnfExplainProvider.ruleLines(df.queryExecution)), Try(df.queryExecution.executedPlan).toOption, index)
    }

  /** `p` with its realization in `physical`; `p` as it is when there is no plan or attributing fails.
   *  Attributing walks the physical plan recursively: where that overflows the stack (a chain of
   *  300 joins) it runs again on a deep stack, as the normalizer does. */
  private def realize(p: ArrnfProgram, physical: Option[SparkPlan], index: BlockIndex): ArrnfProgram =
    physical.flatMap { pp =>
      def attributed = Try(Realization.of(p, pp, index)).toOption
      try attributed catch {
        case DeepStack.Overflow() => try DeepStack.onDeepStack(attributed) catch { case DeepStack.Overflow() => None }
      }
    }.getOrElse(p)
  /** The program without SQL forms: all the text form and the explain section print. */
  private def textProgram(plan: LogicalPlan, name: String): ArrnfProgram = Normalizer(plan, name, withSql = false)

  /**
   * The optimized plan of `df`. A streaming Dataset cannot be planned as a batch query (Spark
   * refuses before optimizing), so its analyzed plan goes through the session's optimizer directly.
   */
  def optimized(df: Dataset[_]): LogicalPlan =
    if (!df.isStreaming) df.queryExecution.optimizedPlan
    else {
      val qe = df.queryExecution
      qe.sparkSession.withActive(qe.sparkSession.sessionState.optimizer.execute(qe.analyzed.clone()))
    }

  def text(df: Dataset[_], name: String): String = TextFormat(ofDataset(df, name, withSql = false))
  def text(df: Dataset[_]): String = text(df, "query")
  def json(df: Dataset[_], name: String): String = JsonFormat(program(df, name))
  def json(df: Dataset[_]): String = json(df, "query")
  def textOfPlan(plan: LogicalPlan, name: String): String = TextFormat(textProgram(plan, name))
  def jsonOfPlan(plan: LogicalPlan, name: String): String = JsonFormat(program(plan, name))

  /** The optimized logical plan behind a physical plan, as `df.explain()` hands it over. */
  def logicalOf(plan: SparkPlan): Option[LogicalPlan] = plan match {
    case a: AdaptiveSparkPlanExec => Option(a.context).map(_.qe.optimizedPlan).orElse(a.inputPlan.logicalLink)
    case p =>
      p.logicalLink.orElse(if (p.children.size == 1) logicalOf(p.children.head) else None)
  }

  /**
   * The copy of the optimized plan that Spark planned `plan` from (`QueryExecution` plans a clone;
   * every operator's logical link points into it), else [[logicalOf]]. Same nodes, ids and tags as
   * the optimized plan, and the planner left the statistics it computed on them: computed again on
   * the optimized plan itself they took 14% of the explain section (TPC-DS, profiled).
   */
  def plannedOf(plan: SparkPlan): Option[LogicalPlan] = plan match {
    case a: AdaptiveSparkPlanExec => a.inputPlan.logicalLink.orElse(logicalOf(a))
    case p => logicalOf(p) // without adaptive execution, the links already lead into the planned copy
  }

  /** The ArrNF text for explain: never throws, a one-line message instead. */
  def explain(plan: SparkPlan): String = explainOf(plannedOf(plan), Some(plan))

  /** [[explain]] for the logical plan already found behind a physical plan (or none). */
  def explainOf(logical: => Option[LogicalPlan], physical: Option[SparkPlan]): String = try {
    logical match {
      case Some(lp) =>
        val (p, index) = Normalizer.build(lp, "query", withSql = false)
        TextFormat(realize(p, physical, index))
      case None => "ArrNF: no logical plan is linked to this physical plan; use pyspark_arrnf.arrnf(df)."
    }
  } catch {
    case e @ DeepStack.Contained() =>
      s"ArrNF: could not normalize this plan (${e.getClass.getSimpleName}: ${String.valueOf(e.getMessage).linesIterator.nextOption().getOrElse("")})"
  }
}
