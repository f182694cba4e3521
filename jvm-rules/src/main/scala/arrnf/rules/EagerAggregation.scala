package arrnf.rules

import scala.util.{Left, Right, Try}

import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Count}
import org.apache.spark.sql.catalyst.plans.Inner
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreeNodeTag
import org.apache.spark.sql.catalyst.trees.TreePattern.{AGGREGATE, JOIN}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.internal.SQLConf

import arrnf.ArrnfConf
import arrnf.catalyst.Effects
import arrnf.cost.{Estimator, UnknownRows}
import arrnf.rules.eager.{JoinGraph, Partial, Produced}
import arrnf.stats.FileRelationSizes

/**
 * Eager aggregation: the ring's product distributes over its sum, so an aggregate over an inner
 * join can aggregate one side first, by its join keys and its grouping columns, and combine the
 * parts after the join (Yan & Larson's "eager group-by"; AGCA's Σ pushed through ⋈):
 *
 *     γ[G; sum(r)](R ⋈k S)  =  γ[G; sum(r')]( γ[k ∪ G_R; r' = sum(r)](R)  ⋈k  S )
 *
 * Where S is not aggregated, each of its rows meets the one pre-aggregated row of its key as it met
 * each row of that group before: nothing needs multiplying. `count` becomes the sum of counts, `min`
 * and `max` the min and max of parts, `avg` a sum over a count; a DISTINCT aggregate stays above the
 * join, its columns added to R's grouping ([[Partial]] states each split and when it is exact).
 * S may be aggregated too, each of its rows then standing for `c` rows, multiplied in:
 *
 *     γ[G; sum(r)](R ⋈k S)  =  γ[G; sum(r' · c)]( γ[k ∪ G_R; r' = sum(r)](R)  ⋈k  γ[k ∪ G_S; c = count(*)](S) )
 *
 * (`spark.arrnf.EagerAggregation.otherSide`: where S's rows are estimated to fall `minReduction`
 * times; S must be one input of the join, its keys binary-stable too).
 *
 * {{{
 *   Aggregate [c_id, d_year], [c_id, d_year, sum(price) AS total#9]
 *   +- Join Inner, (c_sk = ss_customer_sk)
 *      :- customer [c_sk, c_id]
 *      +- Join Inner, (ss_sold_date_sk = d_date_sk)
 *         :- store_sales [ss_customer_sk, ss_sold_date_sk, price]
 *         +- Filter (d_year = 2001)
 *            +- date_dim [d_date_sk, d_year]
 *   =>
 *   Aggregate [c_id, d_year], [c_id, d_year, CAST(sum(part) AS DECIMAL(17,2)) AS total#9]
 *   +- Join Inner, (c_sk = ss_customer_sk)
 *      :- Aggregate [ss_customer_sk, d_year], [ss_customer_sk, d_year, sum(price) AS part]
 *      :  +- Join Inner, (ss_sold_date_sk = d_date_sk)
 *      :     :- store_sales
 *      :     +- Filter (d_year = 2001)
 *      :        +- date_dim
 *      +- customer
 * }}}
 *
 * What the rule recognises: an aggregate grouping by columns, over (column-only projections and
 * filters of) a tree of inner joins without hints, none of whose inputs is empty. The inputs are
 * split in two: R, those the (not DISTINCT) aggregate functions read (and possibly more), joined
 * among themselves; and the others, joined to R's pre-aggregate one by one, each by an equality. R
 * is pre-aggregated by its columns that the grouping, a DISTINCT aggregate, or any condition between
 * R and the others, reads.
 *
 * When the law holds:
 *  - bag semantics and NULLs: the pre-aggregate groups NULL keys together and the join drops (or,
 *    for `<=>`, matches) them as it dropped or matched each row; empty groups do not arise (a group
 *    of the original has at least one joined row), and a global aggregate over no rows gives
 *    NULL sums and 0 counts both ways;
 *  - errors: R's rows are aggregated before they meet the other side, so R's rows that join nothing
 *    are aggregated too. Every aggregate argument and every join condition must be unable to fail
 *    (`Effects.canFail`; the join order changes as well), and each sum is split only where it cannot
 *    overflow on such rows ([[Partial]]); every result keeps its type and nullability;
 *  - collations and floating point: R's grouping columns must be types whose equal values are the
 *    same bytes (no collated strings, no FLOAT/DOUBLE: a pre-aggregate would pick one of several
 *    equal-but-different values); FLOAT/DOUBLE sums are not split;
 *  - non-determinism: every expression is deterministic, and no input may vary (`Effects.canVary`):
 *    the joins are evaluated in another order;
 *  - streaming plans are left alone.
 *
 * Cost: fires only where the pre-aggregate is estimated (rows and distinct counts from the
 * statistics at hand, [[Estimator]]) to reduce R's rows at least `spark.arrnf.EagerAggregation.minReduction`
 * times, and, where Spark would broadcast an input joined after it, where the joins with the other
 * inputs keep at least half of R's rows: when a broadcast join filters R (TPC-DS q77's 30-day date
 * range; measured 0.69× at scale factor 1 when pushed below it), the original aggregates only the
 * rows that survive, in the scan's stage, while the pre-aggregate would read all of R.
 * Where an estimate is unknown it does not fire (unless the setting is 0, for tests). Nor where Spark
 * would broadcast a side of every join below the aggregate, or every input joined after the
 * pre-aggregate (size estimates within `spark.sql.autoBroadcastJoinThreshold`): Spark then
 * aggregates partially right after those joins, in the scan's own stage, and the pre-aggregate would
 * only add a shuffle. It fires only if the split's joins and aggregates make 1.5 times fewer rows
 * than the original's ([[MinFewerRows]]; each is what the next operator reads or shuffles), and of
 * such splits takes the one whose joins read and make, and aggregates make, the fewest rows (a join
 * shuffles an input it reads as it is; an aggregate shuffles only its partial groups), if that
 * saves a tenth of the original's such rows ([[MinSavedShare]]). The splits weighed are R = the
 * inputs the functions read and R = every input but one ([[candidates]]), not all 2^(n-1).
 *
 * Where it runs: in "Pre CBO Rules" (once), after Spark's operator optimization (column pruning,
 * predicate push-down, `RemoveRedundantAggregates`) settled the plan; the aggregates it builds carry
 * [[Tag]] and are not rewritten again, so the rule is idempotent and nothing oscillates.
 *
 * Why it fired or not: the outer aggregate carries the reason in [[Tag]], a declined aggregate in
 * [[DeclinedTag]] (the explain section prints both), logged at INFO and kept in [[status]].
 */
