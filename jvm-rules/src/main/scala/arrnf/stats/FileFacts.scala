package arrnf.stats

import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.FileStatus
import org.apache.parquet.format.converter.ParquetMetadataConverter
import org.apache.parquet.hadoop.ParquetFileReader

import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat

/**
 * What a relation's files say about it without reading its data: the exact row count kept in
 * Parquet footers (the sum of the row groups' counts) and, per top-level column, its exact NULL
 * count where every row group's statistics keep one. Footers are read once per file version (path,
 * length, modification time): a file that changed is read again.
 */
object FileFacts {
  /** A file as it is now: a changed file is another key. */
  final case class FileKey(path: String, length: Long, modified: Long)

  /** What the footers of a relation's files state: rows, and NULL counts by lower-case column name. */
  final case class Footers(rows: Long, nullCounts: Map[String, Long])

  private val footerCache = new ConcurrentHashMap[FileKey, Footers]()
  private val MaxCached = 100000

  /** The files of `r` now (its index's listing). */
  def files(r: HadoopFsRelation): Seq[FileStatus] = Listings.files(r.location)

  def keys(r: HadoopFsRelation): Seq[FileKey] = Listings.keys(r.location)

  /** The keys of listed files, in path order. */
  def keysOf(listed: Seq[FileStatus]): Seq[FileKey] =
    listed.map(f => FileKey(f.getPath.toString, f.getLen, f.getModificationTime)).sortBy(_.path)

  /** One file's footer: its rows and the NULL counts of the flat columns all its row groups count. */
  private def footerOf(hadoopConf: Configuration, f: FileStatus): Footers = {
    val blocks = ParquetFileReader.readFooter(hadoopConf, f, ParquetMetadataConverter.NO_FILTER).getBlocks.asScala.toSeq
    val chunks = blocks.map(_.getColumns.asScala.toSeq.filter(_.getPath.size == 1).map { c =>
      val st = c.getStatistics
      c.getPath.toDotString.toLowerCase(java.util.Locale.ROOT) ->
        (if (st != null && !st.isEmpty && st.isNumNullsSet) Some(st.getNumNulls) else None)
    })
    val names = chunks.headOption.map(_.map(_._1)).getOrElse(Nil)
    val nulls = names.flatMap { n =>
      val per = chunks.map(_.find(_._1 == n).flatMap(_._2))
      if (per.forall(_.isDefined)) Some(n -> per.map(_.get).sum) else None
    }.toMap
    Footers(blocks.map(_.getRowCount).sum, nulls)
  }

  /** What the Parquet footers of `r`'s files state, or why nothing; reads at most `maxUnread`
   *  footers not read before (a relation with more gets nothing: explaining must stay cheap).
   *  `listed`: its files as listed now ([[files]]). */
  def footers(r: HadoopFsRelation, listed: => Seq[FileStatus], hadoopConf: => Configuration, maxUnread: Int): Either[String, Footers] =
    r.fileFormat match {
    case _: ParquetFileFormat =>
      try {
        val unread = listed.count(f => !footerCache.containsKey(FileKey(f.getPath.toString, f.getLen, f.getModificationTime)))
        if (unread > maxUnread) return Left(s"its Parquet footers were not read: $unread files, more than " +
          s"spark.arrnf.statistics.maxFooterFiles ($maxUnread)")
        lazy val conf = hadoopConf
        val each = listed.map { f =>
          val key = FileKey(f.getPath.toString, f.getLen, f.getModificationTime)
          Option(footerCache.get(key)).getOrElse {
            val one = footerOf(conf, f)
            if (footerCache.size < MaxCached) footerCache.put(key, one)
            one
          }
        }
        // A column's NULL count is known where every file with rows counts it (an empty file has none).
        val counting = each.filter(_.rows > 0)
        val columns = counting.headOption.map(_.nullCounts.keySet).getOrElse(Set.empty[String])
          .filter(c => counting.forall(_.nullCounts.contains(c)))
        Right(Footers(each.map(_.rows).sum, columns.map(c => c -> counting.map(_.nullCounts(c)).sum).toMap))
      } catch {
        case NonFatal(e) => Left(s"its Parquet footers could not be read (${e.getClass.getSimpleName}: " +
          s"${String.valueOf(e.getMessage).linesIterator.nextOption().getOrElse("")})")
      }
    case other => Left(s"ArrNF reads no row count from ${other.getClass.getSimpleName.stripSuffix("$")} files (only " +
      "Parquet footers): the sketch pass counts them")
  }
}
