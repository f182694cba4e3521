package arrnf.sql

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, Expression, ExpressionInfo, Literal}
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, LogicalPlan}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import arrnf.model.ArrnfProgram
import arrnf.normalize.Arrnf
import arrnf.render.{JsonFormat, TextFormat}

/**
 * SQL functions any client can call (Spark Connect, `spark-sql`, the Thrift/JDBC server, Scala),
 * each taking a query as a constant string and answering at analysis time, without running it:
 *
 * {{{
 *   SELECT arrnf_json('SELECT k, count(*) FROM t GROUP BY k')   -- the ArrNF program as JSON
 *   SELECT arrnf_text('SELECT ...')                              -- its text form
 *   SELECT * FROM arrnf_blocks('SELECT ...')                     -- one row per block
 *   SELECT arrnf_json('SELECT ...', 'sales')                     -- result block named `sales`
 *   SELECT * FROM arrnf_statistics('store_sales', 'date_dim')    -- the sketch pass (runs a job per table)
 * }}}
 * The query is planned in the calling session (its tables, views and settings), as `df.explain()`
 * would plan it. The optional second argument names the result block (default `query`; helpers
 * are `<name>.tmpN`), as `arrnf(df, name=...)` does in Python, whose Spark Connect path uses it.
 */
object ArrnfFunctions {
  /** The columns of `arrnf_blocks`, one row per block in dependency order. */
  val BlockColumns: Seq[AttributeReference] = Seq(
    AttributeReference("block", StringType, nullable = false)(),
    AttributeReference("head", StringType)(),
    AttributeReference("arrangements", IntegerType, nullable = false)(),
    AttributeReference("realization", StringType)(),
    AttributeReference("keys", StringType)(),
    AttributeReference("rows", LongType)(),
    AttributeReference("bytes", LongType)(),
    AttributeReference("source", StringType, nullable = false)(),
    AttributeReference("why", StringType, nullable = false)(),
    AttributeReference("text", StringType, nullable = false)())

  private def info(name: String, usage: String, example: String): ExpressionInfo =
    new ExpressionInfo(getClass.getName.stripSuffix("$"), null, name, usage,
      s"\n    Examples:\n      > $example\n")

  val functions: Seq[(FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression)] = Seq(
    (FunctionIdentifier("arrnf_json"),
      info("arrnf_json", "_FUNC_(query[, name]) - The ArrNF program of a query (a constant string) as JSON (docs/arrnf-json.md); " +
        "name (a constant string, default 'query') names its result block.",
        "SELECT _FUNC_('SELECT k, count(*) FROM range(10) t(k) GROUP BY k');"),
      args => Literal(UTF8String.fromString(JsonFormat(program("arrnf_json", args))), StringType)),
    (FunctionIdentifier("arrnf_text"),
      info("arrnf_text", "_FUNC_(query[, name]) - The ArrNF program of a query (a constant string) in its text form; " +
        "name (a constant string, default 'query') names its result block.",
        "SELECT _FUNC_('SELECT k, count(*) FROM range(10) t(k) GROUP BY k');"),
      args => Literal(UTF8String.fromString(TextFormat(program("arrnf_text", args, withSql = false))), StringType)))

  val tableFunctions: Seq[(FunctionIdentifier, ExpressionInfo, Seq[Expression] => LogicalPlan)] = Seq(
    (FunctionIdentifier("arrnf_blocks"),
      info("arrnf_blocks", "_FUNC_(query[, name]) - One row per block of the ArrNF program of a query (a constant " +
        "string): block, head, arrangements (Differential's count), realization (what Spark builds for it), keys, " +
        "rows, bytes, source, why, text.",
        "SELECT * FROM _FUNC_('SELECT k, count(*) FROM range(10) t(k) GROUP BY k');"),
      args => blocks(program("arrnf_blocks", args, withSql = false))),
    (FunctionIdentifier("arrnf_statistics"),
      info("arrnf_statistics", "_FUNC_(table[, table ...]) - Takes the sketch pass over the named tables (constant " +
        "strings; tables or views over files) in the server's JVM, as pyspark_arrnf.statistics does in a classic " +
        "session: one row per table, table and what was sketched or why not. Runs a job per table when analyzed.",
        "SELECT * FROM _FUNC_('store_sales', 'date_dim');"),
      args => statistics(args)))