object EagerAggregation extends Rule[LogicalPlan] with Logging {

  /** On the aggregates this rule builds: the reason on the outer one, `pre-aggregate` on the inner. */
  val Tag: TreeNodeTag[String] = TreeNodeTag[String]("arrnf.EagerAggregation")

  /** On an aggregate over a join the rule considered and left alone: why. */
  val DeclinedTag: TreeNodeTag[String] = TreeNodeTag[String]("arrnf.EagerAggregation.declined")

  /** What the rule did in this JVM. */
  val status = new RuleLog

  private val MaxInputs = 10 // inputs beyond which the splits are not enumerated (2^n of them)

  /** How many times fewer rows the chosen split's joins and aggregates must make than the original's. */
  val MinFewerRows = BigDecimal("1.5")

  /** The least share of the rows the original's joins read and make, and its aggregates make
   *  (C_in + C_out), that the chosen split must save. */
  val MinSavedShare = BigDecimal("0.1")

  override def apply(plan: LogicalPlan): LogicalPlan = {
    if (plan.isStreaming || !plan.containsAllPatterns(AGGREGATE, JOIN)) return plan
    FileRelationSizes.put(plan) // the broadcast tests and estimates read them: sized once per listing
    // One estimator for the plan: its inputs' statistics are read once for all its aggregates.
    lazy val estimator = new Estimator()
    plan.transformUpWithPruning(_.containsAllPatterns(AGGREGATE, JOIN)) {
      case a: Aggregate if a.resolved && a.getTagValue(Tag).isEmpty => push(a, estimator).getOrElse(a)
    }
  }

