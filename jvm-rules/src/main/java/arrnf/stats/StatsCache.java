package arrnf.stats;

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Statistics;
import scala.Option;

/**
 * A plan node's cache of the statistics Spark computed for it ({@code LogicalPlanStats.statsCache}),
 * which {@code stats} fills on first use. Written in Java because the accessor is protected in
 * Scala's view and public in the bytecode.
 */
public final class StatsCache {
  private StatsCache() {}

  /** Whether Spark has not computed {@code p}'s statistics yet (or dropped them). */
  public static boolean isEmpty(LogicalPlan p) {
    return p.statsCache().isEmpty();
  }

  /** Makes {@code stats} what {@code p.stats} returns, until Spark drops its cache. */
  public static void put(LogicalPlan p, Statistics stats) {
    p.statsCache_$eq(Option.apply(stats));
  }
}
