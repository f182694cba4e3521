package arrnf.rules

import scala.collection.mutable

import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.analysis.SimpleAnalyzer
import org.apache.spark.sql.catalyst.expressions.{Alias, AttributeReference, ExprId}
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.{Rule, RuleExecutor}
import org.apache.spark.sql.catalyst.util.sideBySide
import org.apache.spark.sql.internal.SQLConf
import org.scalatest.funsuite.AnyFunSuite

import arrnf.ArrnfConf

/**
 * Plan-level rule tests in the style of Catalyst's optimizer suites: a small [[RuleExecutor]] with
 * the rule under test (and the few Spark rules it needs around it), input and expected plans built
 * with Catalyst's DSL, and [[comparePlans]].
 *
 * Only the rule objects, `ArrnfConf`'s keys and Spark classes are referenced (the other main
 * classes may move). The switch test reaches the rule as Spark registers it through the class that
 * `spark.sql.extensions` names (see README), by that documented name.
 */
trait RulePlanTest extends AnyFunSuite {
  import RulePlanTest.TestBatch

  // ---- running rules ----------------------------------------------------------------------------

  def fixedPoint(rules: Rule[LogicalPlan]*): TestBatch = TestBatch("fixed point", once = false, rules: _*)
  def once(rules: Rule[LogicalPlan]*): TestBatch = TestBatch("once", once = true, rules: _*)

  /** A RuleExecutor running `testBatches` in order. */
  def executor(testBatches: TestBatch*): RuleExecutor[LogicalPlan] = new RuleExecutor[LogicalPlan] {
    override protected def batches: Seq[Batch] = testBatches.zipWithIndex.map { case (b, i) =>
      Batch(s"${b.name} #$i", if (b.once) Once else FixedPoint(100), b.rules: _*)
    }
  }

  /** `plan` after `rule` ran to a fixed point in a one-batch executor. */
  def optimize(rule: Rule[LogicalPlan], plan: LogicalPlan): LogicalPlan = executor(fixedPoint(rule)).execute(plan)

  // ---- comparing plans --------------------------------------------------------------------------

  /**
   * `plan` with expression ids renumbered 0, 1, 2, … in order of first appearance (nodes in
   * pre-order, each node's expressions in order), qualifiers dropped. Unlike setting every id to 0,
   * this keeps which reference points to which definition: two plans are equal after it exactly
   * when one is the other with its ids consistently renamed.
   */
  def normalizeExprIds(plan: LogicalPlan): LogicalPlan = {
    val ids = mutable.HashMap.empty[ExprId, ExprId]
    def id(e: ExprId): ExprId = ids.getOrElseUpdate(e, ExprId(ids.size.toLong))
    plan.transformDown { case node =>
      node.transformExpressionsDown {
        case a: AttributeReference => AttributeReference(a.name, a.dataType, a.nullable)(exprId = id(a.exprId))
        case a: Alias => Alias(a.child, a.name)(exprId = id(a.exprId))
        case ae: AggregateExpression => ae.copy(resultId = id(ae.resultId))
      }
    }
  }

  /** Non-nullable attributes shown as `*name`, so that a nullability difference is visible. */
  private def showNullability(plan: LogicalPlan): LogicalPlan = plan.transformAllExpressions {
    case a @ AttributeReference(name, _, false, _) => a.withName(s"*$name")
  }

  /** Fails, showing both plans side by side, unless `actual` and `expected` are equal up to expression ids. */
  def comparePlans(actual: LogicalPlan, expected: LogicalPlan, checkAnalysis: Boolean = true): Unit = {
    if (checkAnalysis) {
      // Dangling references, unresolved expressions, invalid aggregates: on both sides.
      SimpleAnalyzer.checkAnalysis(actual)
      SimpleAnalyzer.checkAnalysis(expected)
    }
    val (n1, n2) = (normalizeExprIds(actual), normalizeExprIds(expected))
    if (n1 != n2) {
      fail(
        s"""
           |== Plans do not match (expression ids renumbered; *name: not nullable) ==
           |${sideBySide("actual:\n" + showNullability(n1).treeString, "expected:\n" + showNullability(n2).treeString).mkString("\n")}
           |== actual, as is ==
           |${actual.treeString}
           |== expected, as is ==
           |${expected.treeString}""".stripMargin)
    }
  }

