package arrnf.cost

import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, EqualTo, ExprId, Expression, Literal, Or, PredicateHelper}
import org.apache.spark.sql.catalyst.plans.{FullOuter, Inner, LeftOuter, RightOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Deduplicate, Distinct, Except, Expand, Filter, GlobalLimit, Intersect, Join, LeafNode, LocalLimit, LogicalPlan, Project, RepartitionOperation, Sample, Sort, Statistics, UnaryNode, Union, Window, WindowGroupLimit}

import arrnf.stats.Sketches

/**
 * An upper bound on the groups of an aggregate (its input's statistics) that Spark's estimate (the
 * product of the grouping columns' distinct counts) does not see: columns that come from the
 * rows of one subtree over a single table (a dimension, filtered) take at most as many
 * combinations of values as that subtree has rows, however many values each column has. TPC-DS
 * q3 groups by item's brand id and brand, two columns of the same items: their combinations are
 * the items kept, not the product of both columns' distinct counts. Where the table was sampled,
 * its columns' combinations in the sample bound them too ([[Sketches.Sample.combinations]]: item's
 * category and class, about 100 pairs of 10 and 100 values): an estimate, not a bound, as the
 * sample may miss rare combinations. None where a grouping column has no distinct count or no
 * subtree's rows are known.
 *
 * For one [[Estimator]]: `rowsOf` gives the rows it estimated for a subtree, `sampleOf` the sketch
 * pass's sample of a table (a leaf), `statsOf` the statistics it estimated for a subtree; `clustering`
 * tells the combinations of columns whose table's rows come in clusters ([[Clustering.combinations]]).
 */
