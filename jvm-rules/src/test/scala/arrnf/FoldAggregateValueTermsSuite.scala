package arrnf

import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

class FoldAggregateValueTermsSuite extends ArrnfSparkSuite {
  override def beforeAll(): Unit = {
    super.beforeAll()
    spark.sql("create or replace temp view g as select id % 4 as k, if(id % 5 = 0, null, id % 3) as n, " +
      "cast(id % 2 as double) * if(id % 4 = 0, -0.0, 0.0) as z, if(id % 2 = 0, 'a', 'A') as s, id as v from range(40)")
  }

  private def aggs(p: LogicalPlan) = p.flatMap(_.expressions.flatMap(_.collect { case a: AggregateExpression => a }))

  test("min/max/first/any_value of a grouping key or a literal are that value") {
    val (on, off) = assertSameBothWays(
      "select k, n, max(k), min(n), first(k), any_value(n), min(3), max('x'), sum(v) from g group by k, n")
    assert(aggs(on).size == 1, on.treeString) // only sum(v) is left
    assert(aggs(off).size == 7, off.treeString)
  }

  test("all folded: the aggregate becomes a plain distinct") {
    val (on, _) = assertSameBothWays("select k, max(k) from g group by k")
    assert(aggs(on).isEmpty, on.treeString)
  }

  test("does not fire for a global aggregate: max(3) over no rows is NULL") {
    val (on, _) = assertSameBothWays("select max(3), min(k) from g where v < 0")
    assert(aggs(on).size == 2, on.treeString)
  }

  test("does not fire with a FILTER clause, on a non-key column, on doubles or case-insensitive strings") {
    val (on1, _) = assertSameBothWays("select k, max(k) filter (where v > 100) from g group by k")
    assert(aggs(on1).size == 1, on1.treeString)
    val (on2, _) = assertSameBothWays("select k, max(n) from g group by k")
    assert(aggs(on2).size == 1, on2.treeString)
    val (on3, _) = assertSameBothWays("select z, min(z) from g group by z")
    assert(aggs(on3).size == 1, on3.treeString)
    val (on4, _) = assertSameBothWays("select collate(s, 'UTF8_LCASE') c, max(collate(s, 'UTF8_LCASE')) from g group by 1")
    assert(aggs(on4).size == 1, on4.treeString)
  }
}