  /** The rule kept the expression ids (and names and types) of the plan's output. */
  def assertSameOutput(actual: LogicalPlan, input: LogicalPlan): Unit = {
    def sig(p: LogicalPlan) = p.output.map(a => (a.exprId, a.name, a.dataType))
    assert(sig(actual) == sig(input), s"output changed:\n${actual.treeString}\ninput:\n${input.treeString}")
  }

  // ---- settings ---------------------------------------------------------------------------------

  /** Runs `body` with `SQLConf.get` entries set, restoring (or unsetting) each afterwards. */
  def withConf[T](pairs: (String, String)*)(body: => T): T = {
    val conf = SQLConf.get
    val saved = pairs.map { case (k, _) => k -> (if (conf.contains(k)) Some(conf.getConfString(k)) else None) }
    pairs.foreach { case (k, v) => conf.setConfString(k, v) }
    try body
    finally saved.foreach {
      case (k, Some(v)) => conf.setConfString(k, v)
      case (k, None) => conf.unsetConf(k)
    }
  }

  // ---- the switch -------------------------------------------------------------------------------

  /** What `spark.sql.extensions` names to register the rules (the README's public name). */
  val ExtensionClassName = "arrnf.ArrnfExtension"

  /**
   * `rule` as Spark registers it: built by the extension class, as Spark builds it, so with the
   * wrapper that reads `spark.arrnf.enabled` and `spark.arrnf.<Rule>.enabled` (the rule objects
   * themselves do not read them). The builders ignore their session.
   */
  def registered(rule: Rule[LogicalPlan]): Rule[LogicalPlan] = {
    val built = mutable.ArrayBuffer.empty[Rule[LogicalPlan]]
    val extensions = new SparkSessionExtensions {
      override def injectOptimizerRule(builder: SparkSession => Rule[LogicalPlan]): Unit = built += builder(null)
      override def injectPreCBORule(builder: SparkSession => Rule[LogicalPlan]): Unit = built += builder(null)
    }
    Class.forName(ExtensionClassName).getConstructor().newInstance()
      .asInstanceOf[SparkSessionExtensions => Unit](extensions)
    built.find(_.ruleName == rule.ruleName).getOrElse(
      fail(s"$ExtensionClassName registers no rule named ${rule.ruleName}: ${built.map(_.ruleName)}"))
  }

  private def simpleName(rule: Rule[LogicalPlan]) = rule.ruleName.substring(rule.ruleName.lastIndexOf('.') + 1)

  /**
   * The registered `rule` rewrites `input` into `expected`, and leaves it unchanged with its own
   * switch `spark.arrnf.<Rule>.enabled=false` and with `spark.arrnf.enabled=false`. `run` runs a
   * rule over a plan (default: to a fixed point).
   */
  def assertSwitches(rule: Rule[LogicalPlan], input: LogicalPlan, expected: LogicalPlan,
                     run: (Rule[LogicalPlan], LogicalPlan) => LogicalPlan = optimize): Unit = {
    val guarded = registered(rule)
    assert(guarded.ruleName == rule.ruleName)
    comparePlans(run(guarded, input), expected)
    withConf(ArrnfConf.ruleEnabledKey(simpleName(rule)) -> "false") {
      comparePlans(run(guarded, input), input)
    }
    withConf(ArrnfConf.Enabled -> "false") {
      comparePlans(run(guarded, input), input)
    }
    // Switched back on: fires again (the settings were restored).
    comparePlans(run(guarded, input), expected)
  }
}

object RulePlanTest {
  /** One batch of a test executor: `once` runs its rules once (and Spark, testing, checks that the
   *  batch is idempotent); otherwise to a fixed point, as in Spark's operator-optimization batches. */
  final case class TestBatch(name: String, once: Boolean, rules: Rule[LogicalPlan]*)
}
