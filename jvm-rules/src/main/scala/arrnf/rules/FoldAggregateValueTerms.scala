package arrnf.rules

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeMap, Expression, Literal, NamedExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, AnyValue, First, Last, Max, Min}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.AGGREGATE
import org.apache.spark.sql.types._

import arrnf.catalyst.Effects

/**
 * Aggregate value terms fold: within one group, a selecting aggregate of a value that is the same
 * on every row of the group is that value.
 *
 * {{{
 *   Aggregate [k], [k, max(k) AS mk, min(3) AS three]   =>   Aggregate [k], [k, k AS mk, 3 AS three]
 * }}}
 *
 * `min`, `max`, `first`, `last`, `any_value` (either NULL handling) of `e` are `e` when `e` is a
 * literal or one of the grouping expressions (`semanticEquals`). Removing a `min`/`max` removes a
 * hierarchical reduction (16 arrangement stages in the differential cost model); when no aggregate
 * function is left, the aggregate is a plain distinct.
 *
 * When it holds: a grouped aggregate only (a global aggregate over an empty input returns one row
 * with NULL, not the literal). No FILTER clause (a group may have no row passing it: NULL). For a
 * grouping expression, grouping must mean identity, so that every row of the group carries the same
 * value and not only an equal one: integral, boolean, decimal (one scale per type), date, timestamp,
 * binary and strings with binary (non-trimming) collation; not float/double (grouping normalizes
 * -0.0/0.0 and NaNs), not case-insensitive or trimming collations ('a' and 'A' share a group), not
 * nested types. NULLs: a NULL key forms its own group whose min/max/first are NULL — the key. No
 * expression is added or evaluated more often; the dropped ones cannot raise (a literal or a key
 * already computed for grouping). Deterministic only: the grouping expression and the argument are
 * the same deterministic expression. Streaming aggregates are left alone. Errors elsewhere: the
 * folded key is an alias Spark reasons with, which may let it drop a failing part of the plan, and
 * a folded literal may make an expression above it constant, which Spark's constant folding then
 * evaluates while planning (`10 div (max(3) - 3)` over an empty table raises DIVIDE_BY_ZERO where
 * vanilla Spark returns no rows): it folds to a literal only if, once folded, no expression Spark
 * could evaluate while planning can fail, and folds at all only if, where the plan has a filter or
 * join condition, nothing in it can fail.
 */
object FoldAggregateValueTerms extends Rule[LogicalPlan] {

  // A key in place of max(key) is an alias Spark's constraint propagation reads (`m > 5 AND k < 3`
  // above becomes a contradiction, and Spark drops the aggregate's input with its errors); a literal
  // in place of min(3) makes `10 div (min(3) - 3)` a constant Spark evaluates while planning: nothing
  // is folded where either can happen to an expression that can fail (FoldValueTerms likewise).
  override def apply(plan: LogicalPlan): LogicalPlan = {
    var literal = false // min(3) folded to 3: a constant for Spark's later rules
    val folded = fold(plan, () => literal = true)
    if ((folded eq plan) || (literal && Effects.canFailOnceConstant(folded)) ||
      (Effects.hasPredicate(plan) && Effects.canFail(folded))) plan
    else folded
  }

  private def fold(plan: LogicalPlan, onLiteral: () => Unit): LogicalPlan = plan.transformUpWithPruning(_.containsPattern(AGGREGATE)) {
    // The cheap test first: most aggregates hold no min/max/first/... at all.
    case a: Aggregate if a.groupingExpressions.nonEmpty && !a.isStreaming && a.aggregateExpressions.exists(_.exists {
          case AggregateExpression(f, _, _, None, _) => selecting(f).isDefined
          case _ => false
        }) =>
      val keys = a.groupingExpressions.filter(k => k.deterministic && identityGrouping(k.dataType))
      // Spark pulls complex grouping expressions into the child (`PullOutGroupingExpressions`):
      // `max(id % 3)` over `Project [id % 3 AS _groupingexpression]` is `max` of that key too.
      // The argument is read over the child's output, the definitions over the child's input:
      // compare after putting the child's aliases into the argument.
      val (definitions, inChildTerms): (Seq[(Expression, Expression)], Expression => Expression) = a.child match {
        case Project(list, _) =>
          val aliases = AttributeMap(list.collect { case al: Alias => al.toAttribute -> al.child })
          (list.collect {
            case al: Alias if keys.exists(_.semanticEquals(al.toAttribute)) => al.child -> al.toAttribute
          }, (e: Expression) => e.transform { case at: Attribute if aliases.contains(at) => aliases(at) })
        case _ => (Nil, identity[Expression])
      }
      def valueInGroup(e: Expression): Option[Expression] = e match {
        case l: Literal => Some(l)
        case _ if !e.deterministic => None
        case _ =>
          lazy val e2 = inChildTerms(e)
          keys.find(_.semanticEquals(e)).orElse(definitions.collectFirst {
            case (d, key) if d.semanticEquals(e) || d.semanticEquals(e2) => key
          })
      }
      val newAggs = a.aggregateExpressions.map(_.transformDown {
        case AggregateExpression(f, _, _, None, _) if selecting(f).flatMap(valueInGroup).isDefined =>
          val value = selecting(f).flatMap(valueInGroup).get
          if (value.isInstanceOf[Literal]) onLiteral()
          value
      }.asInstanceOf[NamedExpression])
      if (newAggs.zip(a.aggregateExpressions).forall { case (n, o) => n eq o }) a
      else a.copy(aggregateExpressions = newAggs)
  }

  /** The argument of a selecting aggregate (one that returns one of its input values). */
  private def selecting(f: Expression): Option[Expression] = f match {
    case Min(e) => Some(e)
    case Max(e) => Some(e)
    case First(e, _) => Some(e)
    case Last(e, _) => Some(e)
    case AnyValue(e, _) => Some(e)
    case _ => None
  }

  private def identityGrouping(t: DataType): Boolean = t match {
    case ByteType | ShortType | IntegerType | LongType | BooleanType | _: DecimalType | DateType | TimestampType | TimestampNTZType => true
    case BinaryType => true
    case s: StringType => s == StringType // UTF8_BINARY, no trimming
    case _ => false
  }
}
