package arrnf.rules.eager

import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Join, LogicalPlan}

/** The rows the joins and aggregates of a plan above `graph`'s inputs make (each is what the next
 *  operator reads, probes or shuffles): C_out, the classic measure of a join order; with `reads`,
 *  also the rows each join reads (C_in: what it shuffles and sorts, its inputs read as they are
 *  among them). */
private[rules] final class Produced(graph: JoinGraph, rows: LogicalPlan => Option[BigInt], reads: Boolean) {
  def apply(p: LogicalPlan): Option[BigInt] =
    if (graph.isInput(p)) Some(BigInt(0))
    else {
      val own = p match {
        case j: Join if reads => Seq(j, j.left, j.right).map(rows).reduce((x, y) => x.zip(y).map { case (u, v) => u + v })
        case _: Join | _: Aggregate => rows(p)
        case _ => Some(BigInt(0))
      }
      p.children.foldLeft(own)((sum, c) => sum.zip(apply(c)).map { case (x, y) => x + y })
    }
}
