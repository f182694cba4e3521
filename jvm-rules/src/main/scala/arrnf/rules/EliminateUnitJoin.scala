package arrnf.rules

import org.apache.spark.sql.catalyst.expressions.{Alias, Expression, Literal, NamedExpression}
import org.apache.spark.sql.catalyst.plans.{Cross, Inner, JoinType}
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.JOIN

/**
 * One is the identity of the product: `Q ⋈ 1 = Q`.
 *
 * A one-row relation whose columns are all literals (`OneRowRelation`, or a `Project` of literals
 * over it) contributes exactly one tuple to every output row of an inner or cross join, so the join
 * is its other input with the literals appended as columns and the join condition kept as a filter:
 *
 * {{{
 *   Join Cross                           Project [id#0, 1 AS one#2]
 *   :- Range (0, 10)            =>       +- Range (0, 10)
 *   +- Project [1 AS one#2]
 *      +- OneRowRelation
 * }}}
 *
 * When it holds: inner or cross joins only (an outer join pads with NULLs when the condition
 * fails; a semi/anti join is a different law). Every column of the unit side must be a `Literal`:
 * a non-deterministic expression (`rand()`) would be evaluated per row instead of once, and an
 * expression constant folding left alone may raise an error (ANSI mode) that the original plan
 * raised once or not at all. The output keeps the join's column order and expression ids. The law
 * holds for streaming plans as well: the join of a stream with a constant is stateless.
 */
object EliminateUnitJoin extends Rule[LogicalPlan] {

  /** The literal columns of a one-row relation, or None if `plan` is not such a relation. */
  private object UnitRelation {
    def unapply(plan: LogicalPlan): Option[Seq[NamedExpression]] = plan match {
      case OneRowRelation() => Some(Nil)
      case Project(list, OneRowRelation()) if list.forall(isLiteralColumn) => Some(list)
      case _ => None
    }
    private def isLiteralColumn(e: NamedExpression): Boolean = e match {
      case Alias(_: Literal, _) => true
      case _ => false
    }
  }

  // No rule id: Spark's rule-id registry knows only its own rules (it throws for others).
  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformUpWithPruning(_.containsPattern(JOIN)) {
    case Join(left, UnitRelation(literals), joinType, condition, _) if isInnerOrCross(joinType) =>
      withCondition(Project(left.output ++ literals, left), condition)
    case Join(UnitRelation(literals), right, joinType, condition, _) if isInnerOrCross(joinType) =>
      withCondition(Project(literals ++ right.output, right), condition)
  }

  private def isInnerOrCross(joinType: JoinType): Boolean = joinType match {
    case Inner | Cross => true
    case _ => false
  }

  private def withCondition(child: LogicalPlan, condition: Option[Expression]) =
    condition.fold(child)(Filter(_, child))
}
