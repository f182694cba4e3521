package arrnf.render

import arrnf.model._

/**
 * The seed's text form of an ArrNF program: one header line per block with its cost, then the
 * head and the body, each `[Negate] Unary* Leaf` branch on one line, outermost operator first:
 *
 * {{{
 * [l4.tmp0]  arrangements=1 (Distinct: 1 reduce)  keys=[[#0{c0}]]  spark=[hash aggregate (final)]  rows≈10 (exact)  bytes≈160B  why: ...
 * Distinct keys=[#0{c0}] Project(#0{c0}) Get l3
 * }}}
 *
 * This is the one renderer of the text form: the JSON form carries its output (the program's `text`
 * and each block's `text`), and the Python package prints those. A measured report adds, per block,
 * a `-- measured:` line under the header and, at the end, the run's summary ([[MeasuredText]]).
 */
object TextFormat {
  // Written into one builder, no intermediate strings or sequences: the explain section prints this
  // for every `df.explain()`, and its cost counts against the planning-overhead budget.
  def apply(p: ArrnfProgram): String = apply(p, _ => None, None)

  /** The text form with `measured(b)` as a line under block `b`'s header and `summary` at the end. */
  def apply(p: ArrnfProgram, measured: Block => Option[String], summary: Option[String]): String = {
    val sb = new java.lang.StringBuilder(256 * (p.blocks.size + 1))
    sb.append("-- ArrNF ").append(p.name).append(": ").append(p.blocks.size).append(" blocks, ")
    // What Spark builds is the total a user pays for; the seed's differential count stays beside it.
    p.realized match {
      case Some(n) =>
        sb.append("Spark builds ").append(n).append(" stateful operators")
        // (those of a finishing ORDER BY are in no block: said, so that the blocks' lists add up)
        val outside = p.outsideBlocks.getOrElse(0)
        if (outside > 0) sb.append(": ").append(n - outside).append(" in ").append(p.builtBlocks.getOrElse(0))
          .append(" blocks, ").append(outside).append(" outside any block")
        else sb.append(" in ").append(p.builtBlocks.getOrElse(0)).append(" blocks")
        sb.append(" (differential model: ").append(p.arrangements).append(" arrangements), ")
      case None => sb.append(p.arrangements).append(" arrangements (differential model), ")
    }
    sb.append(p.opaque).append(" opaque")
    if (p.streaming) sb.append(", streaming")
    sb.append('\n')
    p.blocks.foreach { b => sb.append('\n'); block(b, measured(b), sb) }
    if (p.finishing.nonEmpty) {
      sb.append("\n-- finishing: ")
      sepBy(p.finishing.reverse, " ", sb)(u => unary(u, sb))
      sb.append('\n')
    }
    summary.foreach(s => sb.append('\n').append(s).append('\n'))
    sb.toString
  }

  /** One block: header, the measured line if any, head and body, notes; each line ended by a newline. */
  private def block(b: Block, measured: Option[String], sb: java.lang.StringBuilder): Unit = {
    header(b, sb); sb.append('\n')
    measured.foreach(m => sb.append("  -- ").append(m).append('\n'))
    body(b, sb)
    b.notes.foreach(n => sb.append("  -- ").append(n).append('\n'))
  }

  /** One block's text, without the final newline (the JSON form's block `text`). */
  def blockText(b: Block, measured: Option[String] = None): String = {
    val sb = new java.lang.StringBuilder(256)
    block(b, measured, sb)
    sb.setLength(sb.length - 1)
    sb.toString
  }

  private val Units = Seq(1000000000000000000L -> "E", 1000000000000000L -> "P", 1000000000000L -> "T",
    1000000000L -> "G", 1000000L -> "M", 1000L -> "k")

  /** `n` with a decimal unit at any magnitude: 999, 1.0k, 73.4M, 9.2E (rounded half up). */
  def human(n: Long, unit: String): String = {
    if (n < 1000L) return s"$n$unit"
    // (10n + d/2) / d, without overflowing a Long: n = q·d + r
    def tenths(d: Long) = (n / d) * 10 + ((n % d) * 10 + d / 2) / d
    val i = Units.indexWhere(n >= _._1)
    // 999,950 rounds to 1000.0k: that is 1.0M
    val (d, s) = if (i > 0 && tenths(Units(i)._1) >= 10000) Units(i - 1) else Units(i)
    val t = tenths(d)
    s"${t / 10}.${t % 10}$s$unit"
  }

  /** `xs` written by `each`, separated by `sep`. */
  private def sepBy[T](xs: Seq[T], sep: String, sb: java.lang.StringBuilder)(each: T => Unit): Unit = {
    var first = true
    xs.foreach { x => if (!first) sb.append(sep); first = false; each(x) }
  }

  private def commaSeparated(xs: Seq[String], sb: java.lang.StringBuilder): Unit = sepBy(xs, ", ", sb)(x => sb.append(x))

