package arrnf.rules

import org.apache.spark.sql.catalyst.dsl.expressions._
import org.apache.spark.sql.catalyst.dsl.plans._
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Average, Complete, Count, Sum}
import org.apache.spark.sql.catalyst.plans.Inner
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._

/** Eager aggregation of `avg` (split into a sum and a count) and of DISTINCT aggregates (kept above
 *  the join, their columns added to the pre-aggregate's keys). */
class EagerAggregationAvgDistinctSuite extends EagerAggregationPlanTest {

  private def over(e: Expression) = fact.join(dim, Inner, Some(fk === dk)).groupBy(g)(g, e.as("v"))

  /** Spark's Average: the DOUBLE quotient of a sum and a count, NULL (LEGACY) for a group without values. */
  private def mean(total: Expression, count: Alias) =
    Divide(Cast(total, DoubleType), Cast(agg(Sum(count.toAttribute, legacy)), DoubleType), legacy)

  test("avg of an INT: the DOUBLE quotient of sum(sum) and sum(count), DOUBLE and nullable as before") {
    fires {
      val input = over(avg(x))
      val optimized = run(input)
      val s = part(Sum(x, ansi), "arrnf_sum")
      val c = part(Count(x), "arrnf_count")
      comparePlans(optimized, Aggregate(Seq(g), Seq(g, kept(input, "v", mean(sumOf(s), c))),
        Aggregate(Seq(fk), Seq(fk, s, c), fact).join(dim, Inner, Some(fk === dk))))
      assertSameTypedOutput(optimized, input)
      assert(optimized.output.last.dataType == DoubleType && optimized.output.last.nullable)
    }
  }

  test("avg of a DECIMAL(7,2): as Spark's DecimalAggregates, the DOUBLE mean of the unscaled sum over 10^2, cast to DECIMAL(11,6)") {
    fires {
      val input = over(avg(p))
      val optimized = run(input)
      val s = part(Sum(p, ansi), "arrnf_sum")
      val c = part(Count(p), "arrnf_count")
      val total = Cast(sumOf(s), DecimalType(17, 2), None, EvalMode.ANSI)
      val value = Cast(Divide(mean(UnscaledValue(total), c), Literal(100.0)), DecimalType(11, 6),
        Option(SQLConf.get.sessionLocalTimeZone))
      comparePlans(optimized, Aggregate(Seq(g), Seq(g, kept(input, "v", value)),
        Aggregate(Seq(fk), Seq(fk, s, c), fact).join(dim, Inner, Some(fk === dk))))
      assertSameTypedOutput(optimized, input)
      assert(optimized.output.last.dataType == DecimalType(11, 6))
    }
  }

  test("unchanged: avg of a BIGINT, a DOUBLE, a DECIMAL(12,2); try_avg; a decimal avg with DecimalAggregates excluded") {
    fires {
      declines(over(avg(y)), Some("averages bigint"))
      declines(over(avg(w)), Some("averages double"))
      val wide = Table($"wk".int, $"wd".decimal(12, 2))
      declines(wide.join(dim, Inner, Some(wide.output.head === dk)).groupBy(g)(g, avg(wide.output(1)).as("v")),
        Some("averages decimal(12,2)"))
      declines(over(AggregateExpression(Average(x, EvalMode.TRY), Complete, isDistinct = false)), Some("is try_avg"))
    }
    withConf(arrnf.ArrnfConf.EagerMinReduction -> "0", "spark.sql.ansi.enabled" -> "true",
        SQLConf.OPTIMIZER_EXCLUDED_RULES.key -> "org.apache.spark.sql.catalyst.optimizer.DecimalAggregates") {
      declines(over(avg(p)), Some("averages decimal(7,2)"))
      // An INT average does not depend on DecimalAggregates.
      assert(run(over(avg(x))).exists(_.getTagValue(EagerAggregation.Tag).isDefined))
    }
  }

  test("DISTINCT aggregates stay above the join; their columns of R join the pre-aggregate's keys") {
    fires {
      val input = fact.join(dim, Inner, Some(fk === dk))
        .groupBy(g)(g, countDistinct(x).as("cd"), sumDistinct(x).as("sd"), sum(p).as("sp"))
      val optimized = run(input)
      val sp = part(Sum(p, ansi), "arrnf_sum")
      val cd = input.asInstanceOf[Aggregate].aggregateExpressions(1).asInstanceOf[Alias]
      val sd = input.asInstanceOf[Aggregate].aggregateExpressions(2).asInstanceOf[Alias]
      comparePlans(optimized, Aggregate(Seq(g),
        Seq(g, cd, sd, kept(input, "sp", Cast(sumOf(sp), DecimalType(17, 2), None, EvalMode.ANSI))),
        Aggregate(Seq(fk, x), Seq(fk, x, sp), fact).join(dim, Inner, Some(fk === dk))))
      assertSameTypedOutput(optimized, input)

      // A DISTINCT over the other side's column alone: R pre-aggregated by its keys only.
      val other = fact.join(dim, Inner, Some(fk === dk)).groupBy(x)(x, countDistinct(g).as("cg"))
      comparePlans(run(other), Aggregate(Seq(x), other.asInstanceOf[Aggregate].aggregateExpressions,
        Aggregate(Seq(fk, x), Seq(fk, x), fact).join(dim, Inner, Some(fk === dk))))
    }
  }

  test("unchanged: a DISTINCT sum of a DOUBLE (its additions' order), a DISTINCT aggregate with a FILTER, count(DISTINCT) of a DOUBLE column of R beside a sum") {
    fires {
      declines(over(sumDistinct(w)), Some("is DISTINCT (sum of double)"))
      declines(over(AggregateExpression(Sum(x, ansi), Complete, isDistinct = false, Some(x > 0))), Some("has a FILTER"))
      declines(over(AggregateExpression(Count(x), Complete, isDistinct = true, Some(x > 0))), Some("has a FILTER"))
      // With sum(x), R holds the fact table, whose DOUBLE column would be a key of its pre-aggregate.
      declines(fact.join(dim, Inner, Some(fk === dk)).groupBy(g)(g, countDistinct(w).as("cw"), sum(x).as("sx")),
        Some("no split of the joined inputs where the law holds"))
      // Alone, count(DISTINCT w) reads w above the join: the dimension is the one pre-aggregated.
      val alone = over(countDistinct(w))
      comparePlans(run(alone), Aggregate(Seq(g), alone.asInstanceOf[Aggregate].aggregateExpressions,
        Aggregate(Seq(dk, g), Seq(dk, g), dim).join(fact, Inner, Some(fk === dk))))
    }
  }
}
