package arrnf.rules.factorize

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.Inner
import org.apache.spark.sql.catalyst.plans.logical._

import arrnf.catalyst.{Effects, Patterns}
import arrnf.rules.FactorizeUnionOfJoins

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
          f.copy(out = list.map(e => subst(Patterns.stripAlias(e), m)))
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
      val cs = cond.toSeq.flatMap(Patterns.splitConjuncts).map(subst(_, m))
      Some(Flat(fl.leaves ++ fr.leaves, fl.conds ++ fr.conds ++ cs, out))
    case Filter(c, child) if c.deterministic =>
      inner(child).map { f =>
        val m = AttributeMap(child.output.zip(f.out))
        f.copy(conds = f.conds ++ Patterns.splitConjuncts(c).map(subst(_, m)))
      }
    // A projection inside the chain is looked through only when its expressions cannot fail:
    // after the rewrite they may be evaluated at another height of the join tree.
    case Project(list, child) if list.forall(e => e.deterministic && !Effects.canFail(e)) =>
      inner(child).map { f =>
        val m = AttributeMap(child.output.zip(f.out))
        f.copy(out = list.map(e => subst(Patterns.stripAlias(e), m)))
      }
    case _ => None
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
