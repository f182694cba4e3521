package arrnf

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.ExtendedExplainGenerator
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.trees.TreeNodeTag
import org.apache.spark.sql.execution.SparkPlan

/**
 * The ArrNF section of `df.explain("extended")`, registered through
 * `spark.sql.extendedExplainProviders=arrnf.ArrnfExplainProvider`: the version line, then the
 * query's ArrNF program (its optimized logical plan, normalized; see [[arrnf.normalize.Normalizer]]).
 *
 * Spark also asks every explain provider for the plan description it records for each executed
 * query (the SQL tab of the UI, the event log), at the start and again after each adaptive
 * re-plan. Two things keep that cheap:
 *  - the section is built once per optimized plan (adaptive re-plans keep the logical plan it
 *    reads) and kept on that plan;
 *  - for those recorded descriptions it is built only when `spark.arrnf.explain.sqlUi=true`; by
 *    default they carry a one-line pointer instead, so queries nobody explains pay nothing.
 *    `df.explain()` and SQL `EXPLAIN` always show the section.
 */
class ArrnfExplainProvider extends ExtendedExplainGenerator {
  override def title: String = "ArrNF"

  override def generateExtendedInfo(plan: SparkPlan): String =
    describe(plan, ArrnfExplainProvider.forRecordedDescription)

  /** The text for `plan`; `recorded`: whether Spark is asking for an executed query's recorded
   *  description (asked only when `spark.arrnf.explain.sqlUi` is off). */
  private[arrnf] def describe(plan: SparkPlan, recorded: => Boolean): String = {
    val enabled = ArrnfConf.enabled(plan.conf)
    val loaded = ArrnfExplainProvider.rulesLoaded(plan)
    val version = s"pyspark-arrnf ${BuildInfo.version} (built for Spark ${BuildInfo.sparkVersion}); " + (
      if (!loaded) "rules not loaded (spark.sql.extensions does not name arrnf.ArrnfExtension): no rewrite ran"
      else if (enabled) "rewrites on" + ArrnfExplainProvider.rulesOff(plan.conf).map(r => s" (off: $r)").getOrElse("")
      else s"rewrites off (${ArrnfConf.Enabled}=${plan.conf.getConfString(ArrnfConf.Enabled, "false")})")
    if (!ArrnfConf.explainInSqlUi(plan.conf) && recorded) {
      return version + "\n" + s"ArrNF: not built for the recorded plan description " +
        s"(${ArrnfConf.ExplainSqlUi}=true builds it); df.explain() shows it."
    }
    version + "\n" + ArrnfExplainProvider.section(plan)
  }
}

object ArrnfExplainProvider {
  /** The extension's rules switched off while the rewrites are on: by their own switch
   *  (`spark.arrnf.<Rule>.enabled=false`) or by Spark's `spark.sql.optimizer.excludedRules`. */
  private[arrnf] def rulesOff(conf: org.apache.spark.sql.internal.SQLConf): Option[String] = {
    val excluded = conf.optimizerExcludedRules.toSeq.flatMap(_.split(",").map(_.trim)).toSet
    val off = ArrnfExtension.ruleNames.filter { full =>
      val simple = full.substring(full.lastIndexOf('.') + 1)
      excluded.contains(full) || !ArrnfConf.ruleEnabled(simple, conf)
    }.map(full => full.substring(full.lastIndexOf('.') + 1))
    Option.when(off.nonEmpty)(off.mkString(", "))
  }

  final case class Built(of: LogicalPlan, text: String)
  /** Where the built section is kept: on the optimized logical plan it was built from. */
  val SectionTag: TreeNodeTag[Built] = TreeNodeTag[Built]("arrnf.explainSection")

  // Per session, whether the extension was loaded (a session's extensions never change): asked for
  // every executed query's recorded description.
  private val loaded = java.util.Collections.synchronizedMap(
    new java.util.WeakHashMap[org.apache.spark.sql.SparkSession, java.lang.Boolean]())

