package arrnf.normalize

import scala.util.Try

import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.execution.columnar.InMemoryRelation
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation, DataSourceV2ScanRelation}

import arrnf.model._

/** The leaf of a branch for a leaf node of the plan: what it reads, or the rows it is. */
private[normalize] object Leaves {
  import PlanPatterns.{cachedName, tableName}

  /** A scan, stream, cached relation or constant rows; an [[OpaqueLeaf]] for a leaf it does not know. */
  def of(leaf: LeafNode): Leaf = leaf match {
    case r: InMemoryRelation => GetLeaf(cachedName(r).get, Source.Cache)
    case l: LocalRelation =>
      if (l.isStreaming) GetLeaf("memory stream", Source.Stream)
      else ConstantLeaf(s"${l.data.size} rows", Some(l.data.size.toLong))
    case _: OneRowRelation => ConstantLeaf("one empty row", Some(1L))
    case r: Range => ConstantLeaf(s"range(${r.start}, ${r.end}, ${r.step})", Try(r.numElements.toLong).toOption)
    case _: EmptyRelation => ConstantLeaf("no rows", Some(0L))
    case r: LogicalRelation =>
      val name = r.catalogTable.map(t => tableName(t.identifier.unquotedString)).getOrElse(r.relation match {
        case h: HadoopFsRelation =>
          h.location.rootPaths.headOption.map(p => p.getName.stripSuffix(".parquet")).getOrElse("files")
        case other => other.getClass.getSimpleName
      })
      GetLeaf(name, if (r.isStreaming) Source.Stream else Source.Table)
    case r: DataSourceV2Relation => GetLeaf(tableName(r.name), if (r.isStreaming) Source.Stream else Source.Table)
    case r: DataSourceV2ScanRelation => GetLeaf(tableName(r.relation.name), Source.Table)
    case other if other.isStreaming =>
      val source = Try(other.getClass.getMethod("sourceName").invoke(other).toString).getOrElse(other.nodeName)
      GetLeaf(source, Source.Stream)
    case other if other.nodeName.contains("Relation") || other.nodeName.contains("RDD") || other.nodeName.contains("Scan") =>
      GetLeaf(other.nodeName, Source.Table)
    case other =>
      OpaqueLeaf(other.nodeName, Try(other.simpleString(5)).getOrElse(other.nodeName).take(200), Nil)
  }
}
