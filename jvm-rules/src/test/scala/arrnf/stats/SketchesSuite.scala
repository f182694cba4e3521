package arrnf.stats

import org.apache.spark.sql.catalyst.expressions.{Alias, And, EqualTo, GreaterThan, Literal}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Project}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}

import arrnf.ArrnfSparkSuite

/** The sketch pass's sample answering the estimator's questions. */
class SketchesSuite extends ArrnfSparkSuite {

  private lazy val dir = tempDir("arrnf-sketches")

  test("a condition is told by the sample through the output columns it reads: an equal condition built anew " +
    "gets the same answer, and none where a column it reads is not among the output's") {
    spark.range(200).selectExpr("id", "id % 10 AS k").write.mode("overwrite").parquet(s"$dir/sk_a")
    spark.read.parquet(s"$dir/sk_a").createOrReplaceTempView("sk_a")
    Sketches.collect(spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession], "sk_a")
    val (leaf, relation) = spark.table("sk_a").queryExecution.analyzed.collectFirst {
      case l @ LogicalRelation(h: HadoopFsRelation, _, _, _, _) => (l, h)
    }.get
    val sample = Sketches.of(relation, None, FileFacts.keys(relation), pruned = false).get.toOption.get.sample
    val Seq(id, k) = leaf.output
    // built anew at every call, as the estimator's callers build their conjunctions (the sample
    // keeps its answers by the condition's canonical form, bound to its columns)
    def condition = And(EqualTo(k, Literal(3L)), GreaterThan(id, Literal(100L)))
    val kept = sample.share(condition, leaf.output)
    assert(kept.map(_.kept).contains(10)) // 103, 113, ..., 193
    assert(sample.share(condition, leaf.output) == kept)
    // k is not among these columns: the sample cannot tell (not the answer for the other output)
    assert(sample.share(condition, Seq(id)).isEmpty)
    assert(sample.combinations(Seq("id"), condition, Seq(id)).isEmpty)
    assert(sample.share(condition, leaf.output) == kept)
    assert(sample.combinations(Seq("id"), condition, leaf.output).contains(BigInt(10)))
  }

  test("a computed value's distinct values are told by the sample (among the rows a condition keeps); a user's " +
    "function is never run on the sample") {
    spark.range(20000).selectExpr("id", "CAST(id AS STRING) AS s").write.mode("overwrite").parquet(s"$dir/sk_v")
    spark.read.parquet(s"$dir/sk_v").createOrReplaceTempView("sk_v")
    val session = spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession]
    Sketches.collect(session, "sk_v")
    val calls = new java.util.concurrent.atomic.AtomicInteger()
    spark.udf.register("sk_counted", (x: Long) => { calls.incrementAndGet(); x % 3 })
    val plan = spark.sql("SELECT substr(s, 1, 1) AS first, id DIV 1000 AS thousands, sk_counted(id) AS c FROM sk_v " +
      "WHERE id < 5000").queryExecution.analyzed
    val (leaf, relation) = plan.collectFirst { case l @ LogicalRelation(h: HadoopFsRelation, _, _, _, _) => (l, h) }.get
    val sample = Sketches.of(relation, None, FileFacts.keys(relation), pruned = false).get.toOption.get.sample
    val Seq(first, thousands, counted) = plan.collectFirst { case p: Project => p.projectList.map(_.asInstanceOf[Alias].child) }.get
    val condition = plan.collectFirst { case f: Filter => f.condition }.get
    // the first digits: 1 to 9 and the one "0" (rare: a sample may miss it); 20,000 values of s
    assert(sample.valuesOf(first, None, leaf.output).exists(n => n >= 9 && n <= 10))
    assert(sample.valuesOf(thousands, None, leaf.output).contains(BigInt(20)))
    assert(sample.valuesOf(thousands, Some(condition), leaf.output).contains(BigInt(5)))
    assert(sample.valuesOf(counted, None, leaf.output).isEmpty)
    assert(sample.share(EqualTo(counted, Literal(1L)), leaf.output).isEmpty)
    assert(calls.get == 0)
  }
}
