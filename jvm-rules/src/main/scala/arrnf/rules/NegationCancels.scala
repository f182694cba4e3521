package arrnf.rules

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeSet, Expression, GreaterThan, Literal, NamedExpression}
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.{AGGREGATE, FILTER, UNION}
import org.apache.spark.sql.types.LongType

import arrnf.catalyst.{Effects, Patterns, SameResult, SetOperationRewrites}

/**
 * Negation cancels: `X + (-X) = 0`, so `Q EXCEPT ALL Q = ∅` and `(A ∪all B) EXCEPT ALL B = A`.
 *
 * Spark rewrites `EXCEPT ALL` early ("Replace Operators", `RewriteExceptAll`) into the ring's
 * ±1 multiplicity encoding, which is where this rule sees it (the operator-optimization batch):
 *
 * {{{
 *   Filter (isnotnull(sum) AND sum > 0)               -- Threshold
 *   +- Aggregate [a], [a, sum(vcol) AS sum]
 *      +- Union
 *         :- Project [ 1 AS vcol, a ...] +- X          -- + X
 *         :- Project [ 1 AS vcol, a ...] +- A          -- + A
 *         +- Project [-1 AS vcol, a ...] +- X'         -- - X   (X' sameResult X)
 * =>
 *   Filter (isnotnull(sum) AND sum > 0)
 *   +- Aggregate [a], [a, sum(vcol) AS sum]
 *      +- Project [vcol AS vcol#old, a AS a#old]       -- old expression ids kept
 *         +- Project [ 1 AS vcol, a ...] +- A
 * }}}
 * and when every branch cancels, the union is an empty `LocalRelation` (Spark's
 * `PropagateEmptyRelation` then empties the whole `EXCEPT ALL`).
 *
 * When it holds: a union branch `+1 × T` and a branch `-1 × T'` whose bodies (the branch
 * without its marker column) have the same result (`sameResult`: canonicalized plans, never `==`,
 * since the analyzer gives the repeated subtree fresh expression ids) contribute, row for row, twin
 * rows that fall into the same group and add `+1 - 1 = 0` to its sum. The union alone is NOT equal
 * after the cancellation, so the rule fires only on the whole threshold pattern: an `Aggregate`
 * whose only aggregate is a plain `sum(marker)` (no DISTINCT, no FILTER) and whose groups are
 * expressions of the other columns, under a `Filter` with a conjunct `sum > 0` — groups that lose
 * all their rows had sum 0 and were filtered anyway. Bag semantics: branches cancel pairwise
 * (`+X, +X, -X` leaves one `+X`). NULLs: grouping treats NULLs as equal, and twin rows are equal
 * column by column. ANSI: a sum of ±1 markers cannot overflow; no expression is added, but the
 * cancelled terms are no longer evaluated, so they must be unable to fail (`Effects.canFail`:
 * `SELECT 10 DIV (k-3) … EXCEPT ALL SELECT 10 DIV (k-3) …` raises DIVIDE_BY_ZERO and still does).
 * The same holds for a predicate above the threshold (its own filter, or a filter or join
 * condition on the way to the root) that can fail: Spark pushes it onto the grouping columns, into
 * every union branch, possibly after this rule ran; vanilla Spark then raises its error on the rows
 * of the cancelled terms, so the rule does not fire under one.
 * Equality: the union's columns must compare by their bytes (`Effects.binaryEquality`). Under a
 * case-insensitive or trimming collation `'a'` and `'A'` share a group, and the group shows the
 * value of whichever row came first — a row of the cancelled term in vanilla Spark, of another term
 * after the rewrite. (Floating point is fine: grouping normalizes -0.0 and NaN on both sides.)
 * Non-determinism: the cancelled terms must not vary (`Effects.canVary`): two runs of `rand()`,
 * of an unseeded `TABLESAMPLE`, or of an RDD whose function draws random numbers are not twins.
 * Streaming plans are left alone (`EXCEPT ALL` is not supported on streams anyway).
 * One term left: the union goes, and its columns become that term's. Where one of them is a
 * constant, Spark's FoldablePropagation carries it up into the `Generate` (replicate_rows) that
 * Spark's rewrite put above, whose output re-uses those columns' ids, and breaks the plan; the rule
 * then leaves the union alone (`(SELECT 4 UNION ALL SELECT k FROM t) EXCEPT ALL SELECT k FROM t`).
 */