  /** The columns of `arrnf_statistics`, one row per table. */
  val StatisticsColumns: Seq[AttributeReference] = Seq(
    AttributeReference("table", StringType, nullable = false)(),
    AttributeReference("sketched", StringType, nullable = false)())

  // The sketch pass from SQL, for clients without the driver's JVM (Spark Connect, JDBC): each line as Api's.
  private def statistics(args: Seq[Expression]): LogicalPlan = {
    val usage = "arrnf_statistics(table[, table ...]) takes the tables' names as constant strings, " +
      "e.g. SELECT * FROM arrnf_statistics('store_sales', 'date_dim')"
    val tables = args.map {
      case e if e.foldable && e.dataType.isInstanceOf[StringType] && e.eval() != null => e.eval().toString
      case _ => throw new IllegalArgumentException(usage)
    }
    if (tables.isEmpty) throw new IllegalArgumentException(usage)
    val lines = arrnf.Api.collectStatistics(SparkSession.active, tables.asJava).asScala
    LocalRelation(StatisticsColumns.map(_.newInstance()),
      tables.zip(lines).map { case (t, l) => InternalRow(UTF8String.fromString(t), UTF8String.fromString(l)) })
  }

  private def blocks(p: ArrnfProgram): LogicalPlan = {
    def s(x: String) = UTF8String.fromString(x)
    val rows = p.blocks.map { b =>
      val c = b.cost
      val realization = b.realization.map(r =>
        if (r.isEmpty) "none" else r.map(x => if (x.shared) x.what + " (existing)" else x.what).mkString(", "))
      InternalRow(s(b.name), b.head.map(h => s(h.kind.name)).orNull, c.arrangements, realization.map(s).orNull,
        if (c.keys.isEmpty) null else s(c.keys.map(_.mkString("[", ", ", "]")).mkString("[", ", ", "]")),
        c.rows.map(Long.box).orNull, c.bytes.map(Long.box).orNull, s(c.source), s(c.why), s(TextFormat.blockText(b)))
    }
    LocalRelation(BlockColumns.map(_.newInstance()), rows)
  }

  /** The program of the query `args` holds (and its name), planned in the active session; one clear error otherwise. */
  private def program(fn: String, args: Seq[Expression], withSql: Boolean = true): ArrnfProgram = {
    val usage = s"$fn(query[, name]) takes the query as a constant string and optionally the result block's name, " +
      s"e.g. $fn('SELECT ...') or $fn('SELECT ...', 'sales')"
    def constant(e: Expression, what: String): String = e match {
      case e if e.foldable && e.dataType.isInstanceOf[StringType] =>
        Option(e.eval()).map(_.toString).getOrElse(
          throw new IllegalArgumentException(s"$fn: the $what is NULL; $usage"))
      case _ => throw new IllegalArgumentException(usage)
    }
    val (query, name) = args match {
      case Seq(q) => (constant(q, "query"), "query")
      case Seq(q, n) => (constant(q, "query"), constant(n, "name"))
      case _ => throw new IllegalArgumentException(usage)
    }
    if (name.trim.isEmpty) throw new IllegalArgumentException(s"$fn: the name is empty; $usage")
    val spark = SparkSession.active
    val df = try QueryText.dataset(spark, query, fn) catch {
      case e: QueryText.NotAQuery => throw e
      case NonFatal(e) => throw new IllegalArgumentException(
        s"$fn: the query does not analyze, so it has no ArrNF program: ${firstLine(e)}", e)
    }
    // Planned first: a query Spark fails while planning (ANSI `1/0` it folds) is said as such. (A stream
    // is not planned before it starts: its program says it is one, as a classic session's does.)
    if (!df.isStreaming) try df.queryExecution.executedPlan catch {
      case NonFatal(e) => throw new IllegalArgumentException(
        s"$fn: the query failed while Spark planned it, before it ran, so it has no ArrNF program: ${firstLine(e)}", e)
    }
    try Arrnf.ofDataset(df, name, withSql) catch {
      case NonFatal(e) => throw new IllegalStateException(s"$fn: could not normalize the plan: ${firstLine(e)}", e)
    }
  }

  private def firstLine(e: Throwable): String =
    Option(e.getMessage).flatMap(_.linesIterator.map(_.trim).find(_.nonEmpty)).getOrElse(e.getClass.getSimpleName)
}
