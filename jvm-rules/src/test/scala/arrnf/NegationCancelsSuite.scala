package arrnf

import org.apache.spark.sql.catalyst.plans.{LeftAnti, LeftSemi}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Join, LocalRelation, LogicalPlan, Union}

class NegationCancelsSuite extends ArrnfSparkSuite with RingTestSupport {
  override def beforeAll(): Unit = {
    super.beforeAll()
    spark.sql("create or replace temp view t as select id as a, if(id % 3 = 0, null, id % 7) as n, " +
      "id % 5 as k from range(40)")
  }

  private def unions(p: LogicalPlan) = p.collect { case u: Union => u }
  private def aggregates(p: LogicalPlan) = p.collect { case a: Aggregate => a }
  private def semiAnti(p: LogicalPlan) = p.collect { case j @ Join(_, _, LeftSemi | LeftAnti, _, _) => j }

  test("Q EXCEPT ALL Q cancels to empty") {
    val (on, off) = plansBothWays("select a, n from t except all select a, n from t")
    assert(unions(on).isEmpty && aggregates(on).isEmpty, on.treeString)
    assert(on.collectFirst { case l: LocalRelation if l.data.isEmpty => l }.nonEmpty, on.treeString)
    assert(unions(off).size == 1 && aggregates(off).size == 1, off.treeString)
  }

  test("(A UNION ALL B) EXCEPT ALL B cancels B and keeps A, NULLs included") {
    val (on, off) = plansBothWays(
      "(select n from t where a < 10 union all select k from t) except all select k from t")
    assert(unions(on).isEmpty, on.treeString)
    assert(unions(off).size == 1 && unions(off).head.children.size == 3, off.treeString)
  }

  test("bag semantics: +X +X -X leaves one +X") {
    val (on, _) = plansBothWays(
      "(select k from t union all select k from t) except all select k from t")
    assert(unions(on).isEmpty, on.treeString) // one +X branch left: no union any more
  }

  test("does not fire when the terms differ") {
    val (on, _) = plansBothWays("select k from t except all select k from t where a > 3")
    assert(unions(on).size == 1 && unions(on).head.children.size == 2, on.treeString)
  }

  test("does not fire for non-deterministic terms: two runs of rand() are not twins") {
    val q = "select cast(rand(1) * 3 as int) r from range(30) except all select cast(rand(1) * 3 as int) r from range(30)"
    val on = withArrnf(true)(spark.sql(q).queryExecution.optimizedPlan)
    assert(unions(on).size == 1, on.treeString)
  }

  test("INTERSECT ALL is not a negation: left alone") {
    val (on, _) = plansBothWays("select k from t intersect all select k from t")
    assert(unions(on).size == 1, on.treeString)
  }

  test("Q EXCEPT Q is empty and Q INTERSECT Q is DISTINCT Q (EliminateSelfSemiAntiJoin)") {
    val (on1, off1) = assertSameBothWays("select n, k from t except select n, k from t")
    assert(semiAnti(on1).isEmpty && aggregates(on1).isEmpty, on1.treeString)
    assert(semiAnti(off1).size == 1)
    val (on2, off2) = assertSameBothWays("select n, k from t intersect select n, k from t")
    assert(semiAnti(on2).isEmpty && aggregates(on2).size == 1, on2.treeString)
    assert(semiAnti(off2).size == 1)
  }

  test("EXCEPT of different or non-deterministic inputs, or on other columns, is left alone") {
    val (on1, _) = assertSameBothWays("select n, k from t except select k, n from t")
    assert(semiAnti(on1).size == 1, on1.treeString)
    val (on2, _) = assertSameBothWays("select n from t except select n from t where a > 5")
    assert(semiAnti(on2).size + aggregates(on2).size >= 1 && on2.collectFirst { case l: LocalRelation => l }.isEmpty,
      on2.treeString)
    // an explicit anti join on `=` of a nullable column keeps the NULL rows: not the law
    val (on3, _) = assertSameBothWays("select * from (select n from t) x left anti join (select n from t) y on x.n = y.n")
    assert(semiAnti(on3).size == 1, on3.treeString)
    val (on4, _) = run("select rand(3) r from range(5) except select rand(3) r from range(5)", enabled = true)
    assert(semiAnti(on4).size == 1, on4.treeString)
  }

  // ---- soundness: the law only where it holds (issue 23) ----------------------------------------

  private def withAnsi[T](on: Boolean)(body: => T): T = withConf("spark.sql.ansi.enabled" -> on.toString)(body)

