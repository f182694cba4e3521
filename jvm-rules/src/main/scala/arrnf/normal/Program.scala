package arrnf.normal

/**
 * The ArrNF program: the data model shared by the normalizer, the text form and the JSON form.
 *
 * {{{
 * Dataflow  ::=  [ Block ]*                  (dependency order: a block only reads earlier blocks)
 * Block     ::=  [ Arr ] Str
 * Arr       ::=  ArrangeBy | Reduce | Distinct | TopK | Threshold
 * Str       ::=  Union [ [ Negate ] Unary Leaf ]+
 * Unary     ::=  [ Map | Filter | Project | FlatMap ]*
 * Leaf      ::=  Constant | Get | Join [ Get ]+ | Opaque <NodeName> [ Get ]*
 * }}}
 *
 * Column references are positions into the input of the operator that holds them, printed
 * `#n{name}`; every expression is kept as the text it prints as.
 */
object Program {
  /** Bump when the JSON form changes incompatibly (docs/arrnf-json.md). */
  val FormatVersion = 1
}

/** A stateless operator of a branch: `op` is Map, Filter, Project or FlatMap. */
final case class UnaryOp(op: String, args: Seq[String], sql: Option[SqlPart] = None)

sealed trait Leaf { def kind: String }

/** Literal rows (LocalRelation, OneRowRelation, Range, an empty relation). */
final case class ConstantLeaf(detail: String, rows: Option[Long]) extends Leaf { def kind = "Constant" }

/**
 * A read of a collection. `source` says what it reads: `table` (a scan), `block` (an earlier block
 * of this program), `cache` (a cached DataFrame: an existing, shared arrangement), `stream`.
 */
final case class GetLeaf(name: String, source: String) extends Leaf { def kind = "Get" }

/** A binary join of arranged inputs; `on` are the equi-join pairs, `condition` the residual. */
final case class JoinLeaf(joinType: String, on: Seq[String], condition: Option[String], inputs: Seq[GetLeaf])
  extends Leaf { def kind = "Join" }

/** A node the normalizer does not know (or that ArrNF cannot express); its inputs are blocks. */
final case class OpaqueLeaf(node: String, detail: String, inputs: Seq[GetLeaf]) extends Leaf { def kind = "Opaque" }

/**
 * `[Negate] Unary* Leaf`; `unary` is in evaluation order (the first is applied first). `sql` (and
 * `UnaryOp.sql`, `Head.sql`): the SQL form of the leaf, see [[SqlPart]].
 */
final case class Branch(negate: Boolean, unary: Seq[UnaryOp], leaf: Leaf, sql: Option[SqlPart] = None)

/** One aggregate of a Reduce, classified as the cost rules need it. */
final case class AggTerm(text: String, kind: String, distinct: Boolean)

/**
 * The arrangement-forming operator of a block. `kind` is ArrangeBy, Reduce, Distinct, TopK or
 * Threshold. `keys` holds the key sets (ArrangeBy may have several, the others one); `mode` is
 * `window` for a Reduce of window functions and `except`/`intersect` for a Threshold.
 */
final case class Head(
    kind: String,
    keys: Seq[Seq[String]],
    aggregates: Seq[AggTerm] = Nil,
    order: Seq[String] = Nil,
    limit: Option[Long] = None,
    offset: Option[Long] = None,
    mode: Option[String] = None,
    sql: Option[SqlPart] = None)

/** Who reads a block: the reading block, the role (join, input, subquery, cte, opaque) and detail. */
final case class Consumer(block: String, role: String, detail: String)

/**
 * The cost of a block. `arrangements` by the differential rules (`rule` says which), the
 * arrangement's key and value columns, and estimated rows/bytes with the statistic they came from
 * (`rowCount`, `sizeInBytes` or `unknown`); `why` names the consumer that needs it.
 */
final case class Cost(
    arrangements: Int,
    rule: String,
    keys: Seq[Seq[String]],
    values: Seq[String],
    rows: Option[Long],
    bytes: Option[Long],
    source: String,
    why: String)

final case class Block(
    name: String,
    head: Option[Head],
    branches: Seq[Branch],
    columns: Seq[String],
    sharing: Int,
    consumers: Seq[Consumer],
    cost: Cost,
    notes: Seq[String])

/** `finishing`: root Sort / Limit / Offset / Project, shown but not arrangements. */
final case class ArrnfProgram(
    name: String,
    blocks: Seq[Block],
    finishing: Seq[UnaryOp],
    streaming: Boolean,
    opaque: Int,
    version: Int = Program.FormatVersion) {
  def arrangements: Int = blocks.map(_.cost.arrangements).sum
  def block(name: String): Block = blocks.find(_.name == name).getOrElse(
    throw new NoSuchElementException(s"no block $name in ${blocks.map(_.name).mkString(", ")}"))
}
