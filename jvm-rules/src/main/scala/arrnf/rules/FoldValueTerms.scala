package arrnf.rules

import org.apache.spark.sql.catalyst.expressions.{Attribute, BinaryExpression, Expression, If, IsNull, LeafExpression, Literal, Multiply, Subtract, UnaryExpression, UnaryMinus}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.types._

import arrnf.catalyst.Effects

/**
 * Value terms fold where Catalyst 4.3 leaves them apart (it already folds constants, `x + 0`,
 * `x * 1`, `x * 0` for a non-nullable integral `x` and integral `+`/`*` constant chains):
 *
 *  - negation is an involution, `-(-x) = x`:
 *    {{{ Project [- - d AS v]  =>  Project [d AS v] }}}
 *    Holds exactly for FLOAT/DOUBLE (negation flips the sign bit: NaN, ±0.0 and ±inf come back as
 *    they were) and for DECIMAL of precision at most 34: Spark 4.3 negates a decimal through a
 *    Scala `BigDecimal` whose context keeps 34 digits, so `-(-x)` of a 35- to 38-digit value comes
 *    back rounded (`…123456` → `…123500`): not fired there. For integral types only when neither
 *    negation fails on overflow (ANSI off): two's-complement negation wraps and `-(-MIN) = MIN`;
 *    with ANSI on, `-(-MIN)` raises an overflow error, which the rewrite would remove: not fired.
 *  - a term minus itself, `x - x = 0`:
 *    {{{ Project [(a - a) AS z]  =>  Project [0 AS z]   (a non-nullable)
 *        Project [(n - n) AS z]  =>  Project [if (isnull(n)) null else 0 AS z] }}}
 *    Holds for integral and DECIMAL `x` (subtraction of a value from itself cannot overflow, and
 *    0 has the result type: `Literal.default`); NULL `x` gives NULL, so a nullable `x` keeps a NULL
 *    test. Not for FLOAT/DOUBLE: `inf - inf` and `NaN - NaN` are NaN. `x` must be a column
 *    (an `Attribute`: deterministic, two `rand()`s are not equal) whose definition cannot fail
 *    (`Effects.canFailToProduce`, followed down to the relation): once `x` is no longer used,
 *    column pruning drops its definition, and with it any error it raised — with ANSI on,
 *    `d - d` over `id * 9223372036854775807 AS d` keeps its overflow; with ANSI off the
 *    multiplication wraps and the difference folds.
 *  - zero annihilates, `x * 0 = 0` for a nullable integral or DECIMAL column `x` whose definition
 *    cannot fail, as above (Catalyst does only the non-nullable integral case): `if (isnull(x)) null else 0`. Not for FLOAT/DOUBLE
 *    (`inf * 0`, `NaN * 0` are NaN, `-1.0 * 0 = -0.0`).
 *
 * Errors elsewhere: a folded value is one Spark's later rules reason with. A join on `x - x`, now
 * 0, under a filter `> 0` is empty, and Spark drops its inputs with the errors they raise; an
 * expression over it may become a constant, which Spark's constant folding evaluates while
 * planning (`1 div (x - x)` over an empty table raises DIVIDE_BY_ZERO where vanilla Spark returns
 * no rows). So a term folds to 0 only if, once folded, no expression Spark could evaluate while
 * planning can fail (`Effects.canFailOnceConstant`: an aggregate's own overflow over rows is not
 * one), and any term folds only if, where the plan has a filter or join condition, nothing in it
 * can fail (`Effects.canFail`):
 *    {{{ Project [1 div (a - a) AS q]   stays (ANSI: div by a constant 0 fails) }}}
 *
 * Streaming: these are row-wise expression laws and hold for streams as well.
 */
object FoldValueTerms extends Rule[LogicalPlan] {

