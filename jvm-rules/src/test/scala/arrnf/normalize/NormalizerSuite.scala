package arrnf.normalize

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnaryNode}
import org.apache.spark.sql.execution.RDDScanExec
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec
import org.apache.spark.sql.types.LongType
import org.json4s.jackson.JsonMethods

import arrnf.ArrnfSparkSuite
import arrnf.bench.PlanShapes
import arrnf.model._
import arrnf.render.{ExpressionText, JsonFormat, Positions, TextFormat}

/** A node no normalizer has seen: it must become an `Opaque` term, its input a block. */
case class MysteryNode(child: LogicalPlan) extends UnaryNode {
  override def output: Seq[Attribute] = child.output
  override protected def withNewChildInternal(c: LogicalPlan): LogicalPlan = copy(child = c)
}

class NormalizerSuite extends ArrnfSparkSuite {
  private def program(sql: String, name: String = "query"): ArrnfProgram =
    Arrnf.program(spark.sql(sql).queryExecution.optimizedPlan, name)

  override def beforeAll(): Unit = {
    super.beforeAll()
    for ((t, i) <- Seq("l1", "l2", "l3").zipWithIndex)
      spark.range(40 + i).selectExpr((0 to 20).map(c => s"cast(id % ${c + 2} as int) as c$c"): _*)
        .createOrReplaceTempView(t)
    for ((t, i) <- "abcd".zipWithIndex)
      spark.range(100 + i).selectExpr(s"id as ${t}k", s"id * 2 as ${t}v").createOrReplaceTempView(s"j_$t")
  }

  test("the seed's l4: Distinct block, Threshold over Union(l1, l3, Negate Join(l2, Distinct))") {
    val cols = (2 to 20).map(i => s"c$i").mkString(", ")
    val p = program(
      s"select $cols from l1 union all select $cols from l3 except all " +
        s"select ${(2 to 20).map(i => s"l2.c$i").mkString(", ")} from l2 join (select distinct c0 from l3) d on l2.c0 = d.c0",
      "l4")
    val l4 = p.block("l4")
    assert(l4.head.map(_.kind).contains(HeadKind.Threshold))
    val (neg, pos) = l4.branches.partition(_.negate)
    assert(pos.size == 2 && neg.size == 1)
    val join = neg.head.leaf.asInstanceOf[JoinLeaf]
    val Seq(l2Arr, distinct) = join.inputs.map(g => p.block(g.name))
    assert(distinct.head.get.kind == HeadKind.Distinct && distinct.name.startsWith("l4.tmp"))
    assert(l2Arr.head.get.kind == HeadKind.ArrangeBy && l2Arr.head.get.keys == Seq(Seq("#0{c0}")))
    assert(p.arrangements == 3 && p.opaque == 0)
  }

  test("a join of four inputs: six arrangements; a shared input counts once") {
    assert(program("select * from j_a join j_b on ak = bk join j_c on bk = ck join j_d on ck = dk").arrangements == 6)
    val shared = program("select x.ak, y.bv, z.bv from j_a x join j_b y on x.ak = y.bk join j_c w on x.ak = w.ck " +
      "join j_b z on x.ak = z.bk")
    assert(shared.arrangements == 5)
    assert(shared.blocks.count(_.sharing == 2) == 1)
  }

  test("a stream joined to a static table: the stream's blocks are unknown, the table's has its rows") {
    val static = java.nio.file.Files.createTempDirectory("arrnf-static").toString + "/t"
    spark.range(1000).selectExpr("id % 10 AS k", "id AS v").write.parquet(static)
    val stream = spark.readStream.format("rate").load().selectExpr("value % 10 AS k")
      .join(spark.read.parquet(static), "k").groupBy("k").count()
    val p = Arrnf.program(stream.queryExecution.analyzed, "q")
    // The table's arrangement holds its v; the stream's, and the aggregate over the join, do not.
    val (table, streamed) = p.blocks.filter(_.head.isDefined).partition(_.cost.values.contains("v"))
    assert(p.streaming && streamed.size == 2 && table.size == 1, p.blocks)
    assert(streamed.forall(_.cost.source == "unknown: a stream"), streamed.map(_.cost))
    assert(table.head.cost.rows.contains(1000L) && table.head.cost.source == "file metadata", table.head.cost)
  }

  test("an unknown node is an Opaque term over a block, never an exception") {
    val plan = MysteryNode(spark.range(5).queryExecution.optimizedPlan)
    val p = Arrnf.program(plan, "q")
    assert(p.opaque == 1)
    val leaf = p.blocks.last.branches.head.leaf.asInstanceOf[OpaqueLeaf]
    assert(leaf.node == "MysteryNode" && leaf.inputs.size == 1)
    assert(TextFormat(p).contains("Opaque MysteryNode"))
  }

