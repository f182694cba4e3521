package arrnf.cost

import scala.util.Try

import org.apache.spark.sql.catalyst.expressions.{AttributeMap, Expression}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LeafNode, LogicalPlan, OneRowRelation, Project, Statistics}
import org.apache.spark.sql.execution.columnar.InMemoryRelation
import org.apache.spark.sql.execution.datasources.{CatalogFileIndex, HadoopFsRelation, InMemoryFileIndex, LogicalRelation}
import org.apache.spark.sql.internal.SQLConf

import arrnf.stats.{FileFacts, FileRelationSizes, RelationStatistics, Sketches}

/**
 * The statistics of a plan's leaves, from the best source at hand, with its label: catalog
 * statistics (`ANALYZE TABLE`), else a file relation's Parquet footers (`file metadata`) and its
 * sketch pass's column statistics and sample ([[RelationStatistics]]); a cached relation's real size
 * once materialized (`cache`); local rows exactly (`exact`); a data source's own report. For one
 * [[Estimator]]: each relation is looked up once, however many times the plan reads it.
 */
private[cost] final class LeafStatistics {

  // The sketch's sample of each file relation read (by the plan's node).
  private val samples = new java.util.IdentityHashMap[LogicalPlan, Sketches.Sample]()

  /** The sketch pass's sample of `leaf`, once its statistics were read. */
  def sampleOf(leaf: LogicalPlan): Option[Sketches.Sample] = Option(samples.get(leaf))

  /** The distinct values of `e`, a projection's computed column, in the sample of the table `pr` reads
   *  (directly, or filtered): [[Sketches.Sample.valuesOf]]. */
  def sampledValues(pr: Project, e: Expression): Option[BigInt] = {
    val (below, kept) = pr.child match {
      case f: Filter => (f.child, Some(f.condition))
      case c => (c, None)
    }
    sampleOf(below).flatMap(_.valuesOf(e, kept, below.output))
  }

  /** The statistics of `leaf` and their source ("unknown: …" where its rows are unknown). */
  def apply(leaf: LeafNode): (Statistics, String) = {
    // A file relation without catalog statistics states only its files' size, whatever the settings:
    // the node's own statistics, computed once for it (Spark's planning and the rules ask too).
    val own = Try(leaf match {
      case r: LogicalRelation if r.catalogTable.forall(_.stats.isEmpty) => FileRelationSizes.put(r); leaf.stats
      case _ => leaf.computeStats()
    }).getOrElse(Statistics(sizeInBytes = SQLConf.get.defaultSizeInBytes))
    leaf match {
      // Pruned partitions: Spark's estimate of them replaced the table's statistics ([[PrunedPartitions]]).
      case r @ LogicalRelation(h: HadoopFsRelation, _, _, _, _) if PrunedPartitions.of(r).isDefined =>
        fileStatistics(r, h, own.copy(rowCount = None, attributeStats = AttributeMap(Nil)))
      case r @ LogicalRelation(h: HadoopFsRelation, _, catalogTable, _, _) =>
        val analyzed = catalogTable.flatMap(_.stats).filter(_.rowCount.isDefined && own.rowCount.isDefined)
        // ANALYZE TABLE counted the bytes of the files it read: other bytes listed now are other files.
        // (A partitioned table's every partition: listed as Spark's scan lists them, through its file status cache.)
        lazy val listedBytes = h.location match {
          case _: InMemoryFileIndex | _: CatalogFileIndex => Try(FileFacts.files(h).map(f => BigInt(f.getLen)).sum).toOption
          case _ => None
        }
        analyzed match {
          case None => fileStatistics(r, h, own)
          case Some(catalog) if listedBytes.exists(_ != catalog.sizeInBytes) =>
            val (stats, source) = fileStatistics(r, h, own.copy(rowCount = None, attributeStats = AttributeMap(Nil)))
            (stats, s"$source; ${LeafStatistics.StaleCatalog}")
          // Without column statistics (ANALYZE TABLE without FOR COLUMNS) the footers state the same rows
          // and their NULL counts too (a join's isnotnull(k) estimated where the catalog's rows alone tell nothing).
          case Some(catalog) if catalog.colStats.isEmpty =>
            val footers = fileStatistics(r, h, own.copy(rowCount = None))
            if (footers._1.rowCount == own.rowCount) footers else (own, "catalog")
          case _ => (own, "catalog")
        }
      case _: InMemoryRelation => (own, if (own.rowCount.isDefined) "cache" else "unknown: a cache not materialized yet")
      // One empty row (`SELECT 1`, `(SELECT 1 AS x) u`), whose statistics Spark gives no row count.
      case _: OneRowRelation => (own.copy(rowCount = Some(BigInt(1))), "exact")
      case _ if own.rowCount.isDefined && leaf.nodeName.matches("LocalRelation|Range|OneRowRelation|EmptyRelation") =>
        (own, "exact")
      case _ => (own, if (own.rowCount.isDefined) "data source" else s"unknown: ${leaf.nodeName} reports no rows")
    }
  }

  private val relationFacts = new java.util.IdentityHashMap[HadoopFsRelation, RelationStatistics.Facts]()

  private def fileStatistics(r: LogicalRelation, h: HadoopFsRelation, own: Statistics): (Statistics, String) = {
    // Once per relation for this estimator: a plan may read a table many times (TPC-DS q88: 8 times).
    val facts = relationFacts.computeIfAbsent(h, { _ =>
      val pruned = PrunedPartitions.of(r)
      val whole = RelationStatistics.of(h, r.catalogTable, pruned.isDefined, org.apache.spark.sql.arrnf.ArrnfSqlConf.maxFooterFiles(SQLConf.get))
      pruned.fold(whole)(PrunedPartitions.restrict(whole, _, r.catalogTable.get))
    })
    // Figures are kept by lower-case name: columns whose names differ only in case (spark.sql.caseSensitive) get none.
    val names = r.output.map(_.name.toLowerCase(java.util.Locale.ROOT))
    val ambiguous = names.diff(names.distinct).toSet
    if (ambiguous.isEmpty) facts.sample.foreach(samples.put(r, _))
    val columns = AttributeMap(r.output.flatMap(a => Some(a.name.toLowerCase(java.util.Locale.ROOT)).filterNot(ambiguous)
      .flatMap(facts.columns.get).map(a -> _)))
    if (facts.rows.isEmpty) (own, facts.source)
    else (own.copy(rowCount = facts.rows, attributeStats = columns), facts.source)
  }
}

private[cost] object LeafStatistics {
  /** Why a table's catalog statistics are not read. */
  val StaleCatalog = "its catalog statistics are stale: its files changed since ANALYZE TABLE, run it again"
}
