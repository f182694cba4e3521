package org.apache.spark.sql.arrnf

import org.apache.spark.internal.Logging
import org.apache.spark.internal.config.{ConfigEntry, TypedConfigBuilder}
import org.apache.spark.sql.internal.SQLConf

/**
 * pyspark-arrnf's settings as Spark SQL config entries, registered with `SQLConf` when this object
 * is first used (the extension touches it when Spark loads it). In Spark's package because Spark's
 * `ConfigBuilder` is private to it; the rest of the extension reads them through `arrnf.ArrnfConf`.
 */
object ArrnfSqlConf extends Logging {
  private val Since = "0.1.0"

  /** Spark checks a registered setting's value wherever it is set: at `SET`, which refuses a bad one
   *  at once, and while it builds a session's settings (spark-defaults.conf, `--conf`, a builder's
   *  options, every new session of a Connect server) or copies them, where a throw fails every query
   *  of the session, Spark's own included. There a bad value is let in with a warning, and read later as `readAs` says:
   *  a switch as off, a rule's number failing only that rule (skipped, with a warning). */
  private implicit class TolerantAtSessionStart[T](b: TypedConfigBuilder[T]) {
    def tolerantAtSessionStart(default: T, readAs: String): TypedConfigBuilder[T] = {
      val strict = b.converter
      new TypedConfigBuilder[T](b.parent, (v: String) => try strict(v) catch {
        case e: IllegalArgumentException if buildingSessionSettings =>
          val warning = s"pyspark-arrnf: ${b.parent.key}='$v' is not a value it takes (${e.getMessage.trim}); " +
            s"let in so that the session starts: $readAs"
          if (warned.add(warning)) logWarning(warning) // once, though each new session merges it again
          default
      }, b.stringConverter)
    }
  }

  private def buildingSessionSettings: Boolean =
    StackWalker.getInstance().walk((frames: java.util.stream.Stream[StackWalker.StackFrame]) =>
      java.lang.Boolean.valueOf(frames.anyMatch(f => SessionCopies((f.getClassName, f.getMethodName))))).booleanValue
  // Spark's merges of a new session's settings, and its copy of a session's (a cloned session: a
  // stream's, a cached plan's), which must not fail on a value the session already holds.
  private val SessionCopies = Set(("org.apache.spark.sql.internal.SQLConf$", "mergeSparkConf"),
    ("org.apache.spark.sql.internal.SQLConf$", "mergeNonStaticSQLConfigs"), ("org.apache.spark.sql.internal.SQLConf", "clone"))
  private val warned = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  private val SwitchReadAs = "it reads as off until it is SET to true or false"
  private val RuleNumberReadAs = "the rule reading it is skipped, with a warning, until it is SET right or unset"

  val Enabled: ConfigEntry[Boolean] = SQLConf.buildConf("spark.arrnf.enabled")
    .doc("Kill switch of pyspark-arrnf: false turns every rewrite of the extension off (the ArrNF " +
      "explain section stays). A runtime setting.")
    .version(Since)
    .booleanConf
    .tolerantAtSessionStart(true, SwitchReadAs)
    .createWithDefault(true)

  /** The rules' simple names, each with its own switch. */
  val RuleNames: Seq[String] = arrnf.ArrnfExtension.ruleNames.map(n => n.substring(n.lastIndexOf('.') + 1))

  def ruleEnabledKey(simpleName: String): String = s"spark.arrnf.$simpleName.enabled"

  private val ruleSwitches: Map[String, ConfigEntry[Boolean]] = RuleNames.map { r =>
    r -> SQLConf.buildConf(ruleEnabledKey(r))
      .doc(s"Switch of pyspark-arrnf's rule $r (arrnf.rules.$r); off also when spark.arrnf.enabled is false.")
      .version(Since)
      .booleanConf
      .tolerantAtSessionStart(true, SwitchReadAs)
      .createWithDefault(true)
  }.toMap

