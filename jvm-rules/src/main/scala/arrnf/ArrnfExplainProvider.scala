package arrnf

import org.apache.spark.sql.ExtendedExplainGenerator
import org.apache.spark.sql.execution.SparkPlan

/**
 * The ArrNF section of `df.explain("extended")`, registered through
 * `spark.sql.extendedExplainProviders=arrnf.ArrnfExplainProvider`.
 */
class ArrnfExplainProvider extends ExtendedExplainGenerator {
  override def title: String = "ArrNF"

  override def generateExtendedInfo(plan: SparkPlan): String = {
    val enabled = ArrnfConf.enabled(plan.conf)
    s"pyspark-arrnf ${BuildInfo.version} (built for Spark ${BuildInfo.sparkVersion}); rewrites " +
      (if (enabled) "on" else s"off (${ArrnfConf.Enabled}=false)")
  }
}
