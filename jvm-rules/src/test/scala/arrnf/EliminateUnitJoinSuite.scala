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

  test("does not fire for a full outer join: the unit row itself may be padded") {
    // planned only: a full outer nested-loop join runs a UnionRDD (see RingTestSupport)
    val on = withArrnf(true)(spark.sql("select * from range(10) t full join (select 3 as c) u on t.id > u.c")
      .queryExecution.optimizedPlan)
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

class EliminateUnitJoinOtherTypesSuite extends ArrnfSparkSuite {
  import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan}
  private def joins(p: LogicalPlan) = p.collect { case j: Join => j }
  private val t = "(select id, if(id % 4 = 0, null, id) as n from range(12))"

  test("left semi join with a unit is a filter (no condition: the input itself)") {
    val (on, off) = assertSameBothWays(s"select * from $t x left semi join (select 3 as c) u on x.n > u.c")
    assert(joins(on).isEmpty, on.treeString)
    assert(joins(off).size == 1)
    val (on2, _) = assertSameBothWays(s"select * from $t x left semi join (select 3 as c) u")
    assert(joins(on2).isEmpty, on2.treeString)
  }

  test("left anti join with a unit keeps the rows where the condition is false or NULL") {
    val (on, off) = assertSameBothWays(s"select * from $t x left anti join (select 3 as c) u on x.n > u.c")
    assert(joins(on).isEmpty, on.treeString)
    assert(joins(off).size == 1)
    assert(run(s"select * from $t x left anti join (select 3 as c) u on x.n > u.c", true)._2.size == 6)
  }

  test("left and right outer joins with a unit pad with NULL where the condition fails") {
    val (on, off) = assertSameBothWays(s"select * from $t x left join (select 3 as c, 'y' as s) u on x.n > u.c")
    assert(joins(on).isEmpty, on.treeString)
    assert(joins(off).size == 1)
    val (on2, _) = assertSameBothWays(s"select * from (select 3 as c) u right join $t x on x.n > u.c")
    assert(joins(on2).isEmpty, on2.treeString)
  }

  test("does not fire for a full outer join, nor an outer join with a column-less unit and a condition") {
    // planned only: a full outer nested-loop join runs a UnionRDD (see RingTestSupport)
    val on = withArrnf(true)(spark.sql(s"select * from $t x full join (select 3 as c) u on x.n > u.c")
      .queryExecution.optimizedPlan)
    assert(joins(on).size == 1, on.treeString)
    val on2 = withArrnf(true)(spark.sql(s"select x.* from $t x left join (select 1) u on x.n / 0 > 1")
      .queryExecution.optimizedPlan)
    assert(joins(on2).size == 1, on2.treeString)
  }
}
