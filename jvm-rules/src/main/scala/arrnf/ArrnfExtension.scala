package arrnf

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule

import arrnf.guard.GuardedRule
import arrnf.rules._
import arrnf.sql.ArrnfFunctions

/**
 * The one place that registers what pyspark-arrnf adds to Spark. Enable it with
 * `spark.sql.extensions=arrnf.ArrnfExtension` (the Python package's `configure` does this and also
 * sets `spark.sql.extendedExplainProviders=arrnf.ArrnfExplainProvider` for `df.explain()`).
 *
 * It also registers the SQL functions `arrnf_json`, `arrnf_text` and `arrnf_blocks`
 * ([[ArrnfFunctions]]), which any client (Spark Connect, JDBC, `spark-sql`) can call.
 *
 * Each rule is wrapped in a [[GuardedRule]]: switchable at runtime (`spark.arrnf.enabled`,
 * `spark.arrnf.<Rule>.enabled`), excludable by name through `spark.sql.optimizer.excludedRules`,
 * and unable to fail a query.
 */
class ArrnfExtension extends (SparkSessionExtensions => Unit) {
  override def apply(ext: SparkSessionExtensions): Unit = {
    ArrnfConf.register() // the settings, so that SET checks them and SET -v lists them
    ArrnfExtension.operatorOptimizationRules.foreach(r => ext.injectOptimizerRule(_ => new GuardedRule(r)))
    val settingsChecker = ArrnfExtension.preCBORules.head // run once per query: warns of misspelled spark.arrnf.* keys
    ArrnfExtension.preCBORules.foreach(r => ext.injectPreCBORule(_ => new GuardedRule(r, checksSettings = r eq settingsChecker)))
    ArrnfFunctions.functions.foreach(ext.injectFunction)
    ArrnfFunctions.tableFunctions.foreach(ext.injectTableFunction)
  }
}

object ArrnfExtension {
  /** Rules run inside Spark's fixed-point "Operator Optimization" batches. */
  val operatorOptimizationRules: Seq[Rule[LogicalPlan]] = Seq(
    EliminateUnitJoin,
    NegationCancels,
    EliminateSelfSemiAntiJoin,
    FoldValueTerms,
    FoldAggregateValueTerms
  )

  /** Rules run once, after operator optimization and before join reordering ("Pre CBO Rules"). */
  val preCBORules: Seq[Rule[LogicalPlan]] = Seq(
    FactorizeUnionOfJoins,
    EagerAggregation
  )

  /** Every rule's full name, as `spark.sql.optimizer.excludedRules` takes it. */
  def ruleNames: Seq[String] = (operatorOptimizationRules ++ preCBORules).map(_.ruleName)
}