  val FactorizeMinSavingDefault = 0.1

  val FactorizeMinSaving: ConfigEntry[Double] = SQLConf.buildConf("spark.arrnf.FactorizeUnionOfJoins.minSaving")
    .doc("The least share (0 to 1) of a UNION ALL of joins' estimated cost that factorizing it must " +
      "save; below it FactorizeUnionOfJoins declines and says why.")
    .version(Since)
    .doubleConf
    .checkValue(v => v >= 0 && v <= 1, "must be a number from 0 to 1 (a share of the estimated cost)")
    .tolerantAtSessionStart(FactorizeMinSavingDefault, RuleNumberReadAs)
    .createWithDefault(FactorizeMinSavingDefault)

  val EagerMinReductionDefault = 3.0

  val EagerMinReduction: ConfigEntry[Double] = SQLConf.buildConf("spark.arrnf.EagerAggregation.minReduction")
    .doc("How many times fewer rows EagerAggregation's pre-aggregate must be estimated to have than " +
      "its input before it fires (1 or more; the estimates come from the statistics at hand, and " +
      "where they are unknown the rule does not fire). 0 fires wherever the law holds, without " +
      "estimates (for tests).")
    .version(Since)
    .doubleConf
    .checkValue(v => v == 0 || (v >= 1 && !v.isInfinite), "must be 0 (fire wherever the law holds) or a finite factor of 1 or more")
    .tolerantAtSessionStart(EagerMinReductionDefault, RuleNumberReadAs)
    .createWithDefault(EagerMinReductionDefault)

  def eagerMinReduction(conf: SQLConf): Double = checked(conf, EagerMinReduction, "0 or a finite factor of 1 or more")

  val EagerOtherSideDefault = "cost"

  val EagerOtherSide: ConfigEntry[String] = SQLConf.buildConf("spark.arrnf.EagerAggregation.otherSide")
    .doc("Whether EagerAggregation also aggregates the other side of the join (by its join keys and " +
      "grouping columns, counting its rows, each part multiplied by that count): 'cost' where that is " +
      "estimated to reduce its rows spark.arrnf.EagerAggregation.minReduction times (and at all), " +
      "'never', or 'always' wherever the law holds (for tests).")
    .version(Since)
    .stringConf
    .transform(_.toLowerCase(java.util.Locale.ROOT))
    .checkValues(Set("cost", "never", "always"))
    .tolerantAtSessionStart(EagerOtherSideDefault, RuleNumberReadAs)
    .createWithDefault(EagerOtherSideDefault)

  def eagerOtherSide(conf: SQLConf): String = checked(conf, EagerOtherSide, "cost, never or always")

  val ExplainSqlUi: ConfigEntry[Boolean] = SQLConf.buildConf("spark.arrnf.explain.sqlUi")
    .doc("Also build the ArrNF section for the plan description Spark records for every executed " +
      "query (SQL tab of the UI, event log). df.explain() always shows it.")
    .version(Since)
    .booleanConf
    .tolerantAtSessionStart(false, SwitchReadAs)
    .createWithDefault(false)

  val MaxFooterFilesDefault = 256

  val MaxFooterFiles: ConfigEntry[Int] = SQLConf.buildConf("spark.arrnf.statistics.maxFooterFiles")
    .doc("The most Parquet footers ArrNF reads for one relation's exact row count while explaining a " +
      "plan (footers already read, of files unchanged since, are free). A relation with more unread " +
      "files gets no row count from file metadata (it says so); on object stores each footer is a request.")
    .version(Since)
    .intConf
    .checkValue(_ >= 0, "must be 0 or more (0: read no footers)")
    .tolerantAtSessionStart(MaxFooterFilesDefault, s"it reads as its default, $MaxFooterFilesDefault")
    .createWithDefault(MaxFooterFilesDefault)

