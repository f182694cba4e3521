package org.apache.spark.sql.arrnf

import org.apache.spark.SparkConf
import org.apache.spark.sql.internal.SQLConf
import org.scalatest.funsuite.AnyFunSuite

import arrnf.ArrnfConf

/** How the settings' checks meet Spark's own building of a session's settings (in Spark's package,
 *  as the code under test, for `SQLConf.mergeSparkConf`, which Spark keeps to itself). */
class ArrnfSqlConfSuite extends AnyFunSuite {
  test("a bad value in the settings a session starts with lets it start: a switch reads as off, a rule's number fails that rule only") {
    // What Spark runs for spark-defaults.conf, --conf and a builder's options when it builds a session.
    val started = new SQLConf
    SQLConf.mergeSparkConf(started, new SparkConf(false).set(ArrnfConf.Enabled, "maybe")
      .set(ArrnfConf.ruleEnabledKey("NegationCancels"), "sometimes").set(ArrnfConf.EagerMinReduction, "abc"))
    SQLConf.mergeNonStaticSQLConfigs(started, Map(ArrnfConf.FactorizeMinSaving -> "-5"))
    assert(started.getConfString(ArrnfConf.Enabled) == "maybe", "the value is kept as given")
    assert(!ArrnfConf.enabled(started) && !ArrnfConf.ruleEnabled("FoldValueTerms", started))
    val number = intercept[IllegalArgumentException](ArrnfConf.eagerMinReduction(started))
    assert(number.getMessage.contains(ArrnfConf.EagerMinReduction) && number.getMessage.contains("unset it (spark.conf.unset) for the default 3.0"))
    intercept[IllegalArgumentException](ArrnfConf.factorizeMinSaving(started))
    // Copies of those settings keep them: a cloned session's (a stream's, a cached plan's), the estimator's.
    assert(started.clone().getConfString(ArrnfConf.Enabled) == "maybe")
    assert(CboConf.of(started).cboEnabled && CboConf.of(started).getConfString(ArrnfConf.EagerMinReduction) == "abc")
    // SET still refuses it at once.
    intercept[IllegalArgumentException](started.setConfString(ArrnfConf.Enabled, "maybe"))
  }
}
