package arrnf.cost

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.spark.sql.arrnf.CboConf
import org.apache.spark.sql.catalyst.expressions.{And, Attribute, AttributeMap, AttributeSet, ExprId, Expression, PredicateHelper}
import org.apache.spark.sql.catalyst.plans.{Inner, LeftSemi}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, ColumnStat, Expand, Filter, Join, LeafNode, LogicalPlan, Offset, Project, RepartitionOperation, Sort, Statistics, Union, Window, WindowGroupLimit}
import org.apache.spark.sql.internal.SQLConf

import arrnf.stats.Sketches

object Estimator extends DerivedStatistics {
  private val spent = new java.util.concurrent.atomic.AtomicLong()

  /** Nanoseconds spent estimating in this JVM (statistics and Spark's estimation): what the
   *  statistics add to explaining a plan, read by bench/accuracy.py. */
  def nanos(): Long = spent.get
}

/** Estimated rows of a subtree and where they come from (`unknown` with no rows). */
final case class Estimate(rows: Option[BigInt], source: String)

/**
 * Row estimates for the nodes of a plan from the best statistics at hand, each labelled with its
 * source, and never a guess: where nothing is known the rows are unknown.
 *
 * Leaves ([[LeafStatistics]]): catalog statistics (`ANALYZE TABLE`), else the exact row count in
 * Parquet footers (`file metadata`), with the columns' distinct counts, NULL counts and ranges of the
 * sketch pass when one was taken on the current files; a cached relation's real size once
 * materialized (`cache`); local rows and ranges exactly (`exact`). Above them, Spark's own
 * cost-based estimation (its filter, join and aggregate estimation over those statistics, as if
 * `spark.sql.cbo.enabled` were on, on a copy of the plan: the user's plan and settings are
 * untouched); it gives no rows where it lacks the column statistics it needs, and its estimates
 * never exceed the product of their inputs' rows.
 */
final class Estimator extends PredicateHelper {
  import Estimator.{NoColumnStatistics, PlanShape, SemiJoin, SubqueryFilter, UnestimatedCondition, UnestimatedFilter}

  private val known = new java.util.IdentityHashMap[LogicalPlan, Estimate]()

  // Each leaf's statistics and sample, read once for this estimator.
  private val leaves = new LeafStatistics

  /** [[Estimator.leafHasColumnStatistics]] of some leaf under `plan`, asked once per leaf (a plan's aggregates share them). */
  def hasColumnStatistics(plan: LogicalPlan): Boolean = plan.collectLeaves().exists(leaf =>
    leafHasStatistics.computeIfAbsent(leaf, l => Estimator.leafHasColumnStatistics(l)))
  private val leafHasStatistics = new java.util.IdentityHashMap[LogicalPlan, java.lang.Boolean]()

  def apply(p: LogicalPlan): Estimate = {
    if (!known.containsKey(p)) {
      val t0 = System.nanoTime()
      Try(estimateTree(p))
      Estimator.spent.addAndGet(System.nanoTime() - t0)
    }
    Option(known.get(p)).getOrElse(Estimate(None, "unknown"))
  }

  // The session's settings with cost-based estimation on (kept while they stay as they were).
  private lazy val cbo = CboConf.of(SQLConf.get)

  // Each node's copy, once, with the columns whose statistics it carries: the blocks of a program
  // are subtrees of one plan, so a node estimated for one block is not copied (nor its statistics
  // computed) again for the next.
  private val copies = new java.util.IdentityHashMap[LogicalPlan, (LogicalPlan, AttributeSet)]()

  /** Estimates every node of `plan` at once (its blocks' subtrees then cost nothing more). */
  def prime(plan: LogicalPlan): Unit = apply(plan)

