package arrnf.stats

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}

import arrnf.ArrnfSparkSuite

/** Spark's sizes of file relations, put into plan nodes once per listing: the size Spark would compute. */
class FileRelationSizesSuite extends ArrnfSparkSuite {

  private lazy val dir = tempDir("arrnf-sizes")

  private def write(name: String, from: Long, to: Long, mode: String = "overwrite"): Unit =
    spark.range(from, to).selectExpr("id", "CAST(id AS STRING) AS s").write.mode(mode).parquet(s"$dir/$name")

  /** The file relation node of a fresh copy of `df`'s analyzed plan (nothing computed for it yet). */
  private def relationOf(df: DataFrame): LogicalRelation =
    df.queryExecution.analyzed.clone().collectFirst { case r: LogicalRelation => r }.get

  private def leafOf(name: String): LogicalRelation = relationOf(spark.read.parquet(s"$dir/$name"))

  private def sizeOf(r: LogicalPlan): BigInt = { FileRelationSizes.put(r.asInstanceOf[LogicalRelation]); r.stats.sizeInBytes }

  test("the size put is the one Spark computes, for every node reading the relation") {
    write("sz_a", 0, 1000)
    val first = leafOf("sz_a")
    assert(StatsCache.isEmpty(first))
    FileRelationSizes.put(first)
    assert(!StatsCache.isEmpty(first))
    assert(first.stats.sizeInBytes == first.computeStats().sizeInBytes && first.stats.sizeInBytes > 0)
    val again = leafOf("sz_a") // another plan over the same files: its node sized from the one listing
    assert(sizeOf(again) == again.computeStats().sizeInBytes)
  }

  test("files added and the index refreshed: the new size; another compression factor: scaled by it") {
    write("sz_b", 0, 1000)
    val df = spark.read.parquet(s"$dir/sz_b")
    def leaf() = relationOf(df)
    val before = sizeOf(leaf())
    write("sz_b", 1000, 5000, mode = "append")
    assert(sizeOf(leaf()) == before) // Spark reads the files its index listed: so does the size
    leaf().relation.asInstanceOf[HadoopFsRelation].location.refresh()
    val grown = leaf()
    assert(sizeOf(grown) > before && grown.stats.sizeInBytes == grown.computeStats().sizeInBytes)
    withConf("spark.sql.sources.fileCompressionFactor" -> "3.0") {
      val tripled = leaf()
      assert(sizeOf(tripled) == tripled.computeStats().sizeInBytes && tripled.stats.sizeInBytes > grown.stats.sizeInBytes * 2)
    }
  }

  test("a table with catalog statistics, and a node Spark already sized, are left alone") {
    spark.sql("DROP TABLE IF EXISTS sz_catalog")
    spark.range(500).selectExpr("id").write.saveAsTable("sz_catalog")
    try {
      spark.sql("ANALYZE TABLE sz_catalog COMPUTE STATISTICS")
      val leaf = relationOf(spark.table("sz_catalog"))
      FileRelationSizes.put(leaf)
      assert(StatsCache.isEmpty(leaf))
    } finally spark.sql("DROP TABLE IF EXISTS sz_catalog")
    write("sz_c", 0, 10)
    val sized = leafOf("sz_c")
    val own = sized.stats
    FileRelationSizes.put(sized)
    assert(sized.stats eq own)
  }
}