  private def strings(xs: Seq[String], sb: java.lang.StringBuilder): Unit = {
    sb.append('['); commaSeparated(xs, sb); sb.append(']')
  }

  private def header(b: Block, sb: java.lang.StringBuilder): Unit = {
    val c = b.cost
    sb.append('[').append(b.name).append("]  arrangements=").append(c.arrangements).append(" (").append(c.rule).append(')')
    if (c.keys.nonEmpty) { sb.append("  keys="); keySets(c.keys, sb) }
    b.realization.foreach { r =>
      sb.append("  spark=")
      if (r.isEmpty) sb.append("none") else strings(r.map(x => if (x.shared) x.what + " (existing)" else x.what), sb)
    }
    c.rows match {
      case Some(r) => sb.append("  rows≈").append(human(r, "")).append(" (").append(c.source).append(')')
      case None if c.arrangements > 0 =>
        sb.append("  rows=unknown")
        if (c.source.startsWith("unknown: ")) sb.append(" (").append(c.source, 9, c.source.length).append(')')
      case None =>
    }
    c.bytes.foreach(x => sb.append("  bytes≈").append(human(x, "B")))
    if (b.sharing > 1) sb.append("  shared=").append(b.sharing)
    sb.append("  why: ").append(c.why)
  }

  private def keySets(ks: Seq[Seq[String]], sb: java.lang.StringBuilder): Unit = {
    sb.append('[')
    sepBy(ks, ", ", sb)(k => strings(k, sb))
    sb.append(']')
  }

  private def head(h: Head, sb: java.lang.StringBuilder): Unit = {
    def firstKeys(): Unit = strings(h.keys.headOption.getOrElse(Nil), sb)
    h.kind match {
      case HeadKind.ArrangeBy => sb.append("ArrangeBy keys="); keySets(h.keys, sb)
      case HeadKind.Reduce if h.mode.contains(Mode.Window) =>
        sb.append("Reduce window="); strings(h.aggregates.map(_.text), sb)
        sb.append(" keys="); firstKeys()
        sb.append(" order="); strings(h.order, sb)
      case HeadKind.Reduce =>
        sb.append("Reduce keys="); firstKeys()
        sb.append(" aggregates="); strings(h.aggregates.map(_.text), sb)
      case HeadKind.Distinct =>
        sb.append("Distinct keys="); firstKeys()
        h.mode.foreach(m => sb.append(' ').append(m.name))
      case HeadKind.TopK =>
        sb.append("TopK group="); firstKeys()
        sb.append(" order="); strings(h.order, sb)
        h.limit.foreach(l => sb.append(" limit=").append(l))
        h.offset.foreach(o => sb.append(" offset=").append(o))
        h.mode.foreach(m => sb.append(" by=").append(m.name))
      case HeadKind.Threshold =>
        sb.append("Threshold"); h.mode.foreach(m => sb.append(' ').append(m.name))
    }
  }

  private def unary(u: UnaryOp, sb: java.lang.StringBuilder): Unit = {
    sb.append(u.op.name).append('('); commaSeparated(u.args, sb); sb.append(')')
  }

  private def get(g: GetLeaf, sb: java.lang.StringBuilder): Unit = {
    sb.append("Get ").append(g.name)
    g.source match {
      case Source.Cache => sb.append(" (cached: an arrangement kept across queries)")
      case Source.Stream => sb.append(" (stream)")
      case _ =>
    }
  }

  private def leaf(l: Leaf, sb: java.lang.StringBuilder): Unit = l match {
    case c: ConstantLeaf => sb.append("Constant(").append(c.detail).append(')')
    case g: GetLeaf => get(g, sb)
    case j: JoinLeaf =>
      sb.append("Join type=").append(j.joinType)
      if (j.on.nonEmpty) { sb.append(" on=("); commaSeparated(j.on, sb); sb.append(')') }
      j.condition.foreach(c => sb.append(" cond=(").append(c).append(')'))
      j.inputs.foreach { g => sb.append(' '); get(g, sb) }
    case o: OpaqueLeaf =>
      sb.append("Opaque ").append(o.node).append('(').append(o.detail).append(')')
      o.inputs.foreach { g => sb.append(' '); get(g, sb) }
  }

  private def branch(b: Branch, sb: java.lang.StringBuilder): Unit = {
    if (b.negate) sb.append("Negate ")
    b.unary.reverseIterator.foreach { u => unary(u, sb); sb.append(' ') }
    leaf(b.leaf, sb)
  }

  /** The block's head and branches, each line ended by a newline. */
  private def body(b: Block, sb: java.lang.StringBuilder): Unit = b.branches match {
    case Seq(one) =>
      b.head.foreach { h => head(h, sb); sb.append(' ') }
      branch(one, sb); sb.append('\n')
    case many =>
      b.head.foreach { h => head(h, sb); sb.append('\n') }
      var first = true
      many.foreach { br =>
        sb.append(if (first) "Union " else "      "); first = false
        branch(br, sb); sb.append('\n')
      }
  }
}
