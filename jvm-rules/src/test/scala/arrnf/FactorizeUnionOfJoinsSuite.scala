package arrnf

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.expressions.Add
import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan, Union}

import arrnf.rules.FactorizeUnionOfJoins
import arrnf.rules.factorize.FactorizeStatus

class FactorizeUnionOfJoinsSuite extends ArrnfSparkSuite {

  override def beforeAll(): Unit = {
    super.beforeAll()
    spark.range(0, 2000).selectExpr("id AS k", "id % 7 AS ak").createOrReplaceTempView("fa")
    spark.range(0, 3000).selectExpr("id % 2500 AS x", "id AS v1", "CAST(id % 5 AS INT) AS d").createOrReplaceTempView("fb1")
    spark.range(0, 3000).selectExpr("id % 1500 AS y", "id * 3 AS v2", "CAST(id % 3 AS INT) AS d").createOrReplaceTempView("fb2")
    spark.range(0, 3000).selectExpr("id % 4000 AS z", "id + 7 AS v3", "CAST(id % 4 AS INT) AS d").createOrReplaceTempView("fb3")
    spark.range(0, 300).selectExpr("id AS c", "id % 11 AS cv").createOrReplaceTempView("fc")
  }

  // The shape tests are about the law, not the cost guard: any saving will do (the guard has its own tests).
  private def shuffleJoins[T](body: => T): T =
    withConf("spark.sql.autoBroadcastJoinThreshold" -> "-1", ArrnfConf.FactorizeMinSaving -> "0")(body)

  /** The optimized plans with the rewrite on and off, after asserting equal results (TPC-DS cases: tests/test_factorize.py). */
  private def planBothWays(sql: String): (LogicalPlan, LogicalPlan) = assertSameBothWays(sql)

  private def joins(p: LogicalPlan) = p.collect { case j: Join => j }
  private def fired(p: LogicalPlan) = FactorizeUnionOfJoins.firedIn(p).asScala.toSeq

  private val threeBranches =
    """select fa.k, fa.ak, fb1.v1 as v, 'one' as tag from fa join fb1 on fa.k = fb1.x
      |union all select fa.k, fa.ak, fb2.v2, 'two' from fa join fb2 on fa.k = fb2.y
      |union all select fa.k, fa.ak, fb3.v3, 'three' from fa join fb3 on fa.k = fb3.z""".stripMargin

  test("three branches sharing A: one join of A with the union, constant tags moved into the branches") {
    shuffleJoins {
      val (on, off) = planBothWays(threeBranches)
      assert(fired(on).size == 1, on.treeString)
      assert(joins(on).size == 1 && joins(off).size == 3, on.treeString)
      val j = joins(on).head
      assert(j.right.isInstanceOf[Union], "A on the left, the union of the B sides on the right")
      val analyzed = spark.sql(threeBranches).queryExecution.analyzed
      val ids = Seq(true, false).map(on => withArrnf(on)(spark.sessionState.optimizer.execute(analyzed)).output.map(_.exprId))
      assert(ids.head == ids(1), "the union's output ids survive")
    }
  }

  test("the reason stays where EagerAggregation then splits the aggregate over the factorized join") {
    shuffleJoins {
      withConf(ArrnfConf.EagerMinReduction -> "0") {
        val sql = "select count(*) from (select fa.k, fb1.v1 from fa join fb1 on fa.k = fb1.x " +
          "union all select fa.k, fb2.v2 from fa join fb2 on fa.k = fb2.y)"
        val (on, _) = planBothWays(sql)
        val reasons = ArrnfExplainProvider.ruleReasons(on)
        assert(reasons.exists(_.startsWith("EagerAggregation fired: ")), reasons)
        assert(reasons.count(_.startsWith("FactorizeUnionOfJoins fired: ")) == 1, reasons)
      }
    }
  }

  test("A on the right in some branches and on the left in others") {
    shuffleJoins {
      val q = """select fa.k, fb1.v1 from fb1 join fa on fb1.x = fa.k
                |union all select fa.k, fb2.v2 from fa join fb2 on fa.k = fb2.y""".stripMargin
      val (on, _) = planBothWays(q)
      assert(fired(on).size == 1 && joins(on).size == 1, on.treeString)
    }
  }

  test("a subset of branches: those without A stay in an outer union") {
    shuffleJoins {
      val q = """select fa.k, fb1.v1 from fa join fb1 on fa.k = fb1.x
                |union all select fc.c, fb3.v3 from fc join fb3 on fc.c = fb3.z
                |union all select fa.k, fb2.v2 from fa join fb2 on fa.k = fb2.y""".stripMargin
      val (on, off) = planBothWays(q)
      assert(fired(on).size == 1 && joins(on).size == 2 && joins(off).size == 3, on.treeString)
      assert(on.collect { case u: Union => u }.size == 2, on.treeString)
    }
  }

