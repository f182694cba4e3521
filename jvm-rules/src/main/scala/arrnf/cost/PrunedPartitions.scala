package arrnf.cost

import scala.util.Try

import org.apache.spark.sql.catalyst.{InternalRow, QualifiedTableName}
import org.apache.spark.sql.catalyst.catalog.{CatalogStatistics, CatalogTable}
import org.apache.spark.sql.catalyst.plans.logical.ColumnStat
import org.apache.spark.sql.catalyst.types.PhysicalDataType
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.execution.datasources.{CatalogFileIndex, HadoopFsRelation, LogicalRelation, PartitioningAwareFileIndex}
import org.apache.spark.sql.types.{BinaryType, DataType, DoubleType, FloatType, StructType, TimestampType}

import arrnf.stats.{FileFacts, RelationStatistics, Sketches, SketchedColumns}

/**
 * A partitioned catalog table read after partition pruning. Spark's `PruneFileSourcePartitions`
 * gives the relation an index of the kept partitions' files only, and replaces the table's catalog
 * statistics by its own filtered estimate (without column statistics unless `spark.sql.cbo.enabled`).
 * Its rows are then its kept files' (their footers: exact); its columns' statistics are the whole
 * table's (its sketch, or the catalog's `ANALYZE TABLE … FOR ALL COLUMNS` from Spark's relation
 * cache) restricted to the kept partitions:
 *  - a partition column's values are the kept partitions' values;
 *  - another column's distinct values are those a random share of the table's rows keeps
 *    ([[Estimator.distinctIn]]), its NULLs that share of the table's;
 *  - the sample keeps the sampled rows of the kept partitions only.
 * The partition filters stay in the plan above the relation (Spark keeps them): over these
 * statistics they keep every row, as they do.
 * {{{
 *   fact: 20,000 rows in partitions p = 0..4, sketched; `… WHERE p = 1` reads 4,000 rows:
 *   footers 4,000 rows; p: 1 value, 1 to 1; k: 97 values of 97; sample: the 400 of 2,000 with p = 1
 * }}}
 */
