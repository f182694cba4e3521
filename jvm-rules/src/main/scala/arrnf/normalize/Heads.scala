package arrnf.normalize

import scala.util.Try

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression
import org.apache.spark.sql.catalyst.plans.logical._

import arrnf.catalyst.{Patterns, SetOperationRewrites}
import arrnf.cost.CostModel
import arrnf.model._
import arrnf.render.{ShownAs, SqlForm}
import arrnf.render.ExpressionText.ref

/** The normalizer's heads: the arrangement-forming node a block starts with, and its input. */
private[normalize] trait Heads { self: Normalizer =>
  import Normalizer.{ShallowDepth, TooDeep}
  import PlanPatterns._

  /** The columns a head's block holds (Spark's EXCEPT/INTERSECT ALL: the replicated rows). */
  private[normalize] def headOutput(p: LogicalPlan): Seq[Attribute] = p match {
    case g: Generate => SetOperationRewrites.replicated(g, None).map(_.out).getOrElse(p.out)
    case pr @ Project(_, g: Generate) => SetOperationRewrites.replicated(g, Some(pr)).map(_.out).getOrElse(p.out)
    case _ => p.out
  }

  /** The head of `p` when `p` forms an arrangement: (head, its input, the body under it). */
  private[normalize] def headOf(p: LogicalPlan, ctx: Ctx): Option[(Head, LogicalPlan, Body)] = p match {
    case a: Aggregate =>
      val in = a.child.out
      val keys = a.groupingExpressions.map(render(_, in, ctx))
      val aggs = a.aggregateExpressions.filter(_.exists(_.isInstanceOf[AggregateExpression]))
      val aggSql = sqlPart(SqlPart("aggregate", keys = a.groupingExpressions.map(sqlOf(_, in)),
        exprs = a.aggregateExpressions.map(sqlOf(_, in)), names = a.aggregateExpressions.map(_.name)))
      if (aggs.isEmpty) Some((Head(HeadKind.Distinct, Seq(keys), sql = aggSql), a.child, toBody(a.child, ctx)))
      else {
        val terms = aggs.flatMap { ne =>
          val found = ne.collect { case ae: AggregateExpression => ae }
          val first = found.take(1).map(ae => AggTerm(render(ne, in, ctx), CostModel.aggKind(ae.aggregateFunction), ae.isDistinct))
          first ++ found.drop(1).map(ae => AggTerm(render(ae, in, ctx), CostModel.aggKind(ae.aggregateFunction), ae.isDistinct))
        }
        Some((Head(HeadKind.Reduce, Seq(keys), terms, sql = aggSql), a.child, toBody(a.child, ctx)))
      }
    case d: Deduplicate =>
      Some((Head(HeadKind.Distinct, Seq(d.keys.map(render(_, d.child.out, ctx))),
        sql = noSql(SqlForm.unsupported("Deduplicate (dropDuplicates) keeps an arbitrary row per key"))), d.child, toBody(d.child, ctx)))
    case d: DeduplicateWithinWatermark =>
      Some((Head(HeadKind.Distinct, Seq(d.keys.map(render(_, d.child.out, ctx))), mode = Some(Mode.WithinWatermark),
        sql = noSql(SqlForm.unsupported("dropDuplicatesWithinWatermark has no SQL form"))),
        d.child, toBody(d.child, ctx)))
    case w: Window =>
      val in = w.child.out
      Some((Head(HeadKind.Reduce, Seq(w.partitionSpec.map(render(_, in, ctx))),
        w.windowExpressions.map(e => AggTerm(render(e.transform { case we: WindowExpression => we.windowFunction },
          in, ctx), AggKind.Window, distinct = false)),
        order = w.orderSpec.map(render(_, in, ctx)), mode = Some(Mode.Window),
        sql = sqlPart(SqlPart("window", exprs = w.windowExpressions.map(sqlOf(_, in)),
          names = w.windowExpressions.map(_.name)))), w.child, toBody(w.child, ctx)))
    case w: WindowGroupLimit =>
      val in = w.child.out
      Some((Head(HeadKind.TopK, Seq(w.partitionSpec.map(render(_, in, ctx))), order = w.orderSpec.map(render(_, in, ctx)),
        limit = Some(w.limit.toLong), mode = Some(Mode.RankedBy(w.rankLikeFunction.prettyName)),
        sql = sqlPart(SqlPart("rank", keys = w.partitionSpec.map(sqlOf(_, in)), order = w.orderSpec.map(sqlOf(_, in)),
          text = Some(s"${w.rankLikeFunction.prettyName}()")))), w.child, toBody(w.child, ctx)))
    case _: GlobalLimit | _: LocalLimit | _: Offset | _: Tail if isHead(p) =>
      limitChain(p).map { case (limit, offset, tail, child) =>
        // The sort under the limit decides which rows are kept. Spark's column pruning puts a
        // projection between them (`SELECT k FROM f ORDER BY v LIMIT 100`): the input is that
        // projection over the sort's input, with the columns the order reads that it drops after
        // the block's own (which come first: the block keeps those).
        val (sortOrder, input) = stripTransparent(child) match {
          case s: Sort => (s.order, s.child)
          case Project(list, s: Sort) =>
            val missing = s.order.flatMap(_.references).filterNot(a => list.exists(_.exprId == a.exprId)).distinctBy(_.exprId)
            (s.order, if (missing.isEmpty) Project(list, s.child) else Project(list ++ missing, s.child))
          case other => (Nil, other)
        }
        val order = sortOrder.map(render(_, input.out, ctx))
        val sortSql = if (tail) noSql(SqlForm.unsupported("Tail (the last rows) has no SQL form"))
          else sqlPart(SqlPart("sort_limit", order = sortOrder.map(sqlOf(_, input.output))))
        (Head(HeadKind.TopK, Seq(Nil), order = order, limit = limit, offset = offset,
          mode = if (tail) Some(Mode.Tail) else None, sql = sortSql), input, toBody(input, ctx))
      }
    case g: Generate => SetOperationRewrites.replicated(g, None).map(buildThreshold(_, ctx))
    case pr @ Project(_, g: Generate) => SetOperationRewrites.replicated(g, Some(pr)).map(buildThreshold(_, ctx))
    case _ => None
  }

  private[normalize] def buildThreshold(m: SetOperationRewrites.Replicated, ctx: Ctx): (Head, LogicalPlan, Body) = {
    val branches = m.union.children.zip(m.positive).flatMap { case (pr: Project, positive) =>
      val body = toBody(Project(m.groupPos.map(pr.projectList(_)), pr.child), ctx)
      if (positive) body.branches else body.branches.map(b => b.copy(negate = !b.negate))
      case _ => Nil
    }
    val in = m.union.out
    val keys = m.groupPos.zipWithIndex.map { case (u, i) => ref(i, in(u).name) }
    val mode = m.operation match {
      case SetOperationRewrites.ExceptAll => Mode.Except
      case SetOperationRewrites.IntersectAll => Mode.Intersect
    }
    ctx.block.notes += s"Spark's ${mode.name.toUpperCase(java.util.Locale.ROOT)} ALL rewrite (markers at ${m.markerPos.mkString(", ")})"
    (Head(HeadKind.Threshold, Seq(keys), mode = Some(mode)), m.union, Body(branches.toVector, m.out))
  }

  /** The block (or arrangement) that `p` is: heads, shared by canonical form. */
  private[normalize] def headBlock(p: LogicalPlan, ctx: Ctx): GetLeaf = plainBlock(p, ctx, "input", "read")
}
