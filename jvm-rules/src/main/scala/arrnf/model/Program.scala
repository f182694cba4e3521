package arrnf.model

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
  val FormatVersion = 3
}

/**
 * The SQL form of one part of an ArrNF program (what `pyspark_arrnf.sql` needs to write the
 * program back as SQL). Expressions are Spark SQL text (Catalyst's `Expression.sql`) in which a
 * column reference is the quoted placeholder `` `#n` ``: position `n` of the operator's input, as in
 * the display text. `kind` says what the part is:
 *
 *  - unary operators: `map` (exprs, names), `filter` (exprs: conjuncts), `project` (positions),
 *    `generate` (exprs: the generator, names: its outputs, text: `outer` or none), `expand` (exprs:
 *    one SELECT list per projection, names), `local_limit` (text: the limit; a hint only);
 *  - finishing: `sort` (exprs: sort orders), `limit` / `offset` (text), `select` (exprs, names);
 *  - a branch's leaf: `get` (names: its columns), `values` (text: a query giving the rows, names),
 *    `join` (text: join type; exprs: the whole condition over left ++ right, or none; names: the
 *    output of an existence join's flag);
 *  - heads: `aggregate` (keys: GROUP BY, exprs + names: the output), `window` (exprs: windowed
 *    functions with OVER, names), `rank` (keys: PARTITION BY, order, text: the rank function),
 *    `sort_limit` (order);
 *  - `unsupported` (text: why there is no SQL form).
 */
final case class SqlPart(
    kind: String,
    exprs: Seq[String] = Nil,
    names: Seq[String] = Nil,
    keys: Seq[String] = Nil,
    order: Seq[String] = Nil,
    positions: Seq[Int] = Nil,
    text: Option[String] = None)

/** The stateless operators of a branch. */
sealed abstract class UnaryKind(val name: String)
object UnaryKind {
  /** Computed columns, appended after the input's. */
  case object Map extends UnaryKind("Map")
  /** Conjuncts every row must satisfy. */
  case object Filter extends UnaryKind("Filter")
  /** Columns selected by position. */
  case object Project extends UnaryKind("Project")
  /** Generators, Expand, sampling with replacement: rows out of each row. */
  case object FlatMap extends UnaryKind("FlatMap")
  /** Finishing only: the root's sort, limit, offset. */
  case object Sort extends UnaryKind("Sort")
  case object Limit extends UnaryKind("Limit")
  case object Offset extends UnaryKind("Offset")
}

/** A stateless operator of a branch (or a finishing operator of the root). */
final case class UnaryOp(op: UnaryKind, args: Seq[String], sql: Option[SqlPart] = None)

sealed trait Leaf { def kind: String }

/** Literal rows (LocalRelation, OneRowRelation, Range, an empty relation). */
final case class ConstantLeaf(detail: String, rows: Option[Long]) extends Leaf { def kind = "Constant" }

/** What a [[GetLeaf]] reads. */
sealed abstract class Source(val name: String)
object Source {
  /** A scan of a table or files. */
  case object Table extends Source("table")
  /** An earlier block of this program. */
  case object Block extends Source("block")
  /** A cached DataFrame: an existing, shared arrangement. */
  case object Cache extends Source("cache")
  /** A streaming source. */
  case object Stream extends Source("stream")
  /** A CTE defined outside the plan normalized. */
  case object Cte extends Source("cte")
}

/** A read of a collection, `name` from `source`. */
final case class GetLeaf(name: String, source: Source) extends Leaf { def kind = "Get" }

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

/** How an aggregate's state grows, as the cost rules count it (the seed's kinds). */
sealed abstract class AggKind(val name: String)
object AggKind {
  /** Sum, count, avg, moments, first/last: one accumulation per key. */
  case object Accumulable extends AggKind("accumulable")
  /** Min, max and their `_by` forms: a tower of reductions. */
  case object Hierarchical extends AggKind("hierarchical")
  /** Everything else: a reduction of its own each. */
  case object Basic extends AggKind("basic")
  /** A window function. */
  case object Window extends AggKind("window")
}

/** One aggregate of a Reduce, classified as the cost rules need it. */
final case class AggTerm(text: String, kind: AggKind, distinct: Boolean)