  /** The reasons this rule left in an (optimized) plan: "fired: …" and "declined: …". */
  def reasonsIn(plan: LogicalPlan): Seq[String] = plan.collect {
    case a: Aggregate if a.getTagValue(Tag).exists(_ != PreAggregate) => "fired: " + a.getTagValue(Tag).get
    case a: Aggregate if a.getTagValue(DeclinedTag).isDefined => "declined: " + a.getTagValue(DeclinedTag).get
  }

  private val PreAggregate = "pre-aggregate"
  private[rules] val EmptyInput = "an input has no rows, so the joins make none (Spark removes them in a later batch)"

  /** The other inputs aggregated too: by `keys`, counting their rows in `count`. */
  private final case class Other(keys: Seq[Attribute], count: Attribute, pre: Aggregate, join: LogicalPlan)

  private final case class Split(r: Seq[Int], keys: Seq[Attribute], parts: Map[Expression, Partial], pre: Aggregate,
      rJoin: LogicalPlan, top: LogicalPlan, needed: AttributeSet, cross: Seq[Expression], other: Option[Other] = None)

  private def push(a: Aggregate, estimator: => Estimator): Option[LogicalPlan] = JoinGraph.of(a.child)
    .orElse { JoinGraph.whyNotBelow(a).foreach(declined(a, _)); None }.flatMap { graph =>
    // Said before the law is checked (what most plans cost the rule): an empty input (removed later by
    // PropagateEmptyRelation: 12 of TPC-DS q4's 18 aggregates); no distinct counts, so nothing to weigh.
    val weighable = check(!graph.inputs.exists(_.maxRows.contains(0L)), EmptyInput).flatMap(_ =>
      check(ArrnfConf.eagerMinReduction() == 0 || estimator.hasColumnStatistics(a.child),
        Estimator.NoColumnStatistics.replaceFirst("^unknown: ", "the pre-aggregate's rows are unknown: ")))
    // Without the rows the aggregate reads now no split can be weighed: where the plan's shape tells it, found
    // out before the splits are built (TPC-DS q6, q32, q92 with default broadcast); else estimated in [[choose]].
    def readKnown = UnknownRows.reason(a.child).map(why => Left(unknownWhy(why))).getOrElse(Right(()))
    weighable.flatMap(_ => holds(a, graph, readKnown)).flatMap(choose(a, graph, _, estimator)) match {
      case Right((s, reason)) =>
        val outer = a.copy(
          aggregateExpressions = a.aggregateExpressions.map(_.transformUp {
            case ae: AggregateExpression => s.parts(ae.canonicalized).outerWith(s.other.map(_.count)).get
          }.asInstanceOf[NamedExpression]),
          child = s.top)
        outer.setTagValue(Tag, reason)
        FactorizeUnionOfJoins.carry(a.child, s.top) // (the joins are built anew)
        status.recordFiring(reason); logInfo(s"pyspark-arrnf EagerAggregation fired: $reason")
        Some(outer)
      case Left(why) => declined(a, why); None
    }
  }

  private def declined(a: Aggregate, why: String): Unit = {
    a.setTagValue(DeclinedTag, why); status.recordDecline(why); logInfo(s"pyspark-arrnf EagerAggregation declined: $why")
  }

  private def check(ok: Boolean, why: => String): Either[String, Unit] = if (ok) Right(()) else Left(why)

  /** Why no split can be weighed, if the rows `a` reads now are not estimated: told from the plan
   *  where it can be, with no estimate ([[UnknownRows]]: TPC-H q17, q18, TPC-DS q6, q32, q92). */
  private def unknownRead(a: Aggregate, estimator: Estimator): Option[String] = UnknownRows.reason(a.child)
    .orElse(Some(estimator(a.child)).filter(_.rows.isEmpty).map(_.source)).map(unknownWhy)
  private def unknownWhy(why: String): String = s"the pre-aggregate's rows are unknown ($why)"

