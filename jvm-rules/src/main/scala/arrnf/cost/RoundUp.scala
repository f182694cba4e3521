package arrnf.cost

/**
 * Estimated counts round up: a share of rows that is not nothing keeps at least a row, and a
 * count scaled by a share is never reported below what the share gives.
 * {{{
 *   RoundUp(BigDecimal("2.1")) == 3
 *   RoundUp(1482.2) == 1483
 * }}}
 */
object RoundUp {
  /** The least integer at or above `x`. */
  def apply(x: BigDecimal): BigInt = x.setScale(0, BigDecimal.RoundingMode.CEILING).toBigInt

  /** The least integer at or above `x` (read as its shortest decimal form, as `BigDecimal(x)`). */
  def apply(x: Double): BigInt = apply(BigDecimal(x))
}
