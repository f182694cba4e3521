package arrnf.cost

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeMap, EqualTo, Expression, Not, PredicateHelper}
import org.apache.spark.sql.catalyst.planning.ExtractEquiJoinKeys
import org.apache.spark.sql.catalyst.plans.Inner
import org.apache.spark.sql.catalyst.plans.logical.{ColumnStat, Filter, Join, LogicalPlan, Project}

/**
 * Rows [[Estimator]] leaves unknown whatever the statistics, told from the plan's shape alone: a
 * cost guard that needs the rows can decline without estimating a join tree only to learn this
 * (TPC-DS q32's catalog sales above 1.3 times their item's average: each estimate of that tree
 * reads its inputs' statistics, samples and keys first, and ends at the top join).
 *
 * The claim, for two kinds of node:
 *  - an inner join's rows are unknown where a conjunct of its condition, other than the equalities
 *    of its keys, is one Spark's filter estimation covers for no statistics ([[Estimator.estimable]]
 *    with every column counted and ranged) and reads no two tables' columns the sample's pairs can
 *    tell ([[SampledShares.pairedLeaves]]); without keys, any condition. Such a join is unknown in
 *    the estimator whether its keys are counted (`UnestimatedCondition`, as
 *    [[Estimator.filteredJoin]] gives no share for that conjunct) or not (`NoColumnStatistics`);
 *  - a filter by an IN or EXISTS subquery (before Spark makes it a semi join: TPC-H q18's orders)
 *    is unknown: neither Spark's estimation nor the sample evaluates a subquery, and the
 *    estimator's other cases for filters (ranks, existence flags, aggregates' results) need every
 *    part of the condition to be theirs (`SubqueryFilter`).
 * The unknown then reaches the root through the inner joins, filters and column-only projections
 * above it: each takes an input without rows or column statistics, and neither Spark's estimation
 * nor the estimator's own cases (samples, ranks, existence flags, aggregates' results) give rows
 * over such an input at those nodes. Nodes of other kinds are not looked through (an aggregate over
 * an unknown input may be bounded by its grouping columns' tables). The reason is named in the
 * estimator's order (an input's before the node's own, the left input's first); where the estimator
 * would find a join's keys uncounted, it names that instead (the join is unknown either way).
 *
 * {{{
 *   Join Inner, (i_item_sk = cs_item_sk) AND (cs_ext_discount_amt > (1.3 * avg_discount))
 *   :- Join Inner, (d_date_sk = cs_sold_date_sk)    avg_discount: an aggregate's result, no
 *   :  :- catalog_sales                             table's column, so no pair of samples
 *   :  +- Filter (d_date BETWEEN ...) date_dim      tells the comparison: unknown
 *   +- Aggregate [cs_item_sk], [1.3 * avg(cs_ext_discount_amt) AS avg_discount, cs_item_sk]
 * }}}
 */
object UnknownRows extends PredicateHelper {

  /** Why [[Estimator]] leaves `plan`'s rows unknown, if a join or filter under its root, through
   *  inner joins, filters and column-only projections, leaves them unknown whatever the statistics. */
  def reason(plan: LogicalPlan): Option[String] = plan match {
    case j @ Join(l, r, Inner, _, _) => reason(l).orElse(reason(r)).orElse(uncovered(j).map(_ => Estimator.UnestimatedCondition))
    case Filter(c, child) => reason(child).orElse(Option.when(Estimator.bySubquery(c))(Estimator.SubqueryFilter))
    case Project(list, child) if list.forall(_.isInstanceOf[Attribute]) => reason(child)
    case _ => None
  }

  private def uncovered(j: Join): Option[Expression] = j match {
    case ExtractEquiJoinKeys(_, leftKeys, _, Some(other), _, _, _, _) if leftKeys.nonEmpty =>
      splitConjunctivePredicates(other).find {
        // `a <> b` of two columns is covered by their distinct counts where they have them
        case Not(EqualTo(_: Attribute, _: Attribute)) => false
        case c => !Estimator.estimable(c, allCounted(c), onLeaf = false) && SampledShares.pairedLeaves(j, c).isEmpty
      }
    case ExtractEquiJoinKeys(_, _, _, _, _, _, _, _) => None
    case _ => j.condition
  }

  // Statistics of every column `c` reads, all figures present: Estimator.estimable grows with them.
  private def allCounted(c: Expression): AttributeMap[ColumnStat] = AttributeMap(c.references.toSeq.map(a =>
    a -> ColumnStat(distinctCount = Some(1), min = Some(0), max = Some(0), nullCount = Some(0))))
}
