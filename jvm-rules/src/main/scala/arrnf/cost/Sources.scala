package arrnf.cost

import org.apache.spark.sql.catalyst.expressions.{And, DynamicPruning, PredicateHelper}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan}
import org.apache.spark.sql.catalyst.trees.TreePattern.{DYNAMIC_PRUNING_EXPRESSION, DYNAMIC_PRUNING_SUBQUERY}

import arrnf.stats.Sketches

/**
 * The sources [[Estimator]] names where Spark's estimation names none: the plan's shape, and why
 * rows are unknown (the `unknown: …` reasons a block prints, docs/arrnf-json.md). Mixed into
 * `object Estimator`, whose names callers use.
 */
private[cost] trait Sources extends PredicateHelper {
  /** Why Spark's estimation gave no rows above inputs whose rows are known. */
  val NoColumnStatistics = "unknown: no distinct counts for its filter, join or grouping columns; " +
    "take the sketch pass or ANALYZE TABLE ... FOR ALL COLUMNS"

  /** `why` rows are unknown, saying which sketch is stale where that is why no distinct counts were found
   *  (`below`: the sources of the leaves under the node). */
  def withStaleSketch(why: String, below: Iterable[String]): String =
    if (why != NoColumnStatistics) why
    else if (below.exists(_.endsWith(Sketches.Stale))) "unknown: no distinct counts for its filter, join or grouping " +
      "columns: a table's sketch was taken, but its files changed since; take the sketch pass again"
    else if (below.exists(_.endsWith(LeafStatistics.StaleCatalog))) "unknown: no distinct counts for its filter, join or " +
      "grouping columns: a table's catalog statistics are stale (its files changed since ANALYZE TABLE); run it again or take the sketch pass"
    else why

  /** Why rows are unknown above a cached relation whose columns lack counts: no pass counts them. */
  val CachedColumns = "unknown: no distinct counts for its filter, join or grouping columns, which a cached relation " +
    "holds (neither the sketch pass nor ANALYZE TABLE counts a cache's columns)"

  /** Why rows are unknown where the columns lacking counts are of a type no pass counts (a struct's field, a map's value). */
  val UncountedTypes = "unknown: no distinct counts for its filter, join or grouping columns, whose type no statistics " +
    "count (such as a struct, array, map or interval: neither the sketch pass nor ANALYZE TABLE counts its values)"

  /** `f` without its dynamic partition pruning tests (Spark's `PartitionPruning`), which run only where a
   *  broadcast or a reused exchange serves them: its input where it tests nothing else. */
  def withoutRuntimePruning(f: Filter): Option[LogicalPlan] = {
    if (!f.condition.containsAnyPattern(DYNAMIC_PRUNING_SUBQUERY, DYNAMIC_PRUNING_EXPRESSION)) return None // (most filters: no walk)
    val (runtime, rest) = splitConjunctivePredicates(f.condition).partition(_.isInstanceOf[DynamicPruning])
    if (runtime.isEmpty) None else Some(rest.reduceOption(And).fold(f.child)(Filter(_, f.child)))
  }

  /** The estimate of a filter without its dynamic pruning: as many rows at most. */
  def unpruned(e: Estimate): Estimate =
    if (e == null || e.rows.isEmpty) Option(e).getOrElse(Estimate(None, "unknown")) else e.copy(source = s"${e.source}; $NotPruned")

  /** What an estimate over a dynamic partition pruning filter leaves out (said of every estimate above it). */
  val NotPruned = "dynamic partition pruning not counted (fewer rows where it prunes)"

  /** The label of an estimate from the sources of the leaves below it (and [[NotPruned]], said last). */
  def estimateOf(sources: Iterable[String]): String = {
    val (notes, leaves) = sources.toSeq.sorted.partition(_ == NotPruned)
    (if (leaves.isEmpty) PlanShape else "estimate: " + leaves.mkString(", ")) + notes.map("; " + _).mkString
  }

  /** Why a filter whose columns have statistics has no estimate. */
  val UnestimatedFilter = "unknown: a filter Spark's estimation does not cover, such as LIKE, functions or " +
    "expressions of columns"

  /** The source of rows Spark knows from the plan alone. */
  val PlanShape = "estimate: the plan's shape, such as a global aggregate's one row or a limit"

  /** Why a semi or anti join has no estimate. */
  val SemiJoin = "unknown: a semi or anti join without distinct counts of its keys on both sides, or with a " +
    "condition other than equalities of columns"

  /** Why a join whose keys have statistics has no estimate. */
  val UnestimatedCondition = "unknown: a join condition Spark's estimation does not cover, other than " +
    "equalities of columns"

  /** Why a filter by an IN or EXISTS subquery has no estimate: Spark's optimizer makes it a semi join
   *  only after the rules that run before join reordering (EagerAggregation's cost guard sees it as a
   *  filter); the ArrNF program reads the final plan, where it is that join. */
  val SubqueryFilter = "unknown: a filter by an IN or EXISTS subquery, which Spark makes a semi join only later " +
    "in its optimization"

  /** Why a filter, join or grouping on values the query computes has no estimate: no statistics
   *  count them, and the sketch pass would not tell them. */
  val ComputedValues = "unknown: a filter, join or grouping on values the query computes, such as an " +
    "aggregate's results, whose distinct values no statistics count"
}
