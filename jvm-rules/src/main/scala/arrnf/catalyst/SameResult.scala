package arrnf.catalyst

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation, PartitioningAwareFileIndex}

/**
 * Whether two subtrees give the same rows: `a.sameResult(b)` — equal canonical forms — with cheap
 * tests first (canonicalizing copies both subtrees, while most pairs the rules compare already
 * differ in the operator, the output types or the number of nodes), and the same files read.
 *
 * Canonical forms compare a file relation by its paths, not by the files it listed: two views of
 * one folder, each read before and after rows were appended, are equal to `sameResult` but read
 * different files (`v_new EXCEPT ALL v_old` is not empty). A file index that keeps its listing is
 * compared by it (paths, sizes and modification times, as listed: no file is read); one that
 * lists when the query runs (a catalog table's) lists the same files for both.
 */
private[arrnf] object SameResult {
  def apply(a: LogicalPlan, b: LogicalPlan): Boolean =
    a.getClass == b.getClass && a.output.map(_.dataType) == b.output.map(_.dataType) &&
      size(a) == size(b) && a.sameResult(b) && sameFiles(a, b)

  private def size(p: LogicalPlan): Int = { var n = 0; p.foreach(_ => n += 1); n }

  private def sameFiles(a: LogicalPlan, b: LogicalPlan): Boolean = {
    val (fa, fb) = (fileIndexes(a), fileIndexes(b))
    fa.size == fb.size && fa.zip(fb).forall {
      case (x, y) if x eq y => true
      case (x: PartitioningAwareFileIndex, y: PartitioningAwareFileIndex) => listing(x) == listing(y)
      case (x, y) => !x.isInstanceOf[PartitioningAwareFileIndex] && !y.isInstanceOf[PartitioningAwareFileIndex]
    }
  }

  // (equal canonical forms have their relations in the same order)
  private def fileIndexes(p: LogicalPlan): Seq[AnyRef] = p.collectWithSubqueries {
    case LogicalRelation(h: HadoopFsRelation, _, _, _, _) => h.location
  }

  private def listing(i: PartitioningAwareFileIndex): Set[(String, Long, Long)] =
    i.allFiles().iterator.map(f => (f.getPath.toString, f.getLen, f.getModificationTime)).toSet
}
