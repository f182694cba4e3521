package arrnf

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * A real local SparkSession with the extension, plan-change validation on and `spark.testing` set
 * (build.sbt), so Spark checks idempotence, convergence and dangling references of every rule.
 */
trait ArrnfSparkSuite extends AnyFunSuite with BeforeAndAfterAll {
  @transient lazy val spark: SparkSession = SparkSession.builder()
    .master("local[2]")
    .appName(getClass.getSimpleName)
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "4")
    .config("spark.sql.planChangeValidation", "true")
    .withExtensions(new ArrnfExtension)
    .getOrCreate()

  private val tempDirs = scala.collection.mutable.Buffer[java.io.File]()

  /** A new temporary directory, deleted after the suite. */
  def tempDir(prefix: String): java.io.File = {
    val dir = java.nio.file.Files.createTempDirectory(prefix).toFile
    tempDirs += dir
    dir
  }

  override def afterAll(): Unit = {
    try spark.stop()
    finally try tempDirs.foreach(org.apache.commons.io.FileUtils.deleteQuietly) finally super.afterAll()
  }

  /** Runs `body` with the extension's rewrites on or off. */
  def withArrnf[T](enabled: Boolean)(body: => T): T = {
    val before = spark.conf.getOption(ArrnfConf.Enabled)
    spark.conf.set(ArrnfConf.Enabled, enabled.toString)
    try body finally before.fold(spark.conf.unset(ArrnfConf.Enabled))(spark.conf.set(ArrnfConf.Enabled, _))
  }

  /** Runs `body` with the session settings `kv`, each put back as it was after (unset if it was). */
  def withConf[T](kv: (String, String)*)(body: => T): T = {
    val before = kv.map { case (k, _) => k -> spark.conf.getOption(k) }
    kv.foreach { case (k, v) => spark.conf.set(k, v) }
    try body finally before.foreach { case (k, v) => v.fold(spark.conf.unset(k))(spark.conf.set(k, _)) }
  }

  /** The optimized plan and the rows of `sql`, planned and run with the rewrites on or off. */
  def run(sql: String, enabled: Boolean): (LogicalPlan, Seq[Row]) = withArrnf(enabled) {
    val df: DataFrame = spark.sql(sql)
    (df.queryExecution.optimizedPlan, df.collect().toSeq)
  }

  /** Asserts equal bags of rows with the rewrites on and off; returns both optimized plans. */
  def assertSameBothWays(sql: String): (LogicalPlan, LogicalPlan) = {
    val (onPlan, onRows) = run(sql, enabled = true)
    val (offPlan, offRows) = run(sql, enabled = false)
    assert(onRows.map(_.toString).sorted == offRows.map(_.toString).sorted, s"results differ for:\n$sql")
    (onPlan, offPlan)
  }
}
