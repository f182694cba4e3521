package arrnf.cost

import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, LogicalPlan}
import org.apache.spark.sql.classic.Dataset

import arrnf.ArrnfSparkSuite
import arrnf.rules.EagerAggregation
import arrnf.stats.Sketches

/** Rows told unknown from the plan's shape: only where the estimator, with every statistic at hand, finds none either. */
class UnknownRowsSuite extends ArrnfSparkSuite {
  private lazy val dir = tempDir("arrnf-unknown-rows")

  private def tableOf(name: String, rows: Long, exprs: String*): Unit = {
    spark.range(rows).selectExpr(exprs: _*).write.mode("overwrite").parquet(s"$dir/$name")
    spark.read.parquet(s"$dir/$name").createOrReplaceTempView(name)
  }

  override def beforeAll(): Unit = {
    super.beforeAll()
    Sketches.clear()
    // 1,000 items: 20 stock rows each, on hand 0 to 999; 5 sales each, 1 to 100 sold
    tableOf("unk_stock", 20000, "id % 1000 AS item", "CAST(pmod(hash(id, 1), 1000) AS INT) AS qty")
    tableOf("unk_sold", 5000, "id % 1000 AS item", "CAST(pmod(hash(id, 2), 100) + 1 AS INT) AS quantity")
    Seq("unk_stock", "unk_sold").foreach(t => Sketches.collect(spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession], t))
  }

  private def optimized(sql: String): LogicalPlan = spark.sql(sql).asInstanceOf[Dataset[_]].queryExecution.optimizedPlan

  private val join = "SELECT st.item, s.quantity FROM unk_stock st JOIN unk_sold s ON st.item = s.item AND "

  test("told unknown: a comparison with an aggregate's result, of three tables' columns, of a computed column; a subquery filter") {
    for (sql <- Seq(
        // TPC-DS q32's shape: the sales above 1.3 times their item's average
        "SELECT s.item FROM unk_sold s JOIN (SELECT item, 1.3 * avg(quantity) AS a FROM unk_sold GROUP BY item) x " +
          "ON s.item = x.item AND s.quantity > x.a",
        "SELECT st.item FROM unk_stock st JOIN unk_sold s ON st.item = s.item " +
          "JOIN unk_stock st2 ON st2.item = s.item AND st.qty + st2.qty < s.quantity",
        "SELECT st.item FROM (SELECT item, qty + 1 AS q FROM unk_stock) st JOIN unk_sold s ON st.item = s.item AND st.q < s.quantity",
        // an inequality only, no keys
        "SELECT st.item FROM unk_stock st JOIN unk_sold s ON st.qty < s.quantity")) {
      val plan = optimized(sql)
      assert(UnknownRows.reason(plan).contains(Estimator.UnestimatedCondition), plan)
      // the claim: the estimator, the sketch pass taken, has no rows for it either (where it finds
      // the join's keys uncounted, as for the aggregate's, it names that first)
      val e = new Estimator()(plan)
      assert(e.rows.isEmpty && e.source.startsWith("unknown: "), (sql, e))
    }
    // before Spark makes it a semi join (the analyzed plan; EagerAggregation runs before that rewrite)
    val bySubquery = spark.sql("SELECT item FROM unk_sold WHERE quantity IN (SELECT qty FROM unk_stock WHERE qty < 10)")
      .asInstanceOf[Dataset[_]].queryExecution.analyzed
    assert(UnknownRows.reason(bySubquery).contains(Estimator.SubqueryFilter), bySubquery)
    val e = new Estimator()(bySubquery)
    assert(e.rows.isEmpty && e.source == Estimator.SubqueryFilter, e)
  }

  test("not told: conditions the sample's pairs or the keys' distinct counts cover; nothing looked for below an aggregate") {
    for (condition <- Seq("st.qty < s.quantity", "substr(CAST(st.qty AS STRING), 1, 1) = '1' OR s.quantity > 90")) {
      val plan = optimized(join + s"($condition)")
      assert(UnknownRows.reason(plan).isEmpty, plan)
      assert(new Estimator()(plan).rows.isDefined, (condition, new Estimator()(plan)))
    }
    val keysOnly = optimized("SELECT st.item FROM unk_stock st JOIN unk_sold s ON st.item = s.item")
    assert(UnknownRows.reason(keysOnly).isEmpty)
    val filtered = optimized("SELECT st.item FROM unk_stock st JOIN unk_sold s ON st.item = s.item WHERE s.quantity < 10")
    assert(UnknownRows.reason(filtered).isEmpty && new Estimator()(filtered).rows.isDefined, filtered)
    // an aggregate over the unknown join is not looked through (its groups may be bounded by its tables')
    val grouped = optimized("SELECT s.item, count(*) FROM unk_sold s JOIN (SELECT item, 1.3 * avg(quantity) AS a " +
      "FROM unk_sold GROUP BY item) x ON s.item = x.item AND s.quantity > x.a GROUP BY s.item")
    assert(grouped.isInstanceOf[Aggregate] && UnknownRows.reason(grouped).isEmpty, grouped)
    assert(UnknownRows.reason(grouped.children.head).isDefined, grouped)
  }

  test("EagerAggregation declines such an aggregate as unknown, saying why, without estimating it") {
    withConf("spark.sql.autoBroadcastJoinThreshold" -> "-1") {
      for ((sql, why) <- Seq(
          "SELECT st.item, sum(st.qty) FROM unk_stock st JOIN unk_sold s ON st.item = s.item " +
            "JOIN (SELECT item, 1.3 * avg(quantity) AS a FROM unk_sold GROUP BY item) x ON s.item = x.item AND s.quantity > x.a " +
            "GROUP BY st.item" -> Estimator.UnestimatedCondition,
          "SELECT st.item, sum(st.qty) FROM unk_stock st JOIN unk_sold s ON st.item = s.item " +
            "WHERE s.quantity IN (SELECT qty FROM unk_stock WHERE qty < 10) GROUP BY st.item" -> Estimator.SubqueryFilter)) {
        val before = Estimator.nanos()
        val reasons = EagerAggregation.reasonsIn(optimized(sql))
        assert(reasons.contains(s"declined: the pre-aggregate's rows are unknown ($why)"), reasons)
        assert(Estimator.nanos() == before, s"the joins were estimated: $sql")
      }
    }
  }
}
