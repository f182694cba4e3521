package arrnf.stats

import java.util.concurrent.ConcurrentHashMap

import scala.util.Try

import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, BoundReference, Expression, Literal, SubqueryExpression, UnsafeProjection, UnsafeRow, UserDefinedExpression}
import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.plans.logical.ColumnStat
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.functions.{approx_count_distinct, col, count, lit, max, min}
import org.apache.spark.sql.types._

import arrnf.stats.FileFacts.FileKey

/**
 * The explicit sketch pass: per column of a file relation, its distinct count (HyperLogLog, Spark's
 * own `approx_count_distinct`), NULL count and, for numbers, dates and timestamps, its minimum and
 * maximum; with the row count; and a uniform sample of [[SampleRows]] rows (the whole table where it
 * has no more), for filters Spark's estimation does not cover ([[Sample.share]]) and tests of an
 * aggregate's results (the values of its argument, [[Sample.signs]]). One aggregate job
 * and one sampling job per table, run only when asked
 * (`pyspark_arrnf.statistics(spark, tables)`, `arrnf stats`). Kept in this JVM keyed by the
 * relation's root paths, with the files it was taken on: once a file changed the sketch is stale
 * and no longer used (the estimate says so).
 */
object Sketches {
  final case class Sketch(files: Seq[FileKey], rows: Long, columns: Map[String, ColumnStat], sample: Sample)

  /** A number's value as a double (a decimal's too); None for anything else. */
  def number(v: Any): Option[Double] = v match {
    case d: Decimal => Some(d.toDouble)
    case n: java.lang.Number => Some(n.doubleValue)
    case _ => None
  }

  /** Rows sampled per table: a filter keeping one row in 100 is seen on about 20 of them, and
   *  planning evaluates a filter on every one (10,000 made an IN list of 400 zip codes cost 35 ms). */
  val SampleRows = 2000

  /** Sampled pairs of rows on one combination of columns below which its rows are taken as
   *  independent ([[Sample.rowsPerCombination]]): clusters of 12 rows among 2.9 million give about 8
   *  such pairs in 2,000 rows; rows without clusters about none (3 or more by chance: 1 in 60 tables of 400,000 rows, 20,000 customers and 100 days; 4 or more: 1 in 500). */
  val MinCollisions = 4

  /** Combinations of the determining columns seen on two sampled rows or more, below which the
   *  sample does not tell that they determine others ([[Sample.determines]]): on combinations seen
   *  once, any column is one value each. */
  val MinRepeats = 10

  /** Table rows per sampled row up to which [[guaranteed]] estimates combinations the sample does
   *  not cover: its error is within √10, about 3.2×, either way. */
  val MaxGuaranteedRatio = 10

  /**
   * Charikar, Chaudhuri, Motwani and Narasayya's guaranteed-error estimate (GEE, PODS 2000) of the
   * distinct values of a table from a uniform sample holding 1 in `ratio` of its rows, with `d`
   * distinct values of which `f1` are seen once: `√ratio · f1 + (d − f1)`. A value seen once stands
   * for between one and `ratio` values of the table; GEE takes their geometric mean, so its error is
   * within `√ratio` whatever the distribution. TPC-DS item (18,000 rows, 2,000 sampled): its
   * categories, classes and brands, 1,271 for 952 (Chao's estimate, wanting a sample that covers
   * them, tells none); the brands of q89's items, 66 for 51.
   * {{{
   *   guaranteed(35, 15, 9.0) == 65
   * }}}
   */
  def guaranteed(d: Int, f1: Int, ratio: Double): BigInt =
    BigInt(math.ceil(math.sqrt(ratio) * f1 + (d - f1)).toLong) // (stats does not depend on cost: no RoundUp)

  /** What a filter keeps of a sample: `kept` of its `size` rows (all the table's rows where
   *  `whole`), and per column the filter reads (lower-case name), the share of the sample's distinct
   *  values of that column found among the kept rows. */
  final case class Kept(kept: Int, size: Int, whole: Boolean, distinctShare: Map[String, Double]) {
    /** The share of the table kept: exact where the sample is the whole table, else at least half a
     *  sampled row's worth (as [[arrnf.cost.KeptShares.sampledFilter]] counts rows). */
    def share: Double = (if (whole) kept.toDouble else math.max(kept.toDouble, 0.5)) / math.max(size, 1)
  }

