package arrnf.stats

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.sql.catalyst.CatalystTypeConverters
import org.apache.spark.sql.catalyst.plans.logical.ColumnStat
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.functions.{approx_count_distinct, col, count, lit, max, min}
import org.apache.spark.sql.types._

import arrnf.stats.FileFacts.FileKey

/**
 * The explicit sketch pass: per column of a file relation, its distinct count (HyperLogLog, Spark's
 * own `approx_count_distinct`), NULL count and, for numbers, dates and timestamps, its minimum and
 * maximum; with the row count. One aggregate job per table, run only when asked
 * (`pyspark_arrnf.statistics(spark, tables)`, `arrnf stats`). Kept in this JVM keyed by the
 * relation's root paths, with the files it was taken on: once a file changed the sketch is stale
 * and no longer used (the estimate says so).
 */
object Sketches {
  final case class Sketch(files: Seq[FileKey], rows: Long, columns: Map[String, ColumnStat])

  private val store = new ConcurrentHashMap[String, Sketch]()

  // Counts every change of the store: what was derived from the sketches is current while it stays.
  private val changes = new java.util.concurrent.atomic.AtomicLong()

  /** A number that changes whenever a sketch is taken or forgotten. */
  def version: Long = changes.get

  /** The relation's identity in the store: its root paths. */
  def identity(r: HadoopFsRelation): String = r.location.rootPaths.map(_.toString).sorted.mkString(",")

  /** Whether a sketch of `r` was taken (current or stale: telling needs its files' listing). */
  def taken(r: HadoopFsRelation): Boolean = store.containsKey(identity(r))

  /** The sketch of `r`, whose files as listed now have the keys `current`: Right when taken on
   *  those files, Left(why) when stale; None when never taken. */
  def of(r: HadoopFsRelation, current: => Seq[FileKey]): Option[Either[String, Sketch]] = Option(store.get(identity(r))).map { s =>
    if (s.files == current) Right(s) else Left("a sketch was taken, but its files changed since")
  }

  /** Takes (again) the sketch of `table`; one line saying what was sketched, or why not. */
  def collect(spark: SparkSession, table: String): String = {
    val df = spark.table(table)
    val relations = df.queryExecution.analyzed.collect { case l @ LogicalRelation(h: HadoopFsRelation, _, _, _, _) => (l, h) }
    relations match {
      case Seq((l, h)) =>
        val cols = l.output.filter(a => sketchable(a.dataType))
        val aggs = count(lit(1)).as("__rows") +: cols.zipWithIndex.flatMap { case (a, i) =>
          val c = col(s"`${a.name}`")
          Seq(approx_count_distinct(c).as(s"__ndv$i"), count(c).as(s"__nonnull$i")) ++
            (if (ranged(a.dataType)) Seq(min(c).as(s"__min$i"), max(c).as(s"__max$i")) else Nil)
        }
        val files = FileFacts.keys(h)
        val row = spark.table(table).agg(aggs.head, aggs.tail: _*).head()
        val rows = row.getAs[Long]("__rows")
        val columns = cols.zipWithIndex.map { case (a, i) =>
          def internal(name: String) = Option(row.getAs[Any](name)).map(v => CatalystTypeConverters.convertToCatalyst(v))
          val (lo, hi) = if (ranged(a.dataType)) (internal(s"__min$i"), internal(s"__max$i")) else (None, None)
          a.name.toLowerCase(java.util.Locale.ROOT) -> ColumnStat(
            distinctCount = Some(BigInt(row.getAs[Long](s"__ndv$i"))), min = lo, max = hi,
            nullCount = Some(BigInt(rows - row.getAs[Long](s"__nonnull$i"))),
            avgLen = Some(a.dataType.defaultSize.toLong), maxLen = Some(a.dataType.defaultSize.toLong))
        }.toMap
        store.put(identity(h), Sketch(files, rows, columns))
        changes.incrementAndGet()
        s"$table: $rows rows, ${columns.size} columns sketched (${files.size} files)"
      case Seq() => s"$table: not sketched: it does not read files (only file tables and views over them are)"
      case many => s"$table: not sketched: it reads ${many.size} file relations (sketch each table it reads)"
    }
  }

  private def sketchable(t: DataType): Boolean = t match {
    case _: NumericType | DateType | TimestampType | TimestampNTZType | BooleanType | _: StringType | BinaryType => true
    case _ => false
  }

  private def ranged(t: DataType): Boolean = t match {
    case _: NumericType | DateType | TimestampType | TimestampNTZType => true
    case _ => false
  }

  /** Forgets every sketch (tests). */
  def clear(): Unit = { store.clear(); changes.incrementAndGet() }
}
