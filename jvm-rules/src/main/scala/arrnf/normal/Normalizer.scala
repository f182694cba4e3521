package arrnf.normal

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

import arrnf.catalyst.Patterns

/**
 * Column positions of an input, by expression id (as `AttributeMap` keys them; a repeated id
 * answers its last position, as `AttributeMap` built from the input does). Narrow inputs are
 * scanned: building a hash map of every column costs more than the few lookups most inputs get.
 * The normalizer keeps one per input, for the text form and the SQL form alike.
 */
final class Positions(in: Seq[Attribute]) {
  private val ids: Array[ExprId] = in.iterator.map(_.exprId).toArray
  private lazy val byId: java.util.HashMap[ExprId, Integer] = {
    val m = new java.util.HashMap[ExprId, Integer](ids.length * 2)
    ids.indices.foreach(i => m.put(ids(i), i))
    m
  }
  /** The position of `a` in the input, or -1. */
  def of(a: Attribute): Int =
    if (ids.length > Positions.ScanUpTo) { val i = byId.get(a.exprId); if (i == null) -1 else i.intValue }
    else {
      val id = a.exprId
      var i = ids.length - 1
      while (i >= 0 && ids(i) != id) i -= 1
      i
    }
}

object Positions {
  private val ScanUpTo = 48
  /** No input (a constant's values). */
  val empty = new Positions(Nil)
}

/** An expression that prints as fixed text: how column references and subqueries are shown. */
private[normal] final case class ShownAs(text: String) extends LeafExpression with Unevaluable {
  override def dataType: DataType = NullType
  override def nullable: Boolean = true
  override def toString: String = text
}

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
final class Normalizer private (rootName: String, withSql: Boolean, shallowOnly: Boolean) {

  /** A block's SQL form, built only when asked for (`pyspark_arrnf.sql` reads them from the JSON
   *  form); the text form and the explain section skip them, which is most of their cost. */
  private def sqlPart(part: => SqlPart): Option[SqlPart] = if (withSql) SqlForm.guard(part) else None
  private def noSql(part: => SqlPart): Option[SqlPart] = if (withSql) Some(part) else None

  import Normalizer._

  private final class Builder(val name: String, val prefix: String) {
    var head: Option[Head] = None
    var branches: Seq[Branch] = Nil
    var columns: Seq[String] = Nil
    var sharing = 0
    val consumers = mutable.ArrayBuffer[Consumer]()
    val notes = mutable.LinkedHashSet[String]()
    var keySets = mutable.ArrayBuffer[(String, Seq[String], Seq[Expression])]() // canonical, shown, exprs
    var plan: LogicalPlan = _       // the subtree whose output the block holds (for statistics)
    var input: LogicalPlan = _      // the subtree arranged by the head (for statistics)
    var existing: Option[String] = None
  }

  /** Where a body is being built: the block that will hold it. */
  private final case class Ctx(block: Builder)

  private final case class Body(branches: Vector[Branch], output: Seq[Attribute])

  private val done = mutable.ArrayBuffer[Builder]()

  // Spark computes a join's output afresh on every call, from its children's outputs: in a deep
  // join chain that is quadratic per call. Each node's output is computed here once.
  private val outputs = new java.util.IdentityHashMap[LogicalPlan, Seq[Attribute]]()
  private implicit class Out(p: LogicalPlan) {
    def out: Seq[Attribute] = {
      val known = outputs.get(p)
      if (known != null) known
      else {
        val o = p match {
          case j: Join => j.joinType match {
            case Inner | Cross => j.left.out ++ j.right.out
            case LeftOuter => j.left.out ++ j.right.out.map(_.withNullability(true))
            case RightOuter => j.left.out.map(_.withNullability(true)) ++ j.right.out
            case FullOuter => (j.left.out ++ j.right.out).map(_.withNullability(true))
            case LeftSemi | LeftAnti => j.left.out
            case _ => j.output
          }
          case _ => p.output
        }
        outputs.put(p, o)
        o
      }
    }
  }
  // Column positions of an input, built once per input (rendering asks for them per expression).
  private val indexes = new java.util.IdentityHashMap[Seq[Attribute], Positions]()
  private def indexOf(in: Seq[Attribute]): Positions = {
    val known = indexes.get(in)
    if (known != null) known
    else { val m = new Positions(in); indexes.put(in, m); m }
  }
  private def showIn(e: Expression, in: Seq[Attribute], withNames: Boolean = true): String =
    showIndexed(e, indexOf(in), withNames)

  // Blocks by canonical form of the subtree they hold, so that a shared subtree is one block.
  // Canonicalizing costs more than the rest of normalizing, so subtrees are first bucketed by a
  // cheap shape that canonicalization keeps (operators in order, literals, output types) and
  // canonicalized only when a bucket already holds another subtree.
  private final case class Shape(kind: String, fingerprint: Int)
  private val canon = mutable.HashMap[Shape, mutable.ArrayBuffer[(LogicalPlan, Builder)]]()
  private val fingerprints = new java.util.IdentityHashMap[LogicalPlan, Integer]()
  /** Operator classes in tree order, the literals of each node (as a multiset: canonical forms
   *  may reorder commutative terms) and its output types; equal canonical forms have equal
   *  fingerprints. */
  private def fingerprint(p: LogicalPlan): Int = {
    val known = fingerprints.get(p)
    if (known != null) known
    else {
      var literals = 0
      p.expressions.foreach { e =>
        if (e.containsPattern(LITERAL)) e.foreach { case l: Literal => literals += l.hashCode; case _ => }
      }
      val f = scala.util.hashing.MurmurHash3.orderedHash(
        p.getClass.getName.hashCode +: literals +: p.out.map(_.dataType).hashCode +: p.children.map(fingerprint))
      fingerprints.put(p, f)
      f
    }
  }
  private def shapeOf(kind: String, p: LogicalPlan) = Shape(kind, fingerprint(p))
  private def canonFind(kind: String, p: LogicalPlan): Option[Builder] =
    canon.get(shapeOf(kind, p)).flatMap { seen =>
      val c = p.canonicalized
      seen.collectFirst { case (q, b) if q.canonicalized == c => b }
    }
  private def canonGetOrElseUpdate(kind: String, p: LogicalPlan, make: => Builder): Builder =
    canonFind(kind, p).getOrElse {
      val b = make
      canon.getOrElseUpdate(shapeOf(kind, p), mutable.ArrayBuffer()) += ((p, b))
      b
    }
  private val counters = mutable.HashMap[String, Int]()
  private val ctes = mutable.HashMap[Long, Builder]()
  private var opaque = 0