  /** Every candidate split of `graph`'s inputs ([[candidates]]) for which the law holds, or why there is none; `readKnown`
   *  (whether the plan's shape leaves the rows read now unknown) is asked just before splits weighed by cost are built. */
  private def holds(a: Aggregate, graph: JoinGraph, readKnown: => Either[String, Unit]): Either[String, Seq[Split]] = {
    val group = a.groupingExpressions.collect { case g: Attribute => g }
    val aggs = a.aggregateExpressions.flatMap(_.collect { case ae: AggregateExpression => ae }).distinctBy(_.canonicalized)
    // R holds what the split functions read; a DISTINCT one reads its values above the join.
    val read = graph.inputsOf(AttributeSet(aggs.filterNot(_.isDistinct).flatMap(_.aggregateFunction.references)))
    val all = graph.inputs.indices
    val cost = ArrnfConf.eagerOtherSide() != "always" && ArrnfConf.eagerMinReduction() != 0
    lazy val rs = candidates(all.size, read, cost)
    lazy val broadcast = all.map(i => !read.contains(i) && broadcastable(graph.inputs(i)))
    // Only the splits [[choose]] may take are built (building each costs two plans): those joining
    // some input Spark would not broadcast after R (R holds what is read: those inputs' sizes are not
    // asked for); every one where the other side is aggregated always or minReduction is 0.
    lazy val worth = rs.filterNot(r => all.diff(r).forall(broadcast))
    for {
      _ <- check(group.size == a.groupingExpressions.size, "it groups by expressions, not columns")
      _ <- check(a.aggregateExpressions.forall(_.deterministic), "a non-deterministic expression")
      _ <- check(graph.inputs.size <= MaxInputs, s"more than $MaxInputs joined inputs")
      // The broadcast tests come before the law's checks that walk the functions, inputs and
      // conditions: with Spark's default broadcast most aggregates over joins of the TPC queries
      // stop here, and the sizes they read are ones Spark's later rules (InjectRuntimeFilter) read too.
      _ <- check(!cost || !everyJoinBroadcast(graph, a.child), everyJoinDecline)
      _ <- check(!(cost && worth.isEmpty && rs.nonEmpty), broadcastDecline(graph, all.diff(rs.head)))
      parts <- aggs.foldLeft[Either[String, Map[Expression, Partial]]](Right(scala.collection.immutable.ListMap.empty)) { (done, ae) =>
        done.flatMap(m => Partial.of(ae).map(p => m + (ae.canonicalized -> p)))
      }
      _ <- check(!graph.inputs.exists(Effects.canVary), "an input may give other rows on another evaluation")
      _ <- graph.conds.find(c => !c.deterministic || Effects.canFail(c))
        .map(c => Left(s"the join condition ${c.sql} may fail or vary")).getOrElse(Right(()))
      _ <- aggs.find(_.aggregateFunction.children.exists(Effects.canFail))
        .map(ae => Left(s"the argument of ${ae.sql} may fail")).getOrElse(Right(()))
      _ <- if (cost && worth.nonEmpty) readKnown else Right(())
      splits = (if (cost) worth else rs).flatMap(r => split(graph, r, group, parts))
      _ <- check(splits.nonEmpty, "no split of the joined inputs where the law holds")
    } yield splits
  }

  /** The choices of R among `n` inputs: each holds the inputs the split functions `read`; chosen by
   *  `cost`, only R = `read` (or one input, where it is empty) and R = every input but one. Of the 52
   *  aggregates the rule fired on (125 TPC queries, broadcast off) 49 took such a split, and weighing
   *  all of up to 2^(n-1) was most of the rule's planning time. */
  private[rules] def candidates(n: Int, read: Set[Int], cost: Boolean): Seq[Seq[Int]] =
    (1 until n).iterator.flatMap(k => (0 until n).combinations(k)).filter { r =>
      read.subsetOf(r.toSet) && (!cost || r.size == 1 || r.size == n - 1 || r.toSet == read)
    }.toSeq

