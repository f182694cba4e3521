package arrnf

import org.apache.spark.sql.catalyst.expressions.{Expression, Multiply, Subtract, UnaryMinus}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

class FoldValueTermsSuite extends ArrnfSparkSuite {
  override def beforeAll(): Unit = {
    super.beforeAll()
    // Not a VALUES list: Spark would evaluate a local relation at planning time. A CASE of literals,
    // not element_at: the rules fold nothing in a plan where an expression can fail once constant.
    def pick(values: String) =
      values.split(", ").zipWithIndex.map { case (v, i) => s"when $i then $v" }.mkString("case id ", " ", " end")
    spark.sql("create or replace temp view v as select id * 1000 as a, " +
      pick("0.5D, -0.0D, double('NaN'), double('-Infinity'), double('Infinity')") + " as d, " +
      pick("1.25BD, null, -1.5BD, 99999999.99BD, 0.00BD") + " as m, " +
      pick("1L, null, null, -9223372036854775807L, 9223372036854775807L") + " as n from range(5)")
    spark.sql("create or replace temp view minv as select id - 9223372036854775807L - 1 as lo from range(1)")
  }

  private def exprs(p: LogicalPlan): Seq[Expression] = p.flatMap(_.expressions.flatMap(_.collect { case e => e }))
  private def negNegs(p: LogicalPlan) = exprs(p).count { case UnaryMinus(UnaryMinus(_, _), _) => true; case _ => false }
  private def subtracts(p: LogicalPlan) = exprs(p).count(_.isInstanceOf[Subtract])
  private def multiplies(p: LogicalPlan) = exprs(p).count(_.isInstanceOf[Multiply])

  test("-(-x) folds for double and decimal, including NaN, -inf and NULL") {
    val (on, off) = assertSameBothWays("select -(-d) as x, -(-m) as y from v")
    assert(negNegs(on) == 0, on.treeString)
    assert(negNegs(off) == 2, off.treeString)
  }

  test("-(-x) on a long does not fold with ANSI on: -(-MIN) raises, and still does") {
    val (on, _) = assertSameBothWays("select -(-a) from v")
    assert(negNegs(on) == 1, on.treeString)
    val err = intercept[Exception](withArrnf(true)(spark.sql("select -(-lo) from minv").collect()))
    assert(err.getMessage.contains("ARITHMETIC_OVERFLOW"), err.getMessage)
  }

  test("-(-x) on a long folds with ANSI off (wrapping negation is an involution)") {
    spark.conf.set("spark.sql.ansi.enabled", "false")
    try {
      // (views defined with ANSI off: v's `id * 1000` keeps the ANSI mode it was made in, can fail,
      // and the rule folds nothing in a plan where a failing expression could become constant)
      spark.sql("create or replace temp view v_wrap as select id * 1000 as a from range(5)")
      spark.sql("create or replace temp view minv_wrap as select id - 9223372036854775807L - 1 as lo from range(1)")
      val (on, off) = assertSameBothWays("select -(-a), -(-lo) from v_wrap cross join minv_wrap")
      assert(negNegs(on) == 0, on.treeString)
      assert(negNegs(off) == 2)
    } finally spark.conf.unset("spark.sql.ansi.enabled")
  }

  test("a - a is 0, NULL for a NULL column; n * 0 likewise (ANSI off: the columns' definitions cannot fail)") {
    spark.conf.set("spark.sql.ansi.enabled", "false")
    try {
      // A view keeps the ANSI mode it was created in: v's columns were defined with ANSI on.
      spark.sql("create or replace temp view v_legacy as select id * 1000 as a, " +
        "if(id % 3 = 0, null, cast(id as decimal(10, 2)) / 4) as m, if(id % 2 = 0, null, id + 7) as n from range(5)")
      val (on, off) = assertSameBothWays("select a - a, n - n, m - m, n * 0, 0 * m from v_legacy")
      assert(subtracts(on) == 0 && subtracts(off) == 3, on.treeString)
      assert(multiplies(on) == 0 && multiplies(off) == 3, on.treeString) // a - a = 0 also prunes `id * 1000`
    } finally spark.conf.unset("spark.sql.ansi.enabled")
  }

  test("with ANSI on, a - a and n * 0 keep a definition that can fail (id * 1000, element_at), and its error") {
    val (on, _) = assertSameBothWays("select a - a, n - n, n * 0 from v")
    assert(subtracts(on) == 2 && multiplies(on) >= 2, on.treeString)
    val q = "select d - d from (select id * 9223372036854775807 as d from range(1, 4))"
    for (enabled <- Seq(true, false)) {
      val err = intercept[Exception](withArrnf(enabled)(spark.sql(q).collect()))
      assert(err.getMessage.contains("ARITHMETIC_OVERFLOW"), err.getMessage)
    }
    val (onSafe, _) = assertSameBothWays("select k - k, k * 0 from (select id % 7 as k from range(9))")
    assert(subtracts(onSafe) == 0 && multiplies(onSafe) == 0, onSafe.treeString)
  }

  test("-(-x) on a DECIMAL folds up to 34 digits; at 35 to 38 Spark's negation rounds, and it stays") {
    // (a CASE of literals: a product near 38 digits can overflow, and nothing would fold)
    def q(p: Int) = s"select -(-x) from (select case id when 1 then ${"1" * p}BD else -${"2" * p}BD end as x " +
      "from range(1, 3))"
    val (on34, _) = assertSameBothWays(q(34))
    assert(negNegs(on34) == 0, on34.treeString)
    for (p <- Seq(35, 38)) {
      val (on, _) = assertSameBothWays(q(p))
      assert(negNegs(on) == 1, on.treeString)
    }
  }

  test("d - d and d * 0 on doubles do not fold: inf - inf and NaN * 0 are NaN") {
    val (on, _) = assertSameBothWays("select d - d, d * 0 from v")
    assert(subtracts(on) == 1 && multiplies(on) == 1, on.treeString)
    assert(run("select d - d from v where isnan(d)", enabled = true)._2.head.getDouble(0).isNaN)
  }

  test("a - b of different columns and rand() - rand() do not fold") {
    val on = withArrnf(true)(spark.sql("select a - n, rand(1) - rand(1) from v").queryExecution.optimizedPlan)
    assert(subtracts(on) == 2, on.treeString)
  }
}
