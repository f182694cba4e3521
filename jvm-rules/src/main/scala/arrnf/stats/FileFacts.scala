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
 * Parquet footers (the sum of the row groups' counts). Footers are read once per file version
 * (path, length, modification time): a file that changed is read again.
 */
object FileFacts {
  /** A file as it is now: a changed file is another key. */
  final case class FileKey(path: String, length: Long, modified: Long)

  private val footerRows = new ConcurrentHashMap[FileKey, java.lang.Long]()
  private val MaxCached = 100000

  /** The files of `r` now (its index's listing). */
  def files(r: HadoopFsRelation): Seq[FileStatus] =
    r.location.listFiles(Nil, Nil).flatMap(_.files.map(_.fileStatus))

  def keys(r: HadoopFsRelation): Seq[FileKey] =
    files(r).map(f => FileKey(f.getPath.toString, f.getLen, f.getModificationTime)).sortBy(_.path)

  /** The exact row count of a Parquet relation from its footers, or why there is none. */
  def rows(r: HadoopFsRelation, hadoopConf: Configuration): Either[String, Long] = r.fileFormat match {
    case _: ParquetFileFormat =>
      try {
        var total = 0L
        files(r).foreach { f =>
          val key = FileKey(f.getPath.toString, f.getLen, f.getModificationTime)
          val known = footerRows.get(key)
          total += (if (known != null) known.longValue else {
            val footer = ParquetFileReader.readFooter(hadoopConf, f, ParquetMetadataConverter.NO_FILTER)
            val n = footer.getBlocks.asScala.map(_.getRowCount).sum
            if (footerRows.size < MaxCached) footerRows.put(key, n)
            n
          })
        }
        Right(total)
      } catch {
        case NonFatal(e) => Left(s"its Parquet footers could not be read (${e.getClass.getSimpleName}: " +
          s"${String.valueOf(e.getMessage).linesIterator.nextOption().getOrElse("")})")
      }
    case other => Left(s"${other.getClass.getSimpleName.stripSuffix("$")} files keep no row count")
  }
}
