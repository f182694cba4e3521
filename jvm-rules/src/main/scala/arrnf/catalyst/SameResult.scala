package arrnf.catalyst

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * `a.sameResult(b)` — equal canonical forms — with cheap tests first. Canonicalizing copies both
 * subtrees, while most pairs the rules compare already differ in what canonicalization keeps: the
 * operator, the output types, the number of nodes.
 */
private[arrnf] object SameResult {
  def apply(a: LogicalPlan, b: LogicalPlan): Boolean =
    a.getClass == b.getClass && a.output.map(_.dataType) == b.output.map(_.dataType) &&
      size(a) == size(b) && a.sameResult(b)

  private def size(p: LogicalPlan): Int = { var n = 0; p.foreach(_ => n += 1); n }
}
