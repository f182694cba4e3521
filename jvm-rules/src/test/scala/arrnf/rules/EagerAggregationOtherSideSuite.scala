package arrnf.rules

import org.apache.spark.sql.catalyst.dsl.expressions._
import org.apache.spark.sql.catalyst.dsl.plans._
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.{Count, Min, Sum}
import org.apache.spark.sql.catalyst.plans.Inner
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.types._

import arrnf.ArrnfConf

/** Eager aggregation of both sides of a join: the other side aggregated by its join keys and
 *  grouping columns, counting its rows, every sum and count part multiplied by that count. */
class EagerAggregationOtherSideSuite extends EagerAggregationPlanTest {

  private def always[T](body: => T): T = fires(withConf(ArrnfConf.EagerOtherSide -> "always")(body))

  /** The other side's pre-aggregate, as the rule builds it. */
  private def counted(keys: Seq[Attribute], child: LogicalPlan): (Aggregate, Attribute) = {
    val c = Alias(agg(Count(Literal(1))), "arrnf_rows")()
    (Aggregate(keys, keys :+ c, child), c.toAttribute)
  }

  test("always: sum, count(*), min, avg and a DISTINCT of R over both sides aggregated; parts weighted by the other side's count") {
    always {
      val input = fact.join(dim, Inner, Some(fk === dk)).groupBy(g)(g, sum(x).as("sx"), count(Literal(1)).as("n"),
        min(x).as("lo"), avg(x).as("ax"), countDistinct(y).as("dy"), sum(p).as("sp"))
      val optimized = run(input)
      val sx = part(Sum(x, ansi), "arrnf_sum")
      val n = part(Count(Literal(1)), "arrnf_count")
      val lo = part(Min(x), "arrnf_min")
      val as = part(Sum(x, ansi), "arrnf_sum")
      val ac = part(Count(x), "arrnf_count")
      val sp = part(Sum(p, ansi), "arrnf_sum")
      val (other, c) = counted(Seq(dk, g), dim)
      val wide = NumericEvalContext(EvalMode.ANSI, false)
      val dy = input.asInstanceOf[Aggregate].aggregateExpressions(5).asInstanceOf[Alias]
      val expected = Aggregate(Seq(g), Seq(g,
        kept(input, "sx", agg(Sum(Multiply(sx.toAttribute, c, ansi), ansi))),
        kept(input, "n", Coalesce(Seq(agg(Sum(Multiply(n.toAttribute, c, legacy), legacy)), Literal(0L)))),
        kept(input, "lo", agg(Min(lo.toAttribute))),            // min ignores multiplicities
        kept(input, "ax", Divide(Cast(agg(Sum(Multiply(as.toAttribute, c, ansi), ansi)), DoubleType),
          Cast(agg(Sum(Multiply(ac.toAttribute, c, legacy), legacy)), DoubleType), legacy)),
        dy,                                                       // so does a DISTINCT aggregate
        // DECIMAL(17,2) part times DECIMAL(20,0) count: DECIMAL(38,2), no scale lost; cast back
        kept(input, "sp", Cast(agg(Sum(Multiply(sp.toAttribute, Cast(c, DecimalType(20, 0)), wide), ansi)),
          DecimalType(17, 2), None, EvalMode.ANSI))),
        Aggregate(Seq(fk, y), Seq(fk, y, sx, n, lo, as, ac, sp), fact).join(other, Inner, Some(fk === dk)))
      comparePlans(optimized, expected)
      assertSameTypedOutput(optimized, input)
      assert(EagerAggregation.reasonsIn(optimized).exists(_.contains("and Table by [dk, g] (counting its rows")))
    }
  }

  /** `sum(amount)` over sales ⋈ d1 ⋈ d2 joined by `d2Cond` (with `rKey`, the column of sales ⋈ d1
   *  it reads): expected sales ⋈ d1 pre-aggregated by `rKey`, d2 by k2 counting its rows. */
  private def globalSumOverD2(d2Cond: Expression, rKey: Attribute): Unit = always {
    val input = sales.join(d1, Inner, Some(s1 === k1)).join(d2, Inner, Some(d2Cond)).groupBy()(sum(amount).as("t"))
    val t = part(Sum(amount, ansi), "arrnf_sum")
    val (other, c) = counted(Seq(k2), d2)
    comparePlans(run(input), Aggregate(Nil, Seq(kept(input, "t", agg(Sum(Multiply(t.toAttribute, c, ansi), ansi)))),
      Aggregate(Seq(rKey), Seq(rKey, t), sales.join(d1, Inner, Some(s1 === k1))).join(other, Inner, Some(d2Cond))))
  }

  test("always: in a star, R takes one dimension so that the other side is one input; a global aggregate") {
    // d1 and d2 share no condition: no tree of them alone, so only the split {sales ⋈ d1} vs {d2}
    // (and {sales ⋈ d2} vs {d1}) can aggregate the other side; the first such is taken.
    globalSumOverD2(s2 === k2, s2)
  }

  test("always: a chain sales ⋈ d1 ⋈ d2 (d1 joins d2): the other side is never d1 ⋈ d2, only d2 after sales ⋈ d1") {
    // {sales} alone would leave d1 ⋈ d2 joined by themselves before sales' rows meet them
    globalSumOverD2(k1 === k2, k1)
  }