  /** Of the splits that pay, the one whose joins make the fewest rows; with the reason. */
  private def choose(a: Aggregate, graph: JoinGraph, all: Seq[Split], estimator: Estimator): Either[String, (Split, String)] = {
    val minReduction = ArrnfConf.eagerMinReduction()
    def rows(p: LogicalPlan) = Try(estimator(p).rows).toOption.flatten
    def reduces(in: BigInt, out: BigInt) = out > 0 && in > out && BigDecimal(in) / BigDecimal(out) >= minReduction
    def others(s: Split) = graph.inputs.indices.diff(s.r)
    // R is chosen among the splits that join the other inputs as they are; then, for that R, the
    // other inputs are aggregated too where that is estimated to pay by itself (or always, for tests:
    // then among the R whose other side can be aggregated). Estimating only the chosen R's other
    // side keeps planning cheap.
    val otherSide = ArrnfConf.eagerOtherSide()
    lazy val both = all.flatMap(s => aggregatingOthers(graph, s).map(s.r -> _)).toMap
    val splits = if (otherSide == "always" && both.nonEmpty) all.filter(s => both.contains(s.r)) else all
    def withOther(s: Split): Split = otherSide match {
      case "always" => both.getOrElse(s.r, s)
      case "cost" => aggregatingOthers(graph, s).filter(_.other.exists(o =>
        rows(o.join).zip(rows(o.pre)).exists { case (in, out) => reduces(in, out) })).getOrElse(s)
      case _ => s
    }
    def what(s: Split) = s"pre-aggregating ${names(graph, s.r)} by [${s.keys.map(_.name).mkString(", ")}]" +
      s.other.fold("")(o => s" and ${names(graph, others(s))} by [${o.keys.map(_.name).mkString(", ")}] " +
        s"(counting its rows: each part multiplied by that count)" + (for (i <- rows(o.join); p <- rows(o.pre))
          yield s", estimated rows $i → $p (${fmt(BigDecimal(i) / BigDecimal(p.max(1)))}×)").getOrElse(""))
    def removed(s: Split, in: BigInt, out: BigInt) = s"${what(s)}: estimated rows $in → $out " +
      s"(${fmt(BigDecimal(in) / BigDecimal(out))}×) before joining ${names(graph, others(s))}"
    def reason(s: Split, in: BigInt, out: BigInt, read: BigInt) = removed(s, in, out) + s" (the aggregate reads $read rows after the joins)"
    def estimated(ss: Seq[Split]) = ss.flatMap(s => for (in <- rows(s.rJoin); out <- rows(s.pre) if out > 0) yield (s, in, out))
    lazy val read = rows(a.child) // the rows the aggregate reads now, after every join

    // minReduction 0 (tests): the law alone decides; the split removing the most rows where
    // estimated, else the first.
    if (minReduction == 0) {
      val known = if (read.isDefined) estimated(splits) else Nil
      return Right(known.maxByOption { case (_, in, out) => in - out } match {
        case Some((s, in, out)) =>
          val chosen = withOther(s)
          (chosen, reason(chosen, in, out, read.get))
        case None =>
          val chosen = withOther(splits.head)
          (chosen, s"${what(chosen)} (the rows it removes before the joins unknown; minReduction is 0)")
      })
    }

    // Where Spark would broadcast every input joined after the pre-aggregate, it already aggregates
    // partially right after those joins, in the same stage as R's scan: a pre-aggregate would save
    // only cheap hash probes and add a shuffle (measured at scale factor 1, default broadcast: the
    // rule's queries ran 0.95× as a geometric mean before this test). Spark's own size estimate
    // decides its broadcasts, so it decides here; not estimated further.
    val worth = splits.filterNot(s => allBroadcast(graph, others(s)))
    if (worth.isEmpty) return Left(broadcastDecline(graph, others(splits.head)))
    val known = estimated(worth)
    if (known.isEmpty) return Left(unknownRead(a, estimator).getOrElse(
      s"the pre-aggregate's rows are unknown (${Try(estimator(worth.head.pre).source).getOrElse("unknown")})"))
    // No split reduces its input minReduction times: that decides, the rows read now not estimated (the original's
    // join tree: 31% of the rule's samples over the 125 TPC queries with broadcast joins off; 36 aggregates declined so).
    if (!known.exists { case (_, in, out) => reduces(in, out) }) {
      val (s, in, out) = known.maxBy { case (_, in, out) => in - out }
      return Left(s"${removed(s, in, out)}; below spark.arrnf.EagerAggregation.minReduction ($minReduction)")
    }
    if (read.isEmpty) return Left(unknownRead(a, estimator).get)
    // Why a split does not pay, if it does not. When the other inputs filter R (a date range, a
    // selective dimension) in a join Spark broadcasts, the original aggregates only the rows that
    // survive, in the scan's stage, while the pre-aggregate would read all of R. Where none is
    // broadcast, the original's joins shuffle all of R too: the rows read and made decide (below;
    // TPC-DS q74, broadcast off: store_sales alone by customer and date keys ran 1.62×).
    def short(s: Split, in: BigInt, out: BigInt): Option[String] =
      if (!reduces(in, out)) Some(s"below spark.arrnf.EagerAggregation.minReduction ($minReduction)")
      else if (read.get * 2 < in && others(s).exists(i => broadcastable(graph.inputs(i))))
        Some("the joins keep fewer than half of the pre-aggregate's input rows, and Spark would broadcast " +
          "an input joined after it (the original filters them in the scan's stage before aggregating)")
      else None
    // Most removed first: a decline names that one.
    val paying = known.filter { case (s, in, out) => short(s, in, out).isEmpty }.sortBy { case (_, in, out) => out - in }
    if (paying.isEmpty) {
      val (s, in, out) = known.maxBy { case (_, in, out) => in - out }
      return Left(s"${reason(s, in, out, read.get)}; ${short(s, in, out).get}")
    }
    // A split also joins the other inputs in another order, and the rows it removes before the
    // join say nothing of the rows its joins make. Each paying split is weighed as it would be
    // built (its other side aggregated too where that pays by itself), by two counts:
    //  - whether it fires: its joins and aggregates must make [[MinFewerRows]] times fewer rows
    //    than the original's (C_out): a split whose joins make a few fewer rows still adds an
    //    aggregate and its shuffle (broadcast off, scale factor 1: q7, q26, q31 and q63 made
    //    1.07-1.33× fewer and ran 0.92-1.05×; the threshold is fitted on these same queries);
    //  - which one: the fewest rows its joins read and make, and its aggregates make (C_in + C_out).
    //    A join shuffles and sorts what it reads, so an input it reads as it is costs its rows; an
    //    aggregate over it first shuffles only its partial groups (TPC-DS q82, broadcast off: the
    //    split making the fewest rows read 7.4 million rows as they are and ran 0.95-1.07×; the one
    //    reading and making 4.5 million, 1.24-1.47×). Should none's reads be estimated, rows made decide.
    //    The one chosen must save [[MinSavedShare]] of the original's C_in + C_out: where the joins
    //    it avoids are a small part of the rows the original moves, the saving is lost in the
    //    pre-aggregate's own aggregations (broadcast off, scale factor 1: q5, q77, q80 and q31
    //    saved 0.9-8.1% and ran 0.87-1.22× over the recorded runs, 0.97-1.00× as medians; the
    //    queries it still fires on save 19-94%).
    val produced = new Produced(graph, rows, reads = false)
    val moved = new Produced(graph, rows, reads = true)
    val (first, in1, out1) = paying.head
    produced(a.child) match {
      case None => Left(s"${reason(first, in1, out1, read.get)}; the rows the original's joins make are unknown")
      case Some(before) =>
        val weighed = paying.map { case (s, in, out) => val c = withOther(s); (c, in, out, produced(c.top)) }
        val fewer = weighed.collect { case (c, in, out, Some(after)) if BigDecimal(after) * MinFewerRows <= BigDecimal(before) =>
          (c, in, out, after, moved(c.top)) }
        // (asked only where a split makes fewer rows; one unestimated fails where the original's is estimated)
        lazy val original = moved(a.child)
        def saves(cost: Option[BigInt]) = original.forall(o => cost.exists(c => BigDecimal(o - c) >= MinSavedShare * BigDecimal(o)))
        val eligible = fewer.filter(e => saves(e._5))
        def costs(cost: Option[BigInt]) = cost.fold("")(c => s"; its joins read and make and its aggregates make $c rows" +
          original.fold("")(o => s", $o without it"))
        eligible.filter(_._5.isDefined).minByOption(_._5.get).orElse(eligible.minByOption(_._4)) match {
          case Some((chosen, in, out, after, cost)) =>
            Right((chosen, s"${reason(chosen, in, out, read.get)}; the joins and aggregates make $after rows, " +
              s"$before without it" + costs(cost)))
          case None if fewer.nonEmpty =>
            // (only where the original's are estimated: otherwise every split passes)
            val (c, in, out, after, cost) = fewer.minBy(_._5.getOrElse(original.get))
            Left(s"${reason(c, in, out, read.get)}; the joins and aggregates would make $after rows, $before without it" +
              costs(cost) + (if (cost.isEmpty) ": the rows its joins would read are unknown"
                else s": less than ${fmt(MinSavedShare * 100)}% saved, not enough to pay for the pre-aggregate's aggregations"))
          case None =>
            Left(s"${reason(first, in1, out1, read.get)}; " + (weighed.head._4 match {
              case Some(x) => s"joined in the order the split allows, the joins and aggregates would make $x rows, " +
                s"not $MinFewerRows× fewer than the original's $before"
              case None => "the rows the joins would make in the order the split allows are unknown"
            }))
        }
    }
  }