  test("n-way chains: A and C shared by every branch are both factored out") {
    shuffleJoins {
      val q = """select fa.k, fc.cv, fb1.v1 from fa join fb1 on fa.k = fb1.x join fc on fb1.d = fc.c
                |union all select fa.k, fc.cv, fb2.v2 from fa join fb2 on fa.k = fb2.y join fc on fb2.d = fc.c""".stripMargin
      val before = FactorizeStatus.firings()
      val (on, off) = planBothWays(q)
      // Both factors: A ⋈ (C ⋈ (B1 ∪all B2)). (A later Spark rule, RemoveRedundantAliases, rebuilds joins
      // without their tags, so count joins and firings rather than tags here.)
      assert(FactorizeStatus.firings() - before >= 2)
      assert(joins(on).size == 2 && joins(off).size == 4, on.treeString)
      assert(on.collect { case u: Union => u }.size == 1, on.treeString)
    }
  }

  test("UNION DISTINCT is factored beneath its distinct") {
    shuffleJoins {
      val q = """select fa.ak, fb1.d from fa join fb1 on fa.k = fb1.x
                |union select fa.ak, fb2.d from fa join fb2 on fa.k = fb2.y""".stripMargin
      val (on, _) = planBothWays(q)
      assert(fired(on).size == 1, on.treeString)
    }
  }

  test("does not fire for outer, semi or anti joins") {
    shuffleJoins {
      for (jt <- Seq("left join", "right join", "full join", "left semi join", "left anti join")) {
        val cols = if (jt.contains("semi") || jt.contains("anti")) "fa.k" else "fa.k, fb1.x"
        val cols2 = if (jt.contains("semi") || jt.contains("anti")) "fa.k" else "fa.k, fb2.y"
        val q = s"select $cols from fa $jt fb1 on fa.k = fb1.x union all select $cols2 from fa $jt fb2 on fa.k = fb2.y"
        val (on, _) = planBothWays(q)
        assert(fired(on).isEmpty, s"$jt\n${on.treeString}")
      }
    }
  }

  test("does not fire for a non-deterministic A or a non-deterministic branch expression") {
    shuffleJoins {
      val q1 = """select a.k, fb1.v1 from (select * from fa where rand(1) < 0.5) a join fb1 on a.k = fb1.x
                 |union all select a.k, fb2.v2 from (select * from fa where rand(1) < 0.5) a join fb2 on a.k = fb2.y""".stripMargin
      val (on1, _) = planBothWays(q1)
      assert(fired(on1).isEmpty, on1.treeString)
      val q2 = """select fa.k, fb1.v1 + rand(3) as r from fa join fb1 on fa.k = fb1.x
                 |union all select fa.k, fb2.v2 + rand(4) from fa join fb2 on fa.k = fb2.y""".stripMargin
      val on2 = withArrnf(true)(spark.sql(q2).queryExecution.optimizedPlan)
      assert(fired(on2).isEmpty, on2.treeString)
    }
  }

  test("does not fire when A is broadcast in every branch anyway (cost guard)") {
    withConf("spark.sql.autoBroadcastJoinThreshold" -> "10MB") {
      FactorizeStatus.reset()
      val (on, _) = planBothWays(threeBranches)
      assert(fired(on).isEmpty && joins(on).size == 3, on.treeString)
      // Declined for the broadcast, before the other sides' statistics are asked for.
      assert(FactorizeStatus.reasons().asScala.exists(r => r.startsWith("declined: ") && r.contains("is broadcast in every branch anyway")),
        FactorizeStatus.reasons())
    }
  }

  test("does not fire when a small A saves too little (cost guard: minSaving)") {
    // A has 300 rows, each other side 3,000: A is shuffled once anyway (exchange reuse), so only its
    // sort and merge in two branches are saved, about 3% of the estimate.
    val q = """select fc.c, fb1.v1 from fc join fb1 on fc.c = fb1.x
              |union all select fc.c, fb2.v2 from fc join fb2 on fc.c = fb2.y
              |union all select fc.c, fb3.v3 from fc join fb3 on fc.c = fb3.z""".stripMargin
    withConf("spark.sql.autoBroadcastJoinThreshold" -> "-1") {
      FactorizeStatus.reset()
      val (on, _) = planBothWays(q)
      assert(fired(on).isEmpty && joins(on).size == 3, on.treeString)
      assert(FactorizeStatus.reasons().asScala.exists(r => r.startsWith("declined: ") && r.contains("saves too little")))
      assert(fired(planBothWays(threeBranches)._1).size == 1, "A as large as each other side still saves enough")
      withConf(ArrnfConf.FactorizeMinSaving -> "0") {
        assert(fired(planBothWays(q)._1).size == 1)
      }
    }
  }