  def maxFooterFiles(conf: SQLConf): Int =
    try conf.getConf(MaxFooterFiles) catch { case _: IllegalArgumentException => MaxFooterFilesDefault }

  val FailRule: ConfigEntry[String] = SQLConf.buildConf("spark.arrnf.testing.failRule")
    .internal()
    .doc("Testing only: the simple name of a rule, or Normalizer, that throws instead of running " +
      "(the fault-containment tests).")
    .version(Since)
    .stringConf
    .createWithDefault("")

  /** Every key of pyspark-arrnf's settings. */
  lazy val Keys: Set[String] =
    (Seq(Enabled, FactorizeMinSaving, EagerMinReduction, EagerOtherSide, ExplainSqlUi, MaxFooterFiles, FailRule) ++
      ruleSwitches.values).map(_.key).toSet

  /** The keys under `spark.arrnf.` set in `conf` that are none of its settings (misspelled: nothing reads them). */
  def unknownKeys(conf: SQLConf): Seq[String] = {
    val settings = conf.settings // (Spark's synchronized map: iterated while holding its lock)
    settings.synchronized {
      val it = settings.keySet.iterator
      var found = List.empty[String]
      while (it.hasNext) {
        val k = it.next()
        if (k.startsWith("spark.arrnf.") && !Keys.contains(k)) found ::= k
      }
      found
    }
  }

  /** Why `key` (under `spark.arrnf.`) is none of the settings, with `consequence` (" and is
   *  ignored") and the setting it probably meant. */
  def notASetting(key: String, consequence: String = ""): String =
    s"$key is not a setting of pyspark-arrnf$consequence" + nearestKey(key).fold("")(k => s"; did you mean $k?")

  /** The setting `key` was probably meant to be: one differing in case only, else the nearest
   *  within three edits. */
  def nearestKey(key: String): Option[String] = Keys.find(_.equalsIgnoreCase(key)).orElse {
    val distance = org.apache.commons.text.similarity.LevenshteinDistance.getDefaultInstance
    Keys.toSeq.map(k => k -> distance.apply(k, key).intValue).filter(_._2 <= 3).sortBy(_._2).headOption.map(_._1)
  }

  def enabled(conf: SQLConf): Boolean = conf.getConf(Enabled)

  /** A rule's switch; a name without an entry (a rule added without one) reads its key as a boolean. */
  def ruleEnabled(simpleName: String, conf: SQLConf): Boolean = ruleSwitches.get(simpleName) match {
    case Some(e) => conf.getConf(e)
    case None => conf.getConfString(ruleEnabledKey(simpleName), "true").trim.toBoolean
  }

  def explainInSqlUi(conf: SQLConf): Boolean = conf.getConf(ExplainSqlUi)

  def failRule(conf: SQLConf): String = conf.getConf(FailRule)

  /** The minimum saving; a bad value set before the entries were registered throws, saying what to do. */
  def factorizeMinSaving(conf: SQLConf): Double =
    checked(conf, FactorizeMinSaving, "a number from 0 to 1 (a share of the estimated cost)")

  /** `entry`'s value; one set before the extension registered its settings (so not checked by `SET`)
   *  and out of range throws, saying what the setting takes and how to get its default. */
  private def checked[T](conf: SQLConf, entry: ConfigEntry[T], takes: String): T =
    try conf.getConf(entry) catch {
      case e: IllegalArgumentException =>
        // (SQL RESET puts back the value the session started with: the bad one)
        throw new BadSetting(s"${entry.key}='${conf.getConfString(entry.key, "")}' is not a value it takes: it must be " +
          s"$takes. SET it right, or unset it (spark.conf.unset) for the default ${entry.defaultValueString}", e)
    }

  /** A setting whose value the rule reading it cannot take: the user's to mend, not the rule's failure. */
  final class BadSetting(message: String, cause: Throwable) extends IllegalArgumentException(message, cause)
}