  /** A number's values on a sample's `size` rows ([[Sample.signs]]): `nulls` NULL, `below`, `zero`
   *  and `above` 0; the `mean` and standard deviation `sd` of those not NULL. */
  final case class Signs(size: Int, nulls: Int, below: Int, zero: Int, above: Int, mean: Double, sd: Double)

  /** Rows drawn uniformly (a fixed seed) from a table of `of` rows, by lower-case column name. */
  final class Sample(val names: IndexedSeq[String], val types: IndexedSeq[DataType], val rows: IndexedSeq[InternalRow], val of: Long) {
    def whole: Boolean = rows.size.toLong == of

    // Answers by the condition bound to the sample's columns (no expression ids: a query planned
    // again asks the same question).
    private val answers = new ConcurrentHashMap[(Expression, Seq[Int]), Option[Kept]]()

    /**
     * What `condition` over `output` (the sampled table's columns) keeps of the sample; None where
     * it cannot be told here: a column not sampled or of another type, a non-deterministic
     * condition, a subquery, or an error evaluating it (then the query decides, not the estimate).
     * The distinct shares are of the columns the condition reads and of `also` (columns of
     * `output` it does not read; one not sampled is left out).
     */
    def share(condition: Expression, output: Seq[Attribute], also: Seq[Attribute] = Nil): Option[Kept] = {
      val ours = output.map(_.exprId).toSet
      val extra = also.filter(a => ours.contains(a.exprId)).flatMap(at).distinct.sorted
      bind(condition, output).flatMap(b => cached(answers, (b.canonicalized, extra))(Try(evaluate(b, extra)).toOption))
    }

    /** The sample's position of column `a` (by lower-case name), where it was sampled with `a`'s type. */
    def at(a: Attribute): Option[Int] = Some(names.indexOf(a.name.toLowerCase(java.util.Locale.ROOT)))
      .filter(i => i >= 0 && types(i) == a.dataType)

    // `condition` over `output` bound to the sample's columns; None where it cannot be evaluated here.
    private def bind(condition: Expression, output: Seq[Attribute]): Option[Expression] = {
      // (a user's function is not run on the driver while Spark plans: it may be slow or reach out)
      if (!condition.deterministic || SubqueryExpression.hasSubquery(condition) ||
        condition.exists(_.isInstanceOf[UserDefinedExpression])) return None
      val ours = output.map(_.exprId).toSet
      Try(condition.transform {
        case a: AttributeReference if ours.contains(a.exprId) =>
          val i = at(a).getOrElse(throw new NoSuchElementException(a.name))
          BoundReference(i, a.dataType, a.nullable)
      }).toOption.filter(_.references.isEmpty)
    }

    private val combined = new ConcurrentHashMap[Seq[String], Option[BigInt]]()

    /**
     * The distinct combinations of `columns` (lower-case names) in the table: exact where the sample
     * is the whole table; else estimated where the sample covers them well: at most a tenth of its
     * rows on combinations seen only once (Good and Turing's sample coverage, 1 - f1 / n, of at
     * least 90%), and then Chao's estimate, `d + f1(f1 - 1) / (2 (f2 + 1))`, of combinations seen
     * once f1 and twice f2, adds those the sample missed. TPC-DS item's category and class: about
     * 100 pairs, where the two columns' distinct counts multiply to 1,000; its category and
     * category id: 10 pairs, and in the sample 4 rare ones with a NULL (seen once or twice), which
     * count for little. None where the sample does not tell (many rows on combinations seen once:
     * near-unique columns) or a column is not sampled.
     */
    def combinations(columns: Seq[String]): Option[BigInt] =
      positions(columns).flatMap(at => cached(combined, columns)(covered(runs(at, withNulls = true), rows.size)))

    private val combinedWhere = new ConcurrentHashMap[(Expression, Seq[String]), Option[BigInt]]()

    /**
     * [[combinations]] among the rows `condition` over `output` keeps (the sampled rows it keeps,
     * covering their combinations as well): 10 classes of their 5 categories, where the whole
     * sample holds 50 pairs. None where the condition cannot be evaluated here or the kept rows do
     * not tell (TPC-DS q89's 135 sampled items of six categories and classes: 15 of their 35
     * combinations of category, class and brand seen once).
     */
    def combinations(columns: Seq[String], condition: Expression, output: Seq[Attribute]): Option[BigInt] = {
      for {
        at <- positions(columns)
        b <- bind(condition, output)
        answer <- cached(combinedWhere, (b.canonicalized, columns))(Try {
          val kept = keptBy(b)
          covered(runs(at, withNulls = true, kept), kept.size)
        }.toOption.flatten)
      } yield answer
    }

