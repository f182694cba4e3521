package arrnf.rules.eager

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.{Inner, LeftAnti, LeftSemi}
import org.apache.spark.sql.catalyst.plans.logical._

import arrnf.catalyst.Patterns

/**
 * An inner-join tree seen as a graph: its inputs and the conjuncts of its join conditions and of the
 * filters between its joins, all over the inputs' own attributes. Projections inside the tree are
 * looked through only when they list columns (no expression moves when the tree is rebuilt).
 *
 * {{{
 *   Project [a, x, d]                     inputs: A, B, D
 *   +- Join Inner, (b = d_key)            conds:  a_key = b_key, b = d_key
 *      :- Join Inner, (a_key = b_key)
 *      :  :- A
 *      :  +- B
 *      +- D
 * }}}
 */
private[rules] final case class JoinGraph(inputs: IndexedSeq[LogicalPlan], conds: Seq[Expression]) {

  private val prefixes = scala.collection.mutable.HashMap.empty[Vector[Int], LogicalPlan]

  private lazy val inputSet = {
    val set = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap[LogicalPlan, java.lang.Boolean]())
    inputs.foreach(set.add)
    set
  }

  /** Whether `p` is one of the inputs (the node itself, not an equal one). */
  def isInput(p: LogicalPlan): Boolean = inputSet.contains(p)

  /** The inputs whose columns `e` reads. */
  def inputsOf(e: Expression): Set[Int] = {
    val known = inputsRead.get(e)
    if (known != null) known else { val on = inputsOf(e.references); inputsRead.put(e, on); on }
  }

  // The conditions' inputs, asked for at every step of every rebuild.
  private val inputsRead = new java.util.IdentityHashMap[Expression, Set[Int]]()

  def inputsOf(refs: AttributeSet): Set[Int] =
    inputs.indices.filter(i => inputs(i).outputSet.intersect(refs).nonEmpty).toSet

  /**
   * The inputs `chosen` (in their order) joined left-deep, starting from `start` when given (a plan
   * over the columns of the inputs it stands for, `startCovers`), each next input joined by at least one
   * equality with what is built so far, every conjunct placed at the first join that has its
   * columns. None when some input cannot be reached by an equality (a cartesian product).
   */
  def rebuild(chosen: Seq[Int], start: Option[(LogicalPlan, Set[Int])] = None): Option[(LogicalPlan, Seq[Expression])] = {
    // Without a start, the tree after each step depends only on the inputs joined so far, in order:
    // made once, so that choices sharing a prefix share its nodes (and their estimates).
    var order = Vector.empty[Int]
    def step(i: Int)(make: => LogicalPlan): LogicalPlan = {
      order :+= i
      if (start.isEmpty) prefixes.getOrElseUpdate(order, make) else make
    }
    var built: Option[LogicalPlan] = start.map(_._1)
    var covered: Set[Int] = start.map(_._2).getOrElse(Set.empty)
    var pending = chosen.filterNot(covered.contains)
    // A conjunct over no input's columns (`WHERE false`) goes on the first input when there is no start.
    var left = conds.filter { c =>
      val on = inputsOf(c)
      on.subsetOf(covered ++ chosen) && (if (on.isEmpty) start.isEmpty else !on.subsetOf(covered))
    }
    if (built.isEmpty) {
      val first = pending.head
      covered = Set(first)
      pending = pending.tail
      val (here, rest) = left.partition(c => inputsOf(c).subsetOf(covered))
      built = Some(step(first)(filtered(inputs(first), here)))
      left = rest
    }
    while (pending.nonEmpty) {
      val next = pending.find(i => left.exists(c => JoinGraph.isEquality(c) && joins(c, covered, i)))
      if (next.isEmpty) return None
      val i = next.get
      val (here, rest) = left.partition(c => inputsOf(c).subsetOf(covered + i))
      val soFar = built.get
      built = Some(step(i)(Join(soFar, inputs(i), Inner, here.reduceOption(And), JoinHint.NONE)))
      covered += i
      pending = pending.filterNot(_ == i)
      left = rest
    }
    Some((built.get, left))
  }

  // Whether equality `c` joins the inputs `covered` with input `i`.
  private def joins(c: Expression, covered: Set[Int], i: Int): Boolean = {
    val on = inputsOf(c)
    on.contains(i) && on.size >= 2 && (on - i).subsetOf(covered)
  }

  private def filtered(p: LogicalPlan, cs: Seq[Expression]): LogicalPlan =
    cs.reduceOption(And).map(Filter(_, p)).getOrElse(p)
}

private[rules] object JoinGraph {

  /** The graph of an inner-join tree of at least two inputs, if `plan` is one. */
  def of(plan: LogicalPlan): Option[JoinGraph] = flatten(plan).filter(_.inputs.size >= 2)

  /** Why `plan`, which is no inner-join tree, is not one the rule can split, where a join is right
   *  below it (through filters and projections): an outer, semi or anti join, a hint, or values
   *  computed between the aggregate and its joins. None where no join is there to split, and for a
   *  DISTINCT (`distinctOnly`) over a semi or anti join: Spark's own plan of `INTERSECT`/`EXCEPT`,
   *  with nothing to push, which a reason would only make the user wonder about. */
  def whyNotBelow(a: Aggregate): Option[String] =
    whyNot(a.child, distinctOnly = !a.aggregateExpressions.exists(_.exists(_.isInstanceOf[aggregate.AggregateExpression])))

  def whyNot(plan: LogicalPlan, distinctOnly: Boolean = false): Option[String] = plan match {
    case j: Join if j.hint != JoinHint.NONE => Some("its join has a hint")
    case j: Join if distinctOnly && (j.joinType == LeftSemi || j.joinType == LeftAnti) => None
    case j: Join if j.joinType != Inner =>
      Some(s"its join is a ${j.joinType.sql.toLowerCase(java.util.Locale.ROOT)} join (the law is for inner joins)")
    case Filter(_, child) => whyNot(child, distinctOnly)
    case Project(list, child) if list.forall(_.isInstanceOf[Attribute]) => whyNot(child, distinctOnly)
    case Project(_, child) => whyNot(child, distinctOnly).orElse(of(child).map(_ =>
      "it groups by or aggregates values computed between it and its joins, which are not moved"))
    case _ => None
  }

  /** `a = b` or `a <=> b` between two sides. */
  def isEquality(c: Expression): Boolean = c match {
    case EqualTo(l, r) => l.references.nonEmpty && r.references.nonEmpty
    case EqualNullSafe(l, r) => l.references.nonEmpty && r.references.nonEmpty
    case _ => false
  }

  private def flatten(p: LogicalPlan): Option[JoinGraph] = p match {
    case Join(l, r, Inner, cond, JoinHint.NONE) =>
      val gl = flatten(l).getOrElse(JoinGraph(IndexedSeq(l), Nil))
      val gr = flatten(r).getOrElse(JoinGraph(IndexedSeq(r), Nil))
      Some(JoinGraph(gl.inputs ++ gr.inputs, gl.conds ++ gr.conds ++ cond.toSeq.flatMap(Patterns.splitConjuncts)))
    case Filter(c, child) => flatten(child).map(g => g.copy(conds = g.conds ++ Patterns.splitConjuncts(c)))
    case Project(list, child) if list.forall(_.isInstanceOf[Attribute]) => flatten(child)
    case _ => None
  }
}
