package arrnf.normalize

import scala.util.Try

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.planning.ExtractEquiJoinKeys
import org.apache.spark.sql.catalyst.trees.TreePattern.PLAN_EXPRESSION
import org.apache.spark.sql.catalyst.plans.logical._

import arrnf.catalyst.{Patterns, SetOperationRewrites}
import arrnf.cost.CostModel
import arrnf.model._
import arrnf.render.{ShownAs, SqlForm}
import arrnf.render.ExpressionText.{compress, ref}

/** The normalizer's bodies: `Union [ [Negate] Unary* Leaf ]+` of a subtree, with the SQL form of each part. */
private[normalize] trait Bodies { self: Normalizer =>
  import Normalizer.{ShallowDepth, TooDeep}
  import PlanPatterns._

  // ---------------------------------------------------------------- bodies

  private[normalize] def unary(body: Body, ops: Seq[UnaryOp], out: Seq[Attribute]): Body =
    if (ops.isEmpty) body.copy(output = out)
    else Body(body.branches.map(b => b.copy(unary = b.unary ++ ops)), out)

  private[normalize] def leafBody(leaf: Leaf, out: Seq[Attribute], sql: Option[SqlPart] = None): Body =
    Body(Vector(Branch(negate = false, Nil, leaf,
      sql.orElse(sqlPart(SqlPart("get", names = out.map(_.name)))))), out)

  // ---------------------------------------------------------------- SQL forms (pyspark_arrnf.sql)

  /** The SQL of `e` over `in` (placeholders `#n`); subqueries are the blocks `render` made. */
  private[normalize] def sqlOf(e: Expression, in: Seq[Attribute]): String =
    SqlForm.expr(e, indexOf(in), p => cachedName(p).orElse(canonFind("plain", p).map(_.name)))

  private[normalize] def selectSql(list: Seq[NamedExpression], in: Seq[Attribute]): Option[SqlPart] =
    sqlPart(SqlPart("select", exprs = list.map(sqlOf(_, in)), names = list.map(_.name)))

  private[normalize] def joinSql(j: Join): Option[SqlPart] = sqlPart {
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

  private[normalize] def toBody(p: LogicalPlan, ctx: Ctx): Body = {
    if (!isHead(p)) note(p, ctx.block, force = false)
    level += 1
    if (shallowOnly && level > ShallowDepth) throw TooDeep
    try toBodyOf(p, ctx) finally level -= 1
  }

  private[normalize] def toBodyOf(p: LogicalPlan, ctx: Ctx): Body = p match {
    case u: Union =>
      Body(u.children.iterator.flatMap(c => toBody(c, ctx).branches).toVector, u.out)
    case _ if isHead(p) => leafBody(headBlock(p, ctx), headOutput(p))
    case Project(list, child) =>
      val body = toBody(child, ctx)
      unary(body, projectOps(list, body.output, ctx), p.out)
    case Filter(cond, child) =>
      val body = toBody(child, ctx)
      unary(body, Seq(UnaryOp(UnaryKind.Filter, Patterns.splitConjuncts(cond).map(render(_, body.output, ctx)),
        sqlPart(SqlPart("filter", exprs = Patterns.splitConjuncts(cond).map(sqlOf(_, body.output)))))), p.out)
    case g: Generate =>
      val body = toBody(g.child, ctx)
      val text = (if (g.outer) "outer " else "") + render(g.generator, body.output, ctx)
      unary(body, Seq(UnaryOp(UnaryKind.FlatMap, Seq(text), sqlPart(SqlPart("generate",
        exprs = Seq(sqlOf(g.generator, body.output)), names = g.generatorOutput.map(_.name),
        positions = g.requiredChildOutput.map(a => body.output.indexWhere(_.exprId == a.exprId)),
        text = if (g.outer) Some("outer") else None)))), g.out)
    case e: Expand =>
      val body = toBody(e.child, ctx)
      unary(body, Seq(UnaryOp(UnaryKind.FlatMap, e.projections.map(ps => ps.map(render(_, body.output, ctx)).mkString("(", ", ", ")")),
        sqlPart(SqlPart("expand", exprs = e.projections.map(ps => ps.map(sqlOf(_, body.output)).mkString(", ")),
          names = e.out.map(_.name))))), e.out)
    case s: Sample =>
      val body = toBody(s.child, ctx)
      unary(body, Seq(UnaryOp(if (s.withReplacement) UnaryKind.FlatMap else UnaryKind.Filter,
        Seq(s"sample(${s.lowerBound}, ${s.upperBound}, replace=${s.withReplacement})"),
        noSql(SqlForm.unsupported("a Sample (Spark's TABLESAMPLE draws other rows)")))), s.out)
    case t: TypedFilter =>
      val body = toBody(t.child, ctx)
      unary(body, Seq(UnaryOp(UnaryKind.Filter, Seq(s"typed ${t.func.getClass.getSimpleName}"),
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
          leafBody(GetLeaf(b.name, Source.Block), r.out)
        case None => leafBody(GetLeaf(s"cte${r.cteId}", Source.Cte), r.out,
          noSql(SqlForm.unsupported(s"a reference to a CTE defined elsewhere (cte${r.cteId})")))
      }
    case j: Join => leafBody(joinLeaf(j, ctx), j.out, joinSql(j))
    case LocalLimit(e, child) =>
      val body = toBody(child, ctx)
      unary(body, Seq(UnaryOp(UnaryKind.Filter, Seq(s"local_limit($e)"), sqlPart(SqlPart("local_limit", text = Some(e.sql))))), p.out)
    case leaf: LeafNode =>
      val term = Leaves.of(leaf)
      if (term.isInstanceOf[OpaqueLeaf]) opaque += 1
      leafBody(term, leaf.out, term match {
        case _: ConstantLeaf => sqlPart(SqlForm.constant(leaf))
        case g: GetLeaf if g.source == Source.Stream => noSql(SqlForm.unsupported(s"a stream (${g.name})"))
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

  private[normalize] def defineCte(d: CTERelationDef, ctx: Ctx): Unit = if (!ctes.contains(d.id)) {
    val name = d.child match {
      case s: SubqueryAlias => s.alias
      case _ => s"cte${d.id}"
    }
    val b = new Builder(name, name)
    fill(b, stripTransparent(d.child))
    done += b
    ctes(d.id) = b
  }

  private[normalize] def joinLeaf(j: Join, ctx: Ctx): JoinLeaf = {
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
    index.noteJoin(j, left, right)
    JoinLeaf(jt, on, residual.map(render(_, both, ctx)), Seq(left, right))
  }

  private[normalize] def projectOps(list: Seq[NamedExpression], in: Seq[Attribute], ctx: Ctx): Seq[UnaryOp] = {
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
    val map = if (computed.isEmpty) Nil else Seq(UnaryOp(UnaryKind.Map, computed.map(render(_, in, ctx)),
      sqlPart(SqlPart("map", exprs = computed.map(sqlOf(_, in)), names = computed.map(_.name)))))
    var nextPos = in.size
    val projSql = sqlPart(SqlPart("project", positions = found.map {
      case i if i >= 0 => i
      case _ => val r = nextPos; nextPos += 1; r
    }))
    map ++ (if (identity) Nil else Seq(UnaryOp(UnaryKind.Project, compress(positions), projSql)))
  }

  // ---------------------------------------------------------------- expressions

  /** Renders `e` with column references as positions into `in`, subqueries as blocks. */
  private[normalize] def render(e: Expression, in: Seq[Attribute], ctx: Ctx): String = {
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
}