    // The combinations `counts` (sampled rows per combination, of `n` rows) tell: all of them where
    // the sample is the whole table, else with Chao's estimate of those missed, where at most a
    // tenth of the rows are on combinations seen once. (A fifth let q89's 135 sampled items tell
    // 45 combinations for 51, but took q47's and q57's groups from 1.7x too many to 4.4x too few:
    // Chao's estimate falls short where many are seen once.) Where more are seen once, some more
    // than once (none: as unique as the sample tells, where the rows bound the combinations), and
    // the sample holds at least 1 in [[MaxGuaranteedRatio]] of the table's rows: the guaranteed-error
    // estimate ([[guaranteed]]).
    private def covered(counts: Array[Int], n: Int): Option[BigInt] = {
      val d = counts.length
      val f1 = counts.count(_ == 1)
      val f2 = counts.count(_ == 2)
      if (whole) Some(BigInt(d))
      else if (d > 0 && f1 * 10 <= n) Some(BigInt(d) + BigInt(f1) * (f1 - 1) / (2 * (f2 + 1)))
      else if (f1 < d && of <= rows.size.toLong * MaxGuaranteedRatio) Some(guaranteed(d, f1, of.toDouble / rows.size))
      else None
    }

    private val valued = new ConcurrentHashMap[(Expression, Expression), Option[BigInt]]()

    /**
     * The distinct non-NULL values of `value` over `output` (the sampled table's columns) in the
     * table, among the rows `condition` keeps (all where None), told as [[combinations]] tells them:
     * a computed grouping key's groups (`substr(s, 1, 1)`: 10 first digits, where the column has
     * 20,000 values). None where it cannot be evaluated here (a column not sampled, a
     * non-deterministic value, a Python function, an error) or the kept rows do not tell.
     */
    def valuesOf(value: Expression, condition: Option[Expression], output: Seq[Attribute]): Option[BigInt] = for {
      v <- bind(value, output)
      c <- condition.fold[Option[Expression]](Some(Literal.TrueLiteral))(bind(_, output))
      answer <- cached(valued, (v.canonicalized, c.canonicalized))(Try {
        val kept = keptBy(c)
        val counts = new java.util.HashMap[Any, Integer]()
        kept.foreach(r => Option(v.eval(r)).foreach(x => counts.merge(x, 1, (a: Integer, b: Integer) => a + b)))
        covered(counts.values().toArray(new Array[Integer](0)).map(_.intValue), kept.size)
      }.toOption.flatten)
    } yield answer

    private val determined = new ConcurrentHashMap[(Seq[String], Seq[String]), Option[Boolean]]()

    /**
     * Whether the columns `from` (lower-case names) determine the columns `to` in the sample: each
     * combination of `from` comes with one combination of `to`, and the sample shows it (it is the
     * whole table, or at least [[MinRepeats]] combinations of `from` are seen on two rows or more).
     * A table's functional dependency: TPC-DS date_dim's year and month determine its month's
     * sequence number (about 480 of its 2,400 year-months expected on two or more of 2,000 sampled
     * days, each with one number). An estimate: the sample may miss a rare exception. False where a
     * column is not sampled.
     */
    def determines(from: Seq[String], to: Seq[String]): Boolean = (positions(from), positions((from ++ to).distinct)) match {
      case (Some(f), Some(both)) => cached(determined, (from, to)) {
        val byFrom = runs(f, withNulls = true)
        Some((whole || byFrom.count(_ >= 2) >= MinRepeats) && runs(both, withNulls = true).length == byFrom.length)
      }.contains(true)
      case _ => false
    }

    private val clustered = new ConcurrentHashMap[Seq[String], Option[Double]]()

