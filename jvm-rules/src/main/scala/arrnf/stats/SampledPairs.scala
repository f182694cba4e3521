package arrnf.stats

import java.util.concurrent.ConcurrentHashMap

import scala.util.Try

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, BoundReference, Expression, JoinedRow, Predicate, SubqueryExpression}

/**
 * The share of pairs of rows of two tables that a condition over both keeps, from their samples:
 * a join's condition other than equalities of columns, which Spark's join estimation ignores.
 * Both samples are uniform draws of their tables, so a pair of sampled rows is a uniform draw of
 * their cross product; [[Pairs]] pairs drawn with a fixed seed are evaluated. TPC-DS q72's
 * `inv_quantity_on_hand < cs_quantity` (0 to 1,000 on hand, 1 to 100 sold): about 5%; q15's
 * `substr(ca_zip, 1, 5) IN (…) OR ca_state IN (…) OR cs_sales_price > 500` over an address and a
 * sale. Each table's filters below the join are not applied: the tables' values are taken as
 * independent of them, as Spark's estimation takes columns.
 */
object SampledPairs {
  /** Pairs evaluated per condition (its share's error is then at most about 1/√(kept pairs)). */
  val Pairs = 20000

  private val answers = new ConcurrentHashMap[(Sketches.Sample, Sketches.Sample, Expression), Option[Double]]()

  /**
   * The share of pairs (a row of `left`'s table, a row of `right`'s) that `condition` keeps, where
   * it reads columns of both tables' outputs (`leftOutput`, `rightOutput`) and nothing else; None
   * where it cannot be told: a column not sampled or of another type, a non-deterministic condition,
   * a subquery or an error evaluating it. Where no pair passes, half a pair's worth (as a filter
   * that keeps no sampled row).
   */
  def share(condition: Expression, left: Sketches.Sample, leftOutput: Seq[Attribute],
      right: Sketches.Sample, rightOutput: Seq[Attribute]): Option[Double] = {
    if (!condition.deterministic || SubqueryExpression.hasSubquery(condition)) return None
    def index(sample: Sketches.Sample, output: Seq[Attribute], offset: Int): Map[Long, Int] =
      output.flatMap(a => sample.at(a).map(i => a.exprId.id -> (offset + i))).toMap
    val (l, r) = (index(left, leftOutput, 0), index(right, rightOutput, left.names.size))
    val bound = Try(condition.transform {
      case a: AttributeReference if l.contains(a.exprId.id) || r.contains(a.exprId.id) =>
        BoundReference(l.getOrElse(a.exprId.id, r(a.exprId.id)), a.dataType, a.nullable)
    }).toOption.filter(_.references.isEmpty)
    bound.flatMap { b =>
      val key = (left, right, b.canonicalized)
      Option(answers.get(key)).getOrElse {
        val answer = Try(evaluate(b, left, right)).toOption.flatten
        if (answers.size < 1000) answers.put(key, answer)
        answer
      }
    }
  }

  private def evaluate(bound: Expression, left: Sketches.Sample, right: Sketches.Sample): Option[Double] = {
    val (n, m) = (left.rows.size, right.rows.size)
    if (n == 0 || m == 0) return None
    val predicate = Predicate.createInterpreted(bound)
    predicate.initialize(0)
    val row = new JoinedRow
    val all = n.toLong * m <= Pairs
    val random = new java.util.Random(42)
    val pairs = if (all) n * m else Pairs
    var kept = 0
    var k = 0
    while (k < pairs) {
      val (i, j) = if (all) (k / m, k % m) else (random.nextInt(n), random.nextInt(m))
      if (predicate.eval(row(left.rows(i), right.rows(j)))) kept += 1
      k += 1
    }
    // every pair of two whole tables: the share is exact
    Some((if (all && left.whole && right.whole) kept.toDouble else math.max(kept.toDouble, 0.5)) / pairs)
  }

  /** Forgets the answers (the sketches they were drawn from changed). */
  def clear(): Unit = answers.clear()
}
