package arrnf

import org.apache.spark.sql.catalyst.plans.logical.Union
import arrnf.guard.ArrnfStatus

/** Every ring rule: a failure inside it keeps the plan (and the result), its own switch turns it off. */
class RingRulesGuardSuite extends ArrnfSparkSuite with RingTestSupport {
  private val cases = Seq(
    "EliminateUnitJoin" -> "select t.id from range(3) t cross join (select 1 as one) u",
    "NegationCancels" -> "select id from range(9) except all select id from range(9)",
    "EliminateSelfSemiAntiJoin" -> "select id from range(9) except select id from range(9)",
    "FoldValueTerms" -> "select id - id from range(9)",
    "FoldAggregateValueTerms" -> "select id % 3 k, max(id % 3) from range(9) group by 1"
  )

  test("a throwing rule keeps the plan: same result as the rule switched off, failure counted") {
    cases.foreach { case (rule, q) =>
      val before = ArrnfStatus.failureCount(rule)
      // Planned only (no Union is executed here: see RingTestSupport); results: tests/test_ring_laws.py.
      val plan = () => withArrnf(true)(spark.sql(q).queryExecution.optimizedPlan)
      val onPlan = plan()
      spark.conf.set(ArrnfConf.FailRule, rule)
      val failPlan = try plan() finally spark.conf.unset(ArrnfConf.FailRule)
      spark.conf.set(ArrnfConf.ruleEnabledKey(rule), "false")
      val offPlan = try plan() finally spark.conf.unset(ArrnfConf.ruleEnabledKey(rule))
      assert(ArrnfStatus.failureCount(rule) > before, rule)
      assert(failPlan.canonicalized == offPlan.canonicalized, s"$rule:\n$failPlan\nvs\n$offPlan")
      assert(onPlan.canonicalized != offPlan.canonicalized, s"$rule does not fire on its guard query:\n$onPlan")
    }
  }

  test("spark.sql.optimizer.excludedRules takes the rules by name") {
    val q = "select id from range(9) except all select id from range(9)"
    spark.conf.set("spark.sql.optimizer.excludedRules", "arrnf.rules.NegationCancels")
    try assert(plansBothWays(q)._1.collect { case u: Union => u }.size == 1)
    finally spark.conf.unset("spark.sql.optimizer.excludedRules")
    assert(plansBothWays(q)._1.collect { case u: Union => u }.isEmpty)
    assert(ArrnfExtension.ruleNames.contains("arrnf.rules.NegationCancels"))
  }
}
