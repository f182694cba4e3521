package arrnf.catalyst

import org.apache.spark.sql.catalyst.expressions.{Alias, Expression}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Project}
import org.apache.spark.sql.types._

import arrnf.ArrnfSparkSuite

/** The shared analysis the rules ask before removing, merging or moving work: can it fail, can it vary. */
class EffectsSuite extends ArrnfSparkSuite {
  override def beforeAll(): Unit = {
    super.beforeAll()
    spark.sql("create or replace temp view e as select id as k, cast(id as double) as d, cast(id as int) as i, " +
      "cast(id as decimal(38, 0)) as m, cast(id as string) as s, make_dt_interval(id) as iv, " +
      "make_ym_interval(0, cast(id as int)) as ym from range(5)")
  }

  private def withAnsi[T](on: Boolean)(body: => T): T = withConf("spark.sql.ansi.enabled" -> on.toString)(body)

  /** The analyzed expression `e` over the view `e` (ANSI is fixed when the query is analyzed). */
  private def expr(e: String): Expression =
    spark.sql(s"select $e as v from e").queryExecution.analyzed match {
      case Project(Seq(a: Alias), _) => a.child
      case other => fail(other.treeString)
    }

  private def plan(sql: String): LogicalPlan = spark.sql(sql).queryExecution.optimizedPlan

  private val alwaysSafe = Seq("k", "k = 1 and d < 2.5", "coalesce(s, 'x')", "case when k > 1 then i else null end",
    "k % 3", "d + d * d", "d / 2", "cast(i as bigint)", "cast(k as string)", "k in (1, 2)", "isnull(m)")
  private val ansiOnly = Seq("k + 1", "k * 9223372036854775807", "m * m", "-(k)", "10 div (k - 3)", "k % (k - 1)",
    "d / (d - 1)", "cast(s as int)", "cast(k as int)", "10 div 0", "i div -1")
  private val alwaysFailing = Seq("iv + iv", "iv * 2", "-iv", "ym + interval '1' month", "raise_error('x')",
    "assert_true(k < 3)", "element_at(array(1, 2), i)", "(select id from range(2))", "cast(iv as interval second)")

  test("cannot fail in either mode: columns, comparisons, conditionals, up-casts, remainders by a literal, doubles") {
    for (ansi <- Seq(true, false); e <- alwaysSafe) withAnsi(ansi)(assert(!Effects.canFail(expr(e)), s"$e ansi=$ansi"))
  }

  test("ANSI integral and decimal arithmetic, DIV and narrowing or parsing casts fail with ANSI on, not off") {
    for (e <- ansiOnly) {
      withAnsi(true)(assert(Effects.canFail(expr(e)), s"$e with ANSI on"))
      withAnsi(false)(assert(!Effects.canFail(expr(e)), s"$e with ANSI off"))
    }
  }

  test("interval arithmetic, raise_error, assert_true, element_at and scalar subqueries fail in every mode") {
    for (ansi <- Seq(true, false); e <- alwaysFailing) withAnsi(ansi)(assert(Effects.canFail(expr(e)), s"$e ansi=$ansi"))
  }

  test("a plan can fail where one of its expressions can, aggregates included") {
    withAnsi(true) {
      assert(!Effects.canFail(plan("select k, count(*), max(d) from e group by k")))
      assert(Effects.canFail(plan("select k, sum(k) from e group by k")))
      assert(Effects.canFail(plan("select k from e where 10 div (k - 3) > 1")))
    }
    withAnsi(false)(assert(!Effects.canFail(plan("select k, sum(k) from e group by k"))))
  }

  test("a column's definition is followed down: d - d may not drop a failing multiplication") {
    val q = "select x from (select id * 9223372036854775807 as x, id as y from range(3))"
    def produce(sql: String, name: String) = {
      val p = plan(sql)
      Effects.canFailToProduce(p.output.find(_.name == name).get, p)
    }
    withAnsi(true) {
      assert(produce(q.replace("select x from", "select x, y from"), "x"))
      assert(!produce(q.replace("select x from", "select x, y from"), "y"))
      assert(produce("select s from (select k, sum(k) as s from e group by k)", "s"))
      assert(!produce("select c from (select k, count(*) as c from e group by k)", "c"))
    }
    withAnsi(false)(assert(!produce(q, "x")))
  }

  test("a lineage whose columns share definitions is followed once per column (30 levels of x + y, x - y)") {
    withAnsi(false) {
      // Each level refers to both columns of the one below: 2^30 paths, 60 columns.
      val q = (1 to 30).foldLeft("select id as x, id as y from range(3)")((sql, _) =>
        s"select x + y as x, x - y as y from ($sql)")
      val p = plan(q)
      assert(!Effects.canFailToProduce(p.output.head, p))
      assert(p.collect { case pr: Project => pr }.size > 10, "Spark kept the levels apart")
    }
  }

  test("can vary: non-deterministic expressions, unseeded samples, samples after a shuffle, RDDs") {
    assert(!Effects.canVary(plan("select k, d from e where k > 1")))
    assert(Effects.canVary(plan("select k, rand() from e")))
    assert(Effects.canVary(plan("select * from e tablesample (50 percent)")))
    assert(!Effects.canVary(plan("select * from e tablesample (50 percent) repeatable (7)")))
    assert(Effects.canVary(plan(
      "select * from (select k, count(*) c from e group by k) tablesample (50 percent) repeatable (7)")))
    import spark.implicits._
    val rdd = spark.sparkContext.parallelize(1 to 5, 1).map(i => (i, scala.util.Random.nextDouble())).toDF("i", "r")
    assert(Effects.canVary(rdd.queryExecution.optimizedPlan))
    assert(Effects.canFail(rdd.queryExecution.optimizedPlan))
  }

  test("a cached relation varies as the plan it caches") {
    val fixed = spark.sql("select id as k from range(4)").cache()
    val random = spark.sql("select id as k, rand() as r from range(4)").cache()
    try {
      assert(!Effects.canVary(fixed.queryExecution.optimizedPlan))
      assert(Effects.canVary(random.queryExecution.optimizedPlan))
    } finally { fixed.unpersist(); random.unpersist() }
  }

  test("binary equality: collations that ignore case or trailing spaces have none, also nested") {
    def collated(c: String) = StringType(c)
    assert(Effects.binaryEquality(StringType) && Effects.binaryEquality(DoubleType))
    assert(Effects.binaryEquality(collated("UTF8_BINARY")))
    for (c <- Seq("UTF8_LCASE", "UNICODE_CI", "UTF8_BINARY_RTRIM")) {
      assert(!Effects.binaryEquality(collated(c)), c)
      assert(!Effects.binaryEquality(StructType(Seq(StructField("x", ArrayType(collated(c)))))), c)
    }
  }
}
