package arrnf.measure

import org.apache.spark.sql.execution.{SortExec, SparkPlan, TakeOrderedAndProjectExec}
import org.apache.spark.sql.execution.aggregate.{BaseAggregateExec, HashAggregateExec, ObjectHashAggregateExec, SortAggregateExec}
import org.apache.spark.sql.catalyst.expressions.aggregate.{Complete, Final, Partial, PartialMerge}
import org.apache.spark.sql.execution.columnar.InMemoryTableScanExec
import org.apache.spark.sql.execution.exchange.{BroadcastExchangeLike, ReusedExchangeExec, ShuffleExchangeLike}
import org.apache.spark.sql.execution.joins.{BroadcastHashJoinExec, BroadcastNestedLoopJoinExec, CartesianProductExec, ShuffledHashJoinExec, SortMergeJoinExec}
import org.apache.spark.sql.execution.window.WindowExecBase

import arrnf.model.{ArrnfProgram, Realized}

/**
 * How Spark realizes a block: the state its physical operators hold (seed `arrnf.md`: where state
 * is built and what it holds). Differential Dataflow arranges both inputs of every join; Spark
 * broadcasts one side and streams the other, or sorts both, or hashes one: a block's realization
 * is the list of what Spark builds for it, and none for a streamed side.
 */
object Realization {
  /** What state operator `p` holds, in words, given the operator above it. */
  def what(p: SparkPlan, parent: Option[SparkPlan]): String = p match {
    case r: ReusedExchangeExec =>
      if (r.child.isInstanceOf[BroadcastExchangeLike]) "broadcast relation, reused" else "shuffle, reused"
    case _: InMemoryTableScanExec => "cached relation"
    case _: ShuffleExchangeLike => "shuffle"
    case _: BroadcastExchangeLike => "broadcast relation"
    case _: SortExec => parent match {
      case Some(_: SortMergeJoinExec) => "sort for merge join"
      case Some(_: WindowExecBase) => "sort for window"
      case Some(_: SortAggregateExec) => "sort for aggregate"
      case _ => "sort"
    }
    case _: BroadcastHashJoinExec => "broadcast hash table"
    case _: ShuffledHashJoinExec => "shuffled hash table"
    case _: SortMergeJoinExec => "merge join buffer"
    case _: BroadcastNestedLoopJoinExec => "broadcast nested loop"
    case _: CartesianProductExec => "cartesian product buffer"
    case a: BaseAggregateExec =>
      val map = a match {
        case _: HashAggregateExec => "hash aggregate"
        case _: ObjectHashAggregateExec => "object hash aggregate"
        case _: SortAggregateExec => "sort aggregate"
        case _ => "aggregate"
      }
      val modes = a.aggregateExpressions.map(_.mode).distinct
      val mode = if (modes.isEmpty) (if (a.requiredChildDistributionExpressions.isDefined) "final" else "partial")
        else if (modes.forall(m => m == Partial)) "partial"
        else if (modes.forall(m => m == PartialMerge)) "partial merge"
        else if (modes.forall(m => m == Final || m == Complete)) "final"
        else modes.mkString("/")
      s"$map ($mode)"
    case _: WindowExecBase => "window buffer"
    case t: TakeOrderedAndProjectExec => s"top-${t.limit} rows per task" // (its limit counts the offset)
    case other => other.nodeName
  }

  /** `program` with each block's realization: what the operators attributed to it hold. */
  def attach(program: ArrnfProgram, ops: Seq[Attribution.Op]): ArrnfProgram = {
    val byBlock = ops.filter(_.block.isDefined).groupBy(_.block.get)
    program.copy(
      blocks = program.blocks.map(b => b.copy(realization = Some(byBlock.getOrElse(b.name, Nil).map(o =>
        Realized(o.id, o.node, o.what, o.shared))))),
      realized = Some(ops.filterNot(_.shared).size))
  }

  /** [[attach]] for a physical plan that has not run (the operators Spark will run). */
  def of(program: ArrnfProgram, physical: SparkPlan, index: arrnf.normalize.BlockIndex): ArrnfProgram =
    attach(program, Attribution.operators(physical, index))
}
