package arrnf.rules

import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, EqualNullSafe, EqualTo, Expression, NamedExpression}
import org.apache.spark.sql.catalyst.plans.{LeftAnti, LeftSemi}
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.LEFT_SEMI_OR_ANTI_JOIN

import arrnf.catalyst.{Effects, Patterns, SameResult}

/**
 * Negation cancels for sets: `X ▷ X = ∅` and `X ⋉ X = X` — so `Q EXCEPT Q` is empty and
 * `Q INTERSECT Q` is `DISTINCT Q`.
 *
 * Spark replaces `EXCEPT` / `INTERSECT` (DISTINCT) early by a left-anti / left-semi join on
 * null-safe equality of all columns (`ReplaceExceptWithAntiJoin`, `ReplaceIntersectWithSemiJoin`);
 * this rule sees that join in the operator-optimization batch:
 *
 * {{{
 *   Aggregate [a], [a]                              Aggregate [a], [a]
 *   +- Join LeftAnti, (id <=> a')            =>     +- LocalRelation <empty>, [id]
 *      :- Range (0, 20)
 *      +- Project [id' AS a'] +- Range (0, 20)
 * }}}
 *
 * When it holds: both inputs, seen through a projection that only renames columns, have the same
 * result (`sameResult` on canonicalized plans, never `==`) and cannot vary (`Effects.canVary`: no
 * non-deterministic expression, unseeded sample or RDD that draws random numbers), so every row of
 * the left input has a twin in the right one. The join condition must hold between a row and its twin:
 * without a condition any row matches; otherwise every conjunct must compare the same underlying
 * column on both sides, by `<=>` (true for NULLs too) or by `=` on a non-nullable column. Then every
 * left row matches: the anti join keeps none, the semi join keeps all (once each, as semi joins do).
 * ANSI: no expression is added; the dropped condition is null-safe equality of columns, which
 * cannot raise. The input must be unable to fail (`Effects.canFail`): the anti join's rewrite
 * evaluates neither side (`Q EXCEPT Q` with `10 DIV (k-3)` in Q raises DIVIDE_BY_ZERO and still
 * does), and the semi join's drops the right side, which vanilla Spark evaluates whole even where
 * a limit stops reading the left. Nor may a predicate above that can fail (Spark pushes it into
 * both inputs, where vanilla Spark raises its error). Collations need no test: a row always equals its own twin, and
 * the semi join's rewrite keeps the left rows in their order. Streaming plans are left alone.
 */
object EliminateSelfSemiAntiJoin extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan =
    Effects.transformUpKnowingPredicatesAbove(plan, _.containsPattern(LEFT_SEMI_OR_ANTI_JOIN)) {
      case (j @ Join(left, right, LeftAnti, cond, _), false) if twins(left, right, cond) =>
        LocalRelation(j.output, Nil, isStreaming = false)
      case (Join(left, right, LeftSemi, cond, _), false) if twins(left, right, cond) =>
        left
    }

  /** A plan seen through a renaming projection: its base plan and, per output column, the base column's position. */
  private def positions(p: LogicalPlan): (LogicalPlan, Map[Long, Int]) = {
    val (base, sources) = p match {
      case Project(list, child) if list.forall(isRename) => (child, list.map(source))
      case other => (other, other.output)
    }
    val pos = p.output.zip(sources).map { case (out, src) =>
      out.exprId.id -> base.output.indexWhere(_.exprId == src.exprId)
    }.toMap
    (base, pos)
  }

  private def isRename(e: NamedExpression): Boolean = e match {
    case _: Attribute => true
    case Alias(_: Attribute, _) => true
    case _ => false
  }

  private def source(e: NamedExpression): Attribute = e match {
    case a: Attribute => a
    case Alias(a: Attribute, _) => a
    case other => throw new IllegalArgumentException(s"not a rename: $other")
  }

  private def twins(left: LogicalPlan, right: LogicalPlan, cond: Option[Expression]): Boolean = {
    if (left.isStreaming || right.isStreaming) return false
    val (lBase, lPos) = positions(left)
    val (rBase, rPos) = positions(right)
    if (!SameResult(lBase, rBase)) return false
    if (Effects.canVary(lBase) || Effects.canVary(rBase) || Effects.canFail(lBase)) return false
    def sameColumn(a: Attribute, b: Attribute): Boolean = {
      val (l, r) = if (lPos.contains(a.exprId.id)) (a, b) else (b, a)
      (lPos.get(l.exprId.id), rPos.get(r.exprId.id)) match {
        case (Some(i), Some(k)) => i >= 0 && i == k
        case _ => false
      }
    }
    cond.forall(c => Patterns.splitConjuncts(c).forall {
      case EqualNullSafe(a: Attribute, b: Attribute) => sameColumn(a, b)
      case EqualTo(a: Attribute, b: Attribute) => !a.nullable && !b.nullable && sameColumn(a, b)
      case _ => false
    })
  }
}