private[cost] object PrunedPartitions {

  /** The kept partitions: the partition columns and each kept partition's values. */
  final case class Kept(columns: StructType, values: Seq[InternalRow])

  /** The kept partitions of `r`, where it reads a pruned partitioned catalog table. */
  def of(r: LogicalRelation): Option[Kept] = r match {
    case LogicalRelation(h: HadoopFsRelation, _, Some(t), _, _) if t.partitionColumnNames.nonEmpty => h.location match {
      case _: CatalogFileIndex => None // not pruned: every partition
      case m: PartitioningAwareFileIndex => Try(m.partitionSpec()).toOption.filter(_.partitionColumns.nonEmpty)
        .map(s => Kept(s.partitionColumns, s.partitions.map(_.values)))
      case _ => None
    }
    case _ => None
  }

  /** The statistics the catalog keeps for the whole of table `t` (ANALYZE TABLE), with the unpruned
   *  relation they describe, as Spark's relation cache holds them (no call to the catalog). */
  private def catalogStatistics(t: CatalogTable): Option[(HadoopFsRelation, CatalogStatistics)] = Try {
    val id = t.identifier
    Option(SparkSession.active.sessionState.catalog.getCachedTable(
      QualifiedTableName(id.catalog.getOrElse("spark_catalog") /* (the session catalog's name) */, id.database.get, id.table)))
      .flatMap(_.collectFirst { case LogicalRelation(h: HadoopFsRelation, _, Some(c), _, _) if c.stats.isDefined => (h, c.stats.get) })
  }.toOption.flatten

  /** Whether the catalog keeps column statistics of table `t` (a quick test: none converted). */
  def hasCatalogColumns(t: CatalogTable): Boolean = catalogStatistics(t).exists(_._2.colStats.nonEmpty)

  /** The whole table's column statistics in the catalog (… FOR ALL COLUMNS), by lower-case name. */
  def catalogColumns(t: CatalogTable): Map[String, ColumnStat] = catalogStatistics(t).fold(Map.empty[String, ColumnStat]) { case (_, stats) =>
    val types = t.schema.fields.map(f => f.name.toLowerCase(java.util.Locale.ROOT) -> f.dataType).toMap
    stats.colStats.flatMap { case (name, c) =>
      val lower = name.toLowerCase(java.util.Locale.ROOT)
      types.get(lower).flatMap(dt => Try(lower -> c.toPlanStat(name, dt)).toOption)
    }
  }

  /** Whether every partition's files, listed now, hold other bytes than ANALYZE TABLE counted: files
   *  added, removed or rewritten since, partitions added (the kept ones may be those: a day's new
   *  partition beyond the ranges the catalog keeps). Listed as an unpruned scan of it lists them,
   *  through Spark's file status cache; a listing that fails counts as changed. */
  private def changedSince(h: HadoopFsRelation, stats: CatalogStatistics): Boolean =
    Try(FileFacts.files(h).map(f => BigInt(f.getLen)).sum != stats.sizeInBytes).getOrElse(true)

  /** `facts` of the whole table's sketch or footers, read for the kept partitions' files: the
   *  columns and sample restricted to them; without a sketch, the catalog's column statistics. */
  def restrict(facts: RelationStatistics.Facts, kept: Kept, table: CatalogTable): RelationStatistics.Facts = {
    val sketched = facts.sample.isDefined // (a current sketch's: a stale one gives none)
    lazy val analyzed = catalogStatistics(table).filter(_._2.colStats.nonEmpty)
    val stale = !sketched && analyzed.exists { case (h, stats) => changedSince(h, stats) }
    val catalog = if (sketched || stale) Map.empty[String, ColumnStat] else catalogColumns(table)
    // The whole table's rows, which the sketch's or the catalog's figures are of.
    val tableRows = if (sketched) facts.sample.map(s => BigInt(s.of)) else analyzed.flatMap(_._2.rowCount)
    val sample = facts.sample.flatMap(restrictSample(_, kept))
    // Rows: the kept files' footers; where the sketch states them (no footers), the kept share of its sample.
    val rows = if (facts.source.startsWith("sketch")) for (s <- facts.sample; k <- sample)
        yield BigInt(math.round(s.of.toDouble * k.rows.size / math.max(s.rows.size, 1)))
      else facts.rows
    rows match {
      case None if facts.source.startsWith("sketch") =>
        RelationStatistics.Facts(None, Map.empty, "unknown: its sketch counts every partition, and its sample cannot tell the kept ones")
      case None => facts
      case Some(n) =>
        val whole = if (sketched) facts.columns else if (catalog.nonEmpty) catalog else Map.empty[String, ColumnStat]
        val partitionNames = kept.columns.fieldNames.map(_.toLowerCase(java.util.Locale.ROOT)).toSet
        // (NULLs: the kept files' footers count them exactly where no sketch was read; else a share of the table's)
        val others = whole.filter { case (name, _) => !partitionNames.contains(name) }.map { case (name, c) =>
          name -> c.copy(
            distinctCount = c.distinctCount.map(d => tableRows.fold(d.min(n))(m => Estimator.distinctIn(d, m, n))),
            nullCount = (if (sketched) None else facts.columns.get(name).flatMap(_.nullCount))
              .orElse(c.nullCount.map(x => tableRows.filter(_ > 0).fold(x.min(n))(m => (x * n / m).min(n)))))
        }
        // Without a sketch or catalog columns: the footers' NULL counts as read; the partition columns' values always.
        val columns = (if (whole.isEmpty) facts.columns else others) ++ partitionColumns(kept, n)
        // (rows the sketch states: the kept share of its sample, which the label says)
        val source = if (facts.source.startsWith("sketch")) facts.source.replaceFirst("^sketch", "sketch of every partition (rows: its sample's share)")
          else if (sketched) facts.source.replace("sketch", "sketch of every partition")
          else if (catalog.nonEmpty) facts.source + ", catalog columns"
          else if (stale) s"${facts.source}; ${LeafStatistics.StaleCatalog}" else facts.source
        RelationStatistics.Facts(Some(n), columns, source, sample.map(s => new Sketches.Sample(s.names, s.types, s.rows, n.toLong)))
    }
  }

  /** Partition column types whose values are told apart by equality as read in any session: not FLOAT/DOUBLE
   *  (NaN is no value's equal), BINARY (arrays), TIMESTAMP (its partition folders are read in the session's time zone). */
  private def matchable(dt: DataType): Boolean = dt match {
    case FloatType | DoubleType | BinaryType | TimestampType => false
    case _ => true
  }

  /** The partition columns' statistics over the kept partitions (of `rows` rows): their values, NULLs (every
   *  row where each kept partition's value is NULL, none where none is) and range; none for a FLOAT or
   *  DOUBLE column (a NaN partition has no range Spark's estimation takes) or a BINARY one. */
  private def partitionColumns(kept: Kept, rows: BigInt): Map[String, ColumnStat] = kept.columns.fields.zipWithIndex
    .filter { case (f, _) => matchable(f.dataType) || f.dataType == TimestampType }.map { case (f, i) =>
    val values = kept.values.map(v => if (v.isNullAt(i)) None else Some(v.get(i, f.dataType)))
    val present = values.flatten.distinct
    val ranged = if (SketchedColumns.ranged(f.dataType) && present.nonEmpty) Try {
      val ordering = PhysicalDataType.ordering(f.dataType)
      (Some(present.min(ordering)), Some(present.max(ordering)))
    }.getOrElse((None, None)) else (None, None)
    f.name.toLowerCase(java.util.Locale.ROOT) -> ColumnStat(distinctCount = Some(BigInt(present.size)),
      min = ranged._1, max = ranged._2,
      nullCount = if (!values.contains(None)) Some(BigInt(0)) else if (values.forall(_.isEmpty)) Some(rows) else None,
      avgLen = Some(f.dataType.defaultSize.toLong), maxLen = Some(f.dataType.defaultSize.toLong))
  }.toMap

  /** The sampled rows of the kept partitions, where the sample holds every partition column. */
  private def restrictSample(s: Sketches.Sample, kept: Kept): Option[Sketches.Sample] = {
    val at = kept.columns.fields.toIndexedSeq.map(f => s.names.indexOf(f.name.toLowerCase(java.util.Locale.ROOT)) -> f.dataType)
    if (at.exists { case (i, dt) => i < 0 || s.types(i) != dt || !matchable(dt) }) return None
    val partitions = kept.values.map(v => at.indices.map(j => if (v.isNullAt(j)) null else v.get(j, at(j)._2))).toSet
    val rows = s.rows.filter(r => partitions.contains(at.map { case (i, dt) => if (r.isNullAt(i)) null else r.get(i, dt) }))
    Some(new Sketches.Sample(s.names, s.types, rows, rows.size.toLong))
  }
}