/** The arrangement-forming operators. */
sealed abstract class HeadKind(val name: String)
object HeadKind {
  case object ArrangeBy extends HeadKind("ArrangeBy")
  case object Reduce extends HeadKind("Reduce")
  case object Distinct extends HeadKind("Distinct")
  case object TopK extends HeadKind("TopK")
  case object Threshold extends HeadKind("Threshold")
}

/** What kind of Reduce, Distinct, TopK or Threshold a head is, where it is not the plain one. */
sealed abstract class Mode(val name: String)
object Mode {
  /** A Reduce of window functions. */
  case object Window extends Mode("window")
  /** Spark's EXCEPT ALL / INTERSECT ALL rewrite (a Threshold). */
  case object Except extends Mode("except")
  case object Intersect extends Mode("intersect")
  /** A TopK of the last rows. */
  case object Tail extends Mode("tail")
  /** A Distinct within a watermark. */
  case object WithinWatermark extends Mode("within watermark")
  /** A TopK by a rank-like function (`rank`, `dense_rank`, `row_number`). */
  final case class RankedBy(function: String) extends Mode(function)
}

/**
 * The arrangement-forming operator of a block. `keys` holds the key sets (ArrangeBy may have
 * several, the others one).
 */
final case class Head(
    kind: HeadKind,
    keys: Seq[Seq[String]],
    aggregates: Seq[AggTerm] = Nil,
    order: Seq[String] = Nil,
    limit: Option[Long] = None,
    offset: Option[Long] = None,
    mode: Option[Mode] = None,
    sql: Option[SqlPart] = None)

/** Who reads a block: the reading block, the role (join, input, subquery, cte, opaque) and detail. */
final case class Consumer(block: String, role: String, detail: String)

/**
 * The cost of a block. `arrangements` by the differential rules (`rule` says which), the
 * arrangement's key and value columns, and the estimated rows/bytes of the state Spark holds for
 * it with their source (`file metadata`, `estimate: …`, `unknown: why`; docs/arrnf-json.md); `why`
 * names the consumer that needs it.
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

/**
 * A physical operator that realizes a block: its id among the plan's stateful operators, its node
 * name, what state it holds (`sort for merge join`, `broadcast relation`, `hash aggregate (final)`,
 * ...), and whether it reads an existing arrangement (a reused exchange, a cached relation).
 */
final case class Realized(id: Int, operator: String, what: String, shared: Boolean)

/** `realization`: what Spark builds for the block in the plan it chose (Nil: nothing, a streamed
 *  side); None where no physical plan was asked (a streaming query, a logical plan alone). */
final case class Block(
    name: String,
    head: Option[Head],
    branches: Seq[Branch],
    columns: Seq[String],
    sharing: Int,
    consumers: Seq[Consumer],
    cost: Cost,
    notes: Seq[String],
    realization: Option[Seq[Realized]] = None)

/** `finishing`: root Sort / Limit / Offset / Project, shown but not arrangements. `realized`: how
 *  many stateful operators Spark's physical plan runs (shared ones not counted), where known.
 *  `rules`: why the extension's rules fired, or EagerAggregation declined, in the optimized plan
 *  (the lines the explain section prints above the program). */
final case class ArrnfProgram(
    name: String,
    blocks: Seq[Block],
    finishing: Seq[UnaryOp],
    streaming: Boolean,
    opaque: Int,
    version: Int = Program.FormatVersion,
    realized: Option[Int] = None,
    rules: Seq[String] = Nil) {
  /** The seed's differential count (what Materialize would arrange). */
  def arrangements: Int = blocks.map(_.cost.arrangements).sum
  /** Blocks for which Spark builds state of its own (None: no physical plan asked for). */
  def builtBlocks: Option[Int] = realized.map(_ => blocks.count(_.realization.exists(_.exists(!_.shared))))
  /** Of the stateful operators Spark builds, those in no block (a finishing ORDER BY's sort and its
   *  shuffle; any it could not attribute: `measure()` lists them). */
  def outsideBlocks: Option[Int] = realized.map(_ - blocks.map(_.realization.getOrElse(Nil).count(!_.shared)).sum)
  def block(name: String): Block = blocks.find(_.name == name).getOrElse(
    throw new NoSuchElementException(s"no block $name in ${blocks.map(_.name).mkString(", ")}"))
}