    /**
     * The table's rows per combination of `columns` (lower-case names; rows with a NULL in one
     * left out), where rows come in clusters sharing it: the rows of one TPC-DS ticket share their
     * customer and date. Exact where the sample is the whole table; else from the sample's pairs of
     * rows on the same combination (collisions): a pair of the table's rows falls in one cluster
     * with chance (r - 1) / (rows - 1) for clusters of r rows, so r = 1 + collisions x (rows - 1) /
     * (sampled pairs). None where fewer than [[MinCollisions]] pairs are seen (no evidence of
     * clusters: rows taken as independent) or a column is not sampled.
     * {{{
     *   store_sales (2,880,404 rows) by customer and date, 2,000 sampled: about 8 collisions, r about 12
     * }}}
     */
    def rowsPerCombination(columns: Seq[String]): Option[Double] = positions(columns).flatMap(at => cached(clustered, columns) {
      val counts = runs(at, withNulls = false)
      val combos = counts.length
      var collisions, sum = 0L // (loops: the iterators' sums boxed every count)
      for (c <- counts) { collisions += c.toLong * (c - 1) / 2; sum += c }
      val n = sum.toDouble
      if (combos == 0) None
      else if (whole) Some(n / combos)
      else {
        // the table's rows with no NULL in `columns`, in the sample's proportion
        val tableRows = of.toDouble * n / rows.size
        Option.when(collisions >= MinCollisions && n >= 2)(1.0 + collisions * (tableRows - 1) / (n * (n - 1) / 2))
      }
    })

    private val signed = new ConcurrentHashMap[(Expression, Option[Expression]), Option[Signs]]()

    /**
     * How the number `value` over `output` (the sampled table's columns) falls on the sampled rows
     * `condition` keeps (all where None): how many are NULL, below, at and above 0, with the mean
     * and standard deviation of those not NULL. None where it cannot be told here (as [[share]]), or
     * the value is not a number.
     * {{{
     *   TPC-DS web_sales' ((list - wholesale - discount) + sales) / 2: 28% of its rows below 0
     * }}}
     */
    def signs(value: Expression, condition: Option[Expression], output: Seq[Attribute]): Option[Signs] = value.dataType match {
      case _: NumericType => for {
        v <- bind(value, output)
        c <- condition.fold(Option(Option.empty[Expression]))(bind(_, output).map(Some(_)))
        answer <- cached(signed, (v.canonicalized, c.map(_.canonicalized)))(Try(signsOf(v, c)).toOption)
      } yield answer
      case _ => None
    }

    private def signsOf(bound: Expression, condition: Option[Expression]): Signs = {
      val in = condition.fold(rows)(keptBy)
      val values = in.iterator.flatMap(r => Option(bound.eval(r)))
        .map(v => number(v).getOrElse(throw new IllegalArgumentException(s"not a number: $v"))).toArray
      val mean = if (values.isEmpty) 0.0 else values.sum / values.length
      val sd = if (values.length < 2) 0.0 else math.sqrt(values.iterator.map(v => (v - mean) * (v - mean)).sum / (values.length - 1))
      Signs(in.size, in.size - values.length, values.count(_ < 0), values.count(_ == 0), values.count(_ > 0), mean, sd)
    }

    // The positions of sampled columns (lower-case names); None where one is not sampled.
    private def positions(columns: Seq[String]): Option[Seq[Int]] =
      Some(columns.map(names.indexOf)).filter(at => at.nonEmpty && !at.contains(-1))

    // An answer computed once per key (at most 1,000 kept per question).
    private def cached[K, T](answers: ConcurrentHashMap[K, Option[T]], key: K)(compute: => Option[T]): Option[T] =
      Option(answers.get(key)).getOrElse {
        val answer = compute
        if (answers.size < 1000) answers.put(key, answer)
        answer
      }

    // The sampled rows `bound` (a deterministic condition bound to the sample's columns) keeps (NULL
    // keeps none). Evaluated as it is: Spark's interpreted predicate resets a cache of common
    // subexpressions for every row (a tenth of the sample's time in a profile of explaining).
    private def keptBy(bound: Expression): IndexedSeq[InternalRow] =
      rows.filter(r => bound.eval(r) == true)