  test("ANSI: an expression that can fail stays above the join, never evaluated on rows that did not join") {
    shuffleJoins {
      withConf("spark.sql.ansi.enabled" -> "true") {
        // fb1.d and fb2.d are 0 on rows that do join too, so use a divisor that is 0 only where no A row joins:
        // fb1.x >= 2000 never joins fa (k < 2000); 1 / (x - 2400) is 1/0 on x = 2400.
        val q = """select fa.k, 1 / (fb1.x - 2400) as r from fa join fb1 on fa.k = fb1.x
                  |union all select fa.k, 1 / (fb2.y - 2400) from fa join fb2 on fa.k = fb2.y""".stripMargin
        val (on, _) = planBothWays(q)
        // Same expression in both branches: it is computed once above the new join.
        assert(fired(on).size == 1, on.treeString)
        val q2 = """select fa.k, 1 / (fb1.x - 2400) as r from fa join fb1 on fa.k = fb1.x
                   |union all select fa.k, 2 / (fb2.y - 2400) from fa join fb2 on fa.k = fb2.y""".stripMargin
        val (on2, _) = planBothWays(q2)
        // Different failing expressions: they cannot be moved below the join nor shared above it.
        assert(fired(on2).isEmpty, on2.treeString)
      }
    }
  }

  test("interval arithmetic overflows in every mode: with ANSI off it is not moved onto rows that did not join") {
    shuffleJoins {
      withConf("spark.sql.ansi.enabled" -> "false") {
        // b.iv + b.iv overflows on fb1's rows x >= 2000, which never join fa.
        val ivs = "make_dt_interval(if(x < 2000, 1, 100000000)) as iv"
        val q = s"""select fa.k, b.iv + b.iv as s from fa join (select x, $ivs from fb1) b on fa.k = b.x
                   |union all select fa.k, b.iv + b.iv from fa join (select y as x, $ivs from fb2) b on fa.k = b.x""".stripMargin
        val (on, _) = planBothWays(q)
        def hasAdd(p: LogicalPlan) = p.expressions.exists(_.exists(_.isInstanceOf[Add]))
        // Fired, with the sum kept above the new join (the same expression in both branches), none in the union.
        assert(fired(on).size == 1, on.treeString)
        assert(on.exists(hasAdd) && !on.collect { case u: Union => u }.exists(_.exists(hasAdd)), on.treeString)
      }
    }
  }

  test("does not fire for an A that varies: an unseeded sample is not the same rows twice") {
    shuffleJoins {
      val q = """select a.k, fb1.v1 from (select * from fa tablesample (50 percent)) a join fb1 on a.k = fb1.x
                |union all select a.k, fb2.v2 from (select * from fa tablesample (50 percent)) a join fb2 on a.k = fb2.y""".stripMargin
      // planned only: an unseeded sample gives other rows on every run, with the rule or without
      assert(fired(withArrnf(true)(spark.sql(q).queryExecution.optimizedPlan)).isEmpty)
      val seeded = q.replace("(50 percent)", "(50 percent) repeatable (7)")
      assert(fired(planBothWays(seeded)._1).size == 1, "a seeded sample of a relation is the same rows each time")
    }
  }

  test("no oscillation with PushDownJoinThroughUnion enabled") {
    withConf("spark.sql.optimizer.pushDownJoinThroughUnion.enabled" -> "true",
      "spark.sql.autoBroadcastJoinThreshold" -> "-1") {
      val (on, _) = planBothWays(threeBranches)
      assert(fired(on).size == 1, on.treeString)
      val q = s"select * from ($threeBranches) u join fc on u.k = fc.c"
      planBothWays(q)
    }
    withConf("spark.sql.optimizer.pushDownJoinThroughUnion.enabled" -> "true") {
      planBothWays(s"select * from ($threeBranches) u join fc on u.k = fc.c")
    }
  }

  test("streaming plans are left alone") {
    shuffleJoins {
      // The same shape over a batch input and over a stream, the rule applied to the analyzed plans.
      val q = "select s.k, fb1.v1 from %s s join fb1 on s.k = fb1.x " +
        "union all select s.k, fb2.v2 from %s s join fb2 on s.k = fb2.y"
      spark.readStream.format("rate").load().selectExpr("value % 100 AS k").createOrReplaceTempView("fstream")
      val batch = spark.sql(q.format("fa", "fa")).queryExecution.analyzed
      assert(fired(FactorizeUnionOfJoins(batch)).size == 1)
      val stream = spark.sql(q.format("fstream", "fstream")).queryExecution.analyzed
      assert(stream.isStreaming)
      assert(FactorizeUnionOfJoins(stream) eq stream)
    }
  }

  test("the rule's own switch turns it off") {
    shuffleJoins {
      withConf("spark.arrnf.FactorizeUnionOfJoins.enabled" -> "false") {
        assert(fired(run(threeBranches, enabled = true)._1).isEmpty)
      }
    }
  }
}
