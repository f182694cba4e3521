package arrnf

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/** Helpers of the ring-law suites. */
trait RingTestSupport { self: ArrnfSparkSuite =>
  /** The optimized plans of `sql` with the rewrites on and off, after asserting equal results. */
  def plansBothWays(sql: String): (LogicalPlan, LogicalPlan) = assertSameBothWays(sql)
}
