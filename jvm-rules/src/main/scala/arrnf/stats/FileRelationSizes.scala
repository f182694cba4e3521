package arrnf.stats

import java.util.{Collections, WeakHashMap}

import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Statistics}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, InMemoryFileIndex, LogicalRelation}

/**
 * Spark's size of a file relation without catalog statistics, computed once per version of its
 * files and put into each plan node that reads it before Spark asks.
 *
 * Spark computes it for every node anew (`LogicalRelation.computeStats`: the files' bytes times
 * `spark.sql.sources.fileCompressionFactor`), by listing the index's files, which resolves each
 * root path's file system through Hadoop's current user: a walk of the caller's stack, deep in the
 * optimizer. Over the TPC queries (default broadcast) that was a third of EagerAggregation's
 * planning time (its broadcast tests read Spark's sizes) and a third again in Spark's own rules.
 * An `InMemoryFileIndex` serves the same files while its map of leaf files is the same
 * ([[IndexVersion]]), and the relation the same factor while its session's setting is the same:
 * the size put is then the one Spark would compute, so no plan changes. Other indexes, relations
 * with catalog statistics and nodes Spark already sized are left alone.
 */
object FileRelationSizes {
  private final class Sized(val version: AnyRef, val factor: Double, val bytes: Long)

  // Weak keys: a relation no plan holds any more takes its size with it.
  private val sized = Collections.synchronizedMap(new WeakHashMap[HadoopFsRelation, Sized]())

  /** Sizes every file relation node of `plan` (not inside subquery expressions) that Spark has not. */
  def put(plan: LogicalPlan): Unit = plan.foreach {
    case r: LogicalRelation => put(r)
    case _ =>
  }

  /** Sizes `r` if it is a file relation Spark has not sized. */
  def put(r: LogicalRelation): Unit = r match {
    case LogicalRelation(h: HadoopFsRelation, _, table, _, _) if table.forall(_.stats.isEmpty) && StatsCache.isEmpty(r) =>
      h.location match {
        case index: InMemoryFileIndex =>
          // Read before the size: a refresh in between keeps a newer size under an older version,
          // which the next call finds out of date; never an older size under a newer one.
          val version = IndexVersion.of(index)
          val factor = h.sparkSession.sessionState.conf.fileCompressionFactor
          val known = sized.get(h)
          val bytes = if (known != null && (known.version eq version) && known.factor == factor) known.bytes
            else {
              val b = h.sizeInBytes
              sized.put(h, new Sized(version, factor, b))
              b
            }
          StatsCache.put(r, Statistics(sizeInBytes = bytes))
        case _ =>
      }
    case _ =>
  }
}
