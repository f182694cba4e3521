package arrnf.rules

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.Inner
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.types.DataTypeUtils

import arrnf.catalyst.Effects

/**
 * One UNION ALL branch seen as an inner-join graph: its join inputs (`leaves`), the conjuncts of
 * its join conditions and filters, and one expression per output column, all over the leaves'
 * attributes (aliases of intermediate projections substituted).
 */
private[rules] final case class FlatBranch(
    plan: LogicalPlan,
    leaves: IndexedSeq[LogicalPlan],
    conds: Seq[Expression],
    outputs: Seq[Expression])

private[rules] object FlatBranch {
  private case class Flat(leaves: IndexedSeq[LogicalPlan], conds: Seq[Expression], out: Seq[Expression])

  /** A branch that is a (projection/filter over a) chain of at least two inner-joined inputs. */
  def of(plan: LogicalPlan): Option[FlatBranch] = {
    val flat = plan match {
      // The branch's own projection may hold any deterministic expression: each one either stays
      // above the new join (evaluated on the same rows) or moves below it only if it cannot fail.
      case Project(list, child) if list.forall(_.deterministic) =>
        inner(child).map { f =>
          val m = AttributeMap(child.output.zip(f.out))
          f.copy(out = list.map(e => subst(stripAlias(e), m)))
        }
      case other => inner(other)
    }
    flat.filter(_.leaves.size >= 2).map(f => FlatBranch(plan, f.leaves, f.conds, f.out))
  }

  private def leaf(p: LogicalPlan) = Flat(IndexedSeq(p), Nil, p.output)

  private def inner(p: LogicalPlan): Option[Flat] = p match {
    case j @ Join(l, r, Inner, cond, JoinHint.NONE)
        if j.getTagValue(FactorizeUnionOfJoins.Tag).isEmpty && cond.forall(_.deterministic) =>
      val fl = inner(l).getOrElse(leaf(l))
      val fr = inner(r).getOrElse(leaf(r))
      val out = fl.out ++ fr.out
      val m = AttributeMap((l.output ++ r.output).zip(out))
      val cs = cond.toSeq.flatMap(PredicateHelperAccess.split).map(subst(_, m))
      Some(Flat(fl.leaves ++ fr.leaves, fl.conds ++ fr.conds ++ cs, out))
    case Filter(c, child) if c.deterministic =>
      inner(child).map { f =>
        val m = AttributeMap(child.output.zip(f.out))
        f.copy(conds = f.conds ++ PredicateHelperAccess.split(c).map(subst(_, m)))
      }
    // A projection inside the chain is looked through only when its expressions cannot fail:
    // after the rewrite they may be evaluated at another height of the join tree.
    case Project(list, child) if list.forall(e => e.deterministic && !Effects.canFail(e)) =>
      inner(child).map { f =>
        val m = AttributeMap(child.output.zip(f.out))
        f.copy(out = list.map(e => subst(stripAlias(e), m)))
      }
    case _ => None
  }

  private def stripAlias(e: Expression): Expression = e match {
    case a: Alias => a.child
    case other => other
  }

  private def subst(e: Expression, m: AttributeMap[Expression]): Expression = e.transformUp {
    case a: Attribute if m.contains(a) => m(a)
  }

  /** A leaf without attribute-only projections on top: leaves are matched on this. */
  def core(p: LogicalPlan): LogicalPlan = p match {
    case Project(list, child) if list.forall(_.isInstanceOf[Attribute]) => core(child)
    case other => other
  }
}

private[rules] object PredicateHelperAccess extends PredicateHelper {
  def split(e: Expression): Seq[Expression] = splitConjunctivePredicates(e)
}

/**
 * Matches one branch's expression against the reference branch's, position by position: the same
 * operators and literals, A's attributes at the same positions of A's output, and the reference's
 * B-side attributes mapped consistently to this branch's B-side attributes of the same type.
 */
private[rules] final class Unifier(
    refA: AttributeMap[Int], refB: AttributeSet, thisA: AttributeMap[Int], thisB: AttributeSet) {
  /** Reference B attribute -> this branch's expression for it, in order of first use. */
  val slots: mutable.LinkedHashMap[ExprId, (Attribute, Attribute)] = mutable.LinkedHashMap.empty

  def unify(e0: Expression, ei: Expression): Boolean = attempt(go(e0, ei))

  private def attempt(f: => Boolean): Boolean = {
    val saved = slots.clone()
    val ok = f
    if (!ok) { slots.clear(); slots ++= saved }
    ok
  }

  private def go(e0: Expression, ei: Expression): Boolean = (e0, ei) match {
    case (a0: Attribute, ai: Attribute) if refA.contains(a0) =>
      thisA.get(ai).contains(refA(a0))
    case (a0: Attribute, ai: Attribute) if refB.contains(a0) =>
      thisB.contains(ai) && DataTypeUtils.equalsIgnoreNullability(a0.dataType, ai.dataType) &&
        (slots.get(a0.exprId) match {
          case Some((_, prev)) => prev.exprId == ai.exprId
          case None => slots.put(a0.exprId, (a0, ai)); true
        })
    case (_: Attribute, _) | (_, _: Attribute) => false
    // Equality is symmetric: `a.k = b.x` in one branch matches `b.y = a.k` in another.
    case (EqualTo(l0, r0), EqualTo(li, ri)) => attempt(go(l0, li) && go(r0, ri)) || attempt(go(l0, ri) && go(r0, li))
    case (EqualNullSafe(l0, r0), EqualNullSafe(li, ri)) =>
      attempt(go(l0, li) && go(r0, ri)) || attempt(go(l0, ri) && go(r0, li))
    case _ =>
      e0.getClass == ei.getClass && e0.children.size == ei.children.size &&
        e0.children.zip(ei.children).forall { case (x, y) => go(x, y) } &&
        (if (e0.children.isEmpty) e0.semanticEquals(ei) else e0.withNewChildren(ei.children).semanticEquals(ei))
  }
}
