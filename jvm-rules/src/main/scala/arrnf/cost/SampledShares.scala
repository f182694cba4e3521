package arrnf.cost

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.logical.{LeafNode, LogicalPlan}

import arrnf.stats.{SampledPairs, Sketches}

/**
 * The shares of tables' samples that tests Spark's estimation does not cover keep, for one
 * [[Estimator]] (`sampleOf`: the sketch pass's sample of a table, a leaf), and which nodes read
 * them (their estimates' label then says `sample`).
 */
private[cost] final class SampledShares(sampleOf: LeafNode => Option[Sketches.Sample]) {
  private val reading = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap[LogicalPlan, java.lang.Boolean]())

  /** Whether the estimate of `p` read a sample here. */
  def read(p: LogicalPlan): Boolean = reading.contains(p)

  /** The share of pairs of rows of the two sampled tables under `p` whose columns `condition` reads
   *  that it keeps ([[SampledPairs]]); None where it reads columns of one table or of more than two. */
  def pairShare(p: LogicalPlan)(condition: Expression): Option[Double] = for {
    (l, r) <- SampledShares.pairedLeaves(p, condition)
    ls <- sampleOf(l)
    rs <- sampleOf(r)
    kept <- SampledPairs.share(condition, ls, l.output, rs, r.output)
  } yield {
    reading.add(p)
    kept
  }

  /** The share of its table's sample that `condition`, over one sampled table's columns under `p`,
   *  keeps ([[Sketches.Kept.share]]). */
  def tableShare(p: LogicalPlan)(condition: Expression): Option[Double] = for {
    table <- p.collectLeaves().collectFirst {
      case l: LeafNode if condition.references.nonEmpty && condition.references.subsetOf(l.outputSet) => l
    }
    kept <- sampleOf(table).flatMap(_.share(condition, table.output))
  } yield {
    reading.add(p)
    kept.share
  }
}

private[cost] object SampledShares {
  /** The two tables (leaves) under `p` whose columns are all `condition` reads: the only
   *  conditions whose share the sample's pairs can tell ([[SampledShares.pairShare]]). */
  def pairedLeaves(p: LogicalPlan, condition: Expression): Option[(LeafNode, LeafNode)] =
    p.collectLeaves().filter(l => condition.references.exists(l.outputSet.contains)) match {
      case Seq(l: LeafNode, r: LeafNode) if condition.references.subsetOf(l.outputSet ++ r.outputSet) => Some((l, r))
      case _ => None
    }
}
