package arrnf.normalize

import scala.collection.mutable
import scala.util.Try

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate._
import org.apache.spark.sql.catalyst.planning.ExtractEquiJoinKeys
import org.apache.spark.sql.catalyst.plans.{Cross, FullOuter, Inner, LeftAnti, LeftOuter, LeftSemi, RightOuter}
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.trees.TreePattern.{ALIAS, ATTRIBUTE_REFERENCE, LITERAL, OUTER_REFERENCE, PLAN_EXPRESSION}
import org.apache.spark.sql.execution.columnar.InMemoryRelation
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation, DataSourceV2ScanRelation}
import org.apache.spark.sql.types.{DataType, NullType}

import arrnf.catalyst.{Patterns, SetOperationRewrites}
import arrnf.cost.CostModel
import arrnf.guard.DeepStack
import arrnf.model._
import arrnf.render.{Positions, ShownAs, SqlForm}
import arrnf.render.ExpressionText.{compress, ref, showIndexed}

/**
 * Optimized logical plan → [[ArrnfProgram]] (design §2). One pass over the plan, linear in its size:
 * every subtree is visited once, and a subtree whose canonicalized form was already made a block is
 * not visited again (it is the same block, one more consumer).
 *
 * Blocks are cut where arrangements form:
 *  - an arrangement-forming node (Aggregate, Deduplicate, Window, WindowGroupLimit, a non-root
 *    Limit/Offset/Tail, Spark's EXCEPT ALL / INTERSECT ALL rewrite) heads a block over its input;
 *  - each input of a join is arranged by the join keys (an `ArrangeBy` block), unless the input
 *    already is an arrangement by those keys (a Reduce/Distinct keyed by them, or a cached DataFrame);
 *  - subquery plans, CTE definitions and the inputs of opaque nodes are blocks of their own.
 */
final class Normalizer private (rootName: String, withSql: Boolean, private[normalize] val shallowOnly: Boolean) extends Heads with Bodies {

  /** A block's SQL form, built only when asked for (`pyspark_arrnf.sql` reads them from the JSON
   *  form); the text form and the explain section skip them, which is most of their cost. */
  private[normalize] def sqlPart(part: => SqlPart): Option[SqlPart] = if (withSql) SqlForm.guard(part) else None
  private[normalize] def noSql(part: => SqlPart): Option[SqlPart] = if (withSql) Some(part) else None

  import Normalizer._
  import PlanPatterns._

  private[normalize] val done = mutable.ArrayBuffer[Builder]()

  private[normalize] val outputs = new Outputs
  private[normalize] implicit class Out(p: LogicalPlan) {
    def out: Seq[Attribute] = outputs(p)
  }
  // Column positions of an input, built once per input (rendering asks for them per expression).
  private[normalize] val indexes = new java.util.IdentityHashMap[Seq[Attribute], Positions]()
  private[normalize] def indexOf(in: Seq[Attribute]): Positions = {
    val known = indexes.get(in)
    if (known != null) known
    else { val m = new Positions(in); indexes.put(in, m); m }
  }
  private[normalize] def showIn(e: Expression, in: Seq[Attribute], withNames: Boolean = true): String =
    showIndexed(e, indexOf(in), withNames)

  // Blocks by canonical form of the subtree they hold, so that a shared subtree is one block.
  private[normalize] val shared = new SharedSubtrees[Builder](outputs(_))
  private[normalize] def canonFind(kind: String, p: LogicalPlan): Option[Builder] = shared.find(kind, p)
  private[normalize] def canonGetOrElseUpdate(kind: String, p: LogicalPlan, make: => Builder): Builder =
    shared.getOrElseUpdate(kind, p, make)
  private[normalize] val counters = mutable.HashMap[String, Int]()
  private[normalize] val ctes = mutable.HashMap[Long, Builder]()
  private[normalize] var opaque = 0

  /** Where the logical nodes went (for measured reports), filled as blocks are made. */
  val index = new BlockIndex
  private[normalize] def note(p: LogicalPlan, b: Builder, force: Boolean): Unit = index.note(p, b.name, force)

  private[normalize] def tmpName(prefix: String): String = {
    val n = counters.getOrElse(prefix, 0)
    counters(prefix) = n + 1
    s"$prefix.tmp$n"
  }

  private[normalize] var streaming = false
  private[normalize] lazy val estimator = new arrnf.cost.Estimator

