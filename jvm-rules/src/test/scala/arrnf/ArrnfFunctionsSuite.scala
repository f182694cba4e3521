package arrnf

import org.json4s._
import org.json4s.jackson.JsonMethods

import arrnf.normalize.Arrnf
import arrnf.render.{JsonFormat, TextFormat}

/** The SQL functions give what the Scala and Python entry points give, from SQL alone. */
class ArrnfFunctionsSuite extends ArrnfSparkSuite {
  private def classic(sql: String) = spark.sql(sql).asInstanceOf[org.apache.spark.sql.classic.Dataset[_]]
  private val query = "SELECT k % 3 AS g, count(*) AS c FROM range(100) t(k) GROUP BY k % 3"

  test("arrnf_json and arrnf_text return the program of the query, as Arrnf.json and Arrnf.text do") {
    val json = spark.sql(s"SELECT arrnf_json('$query')").head().getString(0)
    assert(json == Arrnf.json(classic(query), "query"))
    val text = spark.sql(s"SELECT arrnf_text('$query')").head().getString(0)
    assert(text == Arrnf.text(classic(query), "query") && text.startsWith("-- ArrNF query: 1 blocks"))
  }

  test("the second argument names the result block, as Arrnf.json's name does") {
    val json = spark.sql(s"SELECT arrnf_json('$query', 'sales')").head().getString(0)
    assert(json == Arrnf.json(classic(query), "sales") && json != Arrnf.json(classic(query), "query"))
    val blocks = spark.sql(s"SELECT block FROM arrnf_blocks('$query', 'sales')").collect().map(_.getString(0))
    assert(blocks.toSeq == Seq("sales"))
  }

  test("arrnf_blocks gives one row per block, with its figures and its text") {
    val sql = "SELECT a.k, count(*) FROM range(10) a(k) JOIN range(20) b(k) ON a.k = b.k GROUP BY a.k"
    val program = Arrnf.program(classic(sql), "query")
    val rows = spark.sql(s"SELECT * FROM arrnf_blocks('$sql')").collect()
    assert(rows.map(_.getAs[String]("block")).toSeq == program.blocks.map(_.name))
    rows.zip(program.blocks).foreach { case (r, b) =>
      assert(r.getAs[Int]("arrangements") == b.cost.arrangements)
      assert(Option(r.getAs[String]("head")) == b.head.map(_.kind.name))
      assert(Option(r.get(r.fieldIndex("rows"))).map(_.asInstanceOf[Long]) == b.cost.rows)
      assert(r.getAs[String]("text") == TextFormat.blockText(b))
      assert(Option(r.getAs[String]("realization")) == b.realization.map(x => if (x.isEmpty) "none" else x.map(_.what).mkString(", ")))
    }
    assert(rows.exists(r => r.getAs[String]("head") == "ArrangeBy"))
    assert(rows.exists(r => r.getAs[String]("realization").contains("broadcast relation")), "range(10) is broadcast")
  }

  test("the query is planned in the calling session: its temporary views and settings") {
    spark.range(5).createOrReplaceTempView("arrnf_fn_view")
    val json = spark.sql("SELECT arrnf_json('SELECT DISTINCT id FROM arrnf_fn_view')").head().getString(0)
    implicit val formats: Formats = DefaultFormats
    assert((JsonMethods.parse(json) \ "blocks")(0) \ "head" \ "kind" == JString("Distinct"))
  }

  test("bad input gets one clear message: no query, not a constant, a query that does not analyze") {
    def message(sql: String): String = intercept[Exception](spark.sql(sql).collect()).getMessage
    val usage = "takes the query as a constant string and optionally the result block's name"
    assert(message("SELECT arrnf_json()").contains(usage))
    assert(message("SELECT arrnf_json(id) FROM range(1)").contains(usage))
    assert(message("SELECT arrnf_json('SELECT 1', 'a', 'b')").contains(usage))
    assert(message("SELECT arrnf_json('SELECT 1', cast(id AS STRING)) FROM range(1)").contains(usage))
    assert(message("SELECT arrnf_json(CAST(NULL AS STRING))").contains("the query is NULL"))
    assert(message("SELECT arrnf_json('SELECT 1', CAST(NULL AS STRING))").contains("the name is NULL"))
    assert(message("SELECT arrnf_text('SELECT 1', ' ')").contains("the name is empty"))
    val m = message("SELECT * FROM arrnf_blocks('SELECT * FROM no_such_table')")
    assert(m.contains("the query does not analyze") && m.contains("no_such_table"), m)
    // (ANSI: Spark folds 1/0 while planning, before anything runs)
    withConf("spark.sql.ansi.enabled" -> "true") {
      val planned = message("SELECT arrnf_text('SELECT 1/0')")
      assert(planned.startsWith("arrnf_text: the query failed while Spark planned it, before it ran, so it has no " +
        "ArrNF program: [DIVIDE_BY_ZERO]"), planned)
    }
  }