  /** Rows, or the error's condition, with the rewrites on and off: they must be the same. */
  private def sameOutcome(sql: String): (Either[String, Seq[String]], LogicalPlan) = {
    def outcome(enabled: Boolean) = withArrnf(enabled) {
      val df = spark.sql(sql)
      val plan = df.queryExecution.optimizedPlan
      val result = try Right(df.collect().toSeq.map(_.toString).sorted) catch {
        case e: org.apache.spark.SparkThrowable => Left(String.valueOf(e.getCondition))
        case e: Exception if e.getCause.isInstanceOf[org.apache.spark.SparkThrowable] =>
          Left(String.valueOf(e.getCause.asInstanceOf[org.apache.spark.SparkThrowable].getCondition))
      }
      (result, plan)
    }
    val (on, onPlan) = outcome(enabled = true)
    val (off, _) = outcome(enabled = false)
    assert(on == off, s"with the extension: $on\nwithout: $off\nquery: $sql")
    (on, onPlan)
  }

  private val failing = "select id as k from range(20)"

  test("a file read with mode FAILFAST keeps its malformed-record error: Q EXCEPT ALL Q, Q EXCEPT Q, a self semi join") {
    val dir = tempDir("failfast")
    java.nio.file.Files.writeString(new java.io.File(dir, "t.csv").toPath, "1,10\n2,x20\n3,30\n")
    for (format <- Seq("csv", "json")) {
      if (format == "json") java.nio.file.Files.writeString(new java.io.File(dir, "t.csv").toPath,
        "{\"k\": 1, \"v\": 10}\n{\"k\": 2, \"v\": \"x20\"}\n")
      spark.read.format(format).schema("k INT, v INT").option("mode", "FAILFAST").load(dir.getPath).createOrReplaceTempView("ff")
      for (q <- Seq("select * from ff except all select * from ff", "select * from ff except select * from ff",
          "select * from ff a left semi join ff b on a.k <=> b.k and a.v <=> b.v")) {
        val (result, plan) = sameOutcome(q)
        assert(result.isLeft, s"$format: $q should fail: $result\n$plan")
      }
      // PERMISSIVE (the default) reads the malformed record as NULLs: nothing fails, and the law holds
      spark.read.format(format).schema("k INT, v INT").load(dir.getPath).createOrReplaceTempView("fp")
      val (rows, plan) = sameOutcome("select * from fp except all select * from fp")
      assert(rows == Right(Nil) && plan.collectFirst { case l: LocalRelation => l }.isDefined, plan)
    }
  }

  test("Q EXCEPT ALL Q, (A UNION ALL B) EXCEPT ALL B and Q EXCEPT Q keep a DIVIDE_BY_ZERO of the dropped term") {
    withAnsi(true) {
      spark.sql(failing).createOrReplaceTempView("r")
      for (q <- Seq(
          "select 10 div (k - 3) as v from r except all select 10 div (k - 3) from r",
          "(select k from r union all select 10 div (k - 3) from r) except all select 10 div (k - 3) from r",
          "select 10 div (k - 3) as v from r except select 10 div (k - 3) from r",
          "select 10 div (k - 3) as v from r intersect select 10 div (k - 3) from r",
          "select k + 9223372036854775800 as v from r except all select k + 9223372036854775800 from r",
          "select cast(concat('x', k) as int) as v from r except all select cast(concat('x', k) as int) from r")) {
        val (result, _) = sameOutcome(q)
        assert(result.isLeft, s"$q should fail: $result")
      }
    }
  }

  test("without ANSI the same division cannot fail (NULL for 0), and the terms still cancel") {
    withAnsi(false) {
      spark.sql(failing).createOrReplaceTempView("r")
      val (result, on) = sameOutcome("select 10 div (k - 3) as v from r except all select 10 div (k - 3) from r")
      assert(result == Right(Nil) && unions(on).isEmpty, on.treeString)
    }
  }

  test("collations whose equality is not binary: the group shows the row vanilla Spark shows") {
    spark.sql("create or replace temp view ca as select * from values ('A' collate UTF8_LCASE, 1), ('x' collate UTF8_LCASE, 2) as t(c, n)")
    spark.sql("create or replace temp view cb as select * from values ('a' collate UTF8_LCASE, 1), ('X' collate UTF8_LCASE, 2) as t(c, n)")
    val q = "(select c, n from cb union all select c, n from ca) except all select c, n from cb"
    val (result, on) = sameOutcome(q)
    assert(result == Right(Seq("[X,2]", "[a,1]")), result)
    assert(unions(on).nonEmpty, on.treeString)
    for (c <- Seq("UNICODE_CI", "UTF8_BINARY_RTRIM")) {
      val (_, onC) = sameOutcome(s"(select c collate $c as c from cb union all select c collate $c from ca) " +
        s"except all select c collate $c from cb")
      assert(unions(onC).nonEmpty, onC.treeString)
    }
    // binary collation (and doubles: grouping normalizes -0.0 on both sides) still cancel
    val (_, onB) = sameOutcome("(select cast(c as string collate UTF8_BINARY) c, cast(n as double) d from cb union all " +
      "select cast(c as string collate UTF8_BINARY), cast(n as double) from ca) except all " +
      "select cast(c as string collate UTF8_BINARY), cast(n as double) from cb")
    assert(unions(onB).isEmpty, onB.treeString)
  }