  private[normalize] def normalize(plan: LogicalPlan): ArrnfProgram = {
    streaming = plan.isStreaming
    // The whole plan estimated once, before its blocks ask for their subtrees' rows.
    if (!streaming) estimator.prime(plan)
    val (finishing, core) = peelFinishing(plan)
    val root = new Builder(rootName, rootName)
    root.sharing = 1
    fill(root, core)
    // A root that only reads one block read nowhere else (no head, no operators) is that block,
    // under the root's name.
    val forward = (root.head, root.branches) match {
      case (None, Seq(Branch(false, Seq(), GetLeaf(n, Source.Block), _))) =>
        done.find(b => b.name == n && b.consumers.size == 1)
      case _ => None
    }
    val rename = forward.map(b => b.name -> rootName).toMap
    index.rename(rename)
    forward match {
      case Some(b) => b.consumers.clear(); b.sharing = 1
      case None => done += root
    }
    ArrnfProgram(rootName, done.toSeq.map(b => freeze(b, rename)), finishing, streaming, opaque)
  }

  // ---------------------------------------------------------------- finishing

  private[normalize] def peelFinishing(plan: LogicalPlan): (Seq[UnaryOp], LogicalPlan) = {
    val ops = mutable.ArrayBuffer[UnaryOp]()
    var p = plan
    var go = true
    while (go) p match {
      case GlobalLimit(e, c) => ops += UnaryOp(UnaryKind.Limit, Seq(e.toString), sqlPart(SqlPart("limit", text = Some(e.sql)))); p = c
      case LocalLimit(_, c) => p = c
      case Offset(e, c) => ops += UnaryOp(UnaryKind.Offset, Seq(e.toString), sqlPart(SqlPart("offset", text = Some(e.sql)))); p = c
      case s: Sort if s.global => ops += UnaryOp(UnaryKind.Sort, s.order.map(o => showIn(o, s.child.out)),
          sqlPart(SqlPart("sort", exprs = s.order.map(sqlOf(_, s.child.out))))); p = s.child
      case Project(list, c) if isFinishing(c) && ops.isEmpty =>
        ops += UnaryOp(UnaryKind.Project, list.map(e => showIn(e, c.out)), selectSql(list, c.out)); p = c
      case Project(list, c @ (_: Sort | _: GlobalLimit | _: LocalLimit | _: Offset)) =>
        ops += UnaryOp(UnaryKind.Project, list.map(e => showIn(e, c.out)), selectSql(list, c.out)); p = c
      case w: WithCTE if isFinishing(w.plan) || w.plan.isInstanceOf[Project] =>
        // finishing operators above the CTE definitions' consumer: peel them, keep the definitions
        val (inner, core) = peelFinishing(w.plan)
        ops ++= inner.reverse
        p = w.copy(plan = core)
        go = false
      case _ => go = false
    }
    (ops.reverse.toSeq, p)
  }

  private[normalize] def isFinishing(p: LogicalPlan): Boolean = p match {
    case _: GlobalLimit | _: LocalLimit | _: Offset => true
    case s: Sort => s.global
    case _ => false
  }

  // ---------------------------------------------------------------- blocks

  /** Fills `b` from `p`: the head if `p` forms an arrangement, and the body. */
  private[normalize] def fill(b: Builder, p: LogicalPlan): Unit = {
    val ctx = Ctx(b)
    note(p, b, force = true)
    b.plan = p
    b.input = p
    headOf(p, ctx) match {
      case Some((head, input, body)) =>
        b.head = Some(head); b.input = input; b.headKeys = headKeysOf(p)
        b.branches = body.branches; b.columns = headOutput(p).map(_.name)
      case None =>
        val body = toBody(p, ctx)
        b.branches = body.branches; b.columns = body.output.map(_.name)
    }
  }

  /** A block for `p` (with its own head if it has one), shared by canonical form. */
  private[normalize] def plainBlock(p: LogicalPlan, ctx: Ctx, role: String, detail: String): GetLeaf =
    cachedName(p).map(GetLeaf(_, Source.Cache)).getOrElse(newPlainBlock(p, ctx, role, detail))

  private def newPlainBlock(p: LogicalPlan, ctx: Ctx, role: String, detail: String): GetLeaf = {
    val b = canonGetOrElseUpdate("plain", p, {
      val nb = new Builder(tmpName(ctx.block.prefix), ctx.block.prefix)
      fill(nb, p)
      done += nb
      nb
    })
    b.sharing += 1
    b.consumers += Consumer(ctx.block.name, role, detail)
    note(p, b, force = true)
    GetLeaf(b.name, Source.Block)
  }

  /** `p` arranged by `keys`: an ArrangeBy block, or an arrangement that is there already. */
  private[normalize] def arrangedBlock(p: LogicalPlan, keys: Seq[Expression], ctx: Ctx, detail: String): GetLeaf = {
    val q = stripTransparent(p)
    cachedName(q).map(GetLeaf(_, Source.Cache)).getOrElse(q match {
      // A Reduce/Distinct keyed by exactly the join keys already holds its output arranged by them.
      case a: Aggregate if keys.nonEmpty && a.groupingExpressions.nonEmpty && keys.forall(_.isInstanceOf[Attribute]) &&
          sameAttrs(keys.map(_.asInstanceOf[Attribute]), groupingOutput(a)) =>
        plainBlock(q, ctx, "join", detail + " (reuses the Reduce's output arrangement)")
      case _ => newArrangedBlock(p, keys, ctx, detail)
    })
  }

