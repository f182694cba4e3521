package arrnf

import org.apache.spark.sql.internal.SQLConf

/** The extension's settings are Spark config entries: listed by SET -v, checked by SET, typed when read. */
class ArrnfConfSuite extends ArrnfSparkSuite {
  private val ruleKeys = ArrnfExtension.ruleNames.map(n => ArrnfConf.ruleEnabledKey(n.substring(n.lastIndexOf('.') + 1)))

  test("SET -v lists every public setting with its default and doc; the testing one stays internal") {
    val listed = spark.sql("SET -v").collect().map(r => r.getString(0) -> (r.getString(1), r.getString(2))).toMap
    val public = Seq(ArrnfConf.Enabled, ArrnfConf.FactorizeMinSaving, ArrnfConf.ExplainSqlUi) ++ ruleKeys
    public.foreach { k => assert(listed.contains(k), s"$k is not listed by SET -v") }
    assert(listed(ArrnfConf.Enabled)._1 == "true" && listed(ArrnfConf.Enabled)._2.startsWith("Kill switch"))
    assert(listed(ArrnfConf.FactorizeMinSaving)._1 == "0.1")
    assert(listed(ArrnfConf.ExplainSqlUi)._1 == "false")
    assert(!listed.contains(ArrnfConf.FailRule))
  }

  test("SET refuses a value of the wrong type or range at once, naming the setting") {
    val notBoolean = intercept[IllegalArgumentException](spark.conf.set(ArrnfConf.Enabled, "maybe"))
    assert(notBoolean.getMessage.contains(ArrnfConf.Enabled) && notBoolean.getMessage.contains("boolean"))
    val outOfRange = intercept[IllegalArgumentException](spark.conf.set(ArrnfConf.FactorizeMinSaving, "2"))
    assert(outOfRange.getMessage.contains(ArrnfConf.FactorizeMinSaving) && outOfRange.getMessage.contains("0 to 1"))
    assert(ArrnfConf.enabled() && ArrnfConf.factorizeMinSaving() == 0.1, "a refused value must not stick")
  }

  test("values read typed, whatever the case and spaces SET accepts") {
    val conf = SQLConf.get
    try {
      spark.conf.set(ArrnfConf.ruleEnabledKey("NegationCancels"), " FALSE ")
      assert(!ArrnfConf.ruleEnabled("NegationCancels", conf) && ArrnfConf.ruleEnabled("FoldValueTerms", conf))
      spark.conf.set(ArrnfConf.FactorizeMinSaving, "0.25")
      assert(ArrnfConf.factorizeMinSaving(conf) == 0.25)
      spark.conf.set(ArrnfConf.Enabled, "false")
      assert(!ArrnfConf.ruleEnabled("FoldValueTerms", conf), "the kill switch turns every rule off")
    } finally {
      Seq(ArrnfConf.ruleEnabledKey("NegationCancels"), ArrnfConf.FactorizeMinSaving, ArrnfConf.Enabled).foreach(spark.conf.unset)
    }
  }

  test("a bad switch value that got past SET (set before the settings were registered) reads as off, not as a failure") {
    val conf = SQLConf.get.clone()
    conf.setConfString("spark.arrnf.NoSuchRule.enabled", "maybe") // no entry checks this key
    assert(!ArrnfConf.ruleEnabled("NoSuchRule", conf))
  }
}

/** A misspelled setting would be ignored without a word: the next planned query warns of it, once. */
class ArrnfUnknownSettingsSuite extends ArrnfSparkSuite {
  import org.apache.logging.log4j.LogManager
  import org.apache.logging.log4j.core.{appender, layout}

  /** What is logged while `body` runs (on the root logger, as Spark's own suites capture logs). */
  private def warnings(body: => Unit): String = {
    val out = new java.io.StringWriter
    val sink = appender.WriterAppender.createAppender(layout.PatternLayout.newBuilder().withPattern("%m%n").build(),
      null, out, "arrnf-settings-test", false, true)
    sink.start()
    val root = LogManager.getRootLogger.asInstanceOf[org.apache.logging.log4j.core.Logger]
    root.addAppender(sink)
    try body finally { root.removeAppender(sink); sink.stop() }
    out.toString
  }

  private def plan(): Unit = spark.range(10).join(spark.range(5), "id").groupBy("id").count().queryExecution.optimizedPlan

  test("a spark.arrnf.* key that is no setting is warned of once, with the setting it probably meant") {
    val typo = "spark.arrnf.EagerAggregation.enable" // (".enabled")
    val wrongCase = "spark.arrnf.explain.sqlUI"
    try {
      spark.conf.set(typo, "false")
      spark.conf.set(wrongCase, "true")
      val first = warnings(plan())
      assert(first.contains(s"$typo is not a setting of pyspark-arrnf and is ignored; did you mean spark.arrnf.EagerAggregation.enabled?"), first)
      assert(first.contains(s"$wrongCase is not a setting of pyspark-arrnf and is ignored; did you mean spark.arrnf.explain.sqlUi?"), first)
      assert(!warnings(plan()).contains(typo), "warned again")
    } finally Seq(typo, wrongCase).foreach(spark.conf.unset)
  }

  test("the extension's own settings, set, are not warned of") {
    val keys = Seq(ArrnfConf.Enabled, ArrnfConf.ruleEnabledKey("EagerAggregation"), ArrnfConf.EagerMinReduction,
      ArrnfConf.EagerOtherSide, ArrnfConf.FactorizeMinSaving, ArrnfConf.ExplainSqlUi, "spark.arrnf.statistics.maxFooterFiles")
    try {
      spark.conf.set(ArrnfConf.Enabled, "true"); spark.conf.set(ArrnfConf.ruleEnabledKey("EagerAggregation"), "true")
      spark.conf.set(ArrnfConf.EagerMinReduction, "3"); spark.conf.set(ArrnfConf.EagerOtherSide, "cost")
      spark.conf.set(ArrnfConf.FactorizeMinSaving, "0.1"); spark.conf.set(ArrnfConf.ExplainSqlUi, "false")
      spark.conf.set("spark.arrnf.statistics.maxFooterFiles", "256")
      val said = warnings(plan())
      assert(!said.contains("is not a setting"), said)
    } finally keys.foreach(spark.conf.unset)
  }
}