  test("an unseeded sample is not the same rows twice; a seeded one over a relation is") {
    spark.sql("create or replace temp view sr as select id as k from range(200)")
    val unseeded = withArrnf(true)(spark.sql(
      "with s as (select k from sr tablesample (50 percent)) select * from s except all select * from s")
      .queryExecution.optimizedPlan)
    assert(unions(unseeded).nonEmpty, unseeded.treeString)
    assert(withArrnf(true)(spark.sql("with s as (select k from sr tablesample (50 percent)) " +
      "select count(*) > 0 from (select * from s except all select * from s)").collect().head.getBoolean(0)))
    val (result, seeded) = sameOutcome(
      "with s as (select k from sr tablesample (50 percent) repeatable (7)) select * from s except all select * from s")
    assert(result == Right(Nil) && unions(seeded).isEmpty, seeded.treeString)
  }

  test("an RDD-backed relation is computed again for each reference: not cancelled (a checkpointed one is)") {
    import spark.implicits._
    val df = spark.sparkContext.parallelize(0 until 10, 1).map(i => (i, scala.util.Random.nextDouble())).toDF("i", "r")
    val plan = withArrnf(true)(df.exceptAll(df).queryExecution.optimizedPlan)
    assert(unions(plan).nonEmpty, plan.treeString)
    assert(withArrnf(true)(df.exceptAll(df).count()) == 10)
    val fixed = df.localCheckpoint()
    val planFixed = withArrnf(true)(fixed.exceptAll(fixed).queryExecution.optimizedPlan)
    assert(unions(planFixed).isEmpty, planFixed.treeString)
  }

  test("a left anti join with a unit and no condition empties the input only if the input cannot fail") {
    withAnsi(true) {
      spark.sql(failing).createOrReplaceTempView("r")
      // Spark's nested-loop anti join never reads its input when the other side has a row, so no
      // error either way; the rule still keeps the join (dropping work that can fail is not proven safe).
      val (result, on) = sameOutcome(
        "select * from (select k from r where 10 div (k - 3) > 0) x left anti join (select 1 as one) u")
      assert(result == Right(Nil), result)
      assert(on.collect { case j: Join => j }.nonEmpty, on.treeString)
      val (ok, onOk) = sameOutcome("select k from r left anti join (select 1 as one) u")
      assert(ok == Right(Nil) && onOk.collect { case j: Join => j }.isEmpty, onOk.treeString)
    }
  }

  test("a failing predicate above the set operation, which Spark pushes into every branch, keeps its error") {
    withAnsi(true) {
      val dir = tempDir("arrnf-nc").toString + "/t"
      spark.range(40).selectExpr("cast(id % 7 as int) as k").write.parquet(dir)
      spark.read.parquet(dir).createOrReplaceTempView("pk")
      val s = "(select k as c0 from pk tablesample (50 percent) repeatable (7))"
      for (q <- Seq(
          s"select * from ($s except all $s) q where extract(day from interval '30000000' day * q.c0) > 0",
          s"select * from ($s except $s) q where extract(day from interval '30000000' day * q.c0) > 0")) {
        val (result, _) = sameOutcome(q)
        assert(result.isLeft, s"$q should fail: $result")
      }
      // the same predicate that cannot fail: still cancelled
      val (ok, on) = sameOutcome(s"select * from ($s except all $s) q where q.c0 > 0")
      assert(ok == Right(Nil) && unions(on).isEmpty, on.treeString)
    }
  }

  test("a predicate above that becomes failing once pushed through a projection (c >= 1 over k * MAX) keeps the anti join") {
    withAnsi(true) {
      val dir = tempDir("arrnf-uj").toString + "/t"
      spark.range(40).selectExpr("cast(id % 7 as int) as k").write.parquet(dir)
      spark.read.parquet(dir).createOrReplaceTempView("pk2")
      val q = "select l1.c0 from (select 1 as c0) u2 left join (select l3.c0 from (select k * 9223372036854775807 as c0 " +
        "from pk2) l3 left anti join (select 1 as c0) u4) l1 on l1.c0 >= u2.c0"
      val (_, on) = sameOutcome(q)
      assert(on.collect { case j @ Join(_, _, LeftAnti, _, _) => j }.nonEmpty, on.treeString)
      // nothing above can fail: the anti join with a unit is empty
      val (ok, on2) = sameOutcome("select * from (select k from pk2) l3 left anti join (select 1 as c0) u4")
      assert(ok == Right(Nil) && on2.collect { case j: Join => j }.isEmpty, on2.treeString)
    }
  }
}

