package arrnf.catalyst

import org.apache.spark.sql.catalyst.expressions.{Alias, And, Expression}

/** Small plan and expression patterns that rules, the normalizer and the SQL form share. */
object Patterns {
  /** The conjuncts of `e`: `a AND (b AND c)` is `a, b, c` (Catalyst's `splitConjunctivePredicates`). */
  def splitConjuncts(e: Expression): Seq[Expression] = e match {
    case And(l, r) => splitConjuncts(l) ++ splitConjuncts(r)
    case other => Seq(other)
  }

  /** `e` without a top-level alias: `x + 1 AS y` is `x + 1`. */
  def stripAlias(e: Expression): Expression = e match {
    case a: Alias => a.child
    case other => other
  }
}