  // UnaryMinus carries no tree-pattern bit in Spark 4.3, so there is nothing to prune on, and a
  // rule of an extension gets no rule id, so Spark cannot mark the subtrees it left alone. The
  // rule runs in every iteration of the fixed-point batches and almost never applies: a read-only
  // search first, the rewriting walk (which copies nodes) only where a term is found. The fold
  // needs the node: a column's definition is read from the node's children.
  override def apply(plan: LogicalPlan): LogicalPlan = if (!hasTermBelow(plan)) plan else {
    var zero = false // a term folded to 0 (or NULL-or-0): a constant for Spark's later rules
    val folded = plan.transformUp {
      case node if hasTerm(node) =>
        val produced = (x: Attribute) => node.children.exists(c => c.outputSet.contains(x) && !Effects.canFailToProduce(x, c))
        node.transformExpressions(fold(produced).andThen { e => zero ||= e.isInstanceOf[Literal] || e.isInstanceOf[If]; e })
    }
    // A folded term is a constant (or a column) Spark's later rules read: `j.c = (x - x)` with
    // `j.c > 0` above became a contradiction, and Spark dropped the join, with an input whose filter
    // raised an error vanilla Spark raises (the random gate, ANSI on); `1 div (x - x)` became a
    // constant, and Spark's constant folding raised DIVIDE_BY_ZERO while planning a query over an
    // empty table, which vanilla Spark answers with no rows (a tester). Not fired where a term became
    // 0 and an expression Spark could evaluate while planning can fail, nor where the plan has a
    // predicate to reason with and any part of it can fail. (`-(-x)` to `x` makes nothing constant.)
    if ((folded eq plan) || (zero && Effects.canFailOnceConstant(folded)) ||
      (Effects.hasPredicate(plan) && Effects.canFail(folded))) plan
    else folded
  }

  private val anyTerm = fold(_ => true)

  // The search visits every expression of every node in every iteration: written out, it asks the
  // fold only at the three kinds of term and steps into one or two children without the closures
  // and iterators of `TreeNode.exists` (which were most of the rule's time: bench/planning_profile.py).
  private def hasTermBelow(p: LogicalPlan): Boolean = hasTerm(p) || p.children.exists(hasTermBelow)
  private def hasTerm(node: LogicalPlan): Boolean = node.expressions.exists(termIn)
  private def termIn(e: Expression): Boolean = e match {
    case _: UnaryMinus | _: Subtract | _: Multiply if anyTerm.isDefinedAt(e) => true
    case _: LeafExpression => false
    case u: UnaryExpression => termIn(u.child)
    case b: BinaryExpression => termIn(b.left) || termIn(b.right)
    case _ => e.children.exists(termIn)
  }

  private def fold(safe: Attribute => Boolean): PartialFunction[Expression, Expression] = {
    case UnaryMinus(UnaryMinus(x, innerFails), outerFails) if involutive(x.dataType, innerFails, outerFails) =>
      x
    case s @ Subtract(x: Attribute, y: Attribute, _) if exactZeroType(s.dataType) && x.semanticEquals(y) && safe(x) =>
      zeroUnlessNull(x, s.dataType)
    case m @ Multiply(x: Attribute, Literal(z, _), _) if exactZeroType(m.dataType) && isZero(z) && safe(x) =>
      zeroUnlessNull(x, m.dataType)
    case m @ Multiply(Literal(z, _), x: Attribute, _) if exactZeroType(m.dataType) && isZero(z) && safe(x) =>
      zeroUnlessNull(x, m.dataType)
  }

  /** Spark negates a DECIMAL in a 34-digit context (`MathContext.DECIMAL128`): exact up to 34 digits. */
  private val ExactDecimalNegationDigits = 34

  private def involutive(t: DataType, innerFails: Boolean, outerFails: Boolean): Boolean = t match {
    case FloatType | DoubleType => true
    case d: DecimalType => d.precision <= ExactDecimalNegationDigits
    case ByteType | ShortType | IntegerType | LongType => !innerFails && !outerFails
    case _ => false
  }

  private def exactZeroType(t: DataType): Boolean = t match {
    case ByteType | ShortType | IntegerType | LongType | _: DecimalType => true
    case _ => false
  }

  private def isZero(v: Any): Boolean = v match {
    case b: Byte => b == 0
    case s: Short => s == 0
    case i: Int => i == 0
    case l: Long => l == 0L
    case d: org.apache.spark.sql.types.Decimal => d.isZero
    case _ => false
  }

  private def zeroUnlessNull(x: Attribute, t: DataType): Expression =
    if (x.nullable) If(IsNull(x), Literal(null, t), Literal.default(t)) else Literal.default(t)
}
