package arrnf

import org.apache.spark.sql.internal.SQLConf

/** The extension's settings. All are runtime SQL settings: they can change in a live session. */
object ArrnfConf {
  /** Kill switch: `false` turns every rewrite of the extension off (explain output stays). */
  val Enabled = "spark.arrnf.enabled"

  /** Per-rule switch: `spark.arrnf.<RuleSimpleName>.enabled`, default true. */
  def ruleEnabledKey(simpleName: String): String = s"spark.arrnf.$simpleName.enabled"

  /** Testing only: the simple name of a rule (or `Normalizer`) that throws instead of running (fault containment). */
  val FailRule = "spark.arrnf.testing.failRule"

  /** The least share of the union of joins' estimated cost that factorizing must save (0 to 1). */
  val FactorizeMinSaving = "spark.arrnf.FactorizeUnionOfJoins.minSaving"
  val FactorizeMinSavingDefault = 0.1

  def factorizeMinSaving(conf: SQLConf = SQLConf.get): Double = {
    val raw = conf.getConfString(FactorizeMinSaving, FactorizeMinSavingDefault.toString).trim
    raw.toDoubleOption.filter(v => v >= 0 && v <= 1).getOrElse(throw new IllegalArgumentException(
      s"$FactorizeMinSaving must be a number from 0 to 1 (a share of the estimated cost), not '$raw'; " +
        s"unset it for the default $FactorizeMinSavingDefault"))
  }

  /** Also build the ArrNF section for the plan description Spark records for every executed query
   *  (SQL tab of the UI, event log); default false. `df.explain()` always shows it. */
  val ExplainSqlUi = "spark.arrnf.explain.sqlUi"

  def explainInSqlUi(conf: SQLConf = SQLConf.get): Boolean =
    conf.getConfString(ExplainSqlUi, "false").trim.equalsIgnoreCase("true")

  def enabled(conf: SQLConf = SQLConf.get): Boolean =
    conf.getConfString(Enabled, "true").trim.equalsIgnoreCase("true")

  def ruleEnabled(simpleName: String, conf: SQLConf = SQLConf.get): Boolean =
    enabled(conf) && conf.getConfString(ruleEnabledKey(simpleName), "true").trim.equalsIgnoreCase("true")
}