  private def estimateTree(root: LogicalPlan): Unit = {
    // Only the columns the plan reads need statistics: Spark's estimation updates every column it
    // is given at every filter and join (a fact table's 20 columns where 3 are read).
    val used = readBelow(root) ++ root.outputSet
    SQLConf.withExistingConf(cbo) {
      // Each node of `root` is copied with its statistics leaves; the copy's statistics are Spark's
      // estimates. Its answer per node: rows and source label.
      def copy(p: LogicalPlan): LogicalPlan = {
        // A copy made for another root serves when it carries every column of `p`'s output this
        // root reads (the columns below `p` that `p` itself reads were in that root's set too).
        val done = copies.get(p)
        if (done != null && used.intersect(p.outputSet).subsetOf(done._2)) return done._1
        val c = p match {
          // A dynamic partition pruning filter, decided at run time: estimated without it, labelled so.
          case f: Filter if Estimator.withoutRuntimePruning(f).isDefined => val kept = Estimator.withoutRuntimePruning(f).get
            val c = copy(kept); known.put(f, Estimator.unpruned(known.get(kept))); sourcesBelow.put(f, sourcesBelow.getOrElse(kept, Set.empty[String]) + Estimator.NotPruned); c
          case leaf: LeafNode =>
            val (all, source) = leaves(leaf)
            val stats = all.copy(attributeStats = AttributeMap(all.attributeStats.toSeq.filter(c => used.contains(c._1))))
            note(p, stats.rowCount, source)
            EstimatedLeaf(leaf.output, stats, source)
          case _ =>
            val children = p.children.map(copy)
            val copied = p.withNewChildren(children)
            val below = p.children.flatMap(ch => sourcesBelow.getOrElse(ch, Set.empty[String])).toSet
            sourcesBelow.put(p, below)
            def size: BigInt = Try(copied.stats.sizeInBytes).getOrElse(BigInt(SQLConf.get.defaultSizeInBytes))
            // No estimate: the node's copy becomes a leaf without rows (nothing above it guesses).
            def unknown(why: String): LogicalPlan = {
              note(p, None, unknownBelow(p).getOrElse(why))
              EstimatedLeaf(p.output, Statistics(sizeInBytes = size), "unknown")
            }
            def estimated(rows: Option[BigInt], result: LogicalPlan): LogicalPlan = {
              // A node that keeps its one input's rows (a projection, an alias) keeps its label (not a bound: keepsLabel; nor a share of a sample).
              val kept = p.children match {
                case Seq(only) if rows.isDefined && Estimator.keepsLabel(p) && known.get(only).rows == rows && sourcesBelow.get(p).forall(_ == below) => Some(known.get(only).source)
                case _ => None
              }
              // Rows known from no statistics below are the plan's own (a global aggregate's one row).
              note(p, rows, if (rows.isEmpty) unknownBelow(p).getOrElse(uncounted(p))
                else kept.getOrElse {
                  val sources = sourcesBelow.getOrElse(p, below)
                  if (sources.isEmpty) PlanShape else Estimator.estimateOf(sources)
                })
              result
            }
            // Statistics Spark does not derive, carried by a leaf standing for the node.
            def ours(stats: Statistics): LogicalPlan = estimated(stats.rowCount, EstimatedLeaf(p.output, stats.copy(sizeInBytes = size), ""))
            // Spark's estimate of a node that keeps a share of its inputs' rows, where it scales a
            // column's distinct count down with the rows (`EstimationUtils.updateNdv`: 1,823 dates
            // over 2.9 million rows become 2 in 3,055 of them) for the columns the node does not test
            // (`tested`): those rows are rather a random share, which keeps most values
            // ([[Estimator.distinctIn]]: about 1,480 dates).
            // `caps`: the most distinct values an untested column can keep ([[JoinKeys.rangeCaps]]).
            // `fewer`: rows fewer than Spark's, with the distinct counts of the join keys they keep
            // ([[JoinKeys.independent]]; on several keys, [[Clustering.compositeJoin]]).
            // `tested` on one column of an input (a date key): the rows of that input per
            // independent draw of a column's values ([[Clustering]]: a ticket's rows share it).
            def perDraw(tested: AttributeSet)(a: Attribute): Option[(Double, Attribute)] = p.children.find(_.outputSet.contains(a)).flatMap { side =>
              val keys = tested.filter(side.outputSet.contains).toSeq
              if (keys.size == 1) Try(clustering.rowsPerDraw(side, keys.head, a)).toOption.flatten.filter(_ > 1).map(_ -> keys.head) else None
            }
            // A semi or anti join's statistics, over a dimension's keys where it joins one ([[JoinKeys.semiDomain]]).
            def semiOf(j: Join): Option[Statistics] = {
              val sides = Seq(copy(j.left), copy(j.right))
              Try(Estimator.semiJoin(j, sides, Try(joinKeys.semiDomain(j, sides)).toOption.flatten)).toOption.flatten
            }
            def sampled(copied: LogicalPlan, tested: AttributeSet, children: Seq[LogicalPlan],
                caps: Map[ExprId, BigInt] = Map.empty, fewer: Option[(BigInt, BigInt)] = None): LogicalPlan =
              Try(copied.stats).toOption.filter(_.rowCount.isDefined) match {
                case None => estimated(None, copied)
                case Some(out) =>
                  val spark = out.rowCount.get
                  val n = fewer.map(_._1).filter(_ < spark).getOrElse(spark)
                  var changed = n < spark
                  val ored = copied match {
                    case f: Filter => Try(Estimator.disjunctiveCounts(f.condition, children.head.stats, n)).getOrElse(Map.empty)
                    case _ => Map.empty[ExprId, BigInt]
                  }
                  val columns = out.attributeStats.toSeq.map { case (a, s) =>
                    val fixed = for {
                      _ <- Option.when(!tested.contains(a))(())
                      sparks <- s.distinctCount
                      in <- children.find(_.outputSet.contains(a)).flatMap(c => Try(c.stats).toOption)
                      m <- in.rowCount if n < m
                      d <- in.attributeStats.get(a).flatMap(_.distinctCount)
                      // (a column with about one row per value, a price, keeps its values however rows cluster)
                      better = Option.when(m >= d * 2)(()).flatMap(_ => perDraw(tested)(a)).map { case (r, key) =>
                        // no more rows per cluster than per value
                        Estimator.distinctInClusters(d, Estimator.draws(m, r.min(m.toDouble / d.max(1).toDouble)), n.toDouble / m.toDouble,
                          in.attributeStats.get(key).flatMap(_.distinctCount), n)
                      }.getOrElse(Estimator.distinctIn(d, m, n)) if better > sparks || n < spark
                    } yield s.copy(distinctCount = Some(better))
                    // A column tested only inside an OR: the values its branches keep (Spark scales them down).
                    val kept = ored.get(a.exprId).map(c => s.copy(distinctCount = Some(c))).orElse(fixed).getOrElse(s)
                    val capped = caps.get(a.exprId).filter(c => !tested.contains(a) && kept.distinctCount.exists(_ > c))
                      .map(c => kept.copy(distinctCount = Some(c.min(n).max(1))))
                    // With fewer rows than Spark's: the keys' values they keep, no count above the rows.
                    val scaled = Option.when(n < spark) {
                      val c = capped.getOrElse(kept)
                      c.copy(distinctCount = c.distinctCount.map(d => (if (tested.contains(a)) fewer.get._2.min(d) else d).min(n).max(1)),
                        nullCount = c.nullCount.map(x => (x * n / spark.max(1)).min(n)))
                    }
                    changed ||= fixed.isDefined || capped.isDefined || ored.contains(a.exprId)
                    a -> scaled.orElse(capped).getOrElse(kept)
                  }
                  estimated(Some(n), if (!changed) copied
                    else EstimatedNode(copied, out.copy(rowCount = Some(n), sizeInBytes = (out.sizeInBytes * n / spark.max(1)).max(1),
                      attributeStats = AttributeMap(columns))))
              }
            val in = Try(children.head.stats).toOption
            lazy val sparkEstimates = p match {
              case f: Filter => Try(Estimator.estimable(f.condition, children.head.stats.attributeStats,
                children.head.isInstanceOf[LeafNode])).getOrElse(false)
              case _ => true
            }
            // A filter whose equalities to a scalar subquery's value, made equalities to a value in
            // range ([[Estimator.oneValueOfSubqueries]]), Spark's estimation covers: that filter.
            lazy val subqueryValues = p match {
              case f: Filter => Try {
                val stats = children.head.stats.attributeStats
                Estimator.oneValueOfSubqueries(f.condition, stats)
                  .filter(c => Estimator.estimable(c, stats, children.head.isInstanceOf[LeafNode])).map(Filter(_, children.head))
              }.toOption.flatten
              case _ => None
            }
            lazy val bySample = p match {
              case f: Filter => Try(fromSample(f, in)).toOption.flatten
              case _ => None
            }
            // Where the whole filter keeps too few sampled rows to tell: its tests the sample refutes
            // by the sample (TPC-DS q82's items priced 62 to 92 of 4 manufacturers: 3.4% priced so,
            // not Spark's even 30%; 4 kept, Spark's estimate 22, this one 3).
            lazy val bySampledTests = p match {
              case f: Filter if sparkEstimates => Try(partlySampled(f, in, children.head)).toOption.flatten
              case _ => None
            }
            // A rank limit's rows: k per window partition, where its input's rows and partitions are counted.
            lazy val topK = p match {
              case w: WindowGroupLimit => for (i <- in; m <- i.rowCount; n <- GroupBound.partitions(w.partitionSpec, i))
                yield (n * w.limit).min(m)
              case _ => None
            }
            // Without window partitions and without its input's rows: k rows, as a LIMIT's (the plan's shape).
            lazy val rankLimit = Some(p).collect {
              case w: WindowGroupLimit if w.partitionSpec.isEmpty && !in.exists(_.rowCount.isDefined) => BigInt(w.limit) }
            lazy val filtered = copied match {
              case j: Join => Try(Estimator.filteredJoin(j, samples.pairShare(p))).toOption.flatten
              case _ => None
            }
            lazy val unmatched = p match {
              case f: Filter => Estimator.unmatched(f).flatMap(j => Try(Estimator.semiJoin(j, Seq(copy(j.left), copy(j.right)))).toOption.flatten)
              case _ => None
            }
            // A filter of existence joins' flags (EXISTS … OR EXISTS …): each flag true on its semi join's rows.
            lazy val existence = p match {
              case f: Filter => in.flatMap(_.rowCount).flatMap(m =>
                Try(Estimator.flagged(f, m, j => semiOf(j.copy(joinType = LeftSemi)).flatMap(_.rowCount), samples.tableShare(p))).toOption.flatten)
              case _ => None
            }
            lazy val ranked = p match {
              case f: Filter => in.flatMap(i => Try(Estimator.rankKept(f, i)).toOption.flatten)
              case _ => None
            }
            lazy val aggregateTests = p match {
              case f: Filter => in.flatMap(_.rowCount).flatMap(m => Try(Estimator.aggregateTestsKept(f, m,
                n => Option(copies.get(n)).flatMap(c => Try(c._1.stats).toOption), leaves.sampleOf)).toOption.flatten)
              case _ => None
            }
            // `rows` of its input's: no column with more values or NULLs than that.
            def keeping(rows: BigInt): LogicalPlan = ours(Statistics(sizeInBytes = size, rowCount = Some(rows),
              attributeStats = Estimator.atMost(in.get.attributeStats.toSeq, rows)))
            def fromTheSample: LogicalPlan = {
              sourcesBelow.put(p, below + "sample")
              ours(bySample.get._1.copy(sizeInBytes = size))
            }
            // (UnknownRows tells some of the unknowns below from the plan's shape: a new case here may change its claim.)
            p match {
              // A filter Spark cannot estimate directly over a sampled table: the share of the
              // sample's rows it keeps.
              case _: Filter if !sparkEstimates && bySample.isDefined => fromTheSample
              // Any filter of values over a sampled table, where the sample is the whole table,
              // enough of its rows pass to count (Estimator.MinSampled) or it refutes Spark's
              // estimate (Estimator.refutes: a rare range of a skewed column): Spark's estimation takes
              // columns as independent (TPC-DS q53's item category, class and brand, each determining
              // the one before: Spark keeps 3 of the 934 items) and values as equally frequent
              // (customer_address's gmt_offset is -5 on 36% of its rows; Spark's share of its 6
              // values is 16%).
              case f: Filter if Estimator.testsValues(f.condition) && bySample.exists { case (_, k) =>
                  k.whole || k.kept >= Estimator.MinSampled || (for (s <- Try(copied.stats.rowCount).toOption.flatten;
                    m <- in.flatMap(_.rowCount)) yield Estimator.refutes(k.kept, k.size, s, m)).contains(true) } => fromTheSample
              case f: Filter if Estimator.testsValues(f.condition) && bySampledTests.isDefined =>
                sourcesBelow.put(p, below + "sample")
                sampled(bySampledTests.get, Estimator.valueTested(f.condition), children)
              // An equality to a scalar subquery's one value: as to one value of the column's.
              case _: Filter if !sparkEstimates && subqueryValues.isDefined =>
                sampled(subqueryValues.get, Estimator.valueTested(subqueryValues.get.condition), children)
              // Tests of ranks (Estimator.rankKept): k rows per window partition; of one partition
              // whose rows are unknown, k rows, as a LIMIT's (the plan's shape).
              case _: Filter if !sparkEstimates && ranked.isDefined =>
                if (!in.exists(_.rowCount.isDefined)) sourcesBelow.put(p, Set.empty)
                keeping(ranked.get)
              // A left outer join's unmatched rows: its anti join's.
              case _: Filter if !sparkEstimates && unmatched.isDefined => ours(unmatched.get.copy(sizeInBytes = size))
              case _: Filter if !sparkEstimates && existence.isDefined =>
                if (samples.read(p)) sourcesBelow.put(p, below + "sample")
                keeping(existence.get)
              // NULL and sign tests of an aggregate's results: the groups whose values pass.
              case _: Filter if !sparkEstimates && aggregateTests.isDefined =>
                if (aggregateTests.get._2) sourcesBelow.put(p, below + "sample")
                keeping(aggregateTests.get._1)
              // Spark assumes a predicate it cannot estimate keeps every row: that is no estimate.
              case f: Filter if !sparkEstimates =>
                val counted = Try(f.condition.references.forall(a => children.head.stats.attributeStats.get(a)
                  .exists(_.distinctCount.isDefined))).getOrElse(false)
                unknown(if (Estimator.bySubquery(f.condition)) SubqueryFilter else if (counted) UnestimatedFilter else uncounted(f))
              // Spark keeps a semi or anti join's left side: estimated here by key containment, or
              // over a dimension's keys by independence ([[JoinKeys.semiDomain]]).
              case j: Join if Estimator.isSemi(j) => semiOf(j).map(ours).getOrElse(unknown(SemiJoin))
              // Keys counted and another condition Spark's join estimation ignores, which its
              // filter estimation covers (or `a <> b`): the join on its keys, so filtered.
              case j: Join if unestimated(j, children).contains(UnestimatedCondition) && filtered.isDefined =>
                val (plan, share) = filtered.get
                if (samples.read(p)) sourcesBelow.put(p, below + "sample")
                val kept = if (share == 1.0) plan else Try(plan.stats).toOption.filter(_.rowCount.isDefined).fold(plan)(s => EstimatedNode(plan,
                  s.copy(rowCount = s.rowCount.map(r => RoundUp(BigDecimal(r).toDouble * share)))))
                sampled(kept, AttributeSet(j.condition.toSeq.flatMap(_.references)), children)
              // Spark's join estimation drops keys without distinct counts and ignores other
              // conditions: it would count a cartesian product.
              case j: Join if unestimated(j, children).isDefined => unknown(unestimated(j, children).get)
              // An OFFSET of rows not known (Spark's estimate counts them 0).
              case _: Offset if !in.exists(_.rowCount.isDefined) => unknown(uncounted(p))
              // Nodes that keep their input's rows, which Spark's estimation leaves without a count.
              case _: Window | _: Sort | _: RepartitionOperation if in.exists(_.rowCount.isDefined) =>
                ours(Statistics(sizeInBytes = size, rowCount = in.get.rowCount, attributeStats = in.get.attributeStats))
              // A rank limit per window partition (`rank() ... WHERE rk <= k`, TPC-DS q67's 100 per
              // category), which Spark's estimation passes its input's rows through: k rows per
              // partition (exactly, for row_number; ties may add a few for rank).
              case _: WindowGroupLimit if rankLimit.isDefined =>
                sourcesBelow.put(p, Set.empty)
                ours(Statistics(sizeInBytes = size, rowCount = rankLimit))
              case _: WindowGroupLimit if topK.isDefined => keeping(topK.get)
              // Each input row once per projection (ROLLUP, CUBE, GROUPING SETS).
              case e: Expand if in.exists(_.rowCount.isDefined) =>
                ours(Statistics(sizeInBytes = size, rowCount = in.get.rowCount.map(_ * e.projections.size),
                  attributeStats = Estimator.expandColumns(e, in.get)))
              // Filters and inner joins: Spark's rows, with distinct counts of the columns they do
              // not test taken as a random share of the rows, not scaled down with them.
              case f: Filter => sampled(copied, Estimator.valueTested(f.condition), children)
              case j: Join if j.joinType == Inner =>
                // On several keys: by their combinations, where Spark divides by one key's values.
                def composite = Try(for {
                  l <- children.head.stats.rowCount
                  r <- children(1).stats.rowCount
                  n <- clustering.compositeJoin(j, (l, r))
                } yield (n, n)).toOption.flatten
                sampled(copied, AttributeSet(j.condition.toSeq.flatMap(_.references)), children,
                  (Try(joinKeys.rangeCaps(j, children, used)).getOrElse(Map.empty[ExprId, BigInt]).toSeq ++
                    Try(joinKeys.uniqueKeyCaps(j, children, used)).getOrElse(Map.empty[ExprId, BigInt])).groupMapReduce(_._1)(_._2)(_ min _),
                  Try(joinKeys.independent(j, children)).toOption.flatten.orElse(composite)
                    .orElse(Try(joinKeys.uniqueKeyAndEqualities(j, children)).toOption.flatten))
              // Computed columns, which Spark's estimation drops (their values found in a sample: the label says so).
              case pr: Project if in.exists(_.rowCount.isDefined) =>
                val derived = Try(Estimator.derivedColumns(pr.projectList, in.get, e => leaves.sampledValues(pr, e)
                  .map { n => sourcesBelow.put(p, below + "sample"); n })).getOrElse(Nil)
                Try(copied.stats).toOption.filter(_.rowCount.isDefined) match {
                  case Some(out) if derived.nonEmpty =>
                    estimated(out.rowCount, EstimatedNode(copied, out.copy(attributeStats = AttributeMap(out.attributeStats.toSeq ++ derived))))
                  case out => estimated(out.flatMap(_.rowCount), copied)
                }
              // A UNION ALL's columns, which Spark's estimation counts no values of.
              case u: Union if children.forall(c => Try(c.stats.rowCount).toOption.flatten.isDefined) =>
                val stats = children.map(_.stats)
                val columns = Try(Estimator.unionColumns(u.output, children.map(_.output).zip(stats))).getOrElse(Nil)
                val spark = Try(copied.stats).toOption
                ours(Statistics(sizeInBytes = size, rowCount = Some(stats.map(_.rowCount.get).sum), attributeStats = AttributeMap(
                  columns.map { case (a, c) =>
                    a -> spark.flatMap(_.attributeStats.get(a)).fold(c)(r => c.copy(min = r.min, max = r.max))
                  })))
              // Groups of columns that come from one table's rows: no more than those rows.
              // Groups by computed expressions, which Spark's estimation does not count.
              case a: Aggregate if a.groupingExpressions.nonEmpty =>
                val spark = Try(copied.stats).toOption.filter(_.rowCount.isDefined)
                // expressions of the grouping columns among its results, which Spark's estimation drops
                val computed = Try(Estimator.groupedColumns(a, in.get)).getOrElse(Nil)
                def plus(columns: Seq[(Attribute, ColumnStat)], rows: BigInt) = Estimator.atMost(columns ++ computed, rows)
                (spark, in.flatMap(i => Try(groupBound(a, i)).toOption.flatten)) match {
                  case (Some(out), Some(b)) if b < out.rowCount.get =>
                    ours(out.copy(sizeInBytes = size, rowCount = Some(b), attributeStats = plus(out.attributeStats.toSeq, b)))
                  case (None, Some(b)) =>
                    // the grouping columns passed through keep their statistics, as in Spark's estimate
                    val passed = a.output.flatMap(o => in.get.attributeStats.get(o).map(o -> _))
                    ours(Statistics(sizeInBytes = size, rowCount = Some(b), attributeStats = plus(passed, b)))
                  case (Some(out), _) if computed.nonEmpty =>
                    estimated(out.rowCount, EstimatedNode(copied, out.copy(attributeStats = plus(out.attributeStats.toSeq, out.rowCount.get))))
                  case _ => estimated(spark.flatMap(_.rowCount), copied)
                }
              case _ => estimated(Try(copied.stats.rowCount).toOption.flatten, copied)
            }
        }
        copies.put(p, (c, used))
        c
      }
      copy(root)
    }
  }

