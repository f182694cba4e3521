package arrnf

import org.apache.spark.sql.catalyst.plans.logical.Join

class EliminateUnitJoinSuite extends ArrnfSparkSuite {
  private def joins(p: org.apache.spark.sql.catalyst.plans.logical.LogicalPlan) = p.collect { case j: Join => j }

  test("a cross join with a one-row literal relation is its other input") {
    val (on, off) = assertSameBothWays("select t.id, u.one, u.s from range(5) t cross join (select 1 as one, 'x' as s) u")
    assert(joins(on).isEmpty, on.treeString)
    assert(joins(off).size == 1)
  }

  test("the unit on the left, with a join condition kept as a filter") {
    val (on, _) = assertSameBothWays("select * from (select 3 as c) u join range(10) t on t.id > u.c")
    assert(joins(on).isEmpty, on.treeString)
  }

  test("does not fire for an outer join: NULL padding differs") {
    val (on, _) = assertSameBothWays("select * from range(10) t left join (select 3 as c) u on t.id > u.c")
    assert(joins(on).size == 1, on.treeString)
  }

  test("does not fire for a non-deterministic unit column: rand() must stay evaluated once") {
    val (on, _) = withArrnf(true) {
      val df = spark.sql("select t.id, u.r from range(10) t cross join (select rand(7) as r) u")
      val rows = df.collect()
      assert(rows.map(_.getDouble(1)).distinct.length == 1) // one value, as in vanilla Spark
      (df.queryExecution.optimizedPlan, rows)
    }
    assert(joins(on).size == 1, on.treeString)
  }

  test("the kill switch and the rule's own switch turn it off") {
    val q = "select t.id from range(3) t cross join (select 1 as one) u"
    spark.conf.set("spark.arrnf.EliminateUnitJoin.enabled", "false")
    try assert(joins(run(q, enabled = true)._1).size == 1)
    finally spark.conf.unset("spark.arrnf.EliminateUnitJoin.enabled")
    assert(joins(run(q, enabled = false)._1).size == 1)
    assert(joins(run(q, enabled = true)._1).isEmpty)
  }
}