  private def broadcastDecline(graph: JoinGraph, after: Seq[Int]): String =
    s"every input joined after the pre-aggregate (${names(graph, after)}) is small enough for Spark to broadcast " +
      s"(spark.sql.autoBroadcastJoinThreshold, ${SQLConf.get.autoBroadcastJoinThreshold} bytes): it aggregates " +
      "partially right after its broadcast joins, and a pre-aggregate would add a shuffle"

  private def everyJoinDecline: String =
    "Spark broadcasts one side of every join below the aggregate (spark.sql.autoBroadcastJoinThreshold, " +
      s"${SQLConf.get.autoBroadcastJoinThreshold} bytes): the joins run in the stage of the scan they stream, " +
      "where Spark aggregates partially, and a pre-aggregate would add a shuffle"

  /** Whether Spark would broadcast a side of every join of `plan` between `graph`'s inputs: then
   *  they all run in one stage, with no shuffle before the aggregate's. TPC-DS q37 with default
   *  broadcast: every join of the original broadcast its small side (even catalog_sales' item
   *  keys); pre-aggregated, item ⋈ catalog_sales was joined to inventory by a shuffle of
   *  inventory's filtered rows (Spark's size estimate of an aggregate over a join allows no
   *  broadcast): 0.63× measured. */
  private def everyJoinBroadcast(graph: JoinGraph, plan: LogicalPlan): Boolean = {
    // The right side first: in a left-deep tree it is the input just joined (a dimension), and
    // where it is small the left side's statistics (the joins below, the fact table's files) are
    // not asked for at all.
    def go(p: LogicalPlan): Boolean = graph.isInput(p) || (p match {
      case j: Join => (broadcastable(j.right) || broadcastable(j.left)) && go(j.left) && go(j.right)
      case _ => p.children.forall(go)
    })
    SQLConf.get.autoBroadcastJoinThreshold > 0 && go(plan)
  }