  // ---------------------------------------------------------------- where logical nodes went
  // (an index for measured reports, Measure.scala: physical operator → logicalLink → block)

  // The indexes are built on the first lookup (hashing or canonicalizing every node costs as much
  // as the rest of normalizing, and the text form and the explain section never look).
  private val noted = mutable.ArrayBuffer[(LogicalPlan, Builder, Boolean)]()
  private lazy val nodeBlock = {
    val m = mutable.HashMap[LogicalPlan, Builder]()
    noted.foreach { case (p, b, force) => if (force || !m.contains(p)) m(p) = b }
    m
  }
  private lazy val canonBlock = {
    val m = mutable.HashMap[LogicalPlan, Builder]()
    noted.foreach { case (p, b, force) =>
      Try(p.canonicalized).foreach(c => if (force || !m.contains(c)) m(c) = b)
    }
    m
  }
  private val arrangedJoins = mutable.ArrayBuffer[(Join, (GetLeaf, GetLeaf))]()
  private lazy val joinArranged = mutable.HashMap[Join, (GetLeaf, GetLeaf)](arrangedJoins.toSeq: _*)
  private var renamed: Map[String, String] = Map.empty

  private def note(p: LogicalPlan, b: Builder, force: Boolean): Unit = {
    noted += ((p, b, force))
  }

  private def nameOf(b: Builder): String = renamed.getOrElse(b.name, b.name)

  /**
   * The block that holds logical node `p` (a node of the plan given to [[normalize]], or one equal to
   * it, or of the same canonical form), after [[normalize]] ran. A node that heads a block belongs to
   * that block; a join input belongs to the block that arranges it.
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

  /** [[joinInputsOf]] for a join re-planned by AQE: the one join of the same condition and output. */
  def joinInputsOfShape(j: Join): Option[((String, String), (String, String))] = {
    val found = joinArranged.keys.filter(k => k.joinType == j.joinType && k.condition == j.condition &&
      Try(k.output == j.output).getOrElse(false)).toSeq
    if (found.size == 1) joinInputsOf(found.head) else None
  }

  /** The arrangements a join reads, left and right: (name, source) with source `block` or `cache`. */
  def joinInputsOf(j: Join): Option[((String, String), (String, String))] = joinArranged.get(j).map { case (l, r) =>
    def n(g: GetLeaf) = (if (g.source == "block") renamed.getOrElse(g.name, g.name) else g.name, g.source)
    (n(l), n(r))
  }

  private def tmpName(prefix: String): String = {
    val n = counters.getOrElse(prefix, 0)
    counters(prefix) = n + 1
    s"$prefix.tmp$n"
  }

  private var streaming = false
  private lazy val unknownLeaf = CostModel.unknownLeafTest()

  private def normalize(plan: LogicalPlan): ArrnfProgram = {
    streaming = plan.isStreaming
    val (finishing, core) = peelFinishing(plan)
    val root = new Builder(rootName, rootName)
    root.sharing = 1
    fill(root, core)
    // A root that only reads one block read nowhere else (no head, no operators) is that block,
    // under the root's name.
    val forward = (root.head, root.branches) match {
      case (None, Seq(Branch(false, Seq(), GetLeaf(n, "block"), _))) =>
        done.find(b => b.name == n && b.consumers.size == 1)
      case _ => None
    }
    val rename = forward.map(b => b.name -> rootName).toMap
    renamed = rename
    forward match {
      case Some(b) => b.consumers.clear(); b.sharing = 1
      case None => done += root
    }
    ArrnfProgram(rootName, done.toSeq.map(b => freeze(b, rename)), finishing, streaming, opaque)
  }

  // ---------------------------------------------------------------- finishing

