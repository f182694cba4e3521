package arrnf.rules

import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.Inner
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreeNodeTag
import org.apache.spark.sql.catalyst.trees.TreePattern.{JOIN, UNION}

import arrnf.ArrnfConf
import arrnf.catalyst.{Effects, SameResult}
import arrnf.rules.factorize.{FactorizeCost, FactorizeStatus, FlatBranch, Unifier}

/**
 * Polynomial factorization: `(A ⋈ B₁) ∪all … ∪all (A ⋈ Bₙ) = A ⋈ (B₁ ∪all … ∪all Bₙ)`.
 *
 * The product distributes over the bag sum, so a UNION ALL of inner equi-joins that all join the
 * same input A is one join of A with the UNION ALL of the other sides. A is then scanned, exchanged
 * and sorted (or hashed) once instead of n times.
 *
 * {{{
 *   Union                                         Project [k#1, v#2, tag#3]            (old ids kept)
 *   :- Project [k#1, v#2, 'a' AS tag#3]           +- Join Inner, (k#1 = bk#20)
 *   :  +- Join Inner, (k#1 = x#4)                    :- A [k#1]
 *   :     :- A [k#1]                       =>        +- Union
 *   :     +- B1 [x#4, v#2]                              :- Project [x#4 AS bk#20, v#2 AS v#21, 'a' AS tag#22]
 *   +- Project [k#5, w#6, 'b' AS tag#7]                 :  +- B1
 *      +- Join Inner, (k#5 = y#8)                       +- Project [y#8, w#6, 'b' AS tag]
 *         :- A [k#5]                                       +- B2
 *         +- B2 [y#8, w#6]
 * }}}
 *
 * What the rule recognises: each branch is a projection/filter over a chain of inner joins (looked
 * through intermediate projections whose expressions cannot fail). A is one input of that chain, the
 * same subtree in every factored branch by `canonicalized` equality (the analyzer gives repeated
 * subtrees fresh ids, so `==` would never match), A on the left or the right. All conditions that
 * touch A (its join keys and any other conjunct) must be the same in every branch up to the B side's
 * attributes, and so must every output column that uses A's columns (A's columns at the same output
 * positions). Output columns over B alone (constant tags such as TPC-DS channel names included) move
 * into the union branches. Branches without A stay in an outer UNION ALL beside the factored join.
 * A UNION DISTINCT arrives here as an aggregate over a UNION ALL and is factored beneath it.
 *
 * When the law holds:
 *  - bag semantics: holds for UNION ALL over INNER joins (each pair (a, b) is produced once on each
 *    side). NOT for outer joins (NULL padding of unmatched A rows would happen once instead of per
 *    branch), semi or anti joins (not a product): those joins are never flattened;
 *  - NULLs: the join conditions are moved unchanged; a NULL key never matches on either side;
 *  - errors: no expression is evaluated on rows it was not evaluated on before, unless it cannot
 *    raise (attributes, literals, up-casts, comparisons, numeric arithmetic that cannot overflow …,
 *    see `Effects.canFail`; interval arithmetic overflows in every mode, so `b.iv + b.iv` is never
 *    moved onto B's rows that would not have joined). A branch projection like `1 / b.x` stays above the new join, shared by
 *    all branches (it must then be the same expression in every branch) — or the rule does not fire;
 *    conditions kept among the B inputs must likewise be unable to fail;
 *  - non-determinism: every expression of a factored branch must be deterministic, and A must not
 *    vary (`Effects.canVary`: no unseeded sample, non-deterministic expression or RDD-backed input),
 *    since A is evaluated once instead of n times;
 *  - floating point: no arithmetic is reordered;
 *  - collations: the union's columns must compare by their bytes (`Effects.binaryEquality`): under a
 *    case-insensitive or trimming collation `'A '` and `'a'` are one group of a UNION (distinct) or
 *    GROUP BY above, which shows the value of the row it meets first, and the factored join meets
 *    the branches' rows in another order;
 *  - streaming plans are left alone (a stream-stream join's state would change shape).
 *
 * Cost: fires only when A is not broadcast anyway (`sizeInBytes` of A above
 * `spark.sql.autoBroadcastJoinThreshold`) and the estimate saved is at least
 * `spark.arrnf.FactorizeUnionOfJoins.minSaving` (default 0.1) of the union of joins' estimated cost.
 * Spark already shuffles a shared A once (exchange reuse), so the saving is A's sort and merge in
 * every branch but one: a small A (a filtered date dimension beside three fact tables, TPC-DS q14a)
 * saves well under 1% and is left alone; measured at scale factor 1 such rewrites ran no faster.
 * Among several common factors it takes the one that saves most (the seed's heuristic: factor out
 * the term that costs most).
 *
 * Where it runs: in "Pre CBO Rules" (once), after the fixed-point operator batches in which
 * `PushDownLeftSemiAntiJoin` works, and before "Push Down Join Through Union" (once, when enabled),
 * which only pushes a join whose LEFT input is a union into its branches. The new join always has A
 * on the left and the union on the right, and A is not broadcastable, so that rule leaves it alone:
 * nothing oscillates.
 *
 * Why it fired: the new join carries [[Tag]] with the reason (read by `firedIn`, which the explain section prints),
 * the reason is logged at INFO, and [[FactorizeStatus]] counts firings and keeps recent reasons.
 */
