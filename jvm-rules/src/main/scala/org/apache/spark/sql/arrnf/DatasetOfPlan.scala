package org.apache.spark.sql.arrnf

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.classic.{Dataset, SparkSession}

/** A DataFrame of a logical plan, as `spark.sql` makes one. In Spark's package because
 *  `Dataset.ofRows` is private to it (arrnf.sql.QueryText uses it). */
object DatasetOfPlan {
  def apply(spark: SparkSession, plan: LogicalPlan): Dataset[Row] = Dataset.ofRows(spark, plan)
}
