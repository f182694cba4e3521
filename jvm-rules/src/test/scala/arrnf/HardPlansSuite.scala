package arrnf

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import arrnf.guard.ArrnfStatus

/**
 * Hard plans: very wide unions, very deep join chains, deeply nested subqueries and very wide rows.
 * With every rule of the extension on (the test does not name them, so rules added later are
 * covered), planning finishes without a stack overflow, within Spark's own limits (under
 * `spark.testing` a fixed-point batch that reaches `spark.sql.optimizer.maxIterations` throws) and
 * returns what vanilla Spark returns (the kill switch off). Where vanilla Spark itself fails on a
 * plan, the extension must fail the same way, never newly.
 *
 * Each plan also carries the shapes the rules rewrite: one-row relations, UNION ALL of joins
 * sharing an input, EXCEPT ALL of a relation with itself.
 */
class HardPlansSuite extends ArrnfSparkSuite {

  override def beforeAll(): Unit = {
    super.beforeAll()
    spark.range(0, 20, 1, 1).selectExpr("id", "id % 3 AS k").createOrReplaceTempView("hp_a")
    spark.range(0, 10, 1, 1).selectExpr("id", "id % 5 AS k").createOrReplaceTempView("hp_b")
  }

  /** Plans and runs `sql` without, then with, the rewrites; vanilla failures must repeat, not appear. */
  private def sameBothWaysOrSameFailure(sql: String): Option[(LogicalPlan, LogicalPlan)] = {
    val off = try Right(run(sql, enabled = false)) catch { case e: Throwable if NonFatal(e) || e.isInstanceOf[StackOverflowError] => Left(e) }
    off match {
      case Right((offPlan, offRows)) =>
        val (onPlan, onRows) =
          try run(sql, enabled = true)
          catch {
            case e: StackOverflowError => fail(s"stack overflow with the extension only (${sql.take(200)}…)", e)
            case NonFatal(e) => fail(s"fails with the extension only: $e (${sql.take(200)}…)", e)
          }
        assert(onRows.map(_.toString).sorted == offRows.map(_.toString).sorted, s"results differ: ${sql.take(300)}…")
        Some((onPlan, offPlan))
      case Left(vanilla) =>
        val on = try { run(sql, enabled = true); None } catch { case e: Throwable => Some(e) }
        assert(on.exists(_.getClass == vanilla.getClass), s"vanilla Spark fails with $vanilla, the extension with $on")
        assert(!vanilla.isInstanceOf[org.apache.spark.sql.AnalysisException], s"the test's SQL is wrong: $vanilla")
        info(s"vanilla Spark fails too: ${vanilla.toString.take(300)}")
        None
    }
  }

  private def noFailures[T](body: => T): T = {
    val before = ArrnfStatus.failures()
    val result = body
    assert(ArrnfStatus.failures() == before, s"a rule failed (and was skipped) on a hard plan: ${ArrnfStatus.failures()}")
    result
  }

  test("a UNION ALL of 2,000 branches, with joins sharing an input among them") {
    val branches = (0 until 2000).map { i =>
      if (i % 100 == 0) s"SELECT a.id AS x, b.k AS y FROM hp_a a JOIN hp_b b ON a.k = b.k WHERE b.id > ${i % 7}"
      else if (i % 100 == 1) s"SELECT t.id AS x, u.c AS y FROM hp_b t CROSS JOIN (SELECT $i AS c) u"
      else s"SELECT id AS x, $i AS y FROM hp_b"
    }
    // Spark's SQL parser overflows its stack on 2,000 branches in one flat UNION ALL chain (vanilla
    // Spark: FAILED_TO_PARSE_TOO_COMPLEX), so the text groups them by 40; the analyzer and the
    // optimizer flatten the groups into one Union of 2,000 children again.
    val union = branches.grouped(40).zipWithIndex.map { case (g, i) => s"SELECT * FROM (${g.mkString(" UNION ALL ")}) g$i" }
    val sql = s"SELECT count(*), sum(x), sum(y) FROM (${union.mkString(" UNION ALL ")}) q"
    noFailures(sameBothWaysOrSameFailure(sql))
  }