object FactorizeUnionOfJoins extends Rule[LogicalPlan] with Logging {

  /** Set on every join this rule builds; the value says why it fired. */
  val Tag: TreeNodeTag[String] = TreeNodeTag[String]("arrnf.FactorizeUnionOfJoins")

  override def apply(plan: LogicalPlan): LogicalPlan = {
    if (plan.isStreaming) return plan
    plan.transformUpWithPruning(_.containsAllPatterns(UNION, JOIN)) {
      case u: Union if !u.byName && !u.allowMissingCol && u.resolved && !u.isStreaming &&
        u.output.forall(a => Effects.binaryEquality(a.dataType)) => factorize(u)
    }
  }

  // Whether this JVM ever tagged a join: until then no plan can hold the tag, and `firedIn`, which
  // every explain section calls, need not walk the plan.
  @volatile private var everTagged = false

  /** The reasons of every factorized join in an (optimized) logical plan. */
  def firedIn(plan: LogicalPlan): java.util.List[String] = {
    import scala.jdk.CollectionConverters._
    if (!everTagged) java.util.Collections.emptyList[String]()
    else plan.collect { case j: Join if j.getTagValue(Tag).isDefined => j.getTagValue(Tag).get }.asJava
  }

  /** Keeps the reasons of `from`'s factorized joins that `to`, a rewrite of `from` building its joins
   *  anew (EagerAggregation's split), lost: on `to`'s first join, so the explain section says both. */
  def carry(from: LogicalPlan, to: LogicalPlan): Unit = if (everTagged) {
    import scala.jdk.CollectionConverters._
    val lost = firedIn(from).asScala.toSeq.diff(firedIn(to).asScala.toSeq)
    if (lost.nonEmpty) to.collectFirst { case j: Join => j }
      .foreach(j => j.setTagValue(Tag, (j.getTagValue(Tag).toSeq ++ lost).mkString("; ")))
  }


  private final case class Candidate(group: Seq[Int], make: () => LogicalPlan, saved: BigInt, aBytes: BigInt, reason: String)

  /** The union with as many groups of branches factored as the cost guard allows. */
  private[rules] def factorize(u: Union): LogicalPlan = {
    val flats: IndexedSeq[Option[FlatBranch]] = u.children.toIndexedSeq.map(FlatBranch.of)
    val children = scala.collection.mutable.ArrayBuffer[Option[LogicalPlan]](u.children.map(Some(_)): _*)
    var available = flats.indices.filter(i => flats(i).isDefined)
    var changed = false
    var done = false
    while (!done && available.size >= 2) {
      best(available.map(i => i -> flats(i).get)) match {
        case Some(c) =>
          children(c.group.head) = Some(c.make())
          logInfo(s"pyspark-arrnf FactorizeUnionOfJoins fired: ${c.reason}")
          FactorizeStatus.recordFiring(c.reason)
          c.group.tail.foreach(i => children(i) = None)
          available = available.filterNot(c.group.contains)
          changed = true
        case None => done = true
      }
    }
    if (!changed) u
    else children.flatten.toSeq match {
      case Seq(only) => only
      case many => u.copy(children = many)
    }
  }

