package arrnf.rules.factorize

import scala.util.Try

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.plans.logical.statsEstimation.EstimationUtils

/**
 * The small private cost helper of [[FactorizeUnionOfJoins]] (the general ArrNF cost model lives
 * elsewhere). Sizes in bytes from Catalyst statistics: row count × row width when the row count is
 * known (CBO statistics), `sizeInBytes` otherwise.
 */
private[rules] object FactorizeCost {
  /** A shuffle join passes each input three times (exchange, sort, merge); a broadcast join once. */
  val ShuffleFactor: BigInt = 3

  def bytes(plan: LogicalPlan): Option[BigInt] = Try {
    val s = plan.stats
    s.rowCount match {
      case Some(rows) => rows * EstimationUtils.getSizePerRow(plan.output)
      case None => s.sizeInBytes
    }
  }.toOption

  /** Spark's own broadcast test: `sizeInBytes` against the threshold (negative: never). */
  def broadcastable(plan: LogicalPlan, threshold: Long): Boolean =
    threshold >= 0 && Try(plan.stats.sizeInBytes <= threshold).getOrElse(false)

  /**
   * The estimated work of the union of joins and of the factorized join, for an A too large to be
   * broadcast (the rule declines a broadcast A before asking). `bs` are the other sides
   * with whether each is broadcast; `unionBroadcast` says whether their union would be.
   *
   * Spark reuses an exchange that several branches compute alike (`spark.sql.exchange.reuse`), so
   * A is shuffled once either way: what factorizing saves is A's sort and merge pass in every branch
   * after the first. That is little when A is small beside the other sides, which is why the rule
   * also asks for a least share saved (`spark.arrnf.FactorizeUnionOfJoins.minSaving`).
   */
  def costs(a: BigInt, bs: Seq[(BigInt, Boolean)], unionBroadcast: Boolean,
            exchangeReuse: Boolean): (BigInt, BigInt) = {
    val vanilla = bs.zipWithIndex.map { case ((b, bBroadcast), i) =>
      if (bBroadcast) a + b
      else if (i > 0 && exchangeReuse) (ShuffleFactor - 1) * a + ShuffleFactor * b
      else ShuffleFactor * (a + b)
    }.sum
    val union = bs.map(_._1).sum
    val factored = if (unionBroadcast) a + union else ShuffleFactor * (a + union)
    (vanilla, factored)
  }

  private val Units = Array("B", "KB", "MB", "GB", "TB", "PB")

  /** `b` in binary units, one decimal. In doubles: dividing by 1024 is exact, and a BigDecimal
   *  division and conversion took a sixth of the rule's cost decision on TPC-DS (profiled). */
  def human(b: BigInt): String = {
    var v = b.toDouble; var i = 0
    while (v >= 1024 && i < Units.length - 1) { v /= 1024; i += 1 }
    f"$v%.1f${Units(i)}"
  }
}
