package arrnf.normal

/**
 * The seed's text form of an ArrNF program: one header line per block with its cost, then the
 * head and the body, each `[Negate] Unary* Leaf` branch on one line, outermost operator first:
 *
 * {{{
 * [l4.tmp0]  arrangements=1 (Distinct: 1 reduce)  keys=[[#0{c0}]]  rows≈10 (rowCount)  bytes≈420B  why: ...
 * Distinct keys=[#0{c0}] Project(#0{c0}) Get l3
 * }}}
 *
 * The Python package renders the same text from the JSON form (pyspark_arrnf/plan.py); the two are
 * kept equal by tests.
 */
object TextFormat {
  def apply(p: ArrnfProgram): String = {
    val sb = new StringBuilder
    sb ++= s"-- ArrNF ${p.name}: ${p.blocks.size} blocks, ${p.arrangements} arrangements, ${p.opaque} opaque" +
      (if (p.streaming) ", streaming" else "") + "\n"
    p.blocks.foreach { b =>
      sb ++= "\n" ++= header(b) ++= "\n"
      body(b).foreach(l => sb ++= l ++= "\n")
      b.notes.foreach(n => sb ++= s"  -- $n\n")
    }
    if (p.finishing.nonEmpty) sb ++= "\n-- finishing: " ++= p.finishing.reverse.map(unary).mkString(" ") ++= "\n"
    sb.toString
  }

  def human(n: Long, unit: String): String = {
    val steps = Seq((1000000000L, "G"), (1000000L, "M"), (1000L, "k"))
    steps.find(n >= _._1) match {
      case None => s"$n$unit"
      case Some((d, s)) =>
        // (10n + d/2) / d, without overflowing a Long: n = q·d + r
        val tenths = (n / d) * 10 + ((n % d) * 10 + d / 2) / d
        s"${tenths / 10}.${tenths % 10}$s$unit"
    }
  }

  def header(b: Block): String = {
    val c = b.cost
    val parts = Seq(s"[${b.name}]", s"arrangements=${c.arrangements} (${c.rule})") ++
      (if (c.keys.nonEmpty) Seq("keys=" + keySets(c.keys)) else Nil) ++
      c.rows.map(r => s"rows≈${human(r, "")} (${c.source})").toSeq ++
      c.bytes.map(x => s"bytes≈${human(x, "B")}").toSeq ++
      (if (b.sharing > 1) Seq(s"shared=${b.sharing}") else Nil) ++
      Seq(s"why: ${c.why}")
    parts.mkString("  ")
  }

  def keySets(ks: Seq[Seq[String]]): String = ks.map(_.mkString("[", ", ", "]")).mkString("[", ", ", "]")

  def head(h: Head): String = {
    val parts = h.kind match {
      case "ArrangeBy" => Seq("ArrangeBy", "keys=" + keySets(h.keys))
      case "Reduce" if h.mode.contains("window") =>
        Seq("Reduce", "window=" + h.aggregates.map(_.text).mkString("[", ", ", "]"),
          "keys=" + h.keys.headOption.getOrElse(Nil).mkString("[", ", ", "]"), "order=" + h.order.mkString("[", ", ", "]"))
      case "Reduce" =>
        Seq("Reduce", "keys=" + h.keys.headOption.getOrElse(Nil).mkString("[", ", ", "]"),
          "aggregates=" + h.aggregates.map(_.text).mkString("[", ", ", "]"))
      case "Distinct" => Seq("Distinct", "keys=" + h.keys.headOption.getOrElse(Nil).mkString("[", ", ", "]")) ++
        h.mode.toSeq
      case "TopK" => Seq("TopK", "group=" + h.keys.headOption.getOrElse(Nil).mkString("[", ", ", "]"),
        "order=" + h.order.mkString("[", ", ", "]")) ++ h.limit.map(l => s"limit=$l").toSeq ++
        h.offset.map(o => s"offset=$o").toSeq ++ h.mode.map(m => s"by=$m").toSeq
      case "Threshold" => Seq("Threshold") ++ h.mode.toSeq
      case other => Seq(other)
    }
    parts.mkString(" ")
  }

  def unary(u: UnaryOp): String = s"${u.op}(${u.args.mkString(", ")})"

  def get(g: GetLeaf): String = g.source match {
    case "cache" => s"Get ${g.name} (cached: existing arrangement)"
    case "stream" => s"Get ${g.name} (stream)"
    case _ => s"Get ${g.name}"
  }

  def leaf(l: Leaf): String = l match {
    case c: ConstantLeaf => s"Constant(${c.detail})"
    case g: GetLeaf => get(g)
    case j: JoinLeaf =>
      (Seq("Join", s"type=${j.joinType}") ++ (if (j.on.nonEmpty) Seq(j.on.mkString("on=(", ", ", ")")) else Nil) ++
        j.condition.map(c => s"cond=($c)").toSeq ++ j.inputs.map(get)).mkString(" ")
    case o: OpaqueLeaf => (Seq(s"Opaque ${o.node}(${o.detail})") ++ o.inputs.map(get)).mkString(" ")
  }

  def branch(b: Branch): String =
    ((if (b.negate) Seq("Negate") else Nil) ++ b.unary.reverse.map(unary) ++ Seq(leaf(b.leaf))).mkString(" ")

  def body(b: Block): Seq[String] = {
    val hd = b.head.map(head)
    b.branches match {
      case Seq(one) => Seq((hd.toSeq :+ branch(one)).mkString(" "))
      case many =>
        hd.toSeq ++ many.zipWithIndex.map { case (br, i) => (if (i == 0) "Union " else "      ") + branch(br) }
    }
  }
}
