package arrnf.rules.factorize

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.types.DataTypeUtils

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
