package arrnf.stats

import java.util.concurrent.ConcurrentHashMap

import scala.util.Try
import scala.util.control.NonFatal

import org.apache.hadoop.fs.FileStatus
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.plans.logical.ColumnStat
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.execution.datasources.HadoopFsRelation

/**
 * What a file relation's files (Parquet footers, [[FileFacts]]) and its sketch ([[Sketches]]) tell
 * about it, by lower-case column name, with the source of the figures. Read once per relation as
 * its files, the sketches and the footer budget stand, not once per plan: every plan over a table
 * would otherwise look up each file's footer and the sketch again.
 */
object RelationStatistics {

  /** Rows and column statistics by lower-case column name; `source` says where they come from, or
   *  why the rows are unknown ("unknown: …"). */
  final case class Facts(rows: Option[BigInt], columns: Map[String, ColumnStat], source: String,
      sample: Option[Sketches.Sample] = None)

  private final case class Key(relation: String, files: Seq[FileFacts.FileKey], sketches: Long, maxUnread: Int)

  private val read = new ConcurrentHashMap[Key, Facts]()

  /** The facts of `h` (of catalog table `table`, whose `pruned` partitions it reads), reading at most
   *  `maxUnread` footers not read before. */
  def of(h: HadoopFsRelation, table: Option[CatalogTable], pruned: Boolean, maxUnread: Int): Facts = Try(FileFacts.files(h)).toOption match {
    case Some(listed) =>
      val key = Key(Sketches.identity(h, table), FileFacts.keys(h), Sketches.version, maxUnread)
      Option(read.get(key)).getOrElse {
        val facts = readNow(h, table, pruned, listed, maxUnread)
        if (facts.rows.isDefined) {
          if (read.size > 10000) read.clear() // stale keys of changed files, in a long-lived driver
          read.put(key, facts)
        }
        facts
      }
    case None => readNow(h, table, pruned, FileFacts.files(h), maxUnread) // says why the files cannot be listed
  }

  private def readNow(h: HadoopFsRelation, table: Option[CatalogTable], pruned: Boolean, listed: => Seq[FileStatus], maxUnread: Int): Facts = {
    // A Hadoop configuration copies every setting: made only when a footer must be read.
    lazy val conf = Try(SparkSession.active.sessionState.newHadoopConf()).getOrElse(new org.apache.hadoop.conf.Configuration())
    val sketch = Try(Sketches.of(h, table, FileFacts.keys(h), pruned)).toOption.flatten
    val columns = sketch.flatMap(_.toOption).map(_.columns)
    val sample = sketch.flatMap(_.toOption).map(_.sample)
    val staleNote = sketch.flatMap(_.left.toOption).map(w => s"; $w").getOrElse("")
    (try FileFacts.footers(h, listed, conf, maxUnread) catch { case NonFatal(e) => Left(e.toString) }) match {
      case Right(f) =>
        // Without a sketch, the footers' exact NULL counts (enough for Spark's IS NOT NULL estimate); of
        // no rows (empty files keep no column statistics), no values and no NULLs in any column.
        val counted = if (f.rows > 0) f.nullCounts.map { case (n, c) => n -> ColumnStat(nullCount = Some(BigInt(c))) }
          else h.schema.fieldNames.map(_.toLowerCase(java.util.Locale.ROOT) -> ColumnStat(distinctCount = Some(BigInt(0)), nullCount = Some(BigInt(0)))).toMap
        Facts(Some(BigInt(f.rows)), columns.getOrElse(counted),
          if (columns.isDefined) "file metadata, sketch" else "file metadata" + staleNote, sample)
      case Left(why) => sketch.flatMap(_.toOption) match {
        // (a footer that could not be read now, a file made unreadable since: said, as the query will read it)
        case Some(s) => Facts(Some(BigInt(s.rows)), s.columns,
          if (why.contains("could not be read")) s"sketch; $why" else "sketch", Some(s.sample))
        case None => Facts(None, Map.empty, s"unknown: $why$staleNote")
      }
    }
  }
}
