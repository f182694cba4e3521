package arrnf.bench

import org.apache.spark.sql.catalyst.expressions.{Alias, EqualTo, IsNotNull}
import org.apache.spark.sql.catalyst.plans.Inner
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, JoinHint, LogicalPlan, Project, Range, Union}

/**
 * Large plans in the shape Spark's optimizer leaves them, built directly (Spark's parser overflows
 * on thousands of UNION ALLs, and analyzing a 300-join DataFrame chain step by step is quadratic):
 * for the normalizer's scale benchmark (bench/bench_normalize.py) and tests.
 */
object PlanShapes {
  /** `Union` of n branches `Project(id + i AS x, Range(0, 3 + i))`. */
  def union(n: Int): LogicalPlan = Union((0 until n).map { i =>
    val r = Range(0, 3L + i, 1, None)
    Project(Seq(Alias(org.apache.spark.sql.catalyst.expressions.Add(r.output.head,
      org.apache.spark.sql.catalyst.expressions.Literal(i.toLong)), "x")()), r)
  })

  /** k0 ⋈ k1 ⋈ … ⋈ kn, left-deep, each join on the previous input's key (an n-deep chain). */
  def joinChain(n: Int): LogicalPlan = {
    def input(i: Int): LogicalPlan = {
      val r = Range(0, 10L + i, 1, None)
      Filter(IsNotNull(r.output.head), r)
    }
    var plan = input(0)
    var lastKey = plan.output.head
    for (i <- 1 to n) {
      val right = input(i)
      plan = Join(plan, right, Inner, Some(EqualTo(lastKey, right.output.head)), JoinHint.NONE)
      lastKey = right.output.head
    }
    plan
  }
}
