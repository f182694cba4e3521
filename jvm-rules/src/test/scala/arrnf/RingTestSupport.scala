package arrnf

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * Helpers of the ring-law suites. Queries whose plan executes a `Union` are only planned here, not
 * collected: the sbt test classpath leaves out scala-parallel-collections (build.sbt drops every
 * `scala-*` jar of PySpark), which `UnionRDD` needs; their results are compared in
 * tests/test_ring_laws.py, inside PySpark's own JVM.
 */
trait RingTestSupport { self: ArrnfSparkSuite =>
  /** The optimized plans of `sql` with the rewrites on and off, without running it. */
  def plansBothWays(sql: String): (LogicalPlan, LogicalPlan) =
    (withArrnf(true)(spark.sql(sql).queryExecution.optimizedPlan),
      withArrnf(false)(spark.sql(sql).queryExecution.optimizedPlan))
}