private[cost] final class GroupBound(rowsOf: LogicalPlan => Option[BigInt], sampleOf: LogicalPlan => Option[Sketches.Sample],
    statsOf: LogicalPlan => Option[Statistics], clustering: Clustering) extends PredicateHelper {
  import GroupBound.Same

  def apply(a: Aggregate, in: Statistics): Option[BigInt] = {
    if (in.rowCount.contains(BigInt(0))) return Some(BigInt(0)) // no rows, no groups (grouped: this is called only then)
    val own = a.child match {
      case e: Expand => bySets(a, e, in).orElse(plain(a, in))
      case _ => plain(a, in)
    }
    byBranches(a).fold(own)(b => Some(own.fold(b)(_.min(b))))
  }

  /**
   * Grouping columns taken from a UNION ALL's columns (through projections, filters and aggregates
   * that group by them): no more groups than the sum of each branch's, each bounded as its own
   * aggregate. TPC-DS q75 groups the sales of three channels by year and four columns of the items
   * of one category: 857 groups measured; Spark multiplies the columns' distinct counts up to the
   * union's rows (163,080). None where a branch's groups are not bounded.
   */
  private def byBranches(a: Aggregate): Option[BigInt] = {
    val groups = a.groupingExpressions.collect { case g: Attribute => g.exprId }
    if (groups.isEmpty || groups.size != a.groupingExpressions.size) return None
    def union(p: LogicalPlan, ids: Seq[ExprId]): Option[(Union, Seq[Int])] = p match {
      case u: Union if !u.byName && !u.allowMissingCol =>
        Some(ids.map(id => u.output.indexWhere(_.exprId == id))).filterNot(_.contains(-1)).map(u -> _)
      case Project(list, child) =>
        val below = ids.map(id => list.collectFirst {
          case c: Attribute if c.exprId == id => c.exprId
          case al @ Alias(c: Attribute, _) if al.exprId == id => c.exprId
        })
        if (below.forall(_.isDefined)) union(child, below.flatten) else None
      case g: Aggregate if ids.forall(id => g.groupingExpressions.exists { case c: Attribute => c.exprId == id; case _ => false }) =>
        union(g.child, ids)
      case _: Filter | _: Sort | _: RepartitionOperation | _: Deduplicate | _: Distinct => union(p.children.head, ids)
      case _ => None
    }
    for {
      (u, at) <- union(a.child, groups)
      bounds = u.children.map { branch =>
        // a branch's constant (its channel's name) is one group
        val constants = branch match {
          case Project(list, _) => list.collect { case al @ Alias(_: Literal, _) => al.exprId }.toSet
          case _ => Set.empty[ExprId]
        }
        val columns = at.map(branch.output(_)).filterNot(c => constants.contains(c.exprId))
        if (columns.isEmpty) Some(BigInt(1))
        else statsOf(branch).filter(_.rowCount.isDefined).flatMap(s => apply(Aggregate(columns, columns, branch), s))
      }
      if bounds.forall(_.isDefined)
    } yield bounds.flatten.sum.max(1)
  }

  /**
   * ROLLUP, CUBE and GROUPING SETS: each projection of the Expand groups by the input columns it
   * keeps (the others NULL, the grouping id a literal), so the groups are the sum of each set's
   * groups. TPC-DS q36's ROLLUP(i_category, i_class): about 100 classes with their category, 10
   * categories and the total (133 measured), not both columns' combinations times the 3 grouping
   * ids (324). None where a projection computes a grouping column or a set's groups are unknown.
   */
  private def bySets(a: Aggregate, e: Expand, in: Statistics): Option[BigInt] = for {
    below <- statsOf(e.child) if below.rowCount.isDefined
    at = a.groupingExpressions.map {
      case g: Attribute => e.output.indexWhere(_.exprId == g.exprId)
      case _ => -1
    }
    if !at.contains(-1) && e.projections.forall(p => at.forall(i => p(i).isInstanceOf[Attribute] || p(i).isInstanceOf[Literal]))
    groups <- e.projections.foldLeft(Option(BigInt(0))) { (sum, p) =>
      val columns = at.map(p(_)).collect { case c: Attribute => c }.distinctBy(_.exprId)
      sum.flatMap(total => (if (columns.isEmpty) Some(BigInt(1)) else plain(Aggregate(columns, columns, e.child), below)).map(total + _))
    }
  } yield groups.min(in.rowCount.getOrElse(groups)).max(1)

  private def plain(a: Aggregate, in: Statistics): Option[BigInt] = {
    val groups = a.groupingExpressions
    val counts = groups.map(e => GroupBound.partitions(Seq(e), in))
    if (groups.isEmpty || in.rowCount.isEmpty || !counts.forall(_.isDefined)) return None
    val from = origins(a.child)
    // The subtree a grouping expression's columns all come from, if one.
    def subtree(e: Expression): Option[LogicalPlan] = {
      val of = e.references.toSeq.map(r => from.get(r.exprId).map(_._1))
      if (of.isEmpty || !of.forall(_.isDefined)) None
      else Some(of.flatten).filter(ts => ts.forall(_ eq ts.head)).map(_.head)
    }
    // The combinations of a table's columns its sample tells (a column computed in the subtree, none):
    // among the sampled rows the subtree's filters keep, where they tell, else among all.
    def sampled(t: LogicalPlan, es: Seq[Expression]): Option[BigInt] = for {
      leaf <- t.collectLeaves().headOption
      sample <- sampleOf(leaf)
      names <- es.foldLeft(Option(Vector.empty[String])) {
        case (Some(ns), c: Attribute) => from.get(c.exprId).flatMap { case (_, base) =>
          tableColumn(t, base).map(o => ns :+ o.name.toLowerCase(java.util.Locale.ROOT)) }
        case _ => None
      }
      where = t.collect { case f: Filter => f.condition }.reduceOption(And)
      n <- where.flatMap(w => sample.combinations(names.distinct, w, leaf.output)).orElse(sample.combinations(names.distinct))
    } yield n
    lazy val extended = a.child.exists {
      case j: Join => j.joinType == LeftOuter || j.joinType == RightOuter || j.joinType == FullOuter
      case _: Expand => true
      case _ => false
    }
    val placed = groups.zip(counts.flatten).map { case (e, n) => (subtree(e), e, n) }
    val bySubtree = placed.collect { case (Some(t), e, n) => (t, e, n) }.groupBy(x => new Same(x._1)).values.toSeq
    val determined = if (extended) Set.empty[Same] else determinedByJoins(a, bySubtree.map(_.head._1), from)
    val parts = bySubtree.map { ts =>
      val product = ts.map(_._3).product
      val t = ts.head._1
      // Columns that determine one another (item's class and category): as many as the sample tells.
      // A NULL-extended row of an outer join, or a ROLLUP's subtotal, holds none of the subtree's
      // rows: one more combination.
      val bySample = if (ts.size > 1) sampled(t, ts.map(_._2)).map(_ + 1) else None
      val byRows = rowsOf(t).map(_ + 1)
      // A unique key of the subtree's rows among them (customer's id): each of its values names one
      // row, so the columns take as many combinations as the key takes values here (the customers
      // of one year's tickets, not every customer).
      val byKey = if (ts.size > 1) ts.collect {
        case (_, c: Attribute, n) if unique(t, from(c.exprId)._2) => n
      }.minOption else None
      // (a row NULL-extended above the subtree, by an outer join or a ROLLUP, is one more)
      val byFixed = fixedBound(t, ts.map(_._2), from).map(_ + (if (extended) 1 else 0))
      // Determined by a grouping column its unique key is joined to (below): one combination per value of that column.
      val byJoinedKey = Option.when(determined.contains(new Same(t)))(BigInt(1))
      (Seq(product) ++ bySample ++ byRows ++ byKey ++ byFixed ++ byJoinedKey).min
    }
    val product = (parts ++ placed.collect { case (None, _, n) => n }).product
    // Columns of one table's clusters (a ticket's customer and date), whole clusters kept; the
    // columns of subtrees determined by others' columns left out (they add no combination).
    lazy val attributes = placed.collect {
      case (t, c: Attribute, _) if !t.exists(s => determined.contains(new Same(s))) => c
    }
    val byClusters = if (groups.forall(_.isInstanceOf[Attribute])) clustering.combinations(a.child, attributes, in.rowCount.get) else None
    Some((Seq(product, in.rowCount.get) ++ byClusters).min.max(1))
  }

  /**
   * The subtrees (by identity) among `subtrees` (each over one table, holding some of `a`'s
   * grouping columns) whose grouping columns are determined by a grouping column of another: a
   * column unique among the subtree's rows (its key) equals that column on every row `a` reads
   * (an inner join's or a filter's equality, not under a UNION, an Expand or an outer join). TPC-H
   * q3 groups by lineitem's order key and its order's date and priority: orders' key equals
   * lineitem's, so the groups are the order keys; TPC-DS q68 groups by a ticket, its address key
   * and the address's city. A determining column's own subtree is not itself determined, so every
   * determined one is counted through another. The caller adds none where an outer join or ROLLUP
   * NULL-extends rows.
   */
  private def determinedByJoins(a: Aggregate, subtrees: Seq[LogicalPlan],
      from: Map[ExprId, (LogicalPlan, ExprId)]): Set[Same] = {
    if (subtrees.isEmpty || a.groupingExpressions.size < 2) return Set.empty
    val pairs = equalities(a.child)
    if (pairs.isEmpty) return Set.empty
    def partners(id: ExprId): Seq[ExprId] = pairs.collect { case (x, y) if x == id => y; case (x, y) if y == id => x }
    // grouping column -> the subtree it comes from (None: computed or of several)
    val grouped = a.groupingExpressions.collect {
      case g: Attribute => g.exprId -> from.get(g.exprId).map(o => new Same(o._1))
    }.toMap
    subtrees.foldLeft(Set.empty[Same]) { (done, t) =>
      val id = new Same(t)
      val by = t.output.exists(u => unique(t, u.exprId) && partners(u.exprId).exists(g => grouped.get(g).exists(owner =>
        !owner.contains(id) && !owner.exists(done.contains))))
      if (by) done + id else done
    }
  }

  /** Column equalities every row of `p` satisfies (pairs of expression ids). */
  private def equalities(p: LogicalPlan): Seq[(ExprId, ExprId)] = {
    def of(c: Expression) = splitConjunctivePredicates(c).collect { case EqualTo(x: Attribute, y: Attribute) => (x.exprId, y.exprId) }
    p match {
      case j: Join if j.joinType == Inner => j.condition.toSeq.flatMap(of) ++ equalities(j.left) ++ equalities(j.right)
      case j: Join if Estimator.isSemi(j) => equalities(j.left)
      case f: Filter => of(f.condition) ++ equalities(f.child)
      case _: Project | _: Sort | _: RepartitionOperation | _: LocalLimit | _: GlobalLimit => equalities(p.children.head)
      case _ => Nil
    }
  }

  /**
   * The combinations of values that the filters of `t` (a subtree over one sampled table) fix
   * columns to (`c = literal`: one value; `c IN (literals)`: as many as the literals), where those
   * columns determine, in the table's sample ([[Sketches.Sample.determines]]), the table's columns
   * that the grouping expressions `es` are computed from. TPC-DS q6 and q54 take the month
   * sequence number of one year and month: one group, where 31 days are kept.
   * {{{
   *   Aggregate [d_month_seq] (Filter (d_year = 2001 AND d_moy = 1) date_dim)  // 1 group
   * }}}
   * Where a filter's conjunct is an OR, the sum of its branches' combinations, each branch fixing
   * some of the columns (below). None where no column is fixed, a grouping expression reads another
   * subtree, or the sample does not tell.
   */
  private def fixedBound(t: LogicalPlan, es: Seq[Expression], from: Map[ExprId, (LogicalPlan, ExprId)]): Option[BigInt] = {
    def name(c: Attribute) = c.name.toLowerCase(java.util.Locale.ROOT)
    // The values each conjunct of a filter (over `child`) fixes a table column to, by its name.
    def fixedBy(child: LogicalPlan, conjuncts: Seq[Expression]): Map[String, Int] = conjuncts.flatMap(Estimator.fixedValues)
      .flatMap { case (c, n) => tableColumn(child, c.exprId).map(_ -> n) }.groupMapReduce(x => name(x._1))(_._2)(_ min _)
    val filters = t.collect { case f: Filter => f }
    lazy val leaf = t.collectLeaves().headOption
    val fixed = filters.flatMap(f => fixedBy(f.child, splitConjunctivePredicates(f.condition)).toSeq).groupMapReduce(_._1)(_._2)(_ min _)
    val read = es.flatMap(_.references.toSeq).map(r => from.get(r.exprId).filter(_._1 eq t).flatMap(o => sourceColumns(t, o._2)))
    lazy val columns = read.flatten.flatten.distinctBy(name)
    val byFixed = for {
      l <- leaf if fixed.nonEmpty && read.forall(_.isDefined)
      sample <- sampleOf(l)
      determined = columns.map(name).filterNot(fixed.contains)
      if determined.isEmpty || sample.determines(fixed.keys.toSeq.sorted, determined.sorted)
    } yield fixed.values.map(BigInt(_)).product
    // An OR of branches that fix some of the columns (TPC-DS q47's `d_year = 1999 OR (d_year = 1998
    // AND d_moy = 12) OR (d_year = 2000 AND d_moy = 1)`): no more than the sum of each branch's
    // combinations, a column a branch does not fix taking its table's values (and NULL): 14, where
    // the columns' counts multiply to 36.
    val byBranches = for {
      l <- leaf if read.forall(_.isDefined) && columns.nonEmpty
      ors = filters.flatMap(f => splitConjunctivePredicates(f.condition).collect { case o: Or => f.child -> o })
      if ors.nonEmpty
      table <- statsOf(l)
      counts <- columns.foldLeft(Option(Vector.empty[(String, BigInt)])) { (found, c) => for {
        f <- found
        s <- table.attributeStats.get(c)
        d <- s.distinctCount
      } yield f :+ (name(c) -> (d + (if (s.nullCount.forall(_ > 0)) 1 else 0))) }
    } yield ors.map { case (child, o) =>
      splitDisjunctivePredicates(o).map { branch =>
        val fixes = fixedBy(child, splitConjunctivePredicates(branch))
        counts.map { case (n, d) => (fixes.get(n).map(BigInt(_)).getOrElse(d) :: fixed.get(n).map(BigInt(_)).toList).min }.product
      }.sum
    }.min
    (byFixed ++ byBranches).minOption
  }

  /** The table columns output column `id` of `p` (a subtree over that table) is computed from,
   *  through renames and, where `computed`, projections of deterministic expressions; None where
   *  one is not a table's column. */
  private def sourceColumns(p: LogicalPlan, id: ExprId, computed: Boolean = true): Option[Seq[Attribute]] = p match {
    case leaf: LeafNode => leaf.output.find(_.exprId == id).map(Seq(_))
    case Project(list, child) => list.find(_.exprId == id).flatMap {
      case c: Attribute => sourceColumns(child, c.exprId, computed)
      case Alias(c: Attribute, _) => sourceColumns(child, c.exprId, computed)
      case al: Alias if computed && al.child.deterministic => al.child.references.toSeq.foldLeft(Option(Seq.empty[Attribute])) {
        (cols, r) => cols.flatMap(cs => sourceColumns(child, r.exprId, computed).map(cs ++ _))
      }
      case _ => None
    }
    case u: UnaryNode if u.child.output.exists(_.exprId == id) => sourceColumns(u.child, id, computed)
    case _ => None
  }

  /** Whether output column `id` of subtree `t` has about as many distinct values as `t` has rows. */
  private def unique(t: LogicalPlan, id: ExprId): Boolean =
    (for {
      rows <- rowsOf(t)
      d <- statsOf(t).flatMap(_.attributeStats.collectFirst { case (c, s) if c.exprId == id => s.distinctCount }.flatten)
    } yield Estimator.nearlyUnique(d, rows)).getOrElse(false)

  /** The table's column that output column `id` of `p` (a subtree over that table) holds, through
   *  renames: None for a computed column. */
  private def tableColumn(p: LogicalPlan, id: ExprId): Option[Attribute] =
    sourceColumns(p, id, computed = false).flatMap(_.headOption)

  /** The subtree over a single table that each output column of `p` is taken from, where one is:
   *  the largest such subtree, whose every output row is one of its rows' columns; with the
   *  expression id of that column in the subtree's output (an alias above it renames it). */
  private def origins(p: LogicalPlan): Map[ExprId, (LogicalPlan, ExprId)] = {
    // (An Expand repeats its input's rows: its columns are traced to its input's.)
    if (leavesUnder(p) == 1 && !p.isInstanceOf[Expand]) return p.output.map(a => a.exprId -> (p, a.exprId)).toMap
    lazy val ids = p.output.map(_.exprId).toSet
    def passed(m: Map[ExprId, (LogicalPlan, ExprId)]) = m.filter { case (id, _) => ids.contains(id) }
    p match {
      case Project(list, child) => Estimator.throughProject(list, origins(child))
      case j: Join if Estimator.isSemi(j) => passed(origins(j.left))
      // ROLLUP, CUBE, GROUPING SETS: a grouping column is its input column or NULL in each projection.
      case e: Expand =>
        val m = origins(e.child)
        val copied = e.output.indices.flatMap { i =>
          val column = e.projections.map(_(i)).collect { case c: Attribute => c.exprId }.distinct
          val rest = e.projections.map(_(i)).forall {
            case c: Attribute => column.headOption.contains(c.exprId)
            case Literal(null, _) => true
            case _ => false
          }
          if (column.size == 1 && rest) m.get(column.head).map(e.output(i).exprId -> _) else None
        }
        passed(m) ++ copied
      case _: Join | _: Filter | _: Aggregate | _: Window | _: WindowGroupLimit | _: Sort | _: RepartitionOperation |
           _: LocalLimit | _: GlobalLimit | _: Sample | _: Deduplicate | _: Distinct | _: Intersect | _: Except =>
        // Columns passed through by expression id hold their input row's values (the left side's
        // for INTERSECT and EXCEPT, whose rows are left rows); a UNION's are not one input's.
        passed(p match {
          case _: Intersect | _: Except => origins(p.children.head)
          case _ => p.children.map(origins).foldLeft(Map.empty[ExprId, (LogicalPlan, ExprId)])(_ ++ _)
        })
      case _ => Map.empty
    }
  }

  private val leafCounts = new java.util.IdentityHashMap[LogicalPlan, Integer]()
  private def leavesUnder(p: LogicalPlan): Int = {
    val known = leafCounts.get(p)
    if (known != null) known
    else {
      val n = if (p.children.isEmpty) 1 else p.children.map(leavesUnder).sum
      leafCounts.put(p, n)
      n
    }
  }
}

private[cost] object GroupBound {
  /** A subtree compared by identity (two equal subtrees of one plan are still two inputs). */
  final class Same(val plan: LogicalPlan) {
    override def equals(o: Any): Boolean = o match {
      case that: Same => that.plan eq plan
      case _ => false
    }
    override def hashCode: Int = System.identityHashCode(plan)
  }

  /** The groups of `exprs` over rows with statistics `in`: the product of their distinct values
   *  (NULL counted as one more where there may be NULLs), if each is counted. */
  def partitions(exprs: Seq[Expression], in: Statistics): Option[BigInt] = {
    val counts = exprs.map { e =>
      val stat = e match {
        case c: Attribute => in.attributeStats.get(c)
        case _ => Estimator.derivedColumns(Seq(Alias(e, "group")()), in).headOption.map(_._2)
      }
      stat.flatMap(s => s.distinctCount.map(d => if (s.nullCount.forall(_ > 0)) d + 1 else d))
    }
    if (counts.forall(_.isDefined)) Some(counts.flatten.product.max(1)) else None
  }
}