  private def best(branches: Seq[(Int, FlatBranch)]): Option[Candidate] = {
    val cands = for {
      (ref, pos) <- branches.zipWithIndex
      (refIdx, refFlat) = ref
      leafIdx <- refFlat.leaves.indices
      core = FlatBranch.core(refFlat.leaves(leafIdx))
      if !core.isStreaming && core.output.nonEmpty && !Effects.canVary(core)
      members = (refIdx, refFlat, leafIdx) +: branches.drop(pos + 1).flatMap { case (i, f) =>
        val hits = f.leaves.indices.filter(k => SameResult(FlatBranch.core(f.leaves(k)), core))
        if (hits.size == 1) Some((i, f, hits.head)) else None // a self-join of A is ambiguous: skip it
      }
      if members.size >= 2 && !broadcastAnyway(refFlat, core)
      c <- build(members)
    } yield c
    if (cands.isEmpty) None else Some(cands.maxBy(c => (c.saved, c.aBytes)))
  }

  /** One branch split around its copy of A. */
  private final case class Split(
      flat: FlatBranch,
      aCore: LogicalPlan,
      aPos: AttributeMap[Int],
      bAttrs: AttributeSet,
      rest: LogicalPlan,
      aConds: Seq[Expression])

  private def split(flat: FlatBranch, leafIdx: Int): Option[Split] = {
    val aCore = FlatBranch.core(flat.leaves(leafIdx))
    val aSet = flat.leaves(leafIdx).outputSet
    val others = flat.leaves.patch(leafIdx, Nil, 1)
    val (aConds, restConds) = flat.conds.partition(_.references.intersect(aSet).nonEmpty)
    // Conditions among the B inputs may now be evaluated before A is joined: they must not fail.
    if (restConds.exists(Effects.canFail)) return None
    if (!(flat.conds ++ flat.outputs).forall(_.deterministic)) return None
    rebuild(others, restConds).map { rest =>
      Split(flat, aCore, AttributeMap(aCore.output.zipWithIndex), AttributeSet(others.flatMap(_.output)), rest, aConds)
    }
  }

  /** The B inputs joined again, in their order, each join on a condition (never a cross product). */
  private def rebuild(leaves: Seq[LogicalPlan], conds: Seq[Expression]): Option[LogicalPlan] = {
    var pending = conds
    def take(avail: AttributeSet): Seq[Expression] = {
      val (now, later) = pending.partition(_.references.subsetOf(avail)); pending = later; now
    }
    def filtered(cs: Seq[Expression], p: LogicalPlan) = cs.reduceLeftOption(And).fold(p)(Filter(_, p))
    var acc: LogicalPlan = filtered(take(leaves.head.outputSet), leaves.head)
    var remaining = leaves.tail
    while (remaining.nonEmpty) {
      val idx = remaining.indexWhere { l =>
        pending.exists { c =>
          c.references.intersect(l.outputSet).nonEmpty && c.references.intersect(acc.outputSet).nonEmpty &&
            c.references.subsetOf(acc.outputSet ++ l.outputSet)
        }
      }
      if (idx < 0) return None
      val l = remaining(idx)
      remaining = remaining.patch(idx, Nil, 1)
      acc = Join(acc, l, Inner, take(acc.outputSet ++ l.outputSet).reduceLeftOption(And), JoinHint.NONE)
    }
    if (pending.nonEmpty) None else Some(acc)
  }

  private def isEquiAcross(c: Expression, a: AttributeSet, b: AttributeSet): Boolean = c match {
    case EqualTo(x, y) =>
      def side(e: Expression, s: AttributeSet) = e.references.nonEmpty && e.references.subsetOf(s)
      (side(x, a) && side(y, b)) || (side(x, b) && side(y, a))
    case _ => false
  }

