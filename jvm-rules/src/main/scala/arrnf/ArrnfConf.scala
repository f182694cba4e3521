package arrnf

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging
import org.apache.spark.sql.internal.SQLConf

/**
 * The extension's settings: Spark SQL config entries, registered with Spark (so `SET -v` lists them
 * with their docs and defaults, and `SET` refuses a value of the wrong type or range at once). All
 * are runtime settings: they can change in a live session.
 *
 * Spark's config builder is private to Spark's packages; the entries are declared in
 * `org.apache.spark.sql.arrnf.ArrnfSqlConf` and read here.
 */
object ArrnfConf extends Logging {
  import org.apache.spark.sql.arrnf.ArrnfSqlConf

  /** Kill switch: `false` turns every rewrite of the extension off (explain output stays). */
  val Enabled: String = ArrnfSqlConf.Enabled.key

  /** Per-rule switch: `spark.arrnf.<RuleSimpleName>.enabled`, default true. */
  def ruleEnabledKey(simpleName: String): String = ArrnfSqlConf.ruleEnabledKey(simpleName)

  /** Testing only: the simple name of a rule (or `Normalizer`) that throws instead of running (fault containment). */
  val FailRule: String = ArrnfSqlConf.FailRule.key

  /** The least share of the union of joins' estimated cost that factorizing must save (0 to 1). */
  val FactorizeMinSaving: String = ArrnfSqlConf.FactorizeMinSaving.key
  val FactorizeMinSavingDefault: Double = ArrnfSqlConf.FactorizeMinSavingDefault

  /** How many times fewer rows EagerAggregation's pre-aggregate must have than its input (0: always). */
  val EagerMinReduction: String = ArrnfSqlConf.EagerMinReduction.key

  /** Whether EagerAggregation also aggregates the other side: cost (default), never, always. */
  val EagerOtherSide: String = ArrnfSqlConf.EagerOtherSide.key

  /** Also build the ArrNF section for the plan description Spark records for every executed query
   *  (SQL tab of the UI, event log); default false. `df.explain()` always shows it. */
  val ExplainSqlUi: String = ArrnfSqlConf.ExplainSqlUi.key

  /** Registers the settings with Spark (once; any use of this object does it too). */
  def register(): Unit = ()

  def enabled(conf: SQLConf = SQLConf.get): Boolean = switch(conf, ArrnfSqlConf.enabled)

  def ruleEnabled(simpleName: String, conf: SQLConf = SQLConf.get): Boolean =
    enabled(conf) && switch(conf, ArrnfSqlConf.ruleEnabled(simpleName, _))

  def explainInSqlUi(conf: SQLConf = SQLConf.get): Boolean = switch(conf, ArrnfSqlConf.explainInSqlUi)

  /** The factorization's minimum saving; a value out of range (set before the extension registered
   *  its settings, so not checked by `SET`) throws with the message saying what to do. */
  def factorizeMinSaving(conf: SQLConf = SQLConf.get): Double = ArrnfSqlConf.factorizeMinSaving(conf)

  /** EagerAggregation's least estimated reduction; a bad value set before registration throws, saying what to do. */
  def eagerMinReduction(conf: SQLConf = SQLConf.get): Double = ArrnfSqlConf.eagerMinReduction(conf)

  /** EagerAggregation's choice for the other side: "cost", "never" or "always". */
  def eagerOtherSide(conf: SQLConf = SQLConf.get): String = ArrnfSqlConf.eagerOtherSide(conf)

  /** The rule (or `Normalizer`) that fault injection makes throw, or "". */
  def failRule(conf: SQLConf = SQLConf.get): String = ArrnfSqlConf.failRule(conf)

  /** Warns, once per key in this JVM, of a `spark.arrnf.*` key set in `conf` that is none of the
   *  extension's settings: a misspelled switch is otherwise ignored without a word (the rule it
   *  meant to turn off keeps firing). Asked once per planned query. */
  def warnUnknownSettings(conf: SQLConf = SQLConf.get): Unit =
    ArrnfSqlConf.unknownKeys(conf).foreach { key =>
      if (warnedKeys.add(key))
        logWarning(s"pyspark-arrnf: ${ArrnfSqlConf.notASetting(key, " and is ignored")} " +
          "(SET -v lists its settings, under spark.arrnf.)")
    }
  private val warnedKeys = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  /** A switch read so that a bad value never fails a query: it reads as off, with one warning per
   *  value. (`SET` checks a value once the extension has registered its settings; one given before,
   *  e.g. in spark-defaults.conf, is only seen here.) */
  private def switch(conf: SQLConf, read: SQLConf => Boolean): Boolean =
    try read(conf) catch {
      case NonFatal(e) =>
        if (warned.add(String.valueOf(e.getMessage))) {
          logWarning(s"pyspark-arrnf: ${e.getMessage}; it reads as off until it is set to true or false")
        }
        false
    }
  private val warned = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()
}
