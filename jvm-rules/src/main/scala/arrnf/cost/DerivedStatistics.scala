package arrnf.cost

import scala.util.Try

import org.apache.spark.sql.catalyst.expressions.{Add, Alias, And, Attribute, AttributeMap, BinaryComparison, Coalesce, EqualTo, Equality, ExprId, Expression, GreaterThan, GreaterThanOrEqual, In, InSet, IntegerLiteral, IsNotNull, IsNull, LessThan, LessThanOrEqual, Literal, NamedExpression, Not, Or, Rank, RowNumber, ScalarSubquery, WindowExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression
import org.apache.spark.sql.catalyst.planning.ExtractEquiJoinKeys
import org.apache.spark.sql.catalyst.plans.{ExistenceJoin, Inner, LeftAnti, LeftOuter, LeftSemi}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, ColumnStat, Deduplicate, Filter, Join, LeafNode, LogicalPlan, Project, Sample, Statistics, Window, WindowGroupLimit}
import org.apache.spark.sql.catalyst.trees.TreePattern.{EXISTS_SUBQUERY, IN_SUBQUERY, LIST_SUBQUERY}
import org.apache.spark.sql.execution.columnar.InMemoryRelation
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.types.{BooleanType, DateType, IntegerType, LongType, NumericType, TimestampType}

import arrnf.stats.{SketchedColumns, Sketches}

/**
 * What [[Estimator]] adds to Spark's estimation, as functions of statistics: the figures Spark's
 * estimation does not derive (a ROLLUP's, a computed column's, a UNION ALL's columns:
 * [[ComputedColumns]]; semi and anti joins; tests of an aggregate's results: [[AggregateTests]]) and the tests of where it would guess ([[KeptShares]]: what a share of the rows keeps).
 * Mixed into `object Estimator`, whose names callers use.
 */
