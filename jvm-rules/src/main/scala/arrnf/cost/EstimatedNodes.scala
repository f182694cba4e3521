package arrnf.cost

import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.plans.logical.{LeafNode, LogicalPlan, Statistics, UnaryNode}

// The nodes by which an [[Estimator]]'s copy of a plan carries the statistics it found, where
// Spark's estimation above them reads them.

/** A node carrying statistics corrected from Spark's estimate of its child (not a leaf: Spark's
 *  estimation above it treats it as the operator it stands for). */
private[cost] final case class EstimatedNode(child: LogicalPlan, estimated: Statistics) extends UnaryNode {
  override def output: Seq[Attribute] = child.output
  override def stats: Statistics = estimated
  override protected def withNewChildInternal(c: LogicalPlan): EstimatedNode = copy(child = c)
}

/** A leaf carrying the statistics found for it. */
private[cost] final case class EstimatedLeaf(output: Seq[Attribute], estimated: Statistics, source: String) extends LeafNode {
  override def computeStats(): Statistics = estimated
}
