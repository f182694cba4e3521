package arrnf.normalize

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions.{Attribute, Literal}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.trees.TreePattern.LITERAL

/**
 * Values (the normalizer's blocks) kept by the canonical form of the subtree they were made for,
 * per kind, so that a subtree met again — Spark's analyzer gives a repeated subquery fresh ids — is
 * found again. Canonicalizing costs more than the rest of normalizing, so subtrees are first bucketed
 * by a cheap shape that canonicalization keeps (operators in order, literals, output types) and
 * canonicalized only when a bucket already holds another subtree. `out`: a node's output (the
 * normalizer computes each once).
 */
private[normalize] final class SharedSubtrees[B](out: LogicalPlan => Seq[Attribute]) {
  import SharedSubtrees.Shape
  private val seen = mutable.HashMap[Shape, mutable.ArrayBuffer[(LogicalPlan, B)]]()
  private val fingerprints = new java.util.IdentityHashMap[LogicalPlan, Integer]()

  /** Operator classes in tree order, the literals of each node (as a multiset: canonical forms may
   *  reorder commutative terms) and its output types; equal canonical forms have equal fingerprints. */
  private def fingerprint(p: LogicalPlan): Int = {
    val known = fingerprints.get(p)
    if (known != null) known
    else {
      var literals = 0
      p.expressions.foreach { e =>
        if (e.containsPattern(LITERAL)) e.foreach { case l: Literal => literals += l.hashCode; case _ => }
      }
      val f = scala.util.hashing.MurmurHash3.orderedHash(
        p.getClass.getName.hashCode +: literals +: out(p).map(_.dataType).hashCode +: p.children.map(fingerprint))
      fingerprints.put(p, f)
      f
    }
  }

  private def shapeOf(kind: String, p: LogicalPlan) = Shape(kind, fingerprint(p))

  /** The value kept for a subtree of the same canonical form as `p`. */
  def find(kind: String, p: LogicalPlan): Option[B] =
    seen.get(shapeOf(kind, p)).flatMap { bucket =>
      val c = p.canonicalized
      bucket.collectFirst { case (q, b) if q.canonicalized == c => b }
    }

  def getOrElseUpdate(kind: String, p: LogicalPlan, make: => B): B =
    find(kind, p).getOrElse {
      val b = make
      seen.getOrElseUpdate(shapeOf(kind, p), mutable.ArrayBuffer()) += ((p, b))
      b
    }
}

private object SharedSubtrees {
  private final case class Shape(kind: String, fingerprint: Int)
}