  private def build(members0: Seq[(Int, FlatBranch, Int)]): Option[Candidate] = {
    val splits0 = members0.flatMap { case (i, f, k) => split(f, k).map(i -> _) }
    if (splits0.size < 2 || splits0.head._1 != members0.head._1) return None
    val ref = splits0.head._2
    if (!ref.aConds.exists(isEquiAcross(_, ref.aPos.keySet.toSeq.foldLeft(AttributeSet.empty)(_ + _), ref.bAttrs))) {
      return None
    }
    val nCols = ref.flat.outputs.size

    // Drop branches that do not match the reference until every remaining one matches.
    var members = splits0
    var result: Option[(Seq[Int], Seq[(Int, Split, Unifier)])] = None
    while (result.isEmpty && members.size >= 2) {
      val pushed = (0 until nCols).filter { j =>
        members.forall { case (_, s) =>
          val e = s.flat.outputs(j)
          e.references.subsetOf(s.bAttrs) && !Effects.canFail(e)
        }
      }
      val matched = members.map { case (i, s) =>
        val un = new Unifier(ref.aPos, ref.bAttrs, s.aPos, s.bAttrs)
        // Conditions touching A: the same multiset in every branch.
        var unused = s.aConds
        val condsOk = s.aConds.size == ref.aConds.size && ref.aConds.forall { c0 =>
          unused.indexWhere(ci => un.unify(c0, ci)) match {
            case -1 => false
            case k => unused = unused.patch(k, Nil, 1); true
          }
        }
        val colsOk = condsOk && (0 until nCols).filterNot(pushed.contains).forall { j =>
          un.unify(ref.flat.outputs(j), s.flat.outputs(j))
        }
        (i, s, un, colsOk)
      }
      val ok = matched.filter(_._4)
      if (ok.size == members.size) result = Some((pushed, ok.map(m => (m._1, m._2, m._3))))
      else if (!matched.head._4) members = Nil
      else members = ok.map(m => (m._1, m._2))
    }
    result.flatMap { case (pushed, ms) => decide(ref, pushed, ms) }
  }

  /** The reference branch's leaf whose core is A (as it is joined there: with its filters). */
  private def aLeafOf(flat: FlatBranch, aCore: LogicalPlan): LogicalPlan =
    flat.leaves.find(l => FlatBranch.core(l) eq aCore).getOrElse(aCore)

  /** Whether A, as the reference branch joins it, is small enough for Spark to broadcast in every
   *  branch: then there is nothing to save, and it is said before any branch is split and matched
   *  (that costs more than asking A's size: most of the rule's planning time with default broadcast). */
  private def broadcastAnyway(flat: FlatBranch, aCore: LogicalPlan): Boolean = {
    val threshold = conf.autoBroadcastJoinThreshold
    val aLeaf = aLeafOf(flat, aCore)
    FactorizeCost.bytes(aLeaf).filter(_ => FactorizeCost.broadcastable(aLeaf, threshold)) match {
      case Some(bytes) =>
        val reason = s"${describe(aCore)} (${FactorizeCost.human(bytes)}) is broadcast in every branch anyway " +
          s"(spark.sql.autoBroadcastJoinThreshold=$threshold): nothing to save"
        logInfo(s"pyspark-arrnf FactorizeUnionOfJoins declined: $reason")
        FactorizeStatus.recordDecline(reason)
        true
      case None => false
    }
  }

