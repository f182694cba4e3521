package arrnf.rules

import org.apache.spark.sql.catalyst.expressions.{Alias, AttributeMap, Coalesce, Expression, If, Literal, NamedExpression, Not}
import org.apache.spark.sql.catalyst.plans.{Cross, Inner, JoinType, LeftAnti, LeftOuter, LeftSemi, RightOuter}
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.JOIN

import arrnf.catalyst.Effects

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
 * The same unit on the right of the other join types (on the left of a right outer join), with the
 * unit's columns replaced by their literal values `θ'` in the condition `θ`:
 *  - `Q ⋉θ 1 = σθ'(Q)` (left semi; `Q` without a condition) — e.g. `a IN (SELECT 3)`;
 *  - `Q ▷θ 1 = σ¬coalesce(θ',false)(Q)` (left anti; empty without a condition — then `Q` is no
 *    longer evaluated, so only where neither `Q` nor a predicate above that Spark may push onto it
 *    can fail, `Effects`);
 *  - `Q ⟕θ 1 = π[Q, if(θ', c, NULL) …](Q)` (left outer; `π[Q, c …]` without a condition), and the
 *    mirror for a right outer join with the unit on the left.
 *
 * When it holds: the unit has exactly one row and every column of it must be a `Literal`: a
 * non-deterministic expression (`rand()`) would be evaluated per row instead of once, and an
 * expression constant folding left alone may raise an error (ANSI mode) that the original plan
 * raised once or not at all. The condition is evaluated once per row of `Q` in the join and, for
 * inner, semi and anti joins, once per row of the filter after the rewrite, so the same errors are
 * raised. For an outer join it moves into the unit's padded columns, which column pruning drops when
 * nothing above reads them — and with them the condition and any column of `Q` that only the
 * condition read (`sum(x) OVER (…) >= u.c` drops the window sum, and its overflow). So an outer join
 * fires only where the condition cannot fail, nor can computing the columns of `Q` it reads
 * (`Effects`); it also needs a deterministic condition and a unit with a column. Full outer joins
 * are left alone. The output keeps the join's column order and expression ids. The law holds for
 * streaming plans as well: the join of a stream with a constant is stateless.
 */
object EliminateUnitJoin extends Rule[LogicalPlan] {

  /** The literal columns of a one-row relation, or None if `plan` is not such a relation. */
  private object UnitRelation {
    def unapply(plan: LogicalPlan): Option[Seq[Alias]] = plan match {
      case OneRowRelation() => Some(Nil)
      case Project(list, OneRowRelation()) if list.forall(isLiteralColumn) => Some(list.map(_.asInstanceOf[Alias]))
      case _ => None
    }
    private def isLiteralColumn(e: NamedExpression): Boolean = e match {
      case Alias(_: Literal, _) => true
      case _ => false
    }
  }

  // No rule id: Spark's rule-id registry knows only its own rules (it throws for others).
  override def apply(plan: LogicalPlan): LogicalPlan =
    Effects.transformUpKnowingPredicatesAbove(plan, _.containsPattern(JOIN)) {
      case (Join(left, UnitRelation(literals), joinType, condition, _), _) if isInnerOrCross(joinType) =>
        withCondition(Project(left.output ++ literals, left), condition)
      case (Join(UnitRelation(literals), right, joinType, condition, _), _) if isInnerOrCross(joinType) =>
        withCondition(Project(literals ++ right.output, right), condition)

      case (Join(left, UnitRelation(literals), LeftSemi, condition, _), _) =>
        withCondition(left, condition.map(substitute(_, literals)))
      // Without a condition the result is empty and `left` is no longer evaluated: only if neither it
      // nor a predicate Spark may push onto it can fail, and it draws no random rows (dropping an
      // unseeded sample changes how many independent draws the query makes: the random gate counts them).
      case (j @ Join(left, UnitRelation(_), LeftAnti, None, _), false) if !Effects.canFail(left) && !Effects.canVary(left) =>
        LocalRelation(j.output, Nil, isStreaming = left.isStreaming)
      case (Join(left, UnitRelation(literals), LeftAnti, Some(c), _), _) =>
        Filter(Not(Coalesce(Seq(substitute(c, literals), Literal(false)))), left)
      case (Join(left, UnitRelation(literals), LeftOuter, condition, _), _) if outerApplies(literals, condition, left) =>
        Project(left.output ++ padded(literals, condition), left)
      case (Join(UnitRelation(literals), right, RightOuter, condition, _), _) if outerApplies(literals, condition, right) =>
        Project(padded(literals, condition) ++ right.output, right)
    }

  private def isInnerOrCross(joinType: JoinType): Boolean = joinType match {
    case Inner | Cross => true
    case _ => false
  }

  private def withCondition(child: LogicalPlan, condition: Option[Expression]) =
    condition.fold(child)(Filter(_, child))

  /** The condition with the unit's columns replaced by their literal values. */
  private def substitute(condition: Expression, literals: Seq[Alias]): Expression = {
    val values = AttributeMap(literals.map(a => a.toAttribute -> a.child))
    condition.transform { case a: org.apache.spark.sql.catalyst.expressions.Attribute if values.contains(a) => values(a) }
  }

  /** Whether an outer join's condition may move into the padded columns, where pruning may drop it. */
  private def outerApplies(literals: Seq[Alias], condition: Option[Expression], kept: LogicalPlan): Boolean =
    condition.forall { c =>
      c.deterministic && literals.nonEmpty && !Effects.canFail(c) &&
        c.references.filter(kept.outputSet.contains).forall(a => !Effects.canFailToProduce(a, kept))
    }

  /** The unit's columns of an outer join: the literal where the condition holds, NULL elsewhere. */
  private def padded(literals: Seq[Alias], condition: Option[Expression]): Seq[NamedExpression] =
    condition match {
      case None => literals
      case Some(c) =>
        val cond = substitute(c, literals)
        literals.map { a =>
          Alias(If(cond, a.child, Literal(null, a.dataType)), a.name)(exprId = a.exprId, qualifier = a.qualifier)
        }
    }
}
