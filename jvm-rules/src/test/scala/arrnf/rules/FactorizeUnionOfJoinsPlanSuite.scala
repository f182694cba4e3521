package arrnf.rules

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.dsl.expressions._
import org.apache.spark.sql.catalyst.dsl.plans._
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.{Inner, LeftOuter}
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, LogicalPlan, Project, Union}
import org.apache.spark.sql.types._

import arrnf.ArrnfConf

class FactorizeUnionOfJoinsPlanSuite extends RulePlanTest {

  // Statistics come from the data: a LocalRelation's size is its rows times the row width
  // (16 bytes for two INTs, 20 for an INT and a BIGINT).
  private def rel(n: Int, cols: AttributeReference*)(row: Int => Row) = LocalRelation.fromExternalRows(cols, (0 until n).map(row))
  private val a = rel(100, $"k".int, $"ak".int)(i => Row(i, i % 7))                  // 1600 bytes
  private val c = rel(100, $"c".int, $"cc".int)(i => Row(i + 1000, i))              // not A
  // Each B side with its own data: equal relations would be a common factor themselves.
  private def side(name: String, n: Int) = rel(n, $"${name}k".int, $"${name}v".long)(i => Row(i, i * 3L + name.head))
  private val b1 = side("x", 2)
  private val b2 = side("y", 2)
  private val b3 = side("z", 2)

  /** `A ⋈ B` on A's first column = B's first, projected to [A's first column, B's value AS v, tag]. */
  private def branch(aRel: LogicalPlan, bRel: LogicalPlan, tag: String, aLeft: Boolean = true,
                     value: Expression => Expression = identity): LogicalPlan = {
    val (k, bk, bv) = (aRel.output.head, bRel.output.head, bRel.output(1))
    val j = if (aLeft) aRel.join(bRel, Inner, Some(k === bk)) else bRel.join(aRel, Inner, Some(bk === k))
    j.select(k, value(bv).as("v"), Literal(tag).as("tag"))
  }

  private def twin(p: LogicalPlan): LogicalPlan = p.asInstanceOf[LocalRelation].newInstance()

  /** What the rule builds for `branch(A, b_i, tag_i)`: `Project [k, v_b AS v, tag_b AS tag] (A[k] ⋈ ∪ Project [bk AS xk_b, bv AS v_b, tag AS tag_b] b_i)`. */
  private def factored(input: LogicalPlan, bs: (LogicalPlan, String)*): LogicalPlan = {
    val slot = bs.head._1.output.head.name + "_b"
    val union = Union(bs.map { case (b, tag) => b.select(b.output.head.as(slot), b.output(1).as("v_b"), Literal(tag).as("tag_b")) })
    val Seq(kb, vb, tagb) = (union.output: @unchecked)
    val k = a.output.head
    val Seq(_, v, tag) = (input.output: @unchecked)
    Project(Seq(k, Alias(vb, "v")(exprId = v.exprId), Alias(tagb, "tag")(exprId = tag.exprId)),
      a.select(k).join(union, Inner, Some(k === kb)))
  }

  private def run(plan: LogicalPlan) = executor(once(FactorizeUnionOfJoins)).execute(plan)

  /** The shape tests are about the law: A is never broadcast and any saving is enough. */
  private def shuffleAnySaving[T](body: => T): T =
    withConf("spark.sql.autoBroadcastJoinThreshold" -> "-1", ArrnfConf.FactorizeMinSaving -> "0")(body)

  test("(A ⋈ B1) ∪all (A ⋈ B2) = A ⋈ (B1 ∪all B2): constant tags move into the branches, output ids kept") {
    shuffleAnySaving {
      val input = Union(branch(a, b1, "one"), branch(twin(a), b2, "two"))
      val optimized = run(input)
      comparePlans(optimized, factored(input, b1 -> "one", b2 -> "two"))
      assertSameOutput(optimized, input)
    }
  }

  test("A on the right in one branch and on the left in the other") {
    shuffleAnySaving {
      val input = Union(branch(a, b1, "one"), branch(twin(a), b2, "two", aLeft = false))
      comparePlans(run(input), factored(input, b1 -> "one", b2 -> "two"))
    }
  }

  test("three branches, one without A: it stays in an outer UNION ALL beside the factored join") {
    shuffleAnySaving {
      val withoutA = branch(c, b3, "three")
      val input = Union(Seq(branch(a, b1, "one"), withoutA, branch(twin(a), b2, "two")))
      val optimized = run(input)
      comparePlans(optimized, Union(factored(input, b1 -> "one", b2 -> "two"), withoutA))
      assertSameOutput(optimized, input)
    }
  }

  test("a UNION (distinct), an aggregate over the UNION ALL here, is factored beneath it") {
    shuffleAnySaving {
      val u = Union(branch(a, b1, "one"), branch(twin(a), b2, "two"))
      val input = u.groupBy(u.output: _*)(u.output: _*)
      comparePlans(run(input), factored(u, b1 -> "one", b2 -> "two").groupBy(u.output: _*)(u.output: _*))
    }
  }

