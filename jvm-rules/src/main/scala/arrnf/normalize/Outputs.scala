package arrnf.normalize

import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.plans.{Cross, FullOuter, Inner, LeftAnti, LeftOuter, LeftSemi, RightOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan}

/**
 * Each node's output, computed once. Spark computes a join's output afresh on every call, from its
 * children's outputs: in a deep join chain that is quadratic per call.
 */
private[normalize] final class Outputs {
  private val known = new java.util.IdentityHashMap[LogicalPlan, Seq[Attribute]]()

  def apply(p: LogicalPlan): Seq[Attribute] = {
    val k = known.get(p)
    if (k != null) k
    else {
      val o = p match {
        case j: Join => j.joinType match {
          case Inner | Cross => apply(j.left) ++ apply(j.right)
          case LeftOuter => apply(j.left) ++ apply(j.right).map(_.withNullability(true))
          case RightOuter => apply(j.left).map(_.withNullability(true)) ++ apply(j.right)
          case FullOuter => (apply(j.left) ++ apply(j.right)).map(_.withNullability(true))
          case LeftSemi | LeftAnti => apply(j.left)
          case _ => j.output
        }
        case _ => p.output
      }
      known.put(p, o)
      o
    }
  }
}
