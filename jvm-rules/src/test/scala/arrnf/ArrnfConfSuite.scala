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