object NegationCancels extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan =
    Effects.transformUpKnowingPredicatesAbove(plan, _.containsAllPatterns(FILTER, AGGREGATE, UNION)) {
      case (f @ Filter(cond, agg @ Aggregate(_, _, u: Union, _)), false)
          if !f.isStreaming && u.children.size > 1 && !u.byName && !u.allowMissingCol =>
        thresholdMarker(cond, agg, u).flatMap(cancel(u, _)) match {
          case Some(newUnion) => f.copy(child = agg.copy(child = newUnion))
          case None => f
        }
    }

  /** The index of the marker column in the union output, if `agg`/`cond` form the threshold. */
  private def thresholdMarker(cond: Expression, agg: Aggregate, u: Union): Option[Int] =
    SetOperationRewrites.exceptMarker(agg, u).collect {
      case (marker, sum) if Patterns.splitConjuncts(cond).exists {
          case GreaterThan(a: Attribute, Literal(0L, LongType)) => a.exprId == sum.exprId
          case _ => false
        } => marker
    }

  /** A union branch `Project [±1 AS marker, cols…] child`: its sign and its body without the marker. */
  private case class Term(index: Int, sign: Long, body: LogicalPlan)

  private def term(branch: LogicalPlan, index: Int, markerIdx: Int): Option[Term] =
    (branch, SetOperationRewrites.exceptSign(branch, markerIdx)) match {
      case (Project(list, child), Some(sign)) => Some(Term(index, sign, Project(list.patch(markerIdx, Nil, 1), child)))
      case _ => None
    }

  /** The union with cancelling pairs removed, or None if nothing cancels. */
  private def cancel(u: Union, markerIdx: Int): Option[LogicalPlan] = {
    val columns = u.output.patch(markerIdx, Nil, 1)
    if (!columns.forall(a => Effects.binaryEquality(a.dataType))) return None
    val terms = u.children.zipWithIndex.flatMap { case (c, i) => term(c, i, markerIdx) }
    val (pos, neg) = terms.partition(_.sign > 0)
    // Only terms that can be dropped: the same rows each time, and no error lost with them.
    def droppable(t: Term) = !Effects.canVary(t.body) && !Effects.canFail(t.body)
    var remainingNeg = neg.filter(droppable)
    val dropped = scala.collection.mutable.Set.empty[Int]
    pos.filter(droppable).foreach { p =>
      remainingNeg.find(n => SameResult(n.body, p.body)) match {
        case Some(n) =>
          dropped += p.index
          dropped += n.index
          remainingNeg = remainingNeg.filterNot(_ eq n)
        case None =>
      }
    }
    if (dropped.isEmpty) return None
    val kept = u.children.zipWithIndex.collect { case (c, i) if !dropped.contains(i) => c }
    // One term left: the union goes and its columns are that term's. Where a column is a constant
    // there, Spark's FoldablePropagation carries the constant up to the rewrite's Generate
    // (replicate_rows), whose output re-uses the columns' ids, and puts a literal among its output
    // attributes (ClassCastException). The union stood in its way in vanilla Spark: keep it.
    if (kept.size == 1 && constantColumns(kept.head).exists(i => i != markerIdx)) return None
    Some(kept match {
      case Seq() => LocalRelation(u.output, Nil, isStreaming = false)
      case Seq(only) => keepIds(u.output, only)
      case several =>
        // The union's output is its first child's; keep the old ids when the first child went.
        if (several.head eq u.children.head) Union(several) else keepIds(u.output, Union(several))
    })
  }

  /** Positions of `p`'s output columns that are constants once projections collapse: aliases of
   *  deterministic expressions of constants only, through projections and filters. */
  private def constantColumns(p: LogicalPlan): Seq[Int] = {
    def constants(q: LogicalPlan): AttributeSet = q match {
      case Project(list, child) =>
        val below = constants(child)
        AttributeSet(list.collect {
          case a @ Alias(e, _) if e.deterministic && e.references.subsetOf(below) => a.toAttribute
          case r: Attribute if below.contains(r) => r
        })
      case Filter(_, child) => constants(child)
      case _ => AttributeSet.empty
    }
    val c = constants(p)
    p.output.zipWithIndex.collect { case (a, i) if c.contains(a) => i }
  }

  /** `child` re-aliased so that its output carries the expression ids of `output`. */
  private def keepIds(output: Seq[Attribute], child: LogicalPlan): LogicalPlan = {
    if (child.output.map(_.exprId) == output.map(_.exprId)) child
    else Project(output.zip(child.output).map { case (old, now) =>
      Alias(now, old.name)(exprId = old.exprId): NamedExpression
    }, child)
  }
}