private[cost] trait DerivedStatistics extends KeptShares with Sources with AggregateTests with ComputedColumns {
  /** Whether a leaf may have column statistics (a sketch, or the catalog's column statistics):
   *  without any under a plan, no filter, join or aggregate above them can be estimated. A quick
   *  test, reading no file listing: whether a sketch is still current is found when estimating. */
  def leafHasColumnStatistics(leaf: LogicalPlan): Boolean = leaf match {
    case r @ LogicalRelation(h: HadoopFsRelation, _, table, _, _) =>
      table.flatMap(_.stats).exists(_.colStats.nonEmpty) || Try(Sketches.taken(h, table)).getOrElse(false) ||
        PrunedPartitions.of(r).isDefined && table.exists(PrunedPartitions.hasCatalogColumns)
    case _ => Try(leaf.stats.attributeStats.nonEmpty).getOrElse(false)
  }

  /** Whether `p`'s rows, estimated as its one input's, may keep that estimate's label: not where they
   *  are only a bound (an aggregate's groups, a sample's or a rank limit's rows: never `exact`). */
  def keepsLabel(p: LogicalPlan): Boolean = p match {
    case _: Aggregate | _: Deduplicate | _: Sample | _: WindowGroupLimit => false
    case _ => true
  }

  def isSemi(j: Join): Boolean = j.joinType match {
    case LeftSemi | LeftAnti | _: ExistenceJoin => true
    case _ => false
  }

  /**
   * A semi or anti join's rows, which Spark does not estimate (it keeps the left side's): an
   * existence join keeps every left row (it adds a flag); a semi join keeps the share of left rows
   * whose key the right side holds, by key containment (the assumption of Spark's inner join
   * estimate: the side with fewer distinct keys has all its keys in the other), the most selective
   * key pair deciding; an anti join the rest. With `domain`, the values a single key is drawn from
   * ([[JoinKeys.semiDomain]]: a dimension's keys), the right side's keys are independent of the
   * left's instead: each left key is found with the share of the domain the right side holds. None
   * without the keys' distinct counts on both sides, or with a condition other than equalities of
   * columns (a NOT IN's NULL test where a key may be NULL, say).
   */
  def semiJoin(join: Join, children: Seq[LogicalPlan], domain: Option[BigInt] = None): Option[Statistics] = {
    val (left, right) = (children.head.stats, children(1).stats)
    // NOT IN's anti join matches a row also where its key comparison is NULL; with no NULL key on
    // either side (the footers' counts), that is the equality alone (TPC-H q16's suppliers).
    def noNulls(a: Attribute) = (left.attributeStats.get(a) ++ right.attributeStats.get(a)).exists(_.nullCount.contains(BigInt(0)))
    val j = join.condition match {
      case Some(Or(e @ EqualTo(l: Attribute, r: Attribute), IsNull(n))) if join.joinType == LeftAnti &&
          n.semanticEquals(e) && noNulls(l) && noNulls(r) => join.copy(condition = Some(e))
      case _ => join
    }
    left.rowCount.flatMap { rows =>
      def scaled(n: BigInt) = Statistics(sizeInBytes = left.sizeInBytes, rowCount = Some(n),
        attributeStats = atMost(left.attributeStats.toSeq, n))
      j.joinType match {
        case _: ExistenceJoin => Some(scaled(rows))
        case LeftSemi | LeftAnti => j match {
          case ExtractEquiJoinKeys(_, leftKeys, rightKeys, None, _, _, _, _) if leftKeys.nonEmpty =>
            // A null-safe key (INTERSECT and EXCEPT compare with <=>) comes as the column with
            // NULL replaced, and whether it is NULL: the first is the column's key, the second
            // adds no test of its own.
            def column(e: Expression): Option[Attribute] = e match {
              case a: Attribute => Some(a)
              case Coalesce(Seq(a: Attribute, _: Literal)) => Some(a)
              case _ => None
            }
            // Per key pair: the left column, the share of its values the right side holds, and the
            // values the join keeps of it.
            val shares = leftKeys.zip(rightKeys).map {
              case (IsNull(_: Attribute), IsNull(_: Attribute)) => Some((None, 1.0, BigInt(0)))
              case (lk, rk) => for {
                l <- column(lk)
                r <- column(rk)
                ln <- left.attributeStats.get(l).flatMap(_.distinctCount)
                rn <- right.attributeStats.get(r).flatMap(_.distinctCount).map(n => right.rowCount.fold(n)(n.min))
              } yield {
                val found = domain.filter(_ > 0 && leftKeys.size == 1).getOrElse(ln)
                val share = if (found == 0) 0.0 else math.min(1.0, rn.toDouble / found.toDouble)
                (Some(l), share, if (domain.isEmpty) (if (j.joinType == LeftSemi) ln.min(rn) else (ln - rn).max(1))
                  else if (j.joinType == LeftSemi) RoundUp(ln.toDouble * share).min(ln) else RoundUp(ln.toDouble * (1 - share)).max(1).min(ln))
              }
            }
            if (shares.exists(_.isEmpty)) None else {
              val share = shares.flatten.map(_._2).min
              val kept = if (j.joinType == LeftSemi) share else 1.0 - share
              val n = RoundUp(BigDecimal(rows) * BigDecimal(kept))
              val keyValues = shares.flatten.collect { case (Some(l), _, values) => l -> values }
              val out = scaled(n)
              Some(out.copy(attributeStats = AttributeMap(out.attributeStats.toSeq.map { case (a, st) =>
                a -> keyValues.find(_._1.exprId == a.exprId).fold(st)(k => st.copy(distinctCount = st.distinctCount.map(_.min(k._2).min(n))))
              })))
            }
          case _ => None
        }
        case _ => None
      }
    }
  }

  /**
   * The rows kept by a filter of existence joins' flags, over `rows` rows: Spark plans `EXISTS (…)
   * OR EXISTS (…)` (TPC-DS q10 and q35) as existence joins, each adding a flag, and a filter of the
   * flags, which its estimation does not cover. A flag is true on the rows its join, taken as a
   * semi join, keeps (`semiRows`; an existence join keeps every row, so each join's left side has
   * the filter's `rows`); flags combine as independent: AND multiplies their shares, OR keeps 1 -
   * the product of 1 - each, NOT 1 - the share (a flag is never NULL). A part that reads no flag
   * keeps its `sampled` share (a test of one sampled table's columns: TPC-DS q45's `substr(ca_zip,
   * 1, 5) IN (…) OR exists`). None where the condition reads no flag of existence joins below the
   * filter (through projections of columns and other existence joins), a part is not told, or a
   * flag's semi join is not estimated.
   * {{{
   *   flag shares 0.6 and 0.3:  a OR b keeps 1 - 0.4 x 0.7 = 0.72,  a AND NOT b keeps 0.6 x 0.7 = 0.42
   * }}}
   */
  def flagged(f: Filter, rows: BigInt, semiRows: Join => Option[BigInt], sampled: Expression => Option[Double]): Option[BigInt] = {
    def joins(p: LogicalPlan): Seq[(ExprId, Join)] = p match {
      case j @ Join(left, _, ExistenceJoin(flag), _, _) => (flag.exprId -> j) +: joins(left)
      case Project(columns, child) if columns.forall(_.isInstanceOf[Attribute]) => joins(child)
      case _ => Nil
    }
    val flags = joins(f.child).toMap
    def flagsOnly(e: Expression) = e.references.forall(a => flags.contains(a.exprId))
    def share(e: Expression): Option[Double] = e match {
      case a: Attribute if flags.contains(a.exprId) => flags.get(a.exprId).flatMap(semiRows).map(n => math.min(1.0, n.toDouble / rows.max(1).toDouble))
      case _ if !e.references.exists(a => flags.contains(a.exprId)) => sampled(e)
      case Not(x) if flagsOnly(x) => share(x).map(1.0 - _)
      case And(l, r) => for (x <- share(l); y <- share(r)) yield x * y
      case Or(l, r) => for (x <- share(l); y <- share(r)) yield 1.0 - (1.0 - x) * (1.0 - y)
      case _ => None
    }
    if (!f.condition.references.exists(a => flags.contains(a.exprId))) None else share(f.condition).map(s => RoundUp(BigDecimal(rows) * BigDecimal(s)).min(rows))
  }

  /**
   * Why Spark's join estimation (`JoinEstimation`) would guess for `j` over `children` (its inputs
   * with their statistics), if it would: it drops equi-join keys without distinct counts, ignores
   * conditions other than equalities of columns (counting a cartesian product); semi and anti
   * joins are [[semiJoin]]'s. None: every key is counted and nothing is ignored.
   */
  def unestimatedJoin(j: Join, children: Seq[LogicalPlan]): Option[String] = {
    // An input without rows: Spark's estimate (its product without key counts, its other side's rows where kept) is exact.
    if (children.exists(c => Try(c.stats.rowCount).toOption.flatten.contains(BigInt(0)))) return None
    j match {
      case ExtractEquiJoinKeys(_, leftKeys, rightKeys, other, _, _, _, _) =>
        val (ls, rs) = (children.head.stats.attributeStats, children(1).stats.attributeStats)
        def counted(e: Expression, m: AttributeMap[ColumnStat]) = e match {
          case a: Attribute => m.get(a).exists(s => s.distinctCount.isDefined && s.nullCount.isDefined)
          case _ => false
        }
        if (!leftKeys.zip(rightKeys).forall { case (l, r) => counted(l, ls) && counted(r, rs) }) Some(NoColumnStatistics)
        else if (other.isDefined) Some(UnestimatedCondition)
        else None
      case _ => if (j.condition.isEmpty) None else Some(UnestimatedCondition)
    }
  }

  /**
   * The anti join a filter keeping a left outer join's unmatched rows is (`WHERE r.k IS NULL`, `r.k`
   * a right key of its equalities: never NULL where a row found its match; TPC-DS q78's sales
   * without returns), which Spark's filter estimation does not cover (it trusts NULL counts only
   * at a leaf). None for any other filter.
   */
  def unmatched(f: Filter): Option[Join] = f.child match {
    case j @ ExtractEquiJoinKeys(LeftOuter, _, rightKeys, None, _, _, _, _) if splitConjunctivePredicates(f.condition).forall {
        case IsNull(a: Attribute) => rightKeys.exists { case k: Attribute => k.exprId == a.exprId; case _ => false }
        case _ => false
      } => Some(j.asInstanceOf[Join].copy(joinType = LeftAnti))
    case _ => None
  }

  /**
   * An inner join on counted keys with another condition Spark's join estimation ignores: the join
   * on its keys alone, filtered by the parts Spark's filter estimation covers over the joined
   * columns ([[estimable]]: tests of values, TPC-H q7's pairs of nations), with the share of rows
   * that each inequality of two counted columns keeps (`a <> b`: all but one in the larger
   * distinct count, as Spark's join estimation takes an equality to keep one; NULLs dropped; TPC-DS
   * q95's orders shipped from two warehouses), and the share of its sides' sampled pairs that each
   * other part keeps (`sampled`: [[arrnf.stats.SampledPairs]]; TPC-DS q72's quantities on hand
   * below those sold). None where another part remains.
   */
  def filteredJoin(j: Join, sampled: Expression => Option[Double]): Option[(LogicalPlan, Double)] = j match {
    case ExtractEquiJoinKeys(Inner, leftKeys, rightKeys, Some(other), _, _, _, _) if leftKeys.nonEmpty =>
      val keyed = j.copy(condition = Some(leftKeys.zip(rightKeys).map { case (l, r) => EqualTo(l, r): Expression }.reduce(And)))
      val out = keyed.stats
      def counts(a: Attribute) = out.attributeStats.get(a).flatMap(s => s.distinctCount.zip(s.nullCount))
      val (unequal, rest) = splitConjunctivePredicates(other).partition {
        case Not(EqualTo(l: Attribute, r: Attribute)) => counts(l).isDefined && counts(r).isDefined
        case _ => false
      }
      val share = unequal.collect { case Not(EqualTo(l: Attribute, r: Attribute)) =>
        val ((dl, nl), (dr, nr)) = (counts(l).get, counts(r).get)
        def nonNull(n: BigInt) = out.rowCount.filter(_ > 0).fold(1.0)(rows => 1.0 - (n.min(rows).toDouble / rows.toDouble))
        (1.0 - 1.0 / dl.max(dr).max(1).toDouble) * nonNull(nl) * nonNull(nr)
      }.product
      val (counted, others) = rest.partition(estimable(_, out.attributeStats, onLeaf = false))
      val byPairs = others.map(sampled)
      Option.when(byPairs.forall(_.isDefined))(counted.reduceOption(And).fold[LogicalPlan](keyed)(Filter(_, keyed)) -> share * byPairs.flatten.product)
    case _ => None
  }

  /**
   * `condition` with each equality of a column to a scalar subquery's value (`d_week_seq = (SELECT
   * d_week_seq FROM date_dim WHERE d_date = ...)`: TPC-DS q6, q14b, q58) made an equality to a value
   * within the column's range (its least; any value for a column without a range): the subquery's
   * value is one the column may hold, unknown while planning, and Spark's estimate of an equality
   * to any value in range is the same (one in the column's distinct count). Likewise a range
   * between two such values that differ by a constant ([[rangeOfSubqueries]]). None where there is
   * no such equality or range, or its column has no distinct count.
   */
  def oneValueOfSubqueries(condition: Expression, stats: AttributeMap[ColumnStat]): Option[Expression] = {
    def value(a: Attribute): Option[Literal] = stats.get(a).filter(_.distinctCount.isDefined)
      .map(s => s.min.map(Literal(_, a.dataType)).getOrElse(Literal.default(a.dataType)))
    val ranged = rangeOfSubqueries(condition, stats)
    var replaced = ranged.isDefined
    val out = ranged.getOrElse(condition).transformUp {
      case e @ EqualTo(a: Attribute, _: ScalarSubquery) => value(a).map { v => replaced = true; EqualTo(a, v) }.getOrElse(e)
      case e @ EqualTo(_: ScalarSubquery, a: Attribute) => value(a).map { v => replaced = true; EqualTo(v, a) }.getOrElse(e)
    }
    Option.when(replaced)(out)
  }

  /**
   * `condition` with each range of an integer column between two scalar subqueries' values that
   * differ by a constant made the same range from the column's least value: TPC-DS q54's
   * `d_month_seq BETWEEN (SELECT DISTINCT d_month_seq + 1 …) AND (SELECT DISTINCT d_month_seq + 3 …)`,
   * two subqueries alike but for the constant added, three months whichever they are (91 days;
   * unknown before). None where there is no such range, or its column has no least value.
   * {{{
   *   x >= (SELECT max(m) + 1 FROM t WHERE y = 3) AND x <= (SELECT max(m) + 3 FROM t WHERE y = 3)
   *   ==>  x >= least AND x <= least + 2
   * }}}
   */
  def rangeOfSubqueries(condition: Expression, stats: AttributeMap[ColumnStat]): Option[Expression] = {
    val conjuncts = splitConjunctivePredicates(condition)
    // (column, lower bound?, subquery) of each conjunct bounding an integer column by a subquery's value
    val bounds = conjuncts.flatMap { c =>
      (c match {
        case GreaterThanOrEqual(a: Attribute, s: ScalarSubquery) => Some((a, true, s))
        case LessThanOrEqual(s: ScalarSubquery, a: Attribute) => Some((a, true, s))
        case LessThanOrEqual(a: Attribute, s: ScalarSubquery) => Some((a, false, s))
        case GreaterThanOrEqual(s: ScalarSubquery, a: Attribute) => Some((a, false, s))
        case _ => None
      }).filter(b => b._1.dataType == IntegerType || b._1.dataType == LongType).map(c -> _)
    }
    val ranges = for {
      (lc, (a, true, lo)) <- bounds
      (hc, (b, false, hi)) <- bounds if a.exprId == b.exprId
      width <- offsetBetween(lo.plan, hi.plan) if width >= 0
      least <- stats.get(a).flatMap(_.min)
    } yield {
      val from = BigInt(least.toString)
      def lit(v: BigInt) = if (a.dataType == IntegerType) Literal(v.toInt) else Literal(v.toLong)
      (lc, hc, And(GreaterThanOrEqual(a, lit(from)), LessThanOrEqual(a, lit(from + width))): Expression)
    }
    ranges.headOption.map { case (lc, hc, range) =>
      (conjuncts.filterNot(c => (c eq lc) || (c eq hc)) :+ range).reduce(And)
    }
  }

  // The integer constants added in `p`'s expressions, in order, and `p` with each made 0.
  private def added(p: LogicalPlan): (Seq[BigInt], LogicalPlan) = {
    val constants = p.collect { case n => n.expressions.flatMap(_.collect {
      case Add(_, Literal(v: Int, IntegerType), _) => BigInt(v)
      case Add(_, Literal(v: Long, LongType), _) => BigInt(v)
    }) }.flatten
    (constants, p.transformAllExpressions {
      case x @ Add(_, Literal(_: Int, IntegerType), _) => x.withNewChildren(Seq(x.left, Literal(0)))
      case x @ Add(_, Literal(_: Long, LongType), _) => x.withNewChildren(Seq(x.left, Literal(0L)))
    })
  }

  /** How much `hi`'s value exceeds `lo`'s, where the two plans are alike but for one integer
   *  constant added (`d_month_seq + 1`, `d_month_seq + 3`). */
  def offsetBetween(lo: LogicalPlan, hi: LogicalPlan): Option[BigInt] = Try {
    val ((a, x), (b, y)) = (added(lo), added(hi))
    if (a.size != b.size || x.canonicalized != y.canonicalized) None
    else a.zip(b).filter { case (u, v) => u != v } match {
      case Seq((u, v)) => Some(v - u)
      case _ => None
    }
  }.toOption.flatten

  /** `below`'s entries (by a child's column) for the columns a projection passes on or renames. */
  def throughProject[T](list: Seq[NamedExpression], below: Map[ExprId, T]): Map[ExprId, T] = list.flatMap {
    case c: Attribute => below.get(c.exprId).map(c.exprId -> _)
    case al @ Alias(c: Attribute, _) => below.get(c.exprId).map(al.exprId -> _)
    case _ => None
  }.toMap

  /**
   * The rows a filter on ranks keeps (`rank() OVER (PARTITION BY g ORDER BY x) <= k`, with ORs and
   * ANDs of such tests: TPC-DS q49's `return_rank <= 10 OR currency_rank <= 10`), which Spark's
   * optimizer makes a rank limit only for one test and Spark's estimation does not estimate: k rows
   * per partition of its window, partitions counted in `in`, the filter's input (ties of `rank` may
   * add a few); an OR the sum of its sides, an AND the fewer; never more than `in`'s rows. A window
   * of one partition keeps k rows also where `in`'s rows are unknown (TPC-DS q49's ten best items by
   * a ratio the query computes). A NULL test not counted beside the ranks keeps no more than its
   * input: the ranks' rows (q44's). None where a part tests anything else, or a window's partitions
   * are not counted.
   */
  def rankKept(f: Filter, in: Statistics): Option[BigInt] = {
    // The ranks computed below the filter, by their column (through projections, filters and windows).
    def ranks(p: LogicalPlan): Map[ExprId, Window] = p match {
      case w: Window => ranks(w.child) ++ w.windowExpressions.collect {
        case al @ Alias(WindowExpression(_: RowNumber | _: Rank, _), _) => al.exprId -> w
      }
      case Project(list, child) => throughProject(list, ranks(child))
      case g: Filter => ranks(g.child)
      case _ => Map.empty
    }
    lazy val rankOf = ranks(f.child)
    def limit(a: Attribute, k: BigInt): Option[BigInt] = rankOf.get(a.exprId).flatMap { w =>
      if (w.partitionSpec.isEmpty) Some(in.rowCount.fold(k.max(0))(_.min(k.max(0))))
      else for (n <- GroupBound.partitions(w.partitionSpec, in); rows <- in.rowCount) yield (n * k.max(0)).min(rows)
    }
    def nullTest(c: Expression): Boolean = splitConjunctivePredicates(c).forall(_.isInstanceOf[IsNotNull])
    def kept(c: Expression): Option[BigInt] = c match {
      case And(l, r) => (kept(l), kept(r)) match {
        case (Some(x), Some(y)) => Some(x.min(y))
        case (None, y) if nullTest(l) => y
        case (x, None) if nullTest(r) => x
        case _ => None
      }
      case Or(l, r) => for (x <- kept(l); y <- kept(r)) yield in.rowCount.fold(x + y)(_.min(x + y))
      case IsNotNull(a: Attribute) if rankOf.contains(a.exprId) => in.rowCount
      case IsNotNull(a: Attribute) => for (rows <- in.rowCount; nulls <- in.attributeStats.get(a).flatMap(_.nullCount)) yield (rows - nulls).max(0)
      case LessThanOrEqual(a: Attribute, IntegerLiteral(k)) => limit(a, k)
      case GreaterThanOrEqual(IntegerLiteral(k), a: Attribute) => limit(a, k)
      case LessThan(a: Attribute, IntegerLiteral(k)) => limit(a, k - 1)
      case GreaterThan(IntegerLiteral(k), a: Attribute) => limit(a, k - 1)
      case _ => None
    }
    // (only a filter that tests a rank: else its NULL tests not counted would keep every row)
    if (f.condition.references.exists(a => rankOf.contains(a.exprId))) kept(f.condition) else None
  }

  /**
   * Why Spark's estimation of `p` gave no rows, its inputs' rows known: columns it needs (a filter's,
   * a join's, a grouping's) have no distinct counts in its inputs (`counted(a, node)`: the estimate
   * of `node` counts `a`'s values). Where one of them is a table's column, or computed from one,
   * without counts: [[NoColumnStatistics]] (the sketch pass or ANALYZE counts them). Where all are
   * values the query computes from counted columns (an aggregate's or a window's results, as
   * TPC-H q18's HAVING sum; a join key such as TPC-DS q24's `upper(ca_country)`): [[ComputedValues]];
   * where a cached relation's columns are missing and no table's: [[CachedColumns]]; where only a table's
   * columns of a type no pass counts (a struct grouped by a field): [[UncountedTypes]].
   */
  def withoutCounts(p: LogicalPlan, counted: (Attribute, LogicalPlan) => Boolean): String = Try {
    // `a`, an output of a child of `n` without counts there: a table's column, or computed from one
    // (`cached`: of a cached relation, whose columns neither the sketch pass nor ANALYZE TABLE counts)
    // (`uncountable`: a table's column of a type no pass counts, [[SketchedColumns.sketchable]])
    def fromTable(a: Attribute, n: LogicalPlan, cached: Boolean = false, uncountable: Boolean = false): Boolean =
      n.children.find(_.outputSet.contains(a)).exists(c => !counted(a, c) && (c match {
        case _: InMemoryRelation => cached
        case _: LeafNode => !cached && uncountable != SketchedColumns.sketchable(a.dataType)
        case _ => c.expressions.collectFirst { case d: Alias if d.exprId == a.exprId => d.child } match {
          case Some(e) if e.exists(x => x.isInstanceOf[AggregateExpression] || x.isInstanceOf[WindowExpression]) => false
          case Some(e) => e.references.exists(fromTable(_, c, cached, uncountable))
          case None => fromTable(a, c, cached, uncountable)
        }
      }))
    // and whether it groups or joins by expressions, which Spark's estimation counts no values of
    val (needed, byExpressions) = p match {
      case a: Aggregate => (a.groupingExpressions.flatMap(_.references), a.groupingExpressions.exists(!_.isInstanceOf[Attribute]))
      case ExtractEquiJoinKeys(_, l, r, _, _, _, _, _) => (p.references.toSeq, (l ++ r).exists(!_.isInstanceOf[Attribute]))
      case _ => (p.references.toSeq, false)
    }
    val missing = needed.filterNot(a => p.children.exists(counted(a, _)))
    if (missing.exists(fromTable(_, p))) NoColumnStatistics
    else if (missing.exists(fromTable(_, p, cached = true))) CachedColumns
    else if (missing.exists(fromTable(_, p, uncountable = true))) UncountedTypes
    else if (missing.nonEmpty || byExpressions) ComputedValues else NoColumnStatistics
  }.getOrElse(NoColumnStatistics)

  /** Whether `condition` tests an IN or EXISTS subquery (a scalar subquery's value is another case):
   *  the expression's tree-pattern bits tell, without a walk. */
  def bySubquery(condition: Expression): Boolean = condition.containsAnyPattern(IN_SUBQUERY, LIST_SUBQUERY, EXISTS_SUBQUERY)

  /**
   * Whether Spark's filter estimation estimates every part of `condition` from `stats` (its
   * `FilterEstimation`). A part it cannot estimate it counts as keeping every row: that is a guess,
   * so such a filter's rows are unknown. NULL checks need the column's NULL count and a leaf below
   * (Spark trusts NULL counts only there); comparisons with a literal need distinct and NULL counts,
   * and numbers, dates and times their range; comparisons of two columns are not estimated (Spark
   * takes a third where their ranges overlap: `evaluateBinaryForTwoColumns`);
   * anything else (LIKE, functions, subqueries) is not estimated.
   */
  def estimable(condition: Expression, stats: AttributeMap[ColumnStat], onLeaf: Boolean): Boolean = {
    def counted(a: Attribute) = stats.get(a).exists(s => s.distinctCount.isDefined && s.nullCount.isDefined)
    def ranged(a: Attribute) = counted(a) && stats.get(a).exists(s => s.min.isDefined && s.max.isDefined) &&
      (a.dataType match {
        case _: NumericType | DateType | TimestampType | BooleanType => true
        case _ => false
      })
    def nulls(a: Attribute) = onLeaf && stats.get(a).exists(_.nullCount.isDefined)
    def all(c: Expression): Boolean = c match {
      case And(l, r) => all(l) && all(r)
      case Or(l, r) => all(l) && all(r)
      case Not(x) => all(x)
      case _: Literal => true
      case IsNull(a: Attribute) => nulls(a)
      case IsNotNull(a: Attribute) => nulls(a)
      case Equality(a: Attribute, _: Literal) => counted(a)
      case Equality(_: Literal, a: Attribute) => counted(a)
      case b: BinaryComparison => (b.left, b.right) match {
        case (a: Attribute, _: Literal) => ranged(a)
        case (_: Literal, a: Attribute) => ranged(a)
        // two columns: Spark's estimate is 0, 1 or a third, by how their ranges overlap (a guess)
        case (_: Attribute, _: Attribute) => false
        case _ => false
      }
      case In(a: Attribute, list) if list.forall(_.isInstanceOf[Literal]) => counted(a)
      case InSet(a: Attribute, _) => counted(a)
      case _ => false
    }
    all(condition)
  }
}
