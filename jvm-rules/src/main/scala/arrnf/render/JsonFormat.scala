package arrnf.render

import org.json4s._
import org.json4s.jackson.JsonMethods

import arrnf.model._

/** The JSON form of an ArrNF program; the schema is documented in docs/arrnf-json.md. */
object JsonFormat {
  private def strs(xs: Seq[String]): JValue = JArray(xs.map(JString(_)).toList)
  private def opt[T](o: Option[T])(f: T => JValue): JValue = o.map(f).getOrElse(JNull)

  def unary(u: UnaryOp): JValue = withSql(JObject("op" -> JString(u.op.name), "args" -> strs(u.args)), u.sql)

  /** The SQL form of a part (docs/arrnf-sql.md), added only where there is one. */
  def sqlPart(s: SqlPart): JValue = JObject(
    "kind" -> JString(s.kind), "exprs" -> strs(s.exprs), "names" -> strs(s.names), "keys" -> strs(s.keys),
    "order" -> strs(s.order), "positions" -> JArray(s.positions.map(JInt(_)).toList), "text" -> opt(s.text)(JString(_)))

  private def withSql(o: JObject, s: Option[SqlPart]): JObject = s match {
    case Some(p) => JObject(o.obj :+ ("sql" -> sqlPart(p)))
    case None => o
  }

  def get(g: GetLeaf): JValue = JObject("kind" -> JString("Get"), "name" -> JString(g.name), "source" -> JString(g.source.name))

  def leaf(l: Leaf): JValue = l match {
    case c: ConstantLeaf => JObject("kind" -> JString("Constant"), "detail" -> JString(c.detail), "rows" -> opt(c.rows)(JLong(_)))
    case g: GetLeaf => get(g)
    case j: JoinLeaf => JObject("kind" -> JString("Join"), "type" -> JString(j.joinType), "on" -> strs(j.on),
      "condition" -> opt(j.condition)(JString(_)), "inputs" -> JArray(j.inputs.map(get).toList))
    case o: OpaqueLeaf => JObject("kind" -> JString("Opaque"), "node" -> JString(o.node), "detail" -> JString(o.detail),
      "inputs" -> JArray(o.inputs.map(get).toList))
  }

  def head(h: Head): JValue = withSql(JObject(
    "kind" -> JString(h.kind.name),
    "keys" -> JArray(h.keys.map(strs).toList),
    "aggregates" -> JArray(h.aggregates.map(a =>
      JObject("text" -> JString(a.text), "kind" -> JString(a.kind.name), "distinct" -> JBool(a.distinct))).toList),
    "order" -> strs(h.order),
    "limit" -> opt(h.limit)(JLong(_)),
    "offset" -> opt(h.offset)(JLong(_)),
    "mode" -> opt(h.mode)(m => JString(m.name))), h.sql)

  def cost(c: Cost): JValue = JObject(
    "arrangements" -> JInt(c.arrangements),
    "rule" -> JString(c.rule),
    "keys" -> JArray(c.keys.map(strs).toList),
    "values" -> strs(c.values),
    "rows" -> opt(c.rows)(JLong(_)),
    "bytes" -> opt(c.bytes)(JLong(_)),
    "source" -> JString(c.source),
    "why" -> JString(c.why))

  /** A block; `measured` is its measured line (a measured report), shown in its `text`. */
  def block(b: Block, measured: Option[String] = None): JObject = JObject(
    "name" -> JString(b.name),
    "head" -> opt(b.head)(head),
    "branches" -> JArray(b.branches.map(br =>
      withSql(JObject("negate" -> JBool(br.negate), "unary" -> JArray(br.unary.map(unary).toList), "leaf" -> leaf(br.leaf)),
        br.sql)).toList),
    "columns" -> strs(b.columns),
    "sharing" -> JInt(b.sharing),
    "consumers" -> JArray(b.consumers.map(c =>
      JObject("block" -> JString(c.block), "role" -> JString(c.role), "detail" -> JString(c.detail))).toList),
    "cost" -> cost(b.cost),
    "notes" -> strs(b.notes),
    "realization" -> opt(b.realization)(rs => JArray(rs.map(r => JObject("id" -> JInt(r.id),
      "operator" -> JString(r.operator), "what" -> JString(r.what), "shared" -> JBool(r.shared))).toList)),
    "text" -> JString(TextFormat.blockText(b, measured)))

  /** The program; a measured report gives each block's measured line and the run's summary, which
   *  its texts show. */
  def toJValue(p: ArrnfProgram, measured: Block => Option[String] = _ => None,
      summary: Option[String] = None): JObject = JObject(
    "format" -> JString("arrnf"),
    "version" -> JInt(p.version),
    "name" -> JString(p.name),
    "streaming" -> JBool(p.streaming),
    "opaque" -> JInt(p.opaque),
    "arrangements" -> JInt(p.arrangements),
    "realized" -> opt(p.realized)(JInt(_)),
    "built_blocks" -> opt(p.builtBlocks)(JInt(_)),
    "rules" -> JArray(p.rules.map(JString(_)).toList),
    "blocks" -> JArray(p.blocks.map(b => block(b, measured(b))).toList),
    "finishing" -> JArray(p.finishing.map(unary).toList),
    "text" -> JString(TextFormat(p, measured, summary)))

  def apply(p: ArrnfProgram, pretty: Boolean = false): String = {
    val jv = JsonMethods.render(toJValue(p))
    if (pretty) JsonMethods.pretty(jv) else JsonMethods.compact(jv)
  }
}