  /** Whether Spark would broadcast every one of `inputs`. */
  private def allBroadcast(graph: JoinGraph, inputs: Seq[Int]): Boolean = inputs.forall(i => broadcastable(graph.inputs(i)))

  /** Whether Spark's own size estimate of `p` (the one its JoinSelection reads) is within
   *  `spark.sql.autoBroadcastJoinThreshold`. */
  private def broadcastable(p: LogicalPlan): Boolean = {
    val threshold = SQLConf.get.autoBroadcastJoinThreshold
    threshold > 0 && Try(p.stats.sizeInBytes <= threshold).getOrElse(false)
  }

  /** The plan for one choice R of inputs to pre-aggregate, if the law holds for it: the other
   *  inputs joined to R's pre-aggregate as they are. */
  private def split(graph: JoinGraph, r: Seq[Int], group: Seq[Attribute], parts: Map[Expression, Partial]): Option[Split] = {
    val rSet = r.toSet
    val cross = graph.conds.filter { c =>
      val on = graph.inputsOf(c)
      on.exists(rSet.contains) && !on.subsetOf(rSet)
    }
    val needed = AttributeSet(group) ++ AttributeSet(cross.flatMap(_.references)) ++ AttributeSet(parts.values.flatMap(_.keys))
    val keys = r.flatMap(graph.inputs(_).output).filter(needed.contains)
    for {
      _ <- Option.when(cross.exists(JoinGraph.isEquality) && keys.forall(k => Partial.comparable(k.dataType)))(())
      (rJoin, rest) <- graph.rebuild(r) if rest.isEmpty
      pre = tagged(Aggregate(keys, keys ++ parts.values.toSeq.flatMap(_.inner), rJoin))
      (top, left) <- graph.rebuild(graph.inputs.indices.filterNot(rSet.contains), Some((pre, rSet))) if left.isEmpty
    } yield Split(r, keys, parts, pre, rJoin, top, needed, cross)
  }

