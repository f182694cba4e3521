package arrnf.catalyst

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeReference, Cast, Expression, Literal, ReplicateRows}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Count, Sum}
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.types.LongType

/**
 * Spark's rewrites of the bag set operations, as the optimizer leaves them (`RewriteExceptAll`,
 * `RewriteIntersectAll` in the "Replace Operators" batch): the ring's multiplicity encoding.
 *
 * {{{
 *   EXCEPT ALL:     Generate replicaterows(sum, cols…)              -- Threshold
 *                   +- Filter (sum > 0)
 *                      +- Aggregate [cols], [sum(vcol) AS sum, cols…]
 *                         +- Union
 *                            :- Project [ 1 AS vcol, cols…] +- A       -- + A
 *                            +- Project [-1 AS vcol, cols…] +- B       -- − B
 *   INTERSECT ALL:  the same with two markers (true, null) / (null, true), counted, and the
 *                   smaller count replicated.
 * }}}
 * The normalizer shows the pattern as a Threshold block; `NegationCancels` cancels its ±1 terms.
 */
object SetOperationRewrites {
  /**
   * EXCEPT ALL's marker column: its position in the union's output, when `agg`'s only aggregate is
   * a plain `sum` of it (no DISTINCT, no FILTER) and it groups by other columns of the union, as
   * Spark's rewrite does (a grouping expression could vary or fail: twin rows would then not meet in
   * one group); with the sum's alias (what the threshold filter compares).
   */
  def exceptMarker(agg: Aggregate, u: Union): Option[(Int, Alias)] =
    agg.aggregateExpressions.filterNot(_.isInstanceOf[Attribute]) match {
      case Seq(sum @ Alias(AggregateExpression(Sum(marker: AttributeReference, _), _, false, None, _), _)) =>
        val i = u.output.indexWhere(_.exprId == marker.exprId)
        val groupsByColumns = agg.groupingExpressions.forall {
          case a: Attribute => a.exprId != marker.exprId
          case _ => false
        }
        if (i >= 0 && groupsByColumns) Some((i, sum)) else None
      case _ => None
    }

  /** The sign an EXCEPT ALL union branch gives its rows: its marker, the literal +1 or −1. */
  def exceptSign(branch: LogicalPlan, marker: Int): Option[Long] = branch match {
    case Project(list, _) if list.size > marker => list(marker) match {
      case Alias(Literal(v: Long, LongType), _) if v == 1L || v == -1L => Some(v)
      case _ => None
    }
    case _ => None
  }

  /** Which set operation a [[Replicated]] is. */
  sealed trait Operation
  case object ExceptAll extends Operation
  case object IntersectAll extends Operation

  /**
   * The whole pattern under its `ReplicateRows` (and the projection of the replicated columns,
   * `top`): the operation, the union, the union positions of the grouped columns and of the
   * markers, whether each branch is the positive (left) side, and the columns replicated.
   */
  final case class Replicated(
      operation: Operation, union: Union, groupPos: Seq[Int], markerPos: Seq[Int], positive: Seq[Boolean],
      out: Seq[Attribute])

  def replicated(g: Generate, top: Option[Project]): Option[Replicated] = {
    if (!g.generator.isInstanceOf[ReplicateRows]) return None
    if (top.exists(_.projectList.exists(e => !e.isInstanceOf[Attribute] ||
        !g.generatorOutput.exists(_.exprId == e.exprId)))) return None
    var q = g.child
    while (q.isInstanceOf[Project] || q.isInstanceOf[Filter]) q = q.children.head
    val (agg, union) = q match {
      case a @ Aggregate(_, _, u: Union, _) => (a, u)
      case _ => return None
    }
    val uOut = union.output
    val groupPos = agg.groupingExpressions.map {
      case a: Attribute => uOut.indexWhere(_.exprId == a.exprId)
      case _ => return None
    }
    if (groupPos.contains(-1)) return None
    val (operation, markerPos, positive) = exceptMarker(agg, union) match {
      case Some((m, _)) =>
        (ExceptAll, Seq(m), union.children.map(b => exceptSign(b, m).getOrElse(return None) > 0))
      case None =>
        val counted = agg.aggregateExpressions.flatMap(_.collect { case ae: AggregateExpression => ae.aggregateFunction })
        val markers = counted match {
          case Seq(Count(Seq(a: Attribute)), Count(Seq(b: Attribute))) => Seq(a, b).map(m => uOut.indexWhere(_.exprId == m.exprId))
          case _ => return None
        }
        if (markers.contains(-1)) return None
        (IntersectAll, markers, union.children.map {
          case Project(list, _) => (literalOf(list(markers(0))), literalOf(list(markers(1)))) match {
            case (Some(true), None) => true
            case (None, Some(true)) => false
            case _ => return None
          }
          case _ => return None
        })
    }
    Some(Replicated(operation, union, groupPos, markerPos, positive, top.map(_.output).getOrElse(g.generatorOutput)))
  }

  /** The value of a literal marker (through aliases and casts; None for NULL or not a literal). */
  private def literalOf(e: Expression): Option[Any] = e match {
    case Alias(c, _) => literalOf(c)
    case Cast(c, _, _, _) => literalOf(c)
    case Literal(v, _) => Option(v)
    case _ => None
  }
}
