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
}
