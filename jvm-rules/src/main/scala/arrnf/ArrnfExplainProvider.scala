package arrnf

import org.apache.spark.sql.ExtendedExplainGenerator
import org.apache.spark.sql.execution.SparkPlan

/**
 * The ArrNF section of `df.explain("extended")`, registered through
 * `spark.sql.extendedExplainProviders=arrnf.ArrnfExplainProvider`: the version line, then the
 * query's ArrNF program (its optimized logical plan, normalized; see [[arrnf.normal.Normalizer]]).
 */
class ArrnfExplainProvider extends ExtendedExplainGenerator {
  override def title: String = "ArrNF"

  override def generateExtendedInfo(plan: SparkPlan): String = {
    val enabled = ArrnfConf.enabled(plan.conf)
    val version = s"pyspark-arrnf ${BuildInfo.version} (built for Spark ${BuildInfo.sparkVersion}); rewrites " +
      (if (enabled) "on" else s"off (${ArrnfConf.Enabled}=false)")
    // Never throws: a plan the normalizer cannot handle gives a one-line message instead.
    version + "\n" + arrnf.normal.Arrnf.explain(plan)
  }
}