  test("a command is refused before anything runs: explaining never drops, writes, sets or caches") {
    spark.sql("CREATE TABLE arrnf_fn_kept USING parquet AS SELECT 1 AS x")
    try {
      def refused(command: String): String = {
        val m = intercept[Exception](spark.sql(s"SELECT arrnf_json('$command')").collect()).getMessage
        assert(m.contains("is a command") && m.contains("not a query"), m)
        m
      }
      assert(refused("DROP TABLE arrnf_fn_kept").contains("DropTable"))
      refused("INSERT INTO arrnf_fn_kept SELECT 2")
      refused("CREATE TABLE arrnf_fn_new USING parquet AS SELECT 1 AS x")
      refused("SET spark.arrnf.fn.probe=1")
      refused("CACHE TABLE arrnf_fn_kept")
      refused("TRUNCATE TABLE arrnf_fn_kept")
      assert(spark.table("arrnf_fn_kept").collect().map(_.getInt(0)).toSeq == Seq(1))
      assert(!spark.catalog.tableExists("arrnf_fn_new"))
      assert(spark.conf.getOption("spark.arrnf.fn.probe").isEmpty)
      assert(!spark.catalog.isCached("arrnf_fn_kept"))
      // queries of every form still work
      Seq("WITH a AS (SELECT 1 AS x) SELECT * FROM a", "VALUES (1), (2)", "TABLE arrnf_fn_kept", "FROM arrnf_fn_kept SELECT x")
        .foreach(q => assert(spark.sql(s"SELECT arrnf_text('$q')").head().getString(0).startsWith("-- ArrNF query")))
      assert(arrnf.Api.query(spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession], "SELECT 1").count() == 1)
      intercept[arrnf.sql.QueryText.NotAQuery](
        arrnf.Api.query(spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession], "DROP TABLE arrnf_fn_kept"))
      assert(spark.catalog.tableExists("arrnf_fn_kept"))
    } finally spark.sql("DROP TABLE IF EXISTS arrnf_fn_kept")
  }

  test("arrnf_statistics takes the sketch pass from SQL: a row per table, and the estimates read it") {
    val dir = java.nio.file.Files.createTempDirectory("arrnf-fn-stats").toString + "/t"
    spark.range(1000).selectExpr("id % 7 AS k").write.parquet(dir)
    spark.read.parquet(dir).createOrReplaceTempView("arrnf_fn_sketched")
    val grouped = "SELECT k, count(*) FROM arrnf_fn_sketched GROUP BY k"
    arrnf.stats.Sketches.clear()
    try {
      assert(Arrnf.program(classic(grouped).queryExecution.optimizedPlan, "q").blocks.last.cost.rows.isEmpty)
      val rows = spark.sql("SELECT * FROM arrnf_statistics('arrnf_fn_sketched', 'range_is_no_table')").collect()
      assert(rows.map(_.getString(0)).toSeq == Seq("arrnf_fn_sketched", "range_is_no_table"))
      assert(rows(0).getString(1).startsWith("arrnf_fn_sketched: 1000 rows, 1 columns sketched"), rows(0))
      assert(rows(1).getString(1).startsWith("range_is_no_table: not sketched"), rows(1))
      val after = Arrnf.program(classic(grouped).queryExecution.optimizedPlan, "q").blocks.last.cost
      assert(after.rows.contains(7L) && after.source.contains("sketch"), after)
      def message(sql: String): String = intercept[Exception](spark.sql(sql).collect()).getMessage
      assert(message("SELECT * FROM arrnf_statistics()").contains("takes the tables' names as constant strings"))
      assert(message("SELECT * FROM arrnf_statistics(1)").contains("takes the tables' names as constant strings"))
    } finally arrnf.stats.Sketches.clear()
  }

  test("DESCRIBE FUNCTION explains them") {
    val described = spark.sql("DESCRIBE FUNCTION EXTENDED arrnf_json").collect().map(_.getString(0)).mkString("\n")
    assert(described.contains("The ArrNF program of a query"))
  }
}
