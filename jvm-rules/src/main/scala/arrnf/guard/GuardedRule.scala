package arrnf.guard

import arrnf.ArrnfConf

import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule

/**
 * Wraps one of the extension's rules so that it can never break a user's query.
 *
 *  - off when `spark.arrnf.enabled` or `spark.arrnf.<Rule>.enabled` is false (read on every call,
 *    so both switch in a live session);
 *  - an exception inside the rule keeps the plan the rule was given, logs a warning naming the rule
 *    and counts the failure ([[ArrnfStatus.failures]]).
 *
 * The wrapper carries the inner rule's name, so `spark.sql.optimizer.excludedRules` and Spark's
 * rule-effectiveness metrics see `arrnf.rules.<Rule>`, not the wrapper.
 *
 * `checksSettings`: this wrapper (one rule run once per query) also warns of misspelled
 * `spark.arrnf.*` keys ([[ArrnfConf.warnUnknownSettings]]).
 */
final class GuardedRule(val inner: Rule[LogicalPlan], checksSettings: Boolean = false) extends Rule[LogicalPlan] with Logging {
  override val ruleName: String = inner.ruleName
  private val simpleName = ruleName.substring(ruleName.lastIndexOf('.') + 1)

  override def apply(plan: LogicalPlan): LogicalPlan = {
    if (checksSettings) ArrnfConf.warnUnknownSettings(conf)
    if (!ArrnfConf.ruleEnabled(simpleName, conf)) return plan
    try {
      if (ArrnfConf.failRule(conf) == simpleName) {
        throw new IllegalStateException(s"failure injected into $simpleName (${ArrnfConf.FailRule})")
      }
      inner(plan)
    } catch {
      // A bad value of one of its settings (given at session start, where SET's check does not run):
      // said once per value, as the user's to mend; the rule is skipped while it stays.
      case e: org.apache.spark.sql.arrnf.ArrnfSqlConf.BadSetting =>
        ArrnfStatus.recordFailure(simpleName)
        if (GuardedRule.badSettings.add(e.getMessage)) logWarning(s"pyspark-arrnf: rule $ruleName is skipped, the query keeps its " +
          s"plan: ${e.getMessage}")
        plan
      // A rule's recursion may overflow the stack on a very deep plan: the plan is kept as well.
      case e @ DeepStack.Contained() =>
        ArrnfStatus.recordFailure(simpleName)
        logWarning(s"pyspark-arrnf: rule $ruleName failed and was skipped; the query keeps the plan it " +
          s"had before the rule. Turn it off with ${ArrnfConf.ruleEnabledKey(simpleName)}=false. Cause: $e")
        plan
    }
  }
}

object GuardedRule {
  // Bad setting values already warned of in this JVM (each session's optimizer has its own wrappers).
  private val badSettings = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()
}