  private def newArrangedBlock(p: LogicalPlan, keys: Seq[Expression], ctx: Ctx, detail: String): GetLeaf = {
    val b = canonGetOrElseUpdate("arrange", p, {
      val nb = new Builder(tmpName(ctx.block.prefix), ctx.block.prefix)
      nb.plan = p; nb.input = p
      val body = toBody(p, Ctx(nb))
      nb.branches = body.branches; nb.columns = body.output.map(_.name)
      done += nb
      nb
    })
    val shown = keys.map(k => render(k, p.out, ctx))
    val canonKey = keys.map(k => showIn(k, p.out, withNames = false)).mkString(",")
    if (!b.keySets.exists(_._1 == canonKey)) b.keySets += ((canonKey, shown, keys))
    b.head = Some(Head(HeadKind.ArrangeBy, b.keySets.map(_._2).toSeq))
    b.sharing += 1
    b.consumers += Consumer(ctx.block.name, "join", detail)
    if (!isHead(p)) note(p, b, force = true)
    GetLeaf(b.name, Source.Block)
  }

  private[normalize] def freeze(b: Builder, rename: Map[String, String]): Block = {
    def rn(n: String) = rename.getOrElse(n, n)
    def fixLeaf(l: Leaf): Leaf = l match {
      case g: GetLeaf if g.source == Source.Block => g.copy(name = rn(g.name))
      case j: JoinLeaf => j.copy(inputs = j.inputs.map(g => fixLeaf(g).asInstanceOf[GetLeaf]))
      case o: OpaqueLeaf => o.copy(inputs = o.inputs.map(g => fixLeaf(g).asInstanceOf[GetLeaf]))
      case other => other
    }
    val consumers = b.consumers.toSeq.map(c => c.copy(block = rn(c.block)))
    val branches = b.branches.map(br => br.copy(leaf = fixLeaf(br.leaf)))
    val keys = if (b.head.exists(_.kind == HeadKind.ArrangeBy)) b.keySets.toSeq.flatMap(_._3) else b.headKeys
    // In a streaming query, only the blocks over a stream are unknown (a static side joined to it has its files' rows).
    val streamed = streaming && Seq(b.plan, b.input).exists(p => p != null && p.isStreaming)
    val cost = CostModel.cost(b.head, b.plan, b.input, b.plan.out, b.input.out, keys, consumers, streamed, estimator(_))
    Block(rn(b.name), b.head, branches, b.columns, math.max(b.sharing, 1), consumers, cost, b.notes.toSeq)
  }
}

object Normalizer {
  /** Plan levels (subquery plans included) the calling thread's stack is trusted with. */
  private[normalize] val ShallowDepth = 64

  /** Thrown by a shallow-only normalizer that walked past [[ShallowDepth]] plan levels. */
  private[normalize] object TooDeep extends scala.util.control.ControlThrowable

  /**
   * The ArrNF program of `plan`, and where its logical nodes went (for measured reports).
   *
   * The walk recurses once per plan level, and py4j's threads (and the explain provider's) have
   * small stacks; 300-deep plans need more. It starts on the calling thread; a plan deeper than
   * [[ShallowDepth]] levels (or one whose statistics or canonical forms overflow the stack) is
   * normalized again from the start on a thread with a deep stack. Starting a thread costs more
   * than normalizing a typical plan, so only deep plans pay for it; measuring every plan's depth
   * first took 9% of the explain section.
   */
  def build(plan: LogicalPlan, name: String = "query", withSql: Boolean = true): (ArrnfProgram, BlockIndex) = {
    // Fault injection for the containment tests: `spark.arrnf.testing.failRule=Normalizer`.
    if (arrnf.ArrnfConf.failRule() == "Normalizer") {
      throw new IllegalStateException(s"failure injected into Normalizer (${arrnf.ArrnfConf.FailRule})")
    }
    val shallow = new Normalizer(name, withSql, shallowOnly = true)
    try (shallow.normalize(plan), shallow.index)
    catch {
      case TooDeep | DeepStack.Overflow() =>
        val deep = new Normalizer(name, withSql, shallowOnly = false)
        (DeepStack.onDeepStack(deep.normalize(plan)), deep.index)
    }
  }

  def apply(plan: LogicalPlan, name: String = "query", withSql: Boolean = true): ArrnfProgram =
    build(plan, name, withSql)._1

}