  /** `s` with the other side aggregated too, if the law holds for that: by its columns the grouping,
   *  a DISTINCT aggregate or a condition with R reads, counting its rows (every function must carry
   *  multiplicities); then one join with R's. The other side must be one input: several, joined
   *  among themselves before R's rows meet them (two fact tables by customer and item, TPC-DS q25's
   *  shape), can be a far larger join than any of the original's (the gate met one that ran for
   *  half an hour at scale factor 0.01). */
  private def aggregatingOthers(graph: JoinGraph, s: Split): Option[Split] = {
    val o = graph.inputs.indices.filterNot(s.r.contains)
    val oKeys = o.flatMap(graph.inputs(_).output).filter(s.needed.contains)
    for {
      _ <- Option.when(ArrnfConf.eagerOtherSide() != "never" && o.size == 1 &&
        s.parts.values.forall(_.weighted.isDefined) && oKeys.forall(k => Partial.comparable(k.dataType)))(())
      (oJoin, rest) <- graph.rebuild(o) if rest.isEmpty
      count = Alias(Count(Literal(1)).toAggregateExpression(), "arrnf_rows")()
      oPre = tagged(Aggregate(oKeys, oKeys :+ count, oJoin))
    } yield s.copy(top = Join(s.pre, oPre, Inner, s.cross.reduceOption(And), JoinHint.NONE),
      other = Some(Other(oKeys, count.toAttribute, oPre, oJoin)))
  }

  private def tagged(a: Aggregate): Aggregate = { a.setTagValue(Tag, PreAggregate); a }

  private def names(graph: JoinGraph, is: Seq[Int]): String = is.map(i => name(graph.inputs(i))).mkString(" ⋈ ")

  private def name(p: LogicalPlan): String = p.collectLeaves() match {
    case Seq(LogicalRelation(h: HadoopFsRelation, _, table, _, _)) =>
      table.map(_.identifier.table).getOrElse(h.location.rootPaths.headOption.map(_.getName).getOrElse("files"))
    case Seq(leaf) => leaf.nodeName
    case leaves => s"(${leaves.size} inputs)"
  }

  private def fmt(x: BigDecimal): String = x.setScale(1, BigDecimal.RoundingMode.HALF_UP).toString
}