  /** Whether `plan`'s session loaded the extension: the provider can be set without it
   *  (`spark.sql.extensions` missing or misspelled), and then no rule ran, whatever the switch says.
   *  Its SQL functions tell. */
  private[arrnf] def rulesLoaded(plan: SparkPlan): Boolean = Option(plan.session).forall { session =>
    loaded.computeIfAbsent(session, _ => java.lang.Boolean.valueOf(scala.util.Try(
      session.sessionState.functionRegistry.listFunction().exists(_.funcName == "arrnf_text")).getOrElse(true))).booleanValue
  }

  /** Why the factorization fired and the ArrNF program, built once per optimized logical plan. */
  private[arrnf] def section(plan: SparkPlan): String = {
    val logical = scala.util.Try(arrnf.normalize.Arrnf.logicalOf(plan)).toOption.flatten
    logical.flatMap(lp => lp.getTagValue(SectionTag).filter(_.of eq lp)) match {
      case Some(built) => built.text
      case None =>
        val fired = logical.toSeq.flatMap(ruleReasons).map(_ + "\n").mkString
        // Never throws: a plan the normalizer cannot handle gives a one-line message instead. It reads
        // the copy Spark planned (where the planner's statistics are); the text is kept on `logical`.
        val planned = scala.util.Try(arrnf.normalize.Arrnf.plannedOf(plan)).toOption.flatten
        val text = fired + arrnf.normalize.Arrnf.explainOf(planned, Some(plan))
        // A tag is copied along when a plan is transformed: `of` tells the plan it was built for.
        logical.foreach(lp => lp.setTagValue(SectionTag, Built(lp, text)))
        text
    }
  }

  /** Why the rules fired, and why EagerAggregation declined, in an optimized plan: a line each,
   *  where their tags survived Spark's later rules (best effort). */
  def ruleReasons(optimized: LogicalPlan): Seq[String] = {
    val factorized = scala.util.Try(arrnf.rules.FactorizeUnionOfJoins.firedIn(optimized).asScala.toSeq).getOrElse(Nil)
    val eager = scala.util.Try(arrnf.rules.EagerAggregation.reasonsIn(optimized)).getOrElse(Nil)
    factorized.map(reason => s"FactorizeUnionOfJoins fired: $reason") ++
      eager.map(reason => s"EagerAggregation $reason")
  }

  /** [[ruleReasons]] of a query's optimized plan, and a line for each other rule of the extension
   *  that changed it (they leave no reason in the plan: Spark's planning tracker counts them). */
  def ruleLines(qe: org.apache.spark.sql.execution.QueryExecution): Seq[String] = {
    val said = Set("EagerAggregation", "FactorizeUnionOfJoins")
    val changed = scala.util.Try(changedRules(qe).filterNot(said).map(r => s"$r changed the plan")).getOrElse(Nil)
    ruleReasons(qe.optimizedPlan) ++ changed
  }

  /** The extension's rules (simple names, sorted) that changed the query's plan at least once,
   *  from Spark's planning tracker. */
  def changedRules(qe: org.apache.spark.sql.execution.QueryExecution): Seq[String] = {
    qe.optimizedPlan
    val names = ArrnfExtension.ruleNames.toSet
    qe.tracker.rules.toSeq.collect {
      case (name, summary) if names(name) && summary.numEffectiveInvocations > 0 => name.substring(name.lastIndexOf('.') + 1)
    }.sorted
  }

  private val DescriptionCallers = Seq(
    "org.apache.spark.sql.execution.SQLExecution",
    "org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec")

  /** Whether Spark is asking for the plan description it records for an executed query: the first
   *  caller outside QueryExecution's explain methods is SQLExecution or an adaptive re-plan.
   *  (`df.explain()` and the EXPLAIN command call from elsewhere.) */
  private[arrnf] def forRecordedDescription: Boolean =
    StackWalker.getInstance().walk { frames =>
      frames.iterator().asScala
        .map(_.getClassName)
        .find(c => !c.startsWith("arrnf.") && !c.startsWith("scala.") && !c.startsWith("java.") &&
          !c.startsWith("org.apache.spark.sql.execution.QueryExecution") &&
          !c.startsWith("org.apache.spark.sql.catalyst.util.") && !c.startsWith("org.apache.spark.util."))
        .exists(c => DescriptionCallers.exists(c.startsWith))
    }
}
