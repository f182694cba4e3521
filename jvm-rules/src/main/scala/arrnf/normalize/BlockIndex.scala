package arrnf.normalize

import scala.collection.mutable
import scala.util.Try

import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan}

import arrnf.model.{GetLeaf, Source}

/**
 * Where the logical nodes of a normalized plan went: the block of each node and the arrangements
 * each join reads. Measured reports ask it (physical operator → `logicalLink` → block); the
 * normalizer fills it as it makes blocks.
 *
 * The look-up tables are built on the first look-up: hashing or canonicalizing every node costs as
 * much as the rest of normalizing, and the text form and the explain section never look.
 */
final class BlockIndex private[normalize] () {
  private val noted = mutable.ArrayBuffer[(LogicalPlan, String, Boolean)]()
  private val arrangedJoins = mutable.ArrayBuffer[(Join, (GetLeaf, GetLeaf))]()
  private var renamed: Map[String, String] = Map.empty

  /** `p` belongs to block `name`; `force`: over an earlier note of the same node (a head over the
   *  body that read it). */
  private[normalize] def note(p: LogicalPlan, name: String, force: Boolean): Unit = noted += ((p, name, force))
  private[normalize] def noteJoin(j: Join, left: GetLeaf, right: GetLeaf): Unit = arrangedJoins += ((j, (left, right)))
  /** Blocks renamed when the program was finished (the root forwarded to the block it reads). */
  private[normalize] def rename(names: Map[String, String]): Unit = renamed = names

  private def nameOf(n: String): String = renamed.getOrElse(n, n)

  private lazy val nodeBlock = {
    val m = mutable.HashMap[LogicalPlan, String]()
    noted.foreach { case (p, b, force) => if (force || !m.contains(p)) m(p) = b }
    m
  }
  private lazy val canonBlock = {
    val m = mutable.HashMap[LogicalPlan, String]()
    noted.foreach { case (p, b, force) =>
      Try(p.canonicalized).foreach(c => if (force || !m.contains(c)) m(c) = b)
    }
    m
  }
  private lazy val joinArranged = mutable.HashMap[Join, (GetLeaf, GetLeaf)](arrangedJoins.toSeq: _*)

  /**
   * The block that holds logical node `p` (a node of the plan normalized, or one equal to it, or of
   * the same canonical form). A node that heads a block belongs to that block; a join input belongs
   * to the block that arranges it.
   */
  def blockOf(p: LogicalPlan): Option[String] =
    nodeBlock.get(p).orElse(Try(p.canonicalized).toOption.flatMap(canonBlock.get)).map(nameOf)

  /**
   * The block of a node that is not in the plan but has the shape of exactly one node that is: same
   * operator, same expressions (expression ids included), same output; its children may differ (AQE
   * re-optimized below it, e.g. an input found empty at run time).
   */
  def blockOfShape(p: LogicalPlan): Option[String] = {
    val found = nodeBlock.iterator.collect {
      case (q, b) if q.getClass == p.getClass && Try(q.expressions == p.expressions && q.output == p.output).getOrElse(false) =>
        nameOf(b)
    }.toSeq.distinct
    if (found.size == 1) found.headOption else None
  }

  // A join met again with other expression ids (a CTE read twice, TPC-DS q39's inventory joins, whose
  // second reading the normalizer shares as the first's blocks) reads the same arrangements.
  private lazy val canonJoinArranged = {
    val m = mutable.HashMap[LogicalPlan, (GetLeaf, GetLeaf)]()
    arrangedJoins.foreach { case (j, sides) => Try(j.canonicalized).foreach(c => if (!m.contains(c)) m(c) = sides) }
    m
  }

  /** The arrangements a join reads, left and right (blocks or cached relations), by name: of the
   *  join itself, or of one of the same canonical form. */
  def joinInputsOf(j: Join): Option[(String, String)] =
    joinArranged.get(j).orElse(Try(j.canonicalized).toOption.flatMap(canonJoinArranged.get)).map { case (l, r) =>
      def n(g: GetLeaf) = if (g.source == Source.Block) nameOf(g.name) else g.name
      (n(l), n(r))
    }

  /** The blocks the inputs of a grouped operator (applyInPandas, cogroup, mapGroups) are in, where
   *  `p` is one: the normalizer arranges each input by its grouping keys, as a join's. */
  def groupedInputsOf(p: LogicalPlan): Option[Seq[Option[String]]] =
    PlanPatterns.groupingOf(p).map(_ => p.children.map(blockOf))

  /** [[joinInputsOf]] for a join re-planned by AQE: the one join of the same condition and output. */
  def joinInputsOfShape(j: Join): Option[(String, String)] = {
    val found = joinArranged.keys.filter(k => k.joinType == j.joinType && k.condition == j.condition &&
      Try(k.output == j.output).getOrElse(false)).toSeq
    if (found.size == 1) joinInputsOf(found.head) else None
  }
}