  private def peelFinishing(plan: LogicalPlan): (Seq[UnaryOp], LogicalPlan) = {
    val ops = mutable.ArrayBuffer[UnaryOp]()
    var p = plan
    var go = true
    while (go) p match {
      case GlobalLimit(e, c) => ops += UnaryOp("Limit", Seq(e.toString), sqlPart(SqlPart("limit", text = Some(e.sql)))); p = c
      case LocalLimit(_, c) => p = c
      case Offset(e, c) => ops += UnaryOp("Offset", Seq(e.toString), sqlPart(SqlPart("offset", text = Some(e.sql)))); p = c
      case s: Sort if s.global => ops += UnaryOp("Sort", s.order.map(o => showIn(o, s.child.out)),
          sqlPart(SqlPart("sort", exprs = s.order.map(sqlOf(_, s.child.out))))); p = s.child
      case Project(list, c) if isFinishing(c) && ops.isEmpty =>
        ops += UnaryOp("Project", list.map(e => showIn(e, c.out)), selectSql(list, c.out)); p = c
      case Project(list, c @ (_: Sort | _: GlobalLimit | _: LocalLimit | _: Offset)) =>
        ops += UnaryOp("Project", list.map(e => showIn(e, c.out)), selectSql(list, c.out)); p = c
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

  private def isFinishing(p: LogicalPlan): Boolean = p match {
    case _: GlobalLimit | _: LocalLimit | _: Offset => true
    case s: Sort => s.global
    case _ => false
  }

  // ---------------------------------------------------------------- blocks

  /** Fills `b` from `p`: the head if `p` forms an arrangement, and the body. */
  private def fill(b: Builder, p: LogicalPlan): Unit = {
    val ctx = Ctx(b)
    note(p, b, force = true)
    b.plan = p
    b.input = p
    headOf(p, ctx) match {
      case Some((head, input, body)) =>
        b.head = Some(head); b.input = input
        b.branches = body.branches; b.columns = headOutput(p).map(_.name)
      case None =>
        val body = toBody(p, ctx)
        b.branches = body.branches; b.columns = body.output.map(_.name)
    }
  }

  /** A block for `p` (with its own head if it has one), shared by canonical form. */
  private def plainBlock(p: LogicalPlan, ctx: Ctx, role: String, detail: String): GetLeaf = {
    cachedName(p).foreach(n => return GetLeaf(n, "cache"))
    val b = canonGetOrElseUpdate("plain", p, {
      val nb = new Builder(tmpName(ctx.block.prefix), ctx.block.prefix)
      fill(nb, p)
      done += nb
      nb
    })
    b.sharing += 1
    b.consumers += Consumer(ctx.block.name, role, detail)
    note(p, b, force = true)
    GetLeaf(b.name, "block")
  }

  /** `p` arranged by `keys`: an ArrangeBy block, or an arrangement that is there already. */
  private def arrangedBlock(p: LogicalPlan, keys: Seq[Expression], ctx: Ctx, detail: String): GetLeaf = {
    val q = stripTransparent(p)
    cachedName(q).foreach(n => return GetLeaf(n, "cache"))
    // A Reduce/Distinct keyed by exactly the join keys already holds its output arranged by them.
    q match {
      case a: Aggregate if keys.nonEmpty && a.groupingExpressions.nonEmpty && keys.forall(_.isInstanceOf[Attribute]) &&
          sameAttrs(keys.map(_.asInstanceOf[Attribute]), groupingOutput(a)) =>
        return plainBlock(q, ctx, "join", detail + " (reuses the Reduce's output arrangement)")
      case _ =>
    }
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
    b.head = Some(Head("ArrangeBy", b.keySets.map(_._2).toSeq))
    b.sharing += 1
    b.consumers += Consumer(ctx.block.name, "join", detail)
    if (!isHead(p)) note(p, b, force = true)
    GetLeaf(b.name, "block")
  }

  private def groupingOutput(a: Aggregate): Seq[Attribute] = {
    val groupSet = ExpressionSet(a.groupingExpressions)
    a.aggregateExpressions.collect {
      case attr: Attribute if groupSet.contains(attr) => attr
      case al @ Alias(e, _) if groupSet.contains(e) => al.toAttribute
    }
  }

  private def sameAttrs(a: Seq[Attribute], b: Seq[Attribute]): Boolean =
    a.size == b.size && AttributeSet(a) == AttributeSet(b)

  private def cachedName(p: LogicalPlan): Option[String] = p match {
    case r: InMemoryRelation =>
      Some(r.cacheBuilder.tableName.getOrElse(r.out.map(_.name).mkString("cached(", ", ", ")")))
    case _ => None
  }

  private def stripTransparent(p: LogicalPlan): LogicalPlan = p match {
    case s: SubqueryAlias => stripTransparent(s.child)
    case h: ResolvedHint => stripTransparent(h.child)
    case v: View => stripTransparent(v.child)
    case _ => p
  }

  /** Whether `p` forms an arrangement (heads a block). Pure: builds nothing. */
  private def isHead(p: LogicalPlan): Boolean = p match {
    case _: Aggregate | _: Deduplicate | _: DeduplicateWithinWatermark | _: Window | _: WindowGroupLimit => true
    case _: GlobalLimit | _: Offset | _: Tail => true
    case LocalLimit(_, c) => false
    case g: Generate => matchThreshold(g, None).isDefined
    case pr @ Project(_, g: Generate) => matchThreshold(g, Some(pr)).isDefined
    case _ => false
  }

  /** The head of `p` when `p` forms an arrangement: (head, its input, the body under it). */
  private def headOf(p: LogicalPlan, ctx: Ctx): Option[(Head, LogicalPlan, Body)] = p match {
    case a: Aggregate =>
      val in = a.child.out
      val keys = a.groupingExpressions.map(render(_, in, ctx))
      val aggs = a.aggregateExpressions.filter(_.exists(_.isInstanceOf[AggregateExpression]))
      val aggSql = sqlPart(SqlPart("aggregate", keys = a.groupingExpressions.map(sqlOf(_, in)),
        exprs = a.aggregateExpressions.map(sqlOf(_, in)), names = a.aggregateExpressions.map(_.name)))
      if (aggs.isEmpty) Some((Head("Distinct", Seq(keys), sql = aggSql), a.child, toBody(a.child, ctx)))
      else {
        val terms = aggs.flatMap { ne =>
          val found = ne.collect { case ae: AggregateExpression => ae }
          val first = found.take(1).map(ae => AggTerm(render(ne, in, ctx), classify(ae.aggregateFunction), ae.isDistinct))
          first ++ found.drop(1).map(ae => AggTerm(render(ae, in, ctx), classify(ae.aggregateFunction), ae.isDistinct))
        }
        Some((Head("Reduce", Seq(keys), terms, sql = aggSql), a.child, toBody(a.child, ctx)))
      }
    case d: Deduplicate =>
      Some((Head("Distinct", Seq(d.keys.map(render(_, d.child.out, ctx))),
        sql = noSql(SqlForm.unsupported("Deduplicate (dropDuplicates) keeps an arbitrary row per key"))), d.child, toBody(d.child, ctx)))
    case d: DeduplicateWithinWatermark =>
      Some((Head("Distinct", Seq(d.keys.map(render(_, d.child.out, ctx))), mode = Some("within watermark"),
        sql = noSql(SqlForm.unsupported("dropDuplicatesWithinWatermark has no SQL form"))),
        d.child, toBody(d.child, ctx)))
    case w: Window =>
      val in = w.child.out
      Some((Head("Reduce", Seq(w.partitionSpec.map(render(_, in, ctx))),
        w.windowExpressions.map(e => AggTerm(render(e.transform { case we: WindowExpression => we.windowFunction },
          in, ctx), "window", distinct = false)),
        order = w.orderSpec.map(render(_, in, ctx)), mode = Some("window"),
        sql = sqlPart(SqlPart("window", exprs = w.windowExpressions.map(sqlOf(_, in)),
          names = w.windowExpressions.map(_.name)))), w.child, toBody(w.child, ctx)))
    case w: WindowGroupLimit =>
      val in = w.child.out
      Some((Head("TopK", Seq(w.partitionSpec.map(render(_, in, ctx))), order = w.orderSpec.map(render(_, in, ctx)),
        limit = Some(w.limit.toLong), mode = Some(w.rankLikeFunction.prettyName),
        sql = sqlPart(SqlPart("rank", keys = w.partitionSpec.map(sqlOf(_, in)), order = w.orderSpec.map(sqlOf(_, in)),
          text = Some(s"${w.rankLikeFunction.prettyName}()")))), w.child, toBody(w.child, ctx)))
    case _: GlobalLimit | _: LocalLimit | _: Offset | _: Tail if isHead(p) =>
      limitChain(p).map { case (limit, offset, tail, child) =>
        val (order, input) = stripTransparent(child) match {
          case s: Sort => (s.order.map(render(_, s.child.out, ctx)), s.child)
          case other => (Nil, other)
        }
        val sortSql = if (tail) noSql(SqlForm.unsupported("Tail (the last rows) has no SQL form"))
          else sqlPart(SqlPart("sort_limit", order = stripTransparent(child) match {
            case s: Sort => s.order.map(sqlOf(_, s.child.output))
            case _ => Nil
          }))
        (Head("TopK", Seq(Nil), order = order, limit = limit, offset = offset,
          mode = if (tail) Some("tail") else None, sql = sortSql), input, toBody(input, ctx))
      }
    case g: Generate => matchThreshold(g, None).map(buildThreshold(_, ctx))
    case pr @ Project(_, g: Generate) => matchThreshold(g, Some(pr)).map(buildThreshold(_, ctx))
    case _ => None
  }

  /** The columns a head's block holds (Spark's EXCEPT/INTERSECT ALL: the replicated rows). */
  private def headOutput(p: LogicalPlan): Seq[Attribute] = p match {
    case g: Generate => matchThreshold(g, None).map(_.out).getOrElse(p.out)
    case pr @ Project(_, g: Generate) => matchThreshold(g, Some(pr)).map(_.out).getOrElse(p.out)
    case _ => p.out
  }

  /** Limit/Offset/Tail nodes on top of each other: (limit, offset, tail?, the rest). */
  private def limitChain(p: LogicalPlan): Option[(Option[Long], Option[Long], Boolean, LogicalPlan)] = {
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

  private def intOf(e: Expression): Option[Long] = Try(e.eval()).toOption.collect {
    case i: Int => i.toLong
    case l: Long => l
  }

  private final case class ThresholdMatch(
      mode: String, union: Union, groupPos: Seq[Int], markerPos: Seq[Int], positive: Seq[Boolean], out: Seq[Attribute])

  /**
   * Spark's rewrite of EXCEPT ALL (a sum of ±1 markers, keep positive sums, replicate) and of
   * INTERSECT ALL (two counted markers, keep the minimum) over a Union whose branches are
   * projections putting literal markers in place: `Threshold` over `Union(A, Negate B)`.
   */
  private def matchThreshold(g: Generate, top: Option[Project]): Option[ThresholdMatch] = {
    if (!g.generator.isInstanceOf[ReplicateRows]) return None
    if (top.exists(_.projectList.exists(e => !e.isInstanceOf[Attribute] ||
        !g.generatorOutput.exists(_.exprId == e.exprId)))) return None
    var q = g.child
    while (q.isInstanceOf[Project] || q.isInstanceOf[Filter]) q = q.children.head
    val (agg, union) = q match {
      case a @ Aggregate(_, _, u: Union, _) => (a, u)
      case _ => return None
    }
    val funcs = agg.aggregateExpressions.flatMap(_.collect { case ae: AggregateExpression => ae.aggregateFunction })
    val markers: Seq[Attribute] = funcs.map {
      case Sum(a: Attribute, _) => a
      case Count(Seq(a: Attribute)) => a
      case _ => return None
    }
    val mode = funcs match {
      case Seq(_: Sum) => "except"
      case Seq(_: Count, _: Count) => "intersect"
      case _ => return None
    }
    val uOut = union.out
    val markerPos = markers.map(m => uOut.indexWhere(_.exprId == m.exprId))
    if (markerPos.contains(-1)) return None
    val groupPos = agg.groupingExpressions.map {
      case a: Attribute => uOut.indexWhere(_.exprId == a.exprId)
      case _ => return None
    }
    if (groupPos.contains(-1)) return None
    val positive = union.children.map {
      case Project(list, _) =>
        val lits = markerPos.map(i => literalOf(list(i)))
        mode match {
          case "except" => lits.head match {
            case Some(v: Number) if v.longValue == 1L => true
            case Some(v: Number) if v.longValue == -1L => false
            case _ => return None
          }
          case _ => (lits(0), lits(1)) match {
            case (Some(true), None) => true
            case (None, Some(true)) => false
            case _ => return None
          }
        }
      case _ => return None
    }
    Some(ThresholdMatch(mode, union, groupPos, markerPos, positive, top.map(_.out).getOrElse(g.generatorOutput)))
  }

  private def buildThreshold(m: ThresholdMatch, ctx: Ctx): (Head, LogicalPlan, Body) = {
    val branches = m.union.children.zip(m.positive).flatMap { case (pr: Project, positive) =>
      val body = toBody(Project(m.groupPos.map(pr.projectList(_)), pr.child), ctx)
      if (positive) body.branches else body.branches.map(b => b.copy(negate = !b.negate))
      case _ => Nil
    }
    val in = m.union.out
    val keys = m.groupPos.zipWithIndex.map { case (u, i) => ref(i, in(u).name) }
    ctx.block.notes += s"Spark's ${m.mode.toUpperCase(java.util.Locale.ROOT)} ALL rewrite (markers at ${m.markerPos.mkString(", ")})"
    (Head("Threshold", Seq(keys), mode = Some(m.mode)), m.union, Body(branches.toVector, m.out))
  }

  private def literalOf(e: Expression): Option[Any] = e match {
    case Alias(c, _) => literalOf(c)
    case Cast(c, _, _, _) => literalOf(c)
    case Literal(v, _) => Option(v)
    case _ => None
  }

  /** The block (or arrangement) that `p` is: heads, shared by canonical form. */
  private def headBlock(p: LogicalPlan, ctx: Ctx): GetLeaf = plainBlock(p, ctx, "input", "read")

  // ---------------------------------------------------------------- bodies

  private def unary(body: Body, ops: Seq[UnaryOp], out: Seq[Attribute]): Body =
    if (ops.isEmpty) body.copy(output = out)
    else Body(body.branches.map(b => b.copy(unary = b.unary ++ ops)), out)

  private def leafBody(leaf: Leaf, out: Seq[Attribute], sql: Option[SqlPart] = None): Body =
    Body(Vector(Branch(negate = false, Nil, leaf,
      sql.orElse(sqlPart(SqlPart("get", names = out.map(_.name)))))), out)

  // ---------------------------------------------------------------- SQL forms (pyspark_arrnf.sql)

  /** The SQL of `e` over `in` (placeholders `#n`); subqueries are the blocks `render` made. */
  private def sqlOf(e: Expression, in: Seq[Attribute]): String =
    SqlForm.expr(e, indexOf(in), p => cachedName(p).orElse(canonFind("plain", p).map(_.name)))

  private def selectSql(list: Seq[NamedExpression], in: Seq[Attribute]): Option[SqlPart] =
    sqlPart(SqlPart("select", exprs = list.map(sqlOf(_, in)), names = list.map(_.name)))

  private def joinSql(j: Join): Option[SqlPart] = sqlPart {
    val both = j.left.output ++ j.right.output
    val jt = j.joinType match {
      case e: org.apache.spark.sql.catalyst.plans.ExistenceJoin => "existence"
      case other => other.sql
    }
    val flag = j.joinType match {
      case e: org.apache.spark.sql.catalyst.plans.ExistenceJoin => Seq(e.exists.name)
      case _ => Nil
    }
    SqlPart("join", exprs = j.condition.map(sqlOf(_, both)).toSeq, names = flag, text = Some(jt))
  }

  // Plan levels walked so far (a subquery's plan counts as levels below its node): a shallow-only
  // normalizer gives up past `ShallowDepth`, and `Normalizer.build` starts again on a deep stack.
  private var level = 0

  private def toBody(p: LogicalPlan, ctx: Ctx): Body = {
    if (!isHead(p)) note(p, ctx.block, force = false)
    level += 1
    if (shallowOnly && level > ShallowDepth) throw TooDeep
    try toBodyOf(p, ctx) finally level -= 1
  }

  private def toBodyOf(p: LogicalPlan, ctx: Ctx): Body = p match {
    case u: Union =>
      Body(u.children.iterator.flatMap(c => toBody(c, ctx).branches).toVector, u.out)
    case _ if isHead(p) => leafBody(headBlock(p, ctx), headOutput(p))
    case Project(list, child) =>
      val body = toBody(child, ctx)
      unary(body, projectOps(list, body.output, ctx), p.out)
    case Filter(cond, child) =>
      val body = toBody(child, ctx)
      unary(body, Seq(UnaryOp("Filter", Patterns.splitConjuncts(cond).map(render(_, body.output, ctx)),
        sqlPart(SqlPart("filter", exprs = Patterns.splitConjuncts(cond).map(sqlOf(_, body.output)))))), p.out)
    case g: Generate =>
      val body = toBody(g.child, ctx)
      val text = (if (g.outer) "outer " else "") + render(g.generator, body.output, ctx)
      unary(body, Seq(UnaryOp("FlatMap", Seq(text), sqlPart(SqlPart("generate",
        exprs = Seq(sqlOf(g.generator, body.output)), names = g.generatorOutput.map(_.name),
        positions = g.requiredChildOutput.map(a => body.output.indexWhere(_.exprId == a.exprId)),
        text = if (g.outer) Some("outer") else None)))), g.out)
    case e: Expand =>
      val body = toBody(e.child, ctx)
      unary(body, Seq(UnaryOp("FlatMap", e.projections.map(ps => ps.map(render(_, body.output, ctx)).mkString("(", ", ", ")")),
        sqlPart(SqlPart("expand", exprs = e.projections.map(ps => ps.map(sqlOf(_, body.output)).mkString(", ")),
          names = e.out.map(_.name))))), e.out)
    case s: Sample =>
      val body = toBody(s.child, ctx)
      unary(body, Seq(UnaryOp(if (s.withReplacement) "FlatMap" else "Filter",
        Seq(s"sample(${s.lowerBound}, ${s.upperBound}, replace=${s.withReplacement})"),
        noSql(SqlForm.unsupported("a Sample (Spark's TABLESAMPLE draws other rows)")))), s.out)
    case t: TypedFilter =>
      val body = toBody(t.child, ctx)
      unary(body, Seq(UnaryOp("Filter", Seq(s"typed ${t.func.getClass.getSimpleName}"),
        noSql(SqlForm.unsupported("a typed (Scala/Java function) filter")))), t.out)
    case s: Sort =>
      ctx.block.notes += "a sort inside the query (order is not kept by bags; ignored)"
      toBody(s.child, ctx).copy(output = s.out)
    case r: RepartitionOperation =>
      ctx.block.notes += s"${r.nodeName} (an exchange, no arrangement)"
      toBody(r.child, ctx).copy(output = r.out)
    case r: RebalancePartitions =>
      ctx.block.notes += "RebalancePartitions (an exchange, no arrangement)"
      toBody(r.child, ctx).copy(output = r.out)
    case s: SubqueryAlias => toBody(s.child, ctx).copy(output = s.out)
    case h: ResolvedHint => toBody(h.child, ctx).copy(output = h.out)
    case v: View => toBody(v.child, ctx).copy(output = v.out)
    case w: EventTimeWatermark =>
      ctx.block.notes += s"watermark on ${w.eventTime.name} delay ${w.delay}"
      toBody(w.child, ctx).copy(output = w.out)
    case c: CollectMetrics =>
      ctx.block.notes += s"observed metrics ${c.name}"
      toBody(c.child, ctx).copy(output = c.out)
    case w: WithCTE =>
      w.cteDefs.foreach(d => defineCte(d, ctx))
      toBody(w.plan, ctx)
    case d: CTERelationDef => toBody(d.child, ctx)
    case r: CTERelationRef =>
      ctes.get(r.cteId) match {
        case Some(b) =>
          b.sharing += 1
          b.consumers += Consumer(ctx.block.name, "cte", s"read in ${ctx.block.name}")
          leafBody(GetLeaf(b.name, "block"), r.out)
        case None => leafBody(GetLeaf(s"cte${r.cteId}", "cte"), r.out,
          noSql(SqlForm.unsupported(s"a reference to a CTE defined elsewhere (cte${r.cteId})")))
      }
    case j: Join => leafBody(joinLeaf(j, ctx), j.out, joinSql(j))
    case LocalLimit(e, child) =>
      val body = toBody(child, ctx)
      unary(body, Seq(UnaryOp("Filter", Seq(s"local_limit($e)"), sqlPart(SqlPart("local_limit", text = Some(e.sql))))), p.out)
    case leaf: LeafNode =>
      val term = leafTerm(leaf, ctx)
      leafBody(term, leaf.out, term match {
        case _: ConstantLeaf => sqlPart(SqlForm.constant(leaf))
        case g: GetLeaf if g.source == "stream" => noSql(SqlForm.unsupported(s"a stream (${g.name})"))
        case _: GetLeaf => None
        case o: OpaqueLeaf => noSql(SqlForm.unsupported(s"${o.node} has no SQL form"))
        case _ => None
      })
    case other =>
      opaque += 1
      val grouped = groupingOf(other)
      val inputs = other.children.zipWithIndex.map { case (c, i) =>
        grouped.flatMap(_.lift(i)).filter(_.nonEmpty) match {
          case Some(keys) => arrangedBlock(c, keys, ctx, s"grouped by ${other.nodeName} in ${ctx.block.name}")
          case None => plainBlock(c, ctx, "opaque", s"input of ${other.nodeName}")
        }
      }
      leafBody(OpaqueLeaf(other.nodeName, Try(other.simpleString(5)).getOrElse(other.nodeName).take(200), inputs),
        other.out, noSql(SqlForm.unsupported(s"${other.nodeName} has no SQL form")))
  }

  private def defineCte(d: CTERelationDef, ctx: Ctx): Unit = if (!ctes.contains(d.id)) {
    val name = d.child match {
      case s: SubqueryAlias => s.alias
      case _ => s"cte${d.id}"
    }
    val b = new Builder(name, name)
    fill(b, stripTransparent(d.child))
    done += b
    ctes(d.id) = b
  }

  /** For opaque grouped nodes: the grouping keys of each child (they are its arrangements). */
  private def groupingOf(p: LogicalPlan): Option[Seq[Seq[Expression]]] = p match {
    case m: MapGroups => Some(Seq(m.groupingAttributes))
    case f: FlatMapGroupsWithState => Some(Seq(f.groupingAttributes))
    case f: FlatMapGroupsInPandas => Some(Seq(f.groupingAttributes))
    case f: FlatMapGroupsInArrow => Some(Seq(f.groupingAttributes))
    case f: FlatMapGroupsInPandasWithState => Some(Seq(f.groupingAttributes))
    case c: CoGroup => Some(Seq(c.leftGroup, c.rightGroup))
    case f: FlatMapCoGroupsInPandas => Some(Seq(f.leftGroupingLen, f.rightGroupingLen).zip(p.children)
      .map { case (n, c) => c.out.take(n) })
    case f: FlatMapCoGroupsInArrow => Some(Seq(f.leftGroupingLen, f.rightGroupingLen).zip(p.children)
      .map { case (n, c) => c.out.take(n) })
    case t: TransformWithState => Some(Seq(t.groupingAttributes))
    case _ => None
  }

  private def leafTerm(leaf: LeafNode, ctx: Ctx): Leaf = leaf match {
    case r: InMemoryRelation => GetLeaf(cachedName(r).get, "cache")
    case l: LocalRelation =>
      if (l.isStreaming) GetLeaf("memory stream", "stream")
      else ConstantLeaf(s"${l.data.size} rows", Some(l.data.size.toLong))
    case _: OneRowRelation => ConstantLeaf("one empty row", Some(1L))
    case r: Range => ConstantLeaf(s"range(${r.start}, ${r.end}, ${r.step})", Try(r.numElements.toLong).toOption)
    case e: EmptyRelation => ConstantLeaf("no rows", Some(0L))
    case r: LogicalRelation =>
      val name = r.catalogTable.map(t => tableName(t.identifier.unquotedString)).getOrElse(r.relation match {
        case h: HadoopFsRelation =>
          h.location.rootPaths.headOption.map(p => p.getName.stripSuffix(".parquet")).getOrElse("files")
        case other => other.getClass.getSimpleName
      })
      GetLeaf(name, if (r.isStreaming) "stream" else "table")
    case r: DataSourceV2Relation => GetLeaf(tableName(r.name), if (r.isStreaming) "stream" else "table")
    case r: DataSourceV2ScanRelation => GetLeaf(tableName(r.relation.name), "table")
    case other if other.isStreaming =>
      val source = Try(other.getClass.getMethod("sourceName").invoke(other).toString).getOrElse(other.nodeName)
      GetLeaf(source, "stream")
    case other if other.nodeName.contains("Relation") || other.nodeName.contains("RDD") || other.nodeName.contains("Scan") =>
      GetLeaf(other.nodeName, "table")
    case other =>
      opaque += 1
      OpaqueLeaf(other.nodeName, Try(other.simpleString(5)).getOrElse(other.nodeName).take(200), Nil)
  }

  private def tableName(s: String): String = s.stripPrefix("spark_catalog.")

  private def joinLeaf(j: Join, ctx: Ctx): JoinLeaf = {
    val (lk, rk, residual) = ExtractEquiJoinKeys.unapply(j) match {
      case Some((_, l, r, other, _, _, _, _)) => (l, r, other)
      case None => (Nil, Nil, j.condition)
    }
    val both = j.left.out ++ j.right.out
    val on = lk.zip(rk).map { case (l, r) => s"${render(l, both, ctx)} = ${render(r, both, ctx)}" }
    val jt = (j.joinType match {
      case _: org.apache.spark.sql.catalyst.plans.ExistenceJoin => "existence"
      case other => Try(other.sql).getOrElse(other.toString)
    }).toLowerCase(java.util.Locale.ROOT).replace(' ', '_')
    val keyText = if (on.isEmpty) "no keys (cross product)" else on.mkString(", ")
    val left = arrangedBlock(j.left, lk, ctx, s"$jt join on $keyText in ${ctx.block.name}")
    val right = arrangedBlock(j.right, rk, ctx, s"$jt join on $keyText in ${ctx.block.name}")
    arrangedJoins += ((j, (left, right)))
    JoinLeaf(jt, on, residual.map(render(_, both, ctx)), Seq(left, right))
  }

  private def projectOps(list: Seq[NamedExpression], in: Seq[Attribute], ctx: Ctx): Seq[UnaryOp] = {
    val index = indexOf(in)
    // the position of each list entry in the input, -1 for a computed one
    val found = list.map {
      case a: Attribute => index.of(a)
      case _ => -1
    }
    val entries = list.zip(found)
    val computed = entries.collect { case (e, -1) => e }
    var next = in.size
    val positions = entries.map {
      case (a, i) if i >= 0 => ref(i, a.name)
      case (e, _) =>
        val r = ref(next, e.name); next += 1; r
    }
    val identity = computed.isEmpty && list.size == in.size && found.zipWithIndex.forall { case (f, i) => f == i }
    val map = if (computed.isEmpty) Nil else Seq(UnaryOp("Map", computed.map(render(_, in, ctx)),
      sqlPart(SqlPart("map", exprs = computed.map(sqlOf(_, in)), names = computed.map(_.name)))))
    var nextPos = in.size
    val projSql = sqlPart(SqlPart("project", positions = found.map {
      case i if i >= 0 => i
      case _ => val r = nextPos; nextPos += 1; r
    }))
    map ++ (if (identity) Nil else Seq(UnaryOp("Project", compress(positions), projSql)))
  }

  // ---------------------------------------------------------------- expressions

  /** Renders `e` with column references as positions into `in`, subqueries as blocks. */
  private def render(e: Expression, in: Seq[Attribute], ctx: Ctx): String = {
    val withSubqueries = if (!e.containsPattern(PLAN_EXPRESSION)) e else e.transformUp {
      case s: SubqueryExpression =>
        val kind = s match {
          case _: ScalarSubquery => "scalar"
          case _: Exists => "exists"
          case _: ListQuery => "in"
          case other => other.prettyName
        }
        val g = plainBlock(s.plan, ctx, "subquery", s"$kind subquery in ${ctx.block.name}")
        ShownAs(s"$kind(${g.name})")
    }
    showIn(withSubqueries, in)
  }

  private def freeze(b: Builder, rename: Map[String, String]): Block = {
    def rn(n: String) = rename.getOrElse(n, n)
    def fixLeaf(l: Leaf): Leaf = l match {
      case g: GetLeaf if g.source == "block" => g.copy(name = rn(g.name))
      case j: JoinLeaf => j.copy(inputs = j.inputs.map(g => fixLeaf(g).asInstanceOf[GetLeaf]))
      case o: OpaqueLeaf => o.copy(inputs = o.inputs.map(g => fixLeaf(g).asInstanceOf[GetLeaf]))
      case other => other
    }
    val consumers = b.consumers.toSeq.map(c => c.copy(block = rn(c.block)))
    val branches = b.branches.map(br => br.copy(leaf = fixLeaf(br.leaf)))
    val cost = CostModel.cost(b.head, b.plan, b.input, b.plan.out, b.input.out, b.keySets.map(_._3).toSeq, consumers,
      streaming, unknownLeaf)
    Block(rn(b.name), b.head, branches, b.columns, math.max(b.sharing, 1), consumers, cost, b.notes.toSeq)
  }
}

object Normalizer {
  private val DeepStackBytes = 512L << 20

  /** Plan levels (subquery plans included) the calling thread's stack is trusted with. */
  private[normal] val ShallowDepth = 64

  /** Runs `body` on a fresh thread with a 512 MB stack (reserved, not committed) and returns its
   *  result or rethrows its failure. The active session (an inheritable thread-local) carries over. */
  def onDeepStack[T](body: => T): T = {
    @volatile var result: Either[Throwable, T] = scala.util.Left(new IllegalStateException("normalizer thread did not finish"))
    val t = new Thread(null, () => { result = try scala.util.Right(body) catch { case e: Throwable => scala.util.Left(e) } },
      "arrnf-normalizer", DeepStackBytes)
    t.start()
    t.join()
    result.fold(e => throw e, identity)
  }

  /** Thrown by a shallow-only normalizer that walked past [[ShallowDepth]] plan levels. */
  private object TooDeep extends scala.util.control.ControlThrowable

  /**
   * The ArrNF program of `plan`, and the normalizer that built it (for [[Normalizer.blockOf]]).
   *
   * The walk recurses once per plan level, and py4j's threads (and the explain provider's) have
   * small stacks; 300-deep plans need more. It starts on the calling thread; a plan deeper than
   * [[ShallowDepth]] levels (or one whose statistics or canonical forms overflow the stack) is
   * normalized again from the start on a thread with a deep stack. Starting a thread costs more
   * than normalizing a typical plan, so only deep plans pay for it; measuring every plan's depth
   * first took 9% of the explain section.
   */
  def build(plan: LogicalPlan, name: String = "query", withSql: Boolean = true): (ArrnfProgram, Normalizer) = {
    // Fault injection for the containment tests: `spark.arrnf.testing.failRule=Normalizer`.
    if (org.apache.spark.sql.internal.SQLConf.get.getConfString(arrnf.ArrnfConf.FailRule, "") == "Normalizer") {
      throw new IllegalStateException(s"failure injected into Normalizer (${arrnf.ArrnfConf.FailRule})")
    }
    val shallow = new Normalizer(name, withSql, shallowOnly = true)
    try (shallow.normalize(plan), shallow)
    catch {
      case TooDeep | _: StackOverflowError =>
        val deep = new Normalizer(name, withSql, shallowOnly = false)
        (onDeepStack(deep.normalize(plan)), deep)
    }
  }

  def apply(plan: LogicalPlan, name: String = "query", withSql: Boolean = true): ArrnfProgram =
    build(plan, name, withSql)._1

  def ref(i: Int, name: String): String = s"#$i{$name}"

  /** The position in a reference `#12{name}`, or -1. A plain loop: it runs for every column of
   *  every projection the text form prints. */
  private def positionOf(r: String): Int = {
    var i = 1
    var n = 0
    while (i < r.length && i <= 9 && r.charAt(i) >= '0' && r.charAt(i) <= '9') { n = n * 10 + (r.charAt(i) - '0'); i += 1 }
    if (r.startsWith("#") && i > 1 && r.startsWith("{", i)) n else -1
  }

  /** `#2{a}, #3{b}, #4{c}, #5{d}` → `#2{a}..=#5{d}` for runs of four or more. */
  def compress(refs: Seq[String]): Seq[String] = {
    val rs = refs.toIndexedSeq
    val nums = rs.map(positionOf)
    val out = mutable.ArrayBuffer[String]()
    var i = 0
    while (i < rs.size) {
      var j = i
      while (j + 1 < rs.size && nums(i) >= 0 && nums(j + 1) == nums(j) + 1) j += 1
      if (j - i >= 3) { out += s"${rs(i)}..=${rs(j)}"; i = j + 1 }
      else { out += rs(i); i += 1 }
    }
    out.toSeq
  }

  /** Renders `e` with attribute references as `#position{name}`, positions from `index`. Subtrees
   *  without references or aliases are printed as they are (no copy); the rest is rebuilt bottom-up
   *  with `mapChildren`, which, unlike `transformUp`, sets no thread-local origin per node. */
  def showIndexed(e: Expression, index: Positions, withNames: Boolean = true): String = {
    def shown(x: Expression): Expression = x match {
      case a: AttributeReference =>
        val i = index.of(a)
        ShownAs(if (i < 0) s"#?{${a.name}}" else if (withNames) ref(i, a.name) else s"#$i")
      case o: OuterReference => ShownAs(s"outer(${o.name})")
      case al: Alias => ShownAs(s"${shown(al.child)} AS ${al.name}")
      case _ if !x.containsAnyPattern(ATTRIBUTE_REFERENCE, OUTER_REFERENCE, ALIAS) => x
      case _ => x.mapChildren(shown)
    }
    Try(shown(e).toString).getOrElse(e.toString)
  }

  private[normal] def classify(f: AggregateFunction): String = f match {
    case _: Sum | _: Count | _: Average | _: CountIf | _: CentralMomentAgg | _: Covariance |
         _: Corr | _: First | _: Last | _: AnyValue => "accumulable"
    case _: Min | _: Max | _: MinBy | _: MaxBy => "hierarchical"
    case _ => "basic"
  }

}