  // Shares of tables' samples for tests Spark's estimation does not cover, and the nodes that read them.
  private lazy val samples = new SampledShares(leaf => leaves.sampleOf(leaf))

  private lazy val clustering = new Clustering(leaf => leaves.sampleOf(leaf), leaf => Option(copies.get(leaf)).map(_._1.stats))
  private lazy val joinKeys = new JoinKeys(leaf => leaves.sampleOf(leaf), leaf => Option(copies.get(leaf)).map(_._1.stats))

  private lazy val groupBound = new GroupBound(t => Option(known.get(t)).flatMap(_.rows), leaf => leaves.sampleOf(leaf),
    t => Option(copies.get(t)).flatMap(c => Try(c._1.stats).toOption), clustering)

  // The columns each node and the nodes below it read, once per node: the blocks and choices
  // estimated from one plan share most of their nodes.
  private val reads = new java.util.IdentityHashMap[LogicalPlan, AttributeSet]()
  private def readBelow(p: LogicalPlan): AttributeSet = {
    val known = reads.get(p)
    if (known != null) known
    else {
      val all = p.children.foldLeft(p.references)((set, c) => set ++ readBelow(c))
      reads.put(p, all)
      all
    }
  }

  // Why Spark's join estimation would guess for `j` (a failure to tell counts as a guess), once per join.
  private val unestimatedJoins = new java.util.IdentityHashMap[Join, Option[String]]()
  private def unestimated(j: Join, children: Seq[LogicalPlan]): Option[String] = {
    if (!unestimatedJoins.containsKey(j)) unestimatedJoins.put(j,
      Try(Estimator.unestimatedJoin(j, children)).getOrElse(Some(NoColumnStatistics)).map(w => if (w == NoColumnStatistics) uncounted(j) else w))
    unestimatedJoins.get(j)
  }

