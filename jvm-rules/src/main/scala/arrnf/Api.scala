package arrnf

import org.apache.spark.sql.Row
import org.apache.spark.sql.classic.{Dataset, SparkSession}
import org.apache.spark.sql.streaming.StreamingQuery

import arrnf.guard.ArrnfStatus
import arrnf.measure.Measure
import arrnf.normalize.Arrnf
import arrnf.rules.factorize.FactorizeStatus
import arrnf.sql.QueryText

/**
 * Everything the Python package asks the JVM (`spark._jvm.arrnf.Api` through py4j, from
 * `pyspark_arrnf/_jvm.py` only). Arguments Python may leave out are nullable.
 */
object Api {
  /** The DataFrame of a query's text, analyzed, never run; a command (`DROP TABLE ...`) is refused
   *  with [[arrnf.sql.QueryText.NotAQuery]] before anything runs. */
  def query(spark: SparkSession, text: String): Dataset[Row] = QueryText.dataset(spark, text, "arrnf")

  /** Why `key` (under `spark.arrnf.`) is none of the extension's settings, with the one it probably
   *  meant; null for one of them. */
  def unknownSetting(key: String): String = {
    import org.apache.spark.sql.arrnf.ArrnfSqlConf
    if (ArrnfSqlConf.Keys.contains(key)) null
    else ArrnfSqlConf.notASetting(key)
  }

  /** `df` to run once and measure: itself where its plan has not run, else its query as a new
   *  DataFrame, planned afresh. Spark's SQL metrics add up on an executed plan run again (measured
   *  after a `collect()`, a query read twice its rows and memory). */
  def toMeasure(df: Dataset[_]): Dataset[Row] = {
    val ran = df.queryExecution.executedPlan match {
      case a: org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec => a.isFinalPlan
      case p => p.exists(_.metrics.values.exists(_.value > 0))
    }
    val toRun = if (ran) org.apache.spark.sql.arrnf.DatasetOfPlan(df.sparkSession, df.queryExecution.logical) else df.toDF()
    arrnf.measure.Attribution.noteCachesToBuild(toRun.queryExecution)
    toRun
  }

  /** The ArrNF program of `df`'s optimized plan as JSON (docs/arrnf-json.md), texts included. */
  def json(df: Dataset[_], name: String): String = Arrnf.json(df, name)

  /**
   * [[json]], [[measuredJson]] and [[streamJson]] as Python reads them: the UTF-8 text deflated
   * (zlib) and cut into pieces of at most [[PieceBytes]]. py4j writes a reply of more than 8 KB in
   * several socket writes, and on loopback the last waits for TCP's delayed acknowledgement: 40 ms
   * per call on Linux, which 123 of the 125 TPC programs' JSON (30 KB at the median) paid. A piece
   * goes in one write (its base64 under py4j's 8,192-char buffer); most programs are one piece.
   */
  def jsonPieces(df: Dataset[_], name: String): Array[Array[Byte]] = pieces(json(df, name))
  def measuredJsonPieces(df: Dataset[_], name: String, error: String, resultRows: java.lang.Long): Array[Array[Byte]] =
    pieces(measuredJson(df, name, error, resultRows))
  def streamJsonPieces(q: StreamingQuery, name: String): Array[Array[Byte]] = pieces(streamJson(q, name))

  /** Bytes of one piece: 6,668 characters in base64, as py4j sends a byte array. */
  val PieceBytes = 5000

  private def pieces(text: String): Array[Array[Byte]] = {
    val out = new java.io.ByteArrayOutputStream()
    val z = new java.util.zip.DeflaterOutputStream(out)
    try z.write(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)) finally z.close()
    out.toByteArray.grouped(PieceBytes).toArray
  }

  /** The text form of `df`'s ArrNF program. */
  def text(df: Dataset[_], name: String): String = Arrnf.text(df, name)

  /** Runs `df`, every partition, without bringing its rows to the driver; the row count. */
  def run(df: Dataset[_]): Long = Measure.run(df)

  /** The measured report of `df` after it ran (docs/arrnf-measured.md); `error` is the first line
   *  of its failure (null: it ran), `resultRows` its result's rows (null: unknown). Never throws. */
  def measuredJson(df: Dataset[_], name: String, error: String, resultRows: java.lang.Long): String =
    Measure.safely(Measure.json(df, name, Option(error), Option(resultRows).map(_.longValue)))

  /** The measured report of a streaming query's last micro-batch. Never throws. */
  def streamJson(q: StreamingQuery, name: String): String = Measure.safely(Measure.streamJson(q, name))

  /** Failures of the rules (and the normalizer) per name since the JVM started. */
  def ruleFailures(): java.util.Map[String, java.lang.Long] = ArrnfStatus.failures()
  def failureCount(rule: String): Long = ArrnfStatus.failureCount(rule)

  /** Why the rules fired (or EagerAggregation declined) in `df`'s optimized plan, as its explain section says. */
  def ruleReasons(df: Dataset[_]): java.util.List[String] = {
    import scala.jdk.CollectionConverters._
    ArrnfExplainProvider.ruleReasons(df.queryExecution.optimizedPlan).asJava
  }

  def factorizeReasons(): java.util.List[String] = FactorizeStatus.reasons()
  def factorizeFirings(): Long = FactorizeStatus.firings()
  def eagerReasons(): java.util.List[String] = arrnf.rules.EagerAggregation.status.reasons()
  def eagerFirings(): Long = arrnf.rules.EagerAggregation.status.firings()
  def resetEagerStatus(): Unit = arrnf.rules.EagerAggregation.status.reset()
  def resetFactorizeStatus(): Unit = FactorizeStatus.reset()

  /** The factorization's minimum saving in the active session (its bad value's error). */
  def factorizeMinSaving(): Double = ArrnfConf.factorizeMinSaving()

  /** The sketch pass over `tables` (names of tables or views over files) in `session`: one line each. */
  def collectStatistics(session: org.apache.spark.sql.classic.SparkSession, tables: java.util.List[String]): java.util.List[String] = {
    import scala.jdk.CollectionConverters._
    tables.asScala.map { t =>
      try arrnf.stats.Sketches.collect(session, tableName(session, t), shown = t) catch {
        case scala.util.control.NonFatal(e) => s"$t: not sketched: ${Measure.firstLine(e.getMessage, e)}"
      }
    }.asJava
  }

  /** `t` as `spark.table` reads it: as written (`sales`, `db.sales`), else, where only one quoted name
   *  resolves, that: a view named `my table`, `a.b` or `données` (as the command line registers a folder). */
  private def tableName(session: org.apache.spark.sql.classic.SparkSession, t: String): String = {
    def resolves(n: String) = scala.util.Try(session.table(n)).isSuccess
    val quoted = "`" + t.replace("`", "``") + "`"
    if (t.contains('`') || resolves(t) || !resolves(quoted)) t else quoted
  }

  /** Forgets every sketch taken in this JVM. */
  def clearStatistics(): Unit = arrnf.stats.Sketches.clear()

  def version(): String = BuildInfo.version
  def sparkVersion(): String = BuildInfo.sparkVersion
}
