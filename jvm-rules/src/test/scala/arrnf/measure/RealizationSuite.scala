package arrnf.measure

import org.apache.spark.sql.classic.Dataset

import arrnf.ArrnfSparkSuite
import arrnf.model.{ArrnfProgram, Block, HeadKind}
import arrnf.normalize.Arrnf

/** Each block says what Spark builds for it in the plan Spark chose, and nothing where Spark builds nothing. */
class RealizationSuite extends ArrnfSparkSuite {
  private def program(sql: String, conf: (String, String)*): ArrnfProgram =
    withConf(conf: _*)(Arrnf.ofDataset(spark.sql(sql).asInstanceOf[Dataset[_]], "q"))
  private def whats(b: Block): Seq[String] = b.realization.get.map(_.what)
  private def arranged(p: ArrnfProgram): Seq[Block] = p.blocks.filter(_.head.exists(_.kind == HeadKind.ArrangeBy))

  private val join = "SELECT a.k, b.v FROM range(100) a(k) JOIN (SELECT id AS k, id * 2 AS v FROM range(1000000)) b ON a.k = b.k"

  test("a broadcast join: the small side is a broadcast relation with its hash table, the streamed side is none") {
    val p = program(join)
    val (built, streamed) = arranged(p).partition(b => b.realization.get.nonEmpty)
    assert(built.size == 1 && streamed.size == 1, p.blocks.map(b => b.name -> b.realization))
    assert(whats(built.head).toSet == Set("broadcast relation", "broadcast hash table"))
    assert(whats(streamed.head).isEmpty)
    assert(p.realized.contains(2))
    assert(arrnf.render.TextFormat(p).contains("spark=none"))
  }

  test("a join read twice (a CTE in two branches): the second reading's joins are their build sides', not their streamed sides'") {
    // TPC-DS q39's shape: the CTE's second reading has other expression ids; its joins read the same
    // (shared) arrangements as the first's, and their hash tables are the small sides'.
    val p = program("""WITH t AS (SELECT f.id AS k, f.id % 10 AS g FROM range(1000000) f
        JOIN range(100) d(dk) ON f.id % 100 = d.dk JOIN range(50) e(ek) ON f.id % 50 = e.ek)
      SELECT a.g, a.s, b.m FROM (SELECT g, sum(k) AS s FROM t GROUP BY g) a
      JOIN (SELECT g, max(k) AS m FROM t GROUP BY g) b ON a.g = b.g""")
    val broadcastBuilt = arranged(p).filter(b => whats(b).contains("broadcast hash table"))
    // the hash tables and broadcast relations of both readings: the two small ranges' blocks only;
    // the second reading's broadcast is the first's, read again (adaptive execution's stage cache)
    assert(broadcastBuilt.map(_.columns).toSet == Set(Seq("dk"), Seq("ek")), p.blocks.map(b => b.name -> b.columns -> whats(b)))
    assert(broadcastBuilt.forall(b => whats(b).count(_ == "broadcast hash table") == 2 && whats(b).count(_ == "broadcast relation") == 1 &&
      whats(b).count(_ == "broadcast relation, reused") == 1), broadcastBuilt.map(whats))
  }

  test("a sort-merge join: both sides shuffled and sorted, the buffered side holds the join's buffer") {
    val p = program(join, "spark.sql.autoBroadcastJoinThreshold" -> "-1", "spark.sql.join.preferSortMergeJoin" -> "true")
    val sides = arranged(p).map(whats)
    assert(sides.size == 2 && sides.forall(w => w.contains("shuffle") && w.contains("sort for merge join")), sides)
    assert(sides.count(_.contains("merge join buffer")) == 1, sides)
  }

  test("an aggregate: its partial and final hash aggregates and the shuffle between them") {
    val p = program("SELECT id % 7 AS g, sum(id) FROM range(1000) GROUP BY id % 7")
    assert(whats(p.blocks.last).toSet == Set("hash aggregate (partial)", "shuffle", "hash aggregate (final)"), whats(p.blocks.last))
  }

  test("a window: its buffer and the sort it needs") {
    val p = program("SELECT id, sum(id) OVER (PARTITION BY id % 3 ORDER BY id) FROM range(100)")
    val w = p.blocks.find(_.head.exists(_.kind == HeadKind.Reduce)).get
    assert(Set("window buffer", "sort for window").subsetOf(whats(w).toSet), whats(w))
  }

  test("a cached DataFrame is an existing arrangement: read, not built") {
    val cached = spark.range(100).toDF("k")
    cached.cache().count()
    try {
      cached.createOrReplaceTempView("realization_cached")
      val p = program("SELECT k, count(*) FROM realization_cached GROUP BY k")
      val shared = p.blocks.flatMap(_.realization.get).filter(_.shared)
      assert(shared.map(_.what) == Seq("cached relation"), p.blocks.map(_.realization))
    } finally cached.unpersist()
  }

  test("a cached DataFrame not materialized yet is built by the query's first run, not an existing arrangement") {
    val cached = spark.range(50).toDF("k").cache()
    try {
      cached.createOrReplaceTempView("realization_unmaterialized")
      val p = program("SELECT k, count(*) FROM realization_unmaterialized GROUP BY k")
      val ops = p.blocks.flatMap(_.realization.get).filter(_.what == "cached relation")
      assert(ops.size == 1 && !ops.head.shared, p.blocks.map(_.realization))
    } finally cached.unpersist()
  }

  test("a logical plan alone (no physical plan asked for) has no realization: nothing is claimed") {
    val p = Arrnf.program(spark.sql(join).queryExecution.optimizedPlan, "q")
    assert(p.blocks.forall(_.realization.isEmpty) && p.realized.isEmpty)
    assert(!arrnf.render.TextFormat(p).contains("spark="))
  }
}