  // Why Spark's estimation of `p` gave no rows ([[Estimator.withoutCounts]]), from its copies' counts.
  private def uncounted(p: LogicalPlan): String = Estimator.withoutCounts(p, (a, at) =>
    Option(copies.get(at)).exists(_._1.stats.attributeStats.get(a).exists(_.distinctCount.isDefined)))

  /** Why the rows of one of `p`'s inputs are unknown, if they are: the first reason below. */
  private def unknownBelow(p: LogicalPlan): Option[String] =
    p.children.iterator.map(c => Option(known.get(c))).collectFirst {
      case Some(Estimate(None, why)) if why.startsWith("unknown: ") => why
    }

  private val sourcesBelow = new java.util.IdentityHashMap[LogicalPlan, Set[String]]().asScala // leaf sources, for labels

  private def note(p: LogicalPlan, rows: Option[BigInt], source: String): Unit = {
    if (p.isInstanceOf[LeafNode]) sourcesBelow.put(p, if (source.startsWith("unknown")) Set.empty else Set(source))
    val why = if (source.startsWith("unknown")) Estimator.withStaleSketch(source, sourcesBelow.getOrElse(p, Nil)) else "unknown"
    known.put(p, Estimate(rows, if (rows.isEmpty) why else source))
  }

  /** The statistics of `f`, a filter over a sampled table whose rows `in` states, from the share
   *  of the sample it keeps ([[KeptShares.sampledFilter]]); with that share. */
  private def fromSample(f: Filter, in: Option[Statistics]): Option[(Statistics, Sketches.Kept)] =
    for (sample <- leaves.sampleOf(f.child); stats <- in; m <- stats.rowCount; kept <- sample.share(f.condition, f.child.output))
      yield Estimator.sampledFilter(stats, m, kept, Estimator.valueTested(f.condition)) -> kept