    /** The sampled rows on each combination of the columns at `at` (rows with a NULL in one left
     *  out unless `withNulls`). Each row's combination is one 64-bit hash, sorted, so that equal
     *  combinations are runs: planning asks this of many sets of columns, and boxing values into
     *  maps cost most of it (loops over arrays: a tenth of the statistics' time went to the
     *  collections' calls around the hashing). */
    private def runs(at: Seq[Int], withNulls: Boolean, in: IndexedSeq[InternalRow] = rows): Array[Int] = {
      val columns = at.toArray
      val keys = new Array[Long](in.size)
      var n = 0
      val it = in.iterator
      while (it.hasNext) {
        val r = it.next()
        var h = 17L
        var k = 0
        var keep = true
        while (k < columns.length) {
          val i = columns(k)
          val isNull = r.isNullAt(i)
          keep &&= withNulls || !isNull
          h = (h ^ (if (isNull) NullHash else hashAt(r, i))) * 0x9E3779B97F4A7C15L
          k += 1
        }
        if (keep) { keys(n) = h; n += 1 }
      }
      java.util.Arrays.sort(keys, 0, n)
      // (an Int array, not an ArrayBuilder: its generic `+=` boxed every count)
      val out = new Array[Int](n)
      var found = 0
      var i = 0
      while (i < n) {
        var j = i + 1
        while (j < n && keys(j) == keys(i)) j += 1
        out(found) = j - i
        found += 1
        i = j
      }
      java.util.Arrays.copyOf(out, found)
    }

    private def valueAt(r: InternalRow, i: Int): Any = if (r.isNullAt(i)) null else r.get(i, types(i))

    private val NullHash = 0x5bd1e995L

    // Per column, whether its values are fixed-width in an UnsafeRow, and its type (arrays: read
    // for every sampled value).
    private val fixedWidth: Array[Boolean] = types.map(UnsafeRow.isFixedLength).toArray
    private val typeAt: Array[DataType] = types.toArray

    // A value's hash: a fixed-width value's 8 bytes as the row holds them (zeroed before a narrower
    // value is written), else its bytes' hash.
    private def hashAt(r: InternalRow, i: Int): Long = r match {
      case u: UnsafeRow if fixedWidth(i) => u.getLong(i)
      case _ => typeAt(i) match {
        case _: StringType => r.getUTF8String(i).hashCode.toLong
        case BinaryType => java.util.Arrays.hashCode(r.getBinary(i)).toLong
        case _ => valueAt(r, i).hashCode.toLong
      }
    }

    // The distinct values of column `i` among `in` (NULL one of them): its runs of equal hashes.
    private def distinctValues(in: IndexedSeq[InternalRow], i: Int): Int = runs(Seq(i), withNulls = true, in).length

    // Each column's distinct values in the whole sample, counted once (every filter of it asks).
    private val distinctCounts = new ConcurrentHashMap[Int, Int]()
    private def distinctIn(i: Int): Int = distinctCounts.computeIfAbsent(i, _ => distinctValues(rows, i))

    private def evaluate(bound: Expression, extra: Seq[Int]): Kept = {
      val keep = keptBy(bound)
      val read = (bound.collect { case b: BoundReference => b.ordinal } ++ extra).distinct
      val shares = read.map { i =>
        val all = distinctIn(i)
        names(i) -> (if (all == 0) 1.0 else distinctValues(keep, i).toDouble / all)
      }.toMap
      Kept(keep.size, rows.size, whole, shares)
    }
  }

  private val store = new ConcurrentHashMap[String, Sketch]()

  // Counts every change of the store: what was derived from the sketches is current while it stays.
  private val changes = new java.util.concurrent.atomic.AtomicLong()

  /** A number that changes whenever a sketch is taken or forgotten. */
  def version: Long = changes.get

  /** The relation's identity in the store: its root paths (a partitioned catalog table's location, pruned
   *  or not), read as what with which options (the same CSV folder read with and without a header holds other rows). */
  def identity(r: HadoopFsRelation, table: Option[CatalogTable]): String = table.filter(_.partitionColumnNames.nonEmpty)
    .map(t => new org.apache.hadoop.fs.Path(t.location).toString).getOrElse(r.location.rootPaths.map(_.toString).sorted.mkString(",")) +
    s" as ${r.fileFormat}" + r.options.toSeq.sorted.map { case (k, v) => s" $k=$v" }.mkString

  /** Why a relation's sketch is not read. */
  val Stale = "a sketch was taken, but its files changed since"

  /** Whether a sketch of `r` was taken (current or stale: telling needs its files' listing). */
  def taken(r: HadoopFsRelation, table: Option[CatalogTable]): Boolean = store.containsKey(identity(r, table))

