package arrnf.stats

import java.util.{Collections, WeakHashMap}

import org.apache.hadoop.fs.FileStatus
import org.apache.spark.sql.execution.datasources.{FileIndex, InMemoryFileIndex}

/**
 * The files of a relation's index, listed once per version of the index instead of once per plan.
 * Asking an index for its files (`listFiles`) resolves each root path's file system through the
 * Hadoop configuration on every call: 4% of EagerAggregation's planning time over the TPC queries
 * went there, for listings that had not changed. An `InMemoryFileIndex` (a path read or a catalog
 * table without partitions) changes its files only by replacing its map of leaf files
 * ([[IndexVersion]]), so a listing taken under one map serves until the map is another. Other
 * indexes (a partitioned catalog table's, a streaming sink's log, other formats') are asked each time.
 */
object Listings {
  /** `files` (`listFiles` without filters) and their keys, as the index served under `version`.
   *  (It holds no reference to the index: the map's weak key would never be released.) */
  private final class Listed(val version: AnyRef, val files: Seq[FileStatus]) {
    lazy val keys: Seq[FileFacts.FileKey] = FileFacts.keysOf(files)
  }

  // Weak keys: an index no plan holds any more takes its listing with it.
  private val listed = Collections.synchronizedMap(new WeakHashMap[FileIndex, Listed]())

  /** The non-empty data files `index` serves now (its `listFiles` without filters). */
  def files(index: FileIndex): Seq[FileStatus] = current(index).map(_.files).getOrElse(listNow(index))

  /** [[FileFacts.keysOf]] the files `index` serves now, in path order. */
  def keys(index: FileIndex): Seq[FileFacts.FileKey] =
    current(index).map(_.keys).getOrElse(FileFacts.keysOf(listNow(index)))

  private def listNow(index: FileIndex): Seq[FileStatus] = index.listFiles(Nil, Nil).flatMap(_.files.map(_.fileStatus))

  private def current(index: FileIndex): Option[Listed] = index match {
    case m: InMemoryFileIndex =>
      // The version is read before the files are listed: a refresh in between leaves a listing
      // newer than its version, listed again at the next call, never an older one kept.
      val version = IndexVersion.of(m)
      // Indexes over the same root paths are equal (InMemoryFileIndex.equals) yet may serve other
      // files (other options): the version, one per index and listing, tells them apart.
      val known = listed.get(m)
      if (known != null && (known.version eq version)) Some(known)
      else {
        val fresh = new Listed(version, listNow(m))
        listed.put(m, fresh)
        Some(fresh)
      }
    case _ => None
  }
}
