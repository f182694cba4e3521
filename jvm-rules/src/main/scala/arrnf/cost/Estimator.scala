package arrnf.cost

import scala.jdk.CollectionConverters._
import scala.util.Try
import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeMap}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LeafNode, LogicalPlan, Statistics}
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.execution.columnar.InMemoryRelation
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.internal.SQLConf

import arrnf.stats.{FileFacts, Sketches}

/** Estimated rows of a subtree and where they come from (`unknown` with no rows). */
final case class Estimate(rows: Option[BigInt], source: String)

/**
 * Row estimates for the nodes of a plan from the best statistics at hand, each labelled with its
 * source, and never a guess: where nothing is known the rows are unknown.
 *
 * Leaves: catalog statistics (`ANALYZE TABLE`), else the exact row count in Parquet footers (`file
 * metadata`), with the columns' distinct counts, NULL counts and ranges of the sketch pass when one
 * was taken on the current files; a cached relation's real size once materialized (`cache`); local
 * rows and ranges exactly (`exact`). Above them, Spark's own cost-based estimation (its filter,
 * join and aggregate estimation over those statistics, as if `spark.sql.cbo.enabled` were on, on a
 * copy of the plan: the user's plan and settings are untouched); it gives no rows where it lacks the
 * column statistics it needs, and its estimates never exceed the product of their inputs' rows.
 */
final class Estimator {
  private val known = new java.util.IdentityHashMap[LogicalPlan, Estimate]()

  def apply(p: LogicalPlan): Estimate = {
    if (!known.containsKey(p)) Try(estimateTree(p))
    Option(known.get(p)).getOrElse(Estimate(None, "unknown"))
  }

  /** A leaf carrying the statistics found for it. */
  private case class EstimatedLeaf(output: Seq[Attribute], estimated: Statistics, source: String) extends LeafNode {
    override def computeStats(): Statistics = estimated
  }

  private def estimateTree(root: LogicalPlan): Unit = {
    val cbo = SQLConf.get.clone()
    cbo.setConf(SQLConf.CBO_ENABLED, true)
    SQLConf.withExistingConf(cbo) {
      // Each node of `root` is copied with its statistics leaves; the copy's statistics are Spark's
      // estimates. Its answer per node: rows and source label.
      def copy(p: LogicalPlan): LogicalPlan = {
        val c = p match {
          case leaf: LeafNode =>
            val (stats, source) = leafStatistics(leaf)
            note(p, stats.rowCount, source)
            EstimatedLeaf(leaf.output, stats, source)
          case _ =>
            val children = p.children.map(copy)
            val copied = p.withNewChildren(children)
            val rows = Try(copied.stats.rowCount).toOption.flatten
            p match {
              // Spark assumes a predicate it cannot estimate keeps every row: that is no estimate.
              case f: Filter if !f.condition.references.forall(a =>
                  Try(children.head.stats.attributeStats.contains(a)).getOrElse(false)) =>
                note(p, None, "unknown")
                EstimatedLeaf(p.output, Statistics(sizeInBytes = Try(copied.stats.sizeInBytes).getOrElse(
                  SQLConf.get.defaultSizeInBytes)), "unknown")
              case _ =>
                // A node that keeps its one input's rows (a projection, an alias) keeps its label.
                val kept = p.children match {
                  case Seq(only) if rows.isDefined && known.get(only).rows == rows => Some(known.get(only).source)
                  case _ => None
                }
                val below = p.children.flatMap(ch => sourcesBelow.getOrElse(ch, Set.empty[String])).toSet
                sourcesBelow.put(p, below)
                note(p, rows, kept.getOrElse("estimate: " + below.toSeq.sorted.mkString(", ")))
                copied
            }
        }
        c
      }
      copy(root)
    }
  }

  // The leaf sources below each node (for its label).
  private val sourcesBelow = new java.util.IdentityHashMap[LogicalPlan, Set[String]]().asScala

  private def note(p: LogicalPlan, rows: Option[BigInt], source: String): Unit = {
    if (p.isInstanceOf[LeafNode]) sourcesBelow.put(p, if (source.startsWith("unknown")) Set.empty else Set(source))
    known.put(p, Estimate(rows, if (rows.isEmpty) (if (source.startsWith("unknown")) source else "unknown") else source))
  }

  private def leafStatistics(leaf: LeafNode): (Statistics, String) = {
    val own = Try(leaf.computeStats()).getOrElse(Statistics(sizeInBytes = SQLConf.get.defaultSizeInBytes))
    leaf match {
      case r @ LogicalRelation(h: HadoopFsRelation, _, catalogTable, _, _) =>
        if (catalogTable.exists(_.stats.exists(_.rowCount.isDefined)) && own.rowCount.isDefined) (own, "catalog")
        else fileStatistics(r, h, own)
      case _: InMemoryRelation => (own, if (own.rowCount.isDefined) "cache" else "unknown: a cache not materialized yet")
      case _ if own.rowCount.isDefined && leaf.nodeName.matches("LocalRelation|Range|OneRowRelation|EmptyRelation") =>
        (own, "exact")
      case _ => (own, if (own.rowCount.isDefined) "data source" else s"unknown: ${leaf.nodeName} reports no rows")
    }
  }

  private def fileStatistics(r: LogicalRelation, h: HadoopFsRelation, own: Statistics): (Statistics, String) = {
    val conf = Try(SparkSession.active.sessionState.newHadoopConf()).getOrElse(new org.apache.hadoop.conf.Configuration())
    val sketch = Try(Sketches.of(h)).toOption.flatten
    val columns = sketch.flatMap(_.toOption).map { s =>
      AttributeMap(r.output.flatMap(a => s.columns.get(a.name.toLowerCase(java.util.Locale.ROOT)).map(a -> _)))
    }
    val staleNote = sketch.flatMap(_.left.toOption).map(w => s"; $w").getOrElse("")
    (try FileFacts.rows(h, conf) catch { case NonFatal(e) => Left(e.toString) }) match {
      case Right(n) =>
        (own.copy(rowCount = Some(BigInt(n)), attributeStats = columns.getOrElse(AttributeMap.empty)),
          if (columns.isDefined) "file metadata, sketch" else "file metadata" + staleNote)
      case Left(why) => sketch.flatMap(_.toOption) match {
        case Some(s) => (own.copy(rowCount = Some(BigInt(s.rows)), attributeStats = columns.get), "sketch")
        case None => (own, s"unknown: $why$staleNote")
      }
    }
  }
}