  test("a 300-deep join chain, with one-row relations in it") {
    val joins = (1 until 300).map { i =>
      if (i % 50 == 0) s"CROSS JOIN (SELECT $i AS c$i) t$i"
      else s"JOIN hp_b t$i ON t$i.id = t0.id" // id is unique in hp_b: the chain keeps t0's 2 rows
    }
    val sql = s"SELECT count(*) FROM (SELECT id, k FROM hp_b WHERE id < 2) t0 ${joins.mkString(" ")}"
    noFailures(sameBothWaysOrSameFailure(sql))
  }

  test("100 nested derived tables, each with a one-row cross join") {
    var q = "SELECT id AS x FROM hp_a"
    for (i <- 1 to 100) q = s"SELECT s$i.x + u$i.one AS x FROM ($q) s$i CROSS JOIN (SELECT 1 AS one) u$i"
    // Vanilla Spark's fixed-point analyzer gives up on 100 levels at its default of 100 iterations
    // (under spark.testing: HYBRID_ANALYZER_EXCEPTION.FIXED_POINT_FAILED_SINGLE_PASS_SUCCEEDED), so
    // both sides get more analyzer iterations; the optimizer's limits stay Spark's defaults.
    spark.conf.set("spark.sql.analyzer.maxIterations", "1000")
    try noFailures(sameBothWaysOrSameFailure(s"SELECT count(*), sum(x) FROM ($q) q"))
    finally spark.conf.unset("spark.sql.analyzer.maxIterations")
  }

  /** Optimizes `sql` without, then with, the rewrites (no execution): the same plan or the same failure. */
  private def plansBothWaysOrSameFailure(sql: String): Unit = {
    def optimize(enabled: Boolean): Either[Throwable, LogicalPlan] = withArrnf(enabled) {
      try Right(spark.sql(sql).queryExecution.optimizedPlan)
      catch { case e: Throwable if NonFatal(e) || e.isInstanceOf[StackOverflowError] => Left(e) }
    }
    (optimize(enabled = false), optimize(enabled = true)) match {
      case (Right(_), Left(e)) => fail(s"planning fails with the extension only: $e", e)
      case (Left(v), Right(_)) => info(s"vanilla planning fails, the extension's does not: $v")
      case (Left(v), Left(e)) => assert(v.getClass == e.getClass, s"vanilla fails with $v, the extension with $e")
      case (Right(_), Right(_)) =>
    }
  }

  // Planned only: executing 100 nested EXCEPT ALL runs hundreds of tiny stages (over ten minutes on
  // two cores) and tests Spark's scheduler, not the rules; what the rules must do here is finish.
  test("100 nested IN subqueries, and 100 nested EXCEPT ALL") {
    var q = "SELECT k FROM hp_b"
    for (i <- 1 to 100) q = s"SELECT k FROM hp_a WHERE k IN ($q) AND id > ${i % 3}"
    noFailures(plansBothWaysOrSameFailure(s"SELECT count(*) FROM ($q) q"))
    var e = "SELECT k FROM hp_a"
    for (i <- 1 to 100) e = s"($e) EXCEPT ALL (SELECT k FROM hp_b WHERE id = ${i % 10})"
    noFailures(plansBothWaysOrSameFailure(s"SELECT count(*), sum(k) FROM ($e) q"))
  }

  test("rows of 1,000 columns through a unit join, a union of joins and EXCEPT ALL") {
    val cols = (0 until 1000).map(i => s"id + $i AS c$i").mkString(", ")
    spark.sql(s"SELECT $cols FROM hp_b").createOrReplaceTempView("hp_wide")
    val sums = (0 until 1000 by 97).map(i => s"sum(c$i)").mkString(", ")
    noFailures {
      sameBothWaysOrSameFailure("SELECT * FROM hp_wide w CROSS JOIN (SELECT 1 AS one) u")
      sameBothWaysOrSameFailure(
        s"SELECT count(*), $sums FROM (SELECT w.* FROM hp_wide w JOIN hp_a a ON w.c0 = a.id " +
          "UNION ALL SELECT w.* FROM hp_wide w JOIN hp_b b ON w.c0 = b.id) q")
      sameBothWaysOrSameFailure("SELECT * FROM hp_wide EXCEPT ALL SELECT * FROM hp_wide")
    }
  }
}