  test("an expression that can fail (10 DIV v under ANSI) stays above the new join, the same in every branch") {
    shuffleAnySaving {
      val div = (e: Expression) => IntegralDivide(Literal(10L), e, EvalMode.ANSI)
      val input = Union(branch(a, b1, "one", value = div), branch(twin(a), b2, "two", value = div))
      val union = Union(Seq(b1 -> "one", b2 -> "two").map { case (b, tag) =>
        b.select(b.output.head.as("xk_b"), b.output(1).as("xv_b"), Literal(tag).as("tag_b")) })
      val Seq(kb, vb, tagb) = (union.output: @unchecked)
      val k = a.output.head
      comparePlans(run(input), Project(Seq(k, div(vb).as("v"), tagb.as("tag")),
        a.select(k).join(union, Inner, Some(k === kb))))
    }
  }

  test("the cost guard: fires under the default minSaving when A is above the broadcast threshold") {
    // A 1600 bytes > 1000; the B sides (40 bytes each) and their union are broadcast:
    // vanilla ≈ 2 × (1600 + 40), factored ≈ 1600 + 80, about half saved.
    withConf("spark.sql.autoBroadcastJoinThreshold" -> "1000") {
      val input = Union(branch(a, b1, "one"), branch(twin(a), b2, "two"))
      comparePlans(run(input), factored(input, b1 -> "one", b2 -> "two"))
    }
  }

  test("unchanged (cost guard): A small enough to be broadcast in every branch anyway") {
    withConf("spark.sql.autoBroadcastJoinThreshold" -> "10MB", ArrnfConf.FactorizeMinSaving -> "0") {
      val input = Union(branch(a, b1, "one"), branch(twin(a), b2, "two"))
      comparePlans(run(input), input)
    }
  }

  test("unchanged (cost guard): a small A beside large B sides saves less than minSaving; minSaving=0 fires") {
    val big1 = side("x", 1000) // 20000 bytes each: A's second sort and merge is 2.5% of the estimate
    val big2 = side("y", 1000)
    val input = Union(branch(a, big1, "one"), branch(twin(a), big2, "two"))
    withConf("spark.sql.autoBroadcastJoinThreshold" -> "-1") {
      comparePlans(run(input), input)
      withConf(ArrnfConf.FactorizeMinSaving -> "0") {
        comparePlans(run(input), factored(input, big1 -> "one", big2 -> "two"))
      }
    }
  }

  test("unchanged: outer joins (NULL padding of an unmatched A row would happen once, not per branch)") {
    shuffleAnySaving {
      def outer(aRel: LogicalPlan, b: LogicalPlan) =
        aRel.join(b, LeftOuter, Some(aRel.output.head === b.output.head)).select(aRel.output.head, b.output(1).as("v"))
      val input = Union(outer(a, b1), outer(twin(a), b2))
      comparePlans(run(input), input)
    }
  }

  test("unchanged: an A that varies, and a non-deterministic branch expression") {
    shuffleAnySaving {
      def noisy(r: LogicalPlan) = r.select(r.output.head, (r.output(1) + Rand(Literal(1L)).cast(IntegerType)).as("ak"))
      val input = Union(branch(noisy(a), b1, "one"), branch(noisy(twin(a)), b2, "two"))
      comparePlans(run(input), input)
      val rnd = (e: Expression) => Add(e, Rand(Literal(2L)).cast(LongType), EvalMode.LEGACY)
      val input2 = Union(branch(a, b1, "one", value = rnd), branch(twin(a), b2, "two", value = rnd))
      comparePlans(run(input2), input2)
    }
  }

  test("unchanged: a B-side expression that can fail and differs between branches (it would run on B rows that do not join)") {
    shuffleAnySaving {
      def div(n: Long) = (e: Expression) => IntegralDivide(Literal(n), e, EvalMode.ANSI)
      val input = Union(branch(a, b1, "one", value = div(10)), branch(twin(a), b2, "two", value = div(20)))
      comparePlans(run(input), input)
    }
  }

  test("unchanged: A joined on different keys in the two branches; A different from the other input") {
    shuffleAnySaving {
      val a2 = twin(a)
      val otherKey = a2.join(b2, Inner, Some(a2.output(1) === b2.output.head)).select(a2.output.head, b2.output(1).as("v"), Literal("two").as("tag"))
      val input = Union(branch(a, b1, "one"), otherKey)
      comparePlans(run(input), input)
      val notA = Union(branch(a, b1, "one"), branch(c, b2, "two"))
      comparePlans(run(notA), notA)
    }
  }

  test("unchanged: streaming plans") {
    shuffleAnySaving {
      val s = LocalRelation(a.output, a.data, isStreaming = true)
      val input = Union(branch(s, b1, "one"), branch(s.newInstance(), b2, "two"))
      comparePlans(run(input), input)
    }
  }

  test("the rule's switch: spark.arrnf.FactorizeUnionOfJoins.enabled=false leaves the plan unchanged") {
    shuffleAnySaving {
      val input = Union(branch(a, b1, "one"), branch(twin(a), b2, "two"))
      assertSwitches(FactorizeUnionOfJoins, input, factored(input, b1 -> "one", b2 -> "two"),
        run = (rule, plan) => executor(once(rule)).execute(plan))
    }
  }
}