  test("never, and cost without estimates: the other side is joined as it is") {
    fires {
      for (setting <- Seq("never", "cost")) withConf(ArrnfConf.EagerOtherSide -> setting) {
        val input = fact.join(dim, Inner, Some(fk === dk)).groupBy(g)(g, sum(x).as("sx"))
        val sx = part(Sum(x, ansi), "arrnf_sum")
        comparePlans(run(input), Aggregate(Seq(g), Seq(g, kept(input, "sx", sumOf(sx))),
          Aggregate(Seq(fk), Seq(fk, sx), fact).join(dim, Inner, Some(fk === dk))))
      }
    }
  }

  test("always, but a collated grouping column on the other side: only R is aggregated") {
    always {
      val lcase = Table($"lk".int, AttributeReference("lname", StringType("UTF8_LCASE"))())
      val Seq(lk, lname) = lcase.output
      val input = fact.join(lcase, Inner, Some(fk === lk)).groupBy(lname)(lname, sum(x).as("sx"))
      val sx = part(Sum(x, ansi), "arrnf_sum")
      comparePlans(run(input), Aggregate(Seq(lname), Seq(lname, kept(input, "sx", sumOf(sx))),
        Aggregate(Seq(fk), Seq(fk, sx), fact).join(lcase, Inner, Some(fk === lk))))
    }
  }

  private val Shuffle = "spark.sql.autoBroadcastJoinThreshold" -> "-1"

  test("cost (default): the other side is aggregated where its estimated rows fall minReduction times, not where its key is unique") {
    withConf(Shuffle) {
      val factLeaf = EagerStatsLeaf(fact.output, 100000, Map("fk" -> 10, "x" -> 100))
      // 1000 rows of 10 keys and 5 groups: at most 50 groups, 20× fewer
      val manyPerKey = EagerStatsLeaf(dim.output, 1000, Map("dk" -> 10, "g" -> 5))
      val q = factLeaf.join(manyPerKey, Inner, Some(fk === dk)).groupBy(g)(g, sum(x).as("sx"))
      val optimized = run(q)
      assert(EagerAggregation.reasonsIn(optimized).exists(r => r.startsWith("fired:") && r.contains("counting its rows")),
        EagerAggregation.reasonsIn(optimized))
      assert(optimized.collect { case a: Aggregate => a }.size == 3, optimized.treeString)
      // a dimension by its unique key: nothing to gain on that side
      val unique = EagerStatsLeaf(dim.output, 1000, Map("dk" -> 1000, "g" -> 5))
      val u = run(factLeaf.join(unique, Inner, Some(fk === dk)).groupBy(g)(g, sum(x).as("sx")))
      assert(EagerAggregation.reasonsIn(u).exists(r => r.startsWith("fired:") && !r.contains("counting")), EagerAggregation.reasonsIn(u))
      assert(u.collect { case a: Aggregate => a }.size == 2, u.treeString)
    }
  }

  test("cost: of the splits that pay, one whose joins read few rows (sales aggregated by its key before any join), " +
    "not the one whose joins make the fewest (item ⋈ sales, whose join reads sales' 100,000 rows; TPC-DS q82's shape)") {
    withConf(Shuffle) {
      // item: 10 rows (10 keys); inventory: 20,000 rows of 100 keys; sales: 100,000 rows of 1,000 keys.
      // item ⋈ sales makes fewer rows (1,000) than item ⋈ inventory (2,000), and that split's joins
      // and aggregates make the fewest (1,120, inventory aggregated by its key), but it reads
      // sales' 100,000 rows in a join
      val item = Table($"ik".int, $"ig".string)
      val inv = Table($"inv_k".int, $"inv_q".int)
      val sold = Table($"sold_k".int, $"sold_q".int)
      val Seq(ik, ig) = item.output
      val Seq(invK, _) = inv.output
      val Seq(soldK, _) = sold.output
      val itemLeaf = EagerStatsLeaf(item.output, 10, Map("ik" -> 10, "ig" -> 10))
      val invLeaf = EagerStatsLeaf(inv.output, 20000, Map("inv_k" -> 100))
      val soldLeaf = EagerStatsLeaf(sold.output, 100000, Map("sold_k" -> 1000))
      val q = itemLeaf.join(invLeaf, Inner, Some(ik === invK)).join(soldLeaf, Inner, Some(ik === soldK))
        .groupBy(ig)(ig, count(Literal(1)).as("n"))
      val optimized = run(q)
      val why = EagerAggregation.reasonsIn(optimized)
      assert(why.exists(_.startsWith("fired:")), why)
      // no join reads sales as it is: it is aggregated (by itself or as the other side) before any join
      val joinsReadingSales = optimized.collect { case j: Join => j }.filter(j => j.left == soldLeaf || j.right == soldLeaf)
      assert(joinsReadingSales.isEmpty, s"$why\n${optimized.treeString}")
    }
  }

  test("the setting refuses an unknown value, saying what it takes") {
    val e = intercept[Exception](withConf(ArrnfConf.EagerOtherSide -> "sometimes")(ArrnfConf.eagerOtherSide()))
    assert(e.getMessage.contains("cost, never, always"), e.getMessage)
  }
}