  test("the JSON form parses and carries the text form") {
    val p = program("select k, sum(v) from (select id % 3 k, id v from range(10)) group by k order by k")
    val parsed = JsonMethods.parse(JsonFormat(p))
    implicit val formats: org.json4s.Formats = org.json4s.DefaultFormats
    assert((parsed \ "format").extract[String] == "arrnf" && (parsed \ "version").extract[Int] == Program.FormatVersion)
    assert((parsed \ "text").extract[String] == TextFormat(p))
    assert((parsed \ "blocks").children.size == p.blocks.size)
  }

  test("2,000-branch union and a 300-deep join chain normalize without stack overflow") {
    // (Spark's SQL parser itself overflows on 2,000 UNION ALLs: build the plans directly.)
    assert(Arrnf.program(PlanShapes.union(2000), "u").blocks.last.branches.size == 2000)
    val p = Arrnf.program(PlanShapes.joinChain(300), "chain")
    assert(p.arrangements == 2 * 300)
    // Past 64 levels the walk starts again on a deep stack: nothing of the abandoned walk is left
    // (block names count from tmp0, no block twice, every consumer a block of the program).
    for (n <- Seq(30, 70, 300)) {
      val c = Arrnf.program(PlanShapes.joinChain(n), "chain")
      val names = c.blocks.map(_.name)
      val tmps = names.filter(_ != "chain")
      assert(tmps.distinct.size == tmps.size && tmps.toSet == tmps.indices.map(i => s"chain.tmp$i").toSet, names.take(5))
      assert(c.blocks.flatMap(_.consumers.map(_.block)).forall(names.toSet), n)
      assert(c.arrangements == 2 * n && c.blocks.forall(_.sharing == 1), n)
    }
  }

  test("explain never throws: a physical plan without a logical link gives one line") {
    val scan = RDDScanExec(Seq(AttributeReference("x", LongType)()), spark.sparkContext.emptyRDD, "empty")
    val text = Arrnf.explain(scan)
    assert(text.startsWith("ArrNF:") && !text.contains("\n"))
    val df = spark.sql("select id % 2 k, count(*) from range(10) group by 1")
    assert(Arrnf.explain(df.queryExecution.executedPlan).contains("Reduce keys=["))
  }

  test("explain reads the copy Spark planned (where its statistics are): node for node the optimized plan, the same text") {
    val sql = "select ak, count(*) c from j_a join j_b on ak = bk join j_c on bv = ck group by ak"
    val df = spark.sql(sql)
    val physical = df.queryExecution.executedPlan
    val optimized = df.queryExecution.optimizedPlan
    val planned = physical match {
      case a: AdaptiveSparkPlanExec => a.inputPlan.logicalLink
      case other => fail(s"expected an adaptive plan, got ${other.nodeName}")
    }
    assert(planned.exists(_ ne optimized))
    assert(Arrnf.plannedOf(physical).exists(_ eq planned.get))
    def nodes(p: LogicalPlan) = { val b = Seq.newBuilder[String]; p.foreach(n => b += n.getClass.getName); b.result() }
    assert(nodes(planned.get) == nodes(optimized))
    assert(Arrnf.explain(physical) == Arrnf.text(df.asInstanceOf[org.apache.spark.sql.classic.Dataset[_]], "query"))
    assert(Arrnf.explain(physical).contains("spark="), "the explain section says what Spark builds")
    // Another run of the same query is explained from its own planned copy, not this one.
    assert(Arrnf.plannedOf(spark.sql(sql).queryExecution.executedPlan).exists(_ ne planned.get))
  }

  test("text helpers: human sizes round half up without overflow; position runs compress; positions by id") {
    assert(TextFormat.human(999L, "B") == "999B")
    assert(TextFormat.human(1049L, "") == "1.0k" && TextFormat.human(1050L, "") == "1.1k")
    assert(TextFormat.human(999949L, "") == "999.9k" && TextFormat.human(999950L, "") == "1.0M")
    assert(TextFormat.human(11986300000000L, "") == "12.0T" && TextFormat.human(9786723800000000L, "B") == "9.8PB")
    assert(TextFormat.human(Long.MaxValue, "B") == "9.2EB")
    assert(ExpressionText.compress(Seq("#2{a}", "#3{b}", "#4{c}", "#5{d}", "#9{e}")) == Seq("#2{a}..=#5{d}", "#9{e}"))
    assert(ExpressionText.compress(Seq("#1{a}", "#2{b}", "#3{c}")) == Seq("#1{a}", "#2{b}", "#3{c}"))
    assert(ExpressionText.compress(Seq("x", "#{a}", "#1{b}", "#2{c}", "#3{}", "#4{d}")) ==
      Seq("x", "#{a}", "#1{b}..=#4{d}"))
    val (a, b, c) = (AttributeReference("a", LongType)(), AttributeReference("b", LongType)(),
      AttributeReference("c", LongType)())
    val narrow = new Positions(Seq(a, b, a))
    assert(narrow.of(a) == 2 && narrow.of(b) == 1 && narrow.of(c) == -1) // a repeated id: its last position
    val many = (0 until 100).map(i => AttributeReference(s"w$i", LongType)())
    val wide = new Positions(many :+ many(3))
    assert(wide.of(many(50)) == 50 && wide.of(many(3)) == 100 && wide.of(a) == -1)
  }
}
