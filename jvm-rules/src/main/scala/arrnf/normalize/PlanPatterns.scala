package arrnf.normalize

import scala.util.Try

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.execution.columnar.InMemoryRelation

import arrnf.catalyst.SetOperationRewrites

/** What the normalizer recognizes in a plan node. Pure: reads the plan, builds nothing. */
private[normalize] object PlanPatterns {
  def groupingOutput(a: Aggregate): Seq[Attribute] = {
    val groupSet = ExpressionSet(a.groupingExpressions)
    a.aggregateExpressions.collect {
      case attr: Attribute if groupSet.contains(attr) => attr
      case al @ Alias(e, _) if groupSet.contains(e) => al.toAttribute
    }
  }

  def sameAttrs(a: Seq[Attribute], b: Seq[Attribute]): Boolean =
    a.size == b.size && AttributeSet(a) == AttributeSet(b)

  def cachedName(p: LogicalPlan): Option[String] = p match {
    case r: InMemoryRelation =>
      Some(r.cacheBuilder.tableName.getOrElse(r.output.map(_.name).mkString("cached(", ", ", ")")))
    case _ => None
  }

  def stripTransparent(p: LogicalPlan): LogicalPlan = p match {
    case s: SubqueryAlias => stripTransparent(s.child)
    case h: ResolvedHint => stripTransparent(h.child)
    case v: View => stripTransparent(v.child)
    case _ => p
  }

  /** Whether `p` forms an arrangement (heads a block). */
  def isHead(p: LogicalPlan): Boolean = p match {
    case _: Aggregate | _: Deduplicate | _: DeduplicateWithinWatermark | _: Window | _: WindowGroupLimit => true
    case _: GlobalLimit | _: Offset | _: Tail => true
    case LocalLimit(_, c) => false
    case g: Generate => SetOperationRewrites.replicated(g, None).isDefined
    case pr @ Project(_, g: Generate) => SetOperationRewrites.replicated(g, Some(pr)).isDefined
    case _ => false
  }

  /** Limit/Offset/Tail nodes on top of each other: (limit, offset, tail?, the rest). */
  def limitChain(p: LogicalPlan): Option[(Option[Long], Option[Long], Boolean, LogicalPlan)] = {
    var limit: Option[Long] = None
    var offset: Option[Long] = None
    var tail = false
    var q = p
    var go = true
    while (go) q match {
      case GlobalLimit(e, c) => limit = limit.orElse(intOf(e)); q = c
      case LocalLimit(e, c) => limit = limit.orElse(intOf(e)); q = c
      case Offset(e, c) => offset = intOf(e); q = c
      case Tail(e, c) => limit = intOf(e); tail = true; q = c
      case _ => go = false
    }
    if (q eq p) None else Some((limit, offset, tail, q))
  }

  def intOf(e: Expression): Option[Long] = Try(e.eval()).toOption.collect {
    case i: Int => i.toLong
    case l: Long => l
  }

  /** For opaque grouped nodes: the grouping keys of each child (they are its arrangements). */
  def groupingOf(p: LogicalPlan): Option[Seq[Seq[Expression]]] = p match {
    case m: MapGroups => Some(Seq(m.groupingAttributes))
    case f: FlatMapGroupsWithState => Some(Seq(f.groupingAttributes))
    case f: FlatMapGroupsInPandas => Some(Seq(f.groupingAttributes))
    case f: FlatMapGroupsInArrow => Some(Seq(f.groupingAttributes))
    case f: FlatMapGroupsInPandasWithState => Some(Seq(f.groupingAttributes))
    case c: CoGroup => Some(Seq(c.leftGroup, c.rightGroup))
    case f: FlatMapCoGroupsInPandas => Some(Seq(f.leftGroupingLen, f.rightGroupingLen).zip(p.children)
      .map { case (n, c) => c.output.take(n) })
    case f: FlatMapCoGroupsInArrow => Some(Seq(f.leftGroupingLen, f.rightGroupingLen).zip(p.children)
      .map { case (n, c) => c.output.take(n) })
    case t: TransformWithState => Some(Seq(t.groupingAttributes))
    case _ => None
  }

  def tableName(s: String): String = s.stripPrefix("spark_catalog.")

  /** What a head other than ArrangeBy is keyed by: grouping keys, partition keys, Threshold's rows. */
  def headKeysOf(p: LogicalPlan): Seq[Expression] = p match {
    case a: Aggregate => a.groupingExpressions
    case d: Deduplicate => d.keys
    case d: DeduplicateWithinWatermark => d.keys
    case w: Window => w.partitionSpec
    case w: WindowGroupLimit => w.partitionSpec
    case g: Generate => SetOperationRewrites.replicated(g, None).toSeq.flatMap(m => m.groupPos.map(m.union.output))
    case pr @ Project(_, g: Generate) =>
      SetOperationRewrites.replicated(g, Some(pr)).toSeq.flatMap(m => m.groupPos.map(m.union.output))
    case _ => Nil
  }
}