  private def decide(ref: Split, pushed: Seq[Int], ms: Seq[(Int, Split, Unifier)]): Option[Candidate] = {
    val threshold = conf.autoBroadcastJoinThreshold
    val what = describe(ref.aCore)
    // A broadcast A was declined in [[best]], before the branches were split.
    val aBytesOpt = FactorizeCost.bytes(aLeafOf(ms.head._2.flat, ref.aCore))
    val sizes = ms.map { case (_, s, _) => FactorizeCost.bytes(s.rest) }
    if (aBytesOpt.isEmpty || sizes.exists(_.isEmpty)) {
      FactorizeStatus.recordDecline(s"$what: no statistics"); return None
    }
    val aBytes = aBytesOpt.get
    // Build the factored plan first: its union's size decides whether it can be broadcast.
    val slots: Seq[Attribute] = ms.head._3.slots.values.map(_._1).toSeq
    val branches = ms.map { case (_, s, un) =>
      // Union columns get their own names ("_b"): the renaming Project on top is then not a
      // "redundant alias" for RemoveRedundantAliases, which would drop the output ids (and this join's tag).
      val slotCols = slots.map(a0 => Alias(un.slots(a0.exprId)._2, a0.name + "_b")())
      val pushedCols = pushed.map(j => Alias(s.flat.outputs(j), ref.flat.plan.output(j).name + "_b")())
      Project(slotCols ++ pushedCols, s.rest)
    }
    val union = Union(branches)
    val bs = ms.zip(sizes).map { case ((_, s, _), b) => (b.get, FactorizeCost.broadcastable(s.rest, threshold)) }
    val (vanilla, factored) = FactorizeCost.costs(aBytes, bs,
      FactorizeCost.broadcastable(union, threshold), conf.exchangeReuseEnabled)
    val saved = vanilla - factored
    val minSaving = ArrnfConf.factorizeMinSaving(conf)
    if (saved <= 0 || BigDecimal(saved) < BigDecimal(vanilla) * minSaving) {
      val share = if (vanilla > 0) f"${saved.toDouble / vanilla.toDouble * 100}%.1f%%" else "-"
      val reason = s"$what out of ${ms.size} branches: saves too little ($share of the union of joins " +
        s"≈${FactorizeCost.human(vanilla)}, factorized ≈${FactorizeCost.human(factored)}; " +
        s"${ArrnfConf.FactorizeMinSaving}=$minSaving)"
      logInfo(s"pyspark-arrnf FactorizeUnionOfJoins declined: $reason")
      FactorizeStatus.recordDecline(reason)
      return None
    }
    val slotOut: Map[ExprId, Attribute] = slots.zipWithIndex.map { case (a, k) => a.exprId -> union.output(k) }.toMap
    def onTop(e: Expression): Expression = e.transformUp {
      case a: Attribute if slotOut.contains(a.exprId) => slotOut(a.exprId)
    }
    val aUsed = AttributeSet((ref.aConds ++ (0 until ref.flat.outputs.size).filterNot(pushed.contains)
      .map(ref.flat.outputs)).flatMap(_.references)).intersect(ref.aCore.outputSet)
    val aPlan = if (aUsed.size == ref.aCore.output.size) ref.aCore
      else Project(ref.aCore.output.filter(aUsed.contains), ref.aCore)
    val reason = s"$what factored out of ${ms.size} UNION ALL branches: A ≈${FactorizeCost.human(aBytes)}" +
      (if (threshold < 0) ", broadcast joins off" else s" > broadcast threshold $threshold") +
      s"; est. cost ${FactorizeCost.human(vanilla)} -> ${FactorizeCost.human(factored)}"
    val pushedOut = pushed.zipWithIndex.map { case (j, k) => j -> union.output(slots.size + k) }.toMap
    val outputs = ref.flat.plan.output.zipWithIndex.map { case (attr, j) =>
      val e = pushedOut.getOrElse(j, onTop(ref.flat.outputs(j)))
      e match {
        case a: Attribute if a.exprId == attr.exprId => a
        case _ => Alias(e, attr.name)(exprId = attr.exprId, qualifier = attr.qualifier)
      }
    }
    def make(): LogicalPlan = {
      val inner = factorize(union) // the B sides may share a further factor (n-way chains)
      val join = Join(aPlan, inner, Inner, Some(ref.aConds.map(onTop).reduceLeft(And)), JoinHint.NONE)
      join.setTagValue(Tag, reason)
      everTagged = true
      Project(outputs, join)
    }
    Some(Candidate(ms.map(_._1), () => make(), saved, aBytes, reason))
  }

  private def describe(p: LogicalPlan): String = {
    val leaves = p.collectLeaves().map(l => l.simpleString(3).take(60))
    val s = (if (p.children.isEmpty) "" else p.nodeName + " over ") + leaves.mkString(", ")
    s.take(120)
  }
}