  /** `f` as its other conjuncts (Spark's estimate) keeping the share of the sample that its tests
   *  ([[Estimator.testsOf]]) whose share refutes Spark's keep, taken as independent (Spark's
   *  estimation over the sampled rows would scale down the distinct counts an IN list is a share
   *  of). None where no test, or every one, is refuted: the whole filter's share then decides. */
  private def partlySampled(f: Filter, in: Option[Statistics], child: LogicalPlan): Option[LogicalPlan] = {
    val tests = Estimator.testsOf(f.condition)
    def refuted(t: Expression, sample: Sketches.Sample, m: BigInt) = (for (k <- sample.share(t, f.child.output);
      s <- Filter(t, child).stats.rowCount) yield Estimator.refutes(k.kept, k.size, s, m)).contains(true)
    for {
      sample <- leaves.sampleOf(f.child) if tests.size > 1
      m <- in.flatMap(_.rowCount)
      (byTests, others) = tests.partition(t => refuted(t.reduce(And), sample, m))
      if byTests.nonEmpty && others.nonEmpty
      kept <- sample.share(byTests.flatten.reduce(And), f.child.output) if !kept.whole
      rest = Filter(splitConjunctivePredicates(f.condition).filterNot(byTests.flatten.contains).reduce(And), child)
      r <- rest.stats.rowCount
    } yield EstimatedNode(rest, Estimator.sampledFilter(rest.stats, r, kept, AttributeSet(byTests.flatten.flatMap(_.references))))
  }
}