  /** The sketch of `r`, whose files as listed now have the keys `current`: Right when taken on
   *  those files (some of them, where `pruned` partitions are read), Left(why) when stale; None when never taken. */
  def of(r: HadoopFsRelation, table: Option[CatalogTable], current: => Seq[FileKey], pruned: Boolean): Option[Either[String, Sketch]] =
    Option(store.get(identity(r, table))).map { s =>
      if (s.files == current || pruned && current.toSet.subsetOf(s.files.toSet)) Right(s) else Left(Stale)
    }

  /** Takes (again) the sketch of `table`; one line saying what was sketched, or why not, naming it `shown` (as the user wrote it). */
  def collect(spark: SparkSession, table: String, shown: String = ""): String = {
    val name = if (shown.isEmpty) table else shown
    val df = spark.table(table)
    val relations = df.queryExecution.analyzed.collect { case LogicalRelation(h: HadoopFsRelation, _, t, _, _) => (t, h) }
    val read = SketchedColumns.of(df.queryExecution.optimizedPlan)
    relations match {
      case Seq(_) if read.isEmpty =>
        s"$name: not sketched: a view that filters, computes or renames what it reads (sketch the table it reads)"
      case Seq((t, h)) =>
        val cols = read.get.filter(a => SketchedColumns.sketchable(a.dataType))
        val aggs = count(lit(1)).as("__rows") +: cols.zipWithIndex.flatMap { case (a, i) =>
          val c = col(s"`${a.name}`")
          Seq(approx_count_distinct(c).as(s"__ndv$i"), count(c).as(s"__nonnull$i")) ++
            (if (SketchedColumns.ranged(a.dataType)) Seq(min(c).as(s"__min$i"), max(c).as(s"__max$i")) else Nil)
        }
        val files = FileFacts.keys(h)
        val row = df.agg(aggs.head, aggs.tail: _*).head()
        val rows = row.getAs[Long]("__rows")
        val sample = sampleOf(df, rows)
        val columns = cols.zipWithIndex.map { case (a, i) =>
          def internal(name: String) = Option(row.getAs[Any](name)).map(v => CatalystTypeConverters.convertToCatalyst(v))
          val (lo, hi) = if (SketchedColumns.ranged(a.dataType)) (internal(s"__min$i"), internal(s"__max$i")) else (None, None)
          a.name.toLowerCase(java.util.Locale.ROOT) -> ColumnStat(
            distinctCount = Some(BigInt(row.getAs[Long](s"__ndv$i"))), min = lo, max = hi,
            nullCount = Some(BigInt(rows - row.getAs[Long](s"__nonnull$i"))),
            avgLen = Some(a.dataType.defaultSize.toLong), maxLen = Some(a.dataType.defaultSize.toLong))
        }.toMap
        store.put(identity(h, t), Sketch(files, rows, columns, sample))
        changes.incrementAndGet()
        SampledPairs.clear()
        s"$name: $rows rows, ${columns.size} columns sketched, ${sample.rows.size} rows sampled (${files.size} files)"
      case Seq() => s"$name: not sketched: it does not read files (only file tables and views over them are)"
      case many => s"$name: not sketched: it reads ${many.size} file relations (sketch each table it reads)"
    }
  }

  // Every column of about SampleRows rows, each row kept with the same chance (no LIMIT: it would
  // keep the first partitions' rows).
  private def sampleOf(df: org.apache.spark.sql.classic.DataFrame, rows: Long): Sample = {
    val drawn = if (rows <= SampleRows) df else df.sample(withReplacement = false, SampleRows.toDouble / rows, 20261126L)
    val toCatalyst = CatalystTypeConverters.createToCatalystConverter(df.schema)
    // Kept as UnsafeRows: a few bytes a value, where objects would take tens.
    val compact = UnsafeProjection.create(df.schema)
    // (an array: every filter of the table iterates over it; a Vector's iterator took a tenth of the sample's time)
    val sampled = scala.collection.immutable.ArraySeq.unsafeWrapArray(
      drawn.collect().map(r => compact(toCatalyst(r).asInstanceOf[InternalRow]).copy(): InternalRow))
    new Sample(df.schema.fields.map(_.name.toLowerCase(java.util.Locale.ROOT)).toIndexedSeq,
      df.schema.fields.map(_.dataType).toIndexedSeq, sampled, rows)
  }

  /** Forgets every sketch (tests). */
  def clear(): Unit = { store.clear(); changes.incrementAndGet(); SampledPairs.clear() }
}
