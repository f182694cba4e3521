package arrnf

import scala.jdk.CollectionConverters._

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
    // Why the factorization fired, where its tag survived Spark's later rules (best effort).
    val fired = scala.util.Try(arrnf.normal.Arrnf.logicalOf(plan).toSeq
      .flatMap(lp => arrnf.rules.FactorizeUnionOfJoins.firedIn(lp).asScala)).getOrElse(Nil)
      .map(reason => s"FactorizeUnionOfJoins fired: $reason\n").mkString
    // Never throws: a plan the normalizer cannot handle gives a one-line message instead.
    version + "\n" + fired + arrnf.normal.Arrnf.explain(plan)
  }
}
