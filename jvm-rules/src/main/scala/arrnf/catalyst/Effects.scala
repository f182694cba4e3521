package arrnf.catalyst

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.catalog.HiveTableRelation
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate._
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.execution.{ExternalRDD, LogicalRDD}
import org.apache.spark.sql.execution.columnar.InMemoryRelation
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.catalyst.util.CollationFactory
import org.apache.spark.sql.types._

/**
 * The two questions every ring law asks before it removes, merges or moves work:
 *
 *  - '''can it fail?''' A law that drops an evaluation (`x - x = 0`, `Q EXCEPT ALL Q = ∅`) or moves
 *    it onto more rows (factorization) must not remove or add an error. [[canFail]] is a whitelist,
 *    audited against Spark 4.3's expression classes: what is not listed may fail. Listed: columns,
 *    literals, `rand`/`randn`, null tests, boolean logic, comparisons, `if`/`case`/`coalesce`/`in`; arithmetic on
 *    numbers only where it cannot raise (LEGACY or TRY mode; `+ - *` on FLOAT/DOUBLE in any mode;
 *    `/ % div pmod` by a non-zero literal on non-decimal numbers; decimal `+ - *`, and `/` by a
 *    non-zero literal, whose result precision Spark did not cap at 38); casts that are up-casts or
 *    LEGACY/TRY casts between numbers and strings. Not listed, so failing: ANSI integral arithmetic,
 *    ANSI decimal arithmetic near 38 digits, `DIV`/`/` by a column, interval arithmetic in ANY mode (it overflows with ANSI off
 *    too), ANSI casts that narrow or parse, `element_at`, `raise_error`/`assert_true`, UDFs, scalar
 *    subqueries (more than one row), generators, windows and every other expression.
 *    Failures of the environment (a missing or corrupt file, memory) are not counted: Spark's own
 *    rules drop scans as well (`PropagateEmptyRelation`). A file read with mode FAILFAST is: its
 *    malformed-record error is a check the user asked for.
 *  - '''can it vary?''' A law that identifies two evaluations (`Q − Q`, a shared join input
 *    evaluated once instead of n times) needs them to give the same rows. [[canVary]]:
 *    non-deterministic expressions (also inside subqueries); a `Sample` without a seed (Spark 4.3
 *    draws one per evaluation), or with a seed over anything but projections/filters of a relation
 *    (a shuffle reorders rows, and a seeded sampler picks rows by position); RDD-backed relations
 *    unless checkpointed — Spark assumes an RDD is deterministic, but a Python or Scala function in it
 *    (`random.random()`) is run again for each reference; a cached relation whose plan varies.
 */
object Effects {

  /** Whether evaluating `e` may raise an error on some input. */
  def canFail(e: Expression): Boolean = !cannotFail(e)

  /** Whether evaluating `plan` (every row of it) may raise an error. */
  def canFail(plan: LogicalPlan): Boolean =
    plan.exists(p => nodeCanFail(p) || p.subqueries.nonEmpty)

  /** Whether `plan` holds a condition Spark's constraint propagation reasons with (a filter, a join
   *  condition; a subquery may hold one too): a rewrite that makes a value constant or an alias can
   *  let Spark prove a part of the plan empty, and drop it with the errors it would raise. */
  def hasPredicate(plan: LogicalPlan): Boolean = plan.exists {
    case _: Filter => true
    case j: Join => j.condition.isDefined
    case p => p.subqueries.nonEmpty
  }

  /** Whether an expression of `plan` that Spark's constant folding could evaluate while planning,
   *  once its inputs are constants, may fail: any but an aggregate's own result (`sum` overflows
   *  over rows, never while planning; its argument is checked). A rewrite that makes a value
   *  constant must not make such an expression constant: `1 div (x - x)` folded to `1 div 0`
   *  raises DIVIDE_BY_ZERO while Spark plans a query over an empty table, which returns no rows. */
  def canFailOnceConstant(plan: LogicalPlan): Boolean =
    plan.exists(p => p.subqueries.nonEmpty || p.expressions.exists(scalarCanFail))

  private def scalarCanFail(e: Expression): Boolean = {
    val aggregates = e.collect { case a: AggregateExpression => a }
    if (aggregates.isEmpty) canFail(e)
    else canFail(e.transformDown { case a: AggregateExpression => AttributeReference("aggregate", a.dataType, a.nullable)() }) ||
      aggregates.exists(a => a.aggregateFunction.children.exists(scalarCanFail) || a.filter.exists(scalarCanFail))
  }

  /** Whether two evaluations of `plan` may give different rows (or different row orders into a sampler). */
  def canVary(plan: LogicalPlan): Boolean =
    plan.exists(p => nodeVaries(p) || p.subqueries.exists(canVary))

  /**
   * Whether computing column `a` of `plan` may raise an error: the expressions that define it,
   * followed down through projections, aggregates and set operations to the relation that reads it.
   * A law that stops using a column lets column pruning drop its definition, and with it the error.
   */
  def canFailToProduce(a: Attribute, plan: LogicalPlan): Boolean = new Lineage().canFail(a, plan)

  /** One lineage walk; answers are kept per (column, node), so that shared definitions are followed once. */
  private final class Lineage {
    private val seen = new java.util.IdentityHashMap[LogicalPlan, scala.collection.mutable.HashMap[ExprId, Boolean]]()

    def canFail(a: Attribute, plan: LogicalPlan): Boolean = {
      val known = seen.computeIfAbsent(plan, _ => scala.collection.mutable.HashMap.empty[ExprId, Boolean])
      known.get(a.exprId) match {
        case Some(answer) => answer
        case None =>
          val answer = walk(a, plan)
          known(a.exprId) = answer
          answer
      }
    }

    private def walk(a: Attribute, plan: LogicalPlan): Boolean = plan match {
      case Project(list, child) => defined(a, list, child)
      case Aggregate(_, list, child, _) => defined(a, list, child)
      case u: Union =>
        val i = u.output.indexWhere(_.exprId == a.exprId)
        i < 0 || u.children.exists(c => canFail(c.output(i), c))
      case j: Join => j.children.find(_.outputSet.contains(a)).forall(canFail(a, _))
      case _: Filter | _: Sort | _: GlobalLimit | _: LocalLimit | _: Offset | _: SubqueryAlias | _: Sample |
           _: Repartition | _: RepartitionByExpression | _: Distinct | _: Deduplicate | _: ResolvedHint |
           _: Window | _: Generate =>
        // Columns these nodes pass through come from a child; the ones they make (window, generator
        // outputs) are not followed.
        plan.children.find(_.outputSet.contains(a)).forall(canFail(a, _))
      case _: CTERelationRef => true
      case leaf: LeafNode => !leaf.outputSet.contains(a) || readsFailFast(leaf)
      case _ => true
    }

    private def defined(a: Attribute, list: Seq[NamedExpression], child: LogicalPlan): Boolean =
      list.find(_.exprId == a.exprId) match {
        case Some(e: Alias) => Effects.canFail(e.child) || e.child.references.exists(canFail(_, child))
        case Some(e: Attribute) => canFail(e, child)
        case _ => true
      }
  }

  /**
   * `plan` rewritten bottom-up by `rule`, which is also told whether a predicate above the node may
   * fail once Spark pushes it down onto the node's rows: a filter or join condition on the way to
   * the root that can fail itself, or any such predicate above a projection or aggregate that
   * computes a column with an expression that can fail (pushed through it, `c >= 1` becomes
   * `k * 9223372036854775807 >= 1`; constraints inferred from the predicate travel the same way),
   * or a join above whose other side filters by a predicate that can fail (Spark infers it across
   * the join's equalities onto this side).
   * Spark may push it after the rule ran: a law that drops the subtree would drop the error that
   * vanilla Spark raises there. Only subtrees that `relevant` accepts are visited (tree-pattern
   * pruning); unchanged subtrees keep their identity.
   */
  def transformUpKnowingPredicatesAbove(plan: LogicalPlan, relevant: LogicalPlan => Boolean)(
      rule: PartialFunction[(LogicalPlan, Boolean), LogicalPlan]): LogicalPlan = {
    // Whether a predicate above can fail is asked of the expressions above only where the rule
    // matches a node (rarely): `failingAbove` is lazy, and each node's answer is computed once.
    def go(p: LogicalPlan, predicateAbove: Boolean, failingAbove: () => Boolean): LogicalPlan = {
      val predicate = p match {
        case _: Filter => true
        case j: Join if j.condition.isDefined => true
        case _ => predicateAbove
      }
      lazy val failing = failingAbove() || (p match {
        case Filter(c, _) => canFail(c)
        // Spark infers filters across a join from either side's constraints (InferFiltersFromConstraints:
        // `r.k = l.k` carries a filter on `r.k` over to `l.k`): a failing filter on one side may land on the other.
        case j: Join => j.condition.exists(canFail) || j.children.exists(hasFailingPredicate)
        case _: Project | _: Aggregate if predicateAbove => p.expressions.exists(canFail)
        case _ => false
      })
      val withChildren = p.mapChildren(c => if (relevant(c)) go(c, predicate, () => failing) else c)
      if (rule.isDefinedAt((withChildren, false)) || rule.isDefinedAt((withChildren, true))) {
        rule.applyOrElse((withChildren, failing), (_: (LogicalPlan, Boolean)) => withChildren)
      } else withChildren
    }
    if (relevant(plan)) go(plan, predicateAbove = false, () => false) else plan
  }

  /** Whether a filter or join condition in `plan` can fail. */
  private def hasFailingPredicate(plan: LogicalPlan): Boolean = plan.exists {
    case Filter(c, _) => canFail(c)
    case j: Join => j.condition.exists(canFail)
    case _ => false
  }

  /** Whether equality of values of `t` is equality of their bytes (no case-insensitive or trimming collation). */
  def binaryEquality(t: DataType): Boolean = t match {
    case s: StringType => CollationFactory.fetchCollation(s.collationId).supportsBinaryEquality
    case ArrayType(e, _) => binaryEquality(e)
    case MapType(k, v, _) => binaryEquality(k) && binaryEquality(v)
    case StructType(fields) => fields.forall(f => binaryEquality(f.dataType))
    case u: UserDefinedType[_] => binaryEquality(u.sqlType)
    case _ => true
  }

  // ---- expressions ------------------------------------------------------------------------------

  private def cannotFail(e: Expression): Boolean = e match {
    case _: Attribute | _: Literal | _: BoundReference => true
    case _: Rand | _: Randn => true // a seed literal; a double in [0, 1) or a normal draw
    case _: Alias | _: IsNull | _: IsNotNull | _: Not | _: And | _: Or | _: Coalesce | _: If | _: CaseWhen |
         _: EqualTo | _: EqualNullSafe | _: LessThan | _: LessThanOrEqual | _: GreaterThan |
         _: GreaterThanOrEqual | _: In | _: InSet | _: IsNaN | _: AtLeastNNonNulls |
         _: KnownNotNull | _: KnownNullable | _: KnownFloatingPointNormalized |
         _: SortOrder | _: UnscaledValue =>
      e.children.forall(cannotFail)
    case b: BinaryArithmetic => arithmeticCannotFail(b) && b.children.forall(cannotFail)
    case u: UnaryMinus =>
      (u.dataType match {
        case FloatType | DoubleType | _: DecimalType => true // cannot overflow
        case ByteType | ShortType | IntegerType | LongType => !u.failOnError
        case _ => false // intervals overflow
      }) && cannotFail(u.child)
    case c: Cast => castCannotFail(c) && cannotFail(c.child)
    case m: MakeDecimal => m.nullOnOverflow && cannotFail(m.child)
    case a: AggregateExpression => aggregateCannotFail(a.aggregateFunction) && a.filter.forall(cannotFail)
    case _ => false
  }

  private def numeric(t: DataType): Boolean = t.isInstanceOf[NumericType]
  private def fractional(t: DataType): Boolean = t == FloatType || t == DoubleType

  private def arithmeticCannotFail(b: BinaryArithmetic): Boolean = {
    val numbers = numeric(b.dataType) && b.children.forall(c => numeric(c.dataType))
    // LEGACY wraps or returns NULL, TRY returns NULL; ANSI raises.
    def lenient = b.evalMode != EvalMode.ANSI
    // A constant divisor (a literal, or a cast of one before constant folding) that is not 0 (nor -1,
    // whose integral division overflows on MIN).
    def nonZeroLiteral(e: Expression, minusOneToo: Boolean) = e.foldable && cannotFail(e) &&
      scala.util.Try(e.eval()).toOption.exists {
        case null => true
        case v: Number =>
          val d = v.doubleValue
          d != 0 && !d.isNaN && (minusOneToo || d != -1)
        case v: Decimal => v.toDouble != 0 && (minusOneToo || v.toDouble != -1)
        case _ => false
      }
    numbers && (b match {
      case _: Add | _: Subtract | _: Multiply if decimalFits(b) => true
      case d: Divide if decimalFits(d) => nonZeroLiteral(d.right, minusOneToo = true)
      case _: Add | _: Subtract | _: Multiply => lenient || fractional(b.dataType)
      case d: Divide => lenient || (fractional(d.dataType) && nonZeroLiteral(d.right, minusOneToo = true))
      case d: IntegralDivide => lenient || nonZeroLiteral(d.right, minusOneToo = false) && !d.left.dataType.isInstanceOf[DecimalType]
      case r: Remainder => lenient || nonZeroLiteral(r.right, minusOneToo = true) && !r.dataType.isInstanceOf[DecimalType]
      case p: Pmod => lenient || nonZeroLiteral(p.right, minusOneToo = true) && !p.dataType.isInstanceOf[DecimalType]
      case _: BitwiseAnd | _: BitwiseOr | _: BitwiseXor => true
      case _ => lenient
    })
  }

  /**
   * Decimal `+ - * /` whose result type has the integer digits the exact result can need, so that
   * it cannot overflow in any mode (only a result whose precision Spark capped at 38 can):
   * `decimal(7,2) - decimal(7,2)` is `decimal(8,2)`, `decimal(7,2) * decimal(5,0)` is
   * `decimal(13,2)`; a quotient's integer digits are bounded by the dividend's plus the divisor's
   * scale (any non-zero divisor is at least 10^-scale).
   */
  private def decimalFits(b: BinaryArithmetic): Boolean = (b.dataType, b.left.dataType, b.right.dataType) match {
    case (r: DecimalType, l: DecimalType, x: DecimalType) =>
      def digits(t: DecimalType) = t.precision - t.scale
      val needed = b match {
        case _: Add | _: Subtract => math.max(digits(l), digits(x)) + 1
        case _: Multiply => digits(l) + digits(x)
        case _: Divide => digits(l) + x.scale
        case _ => Int.MaxValue
      }
      digits(r) >= needed
    case _ => false
  }

  private def castCannotFail(c: Cast): Boolean = {
    val (from, to) = (c.child.dataType, c.dataType)
    def interval(t: DataType) = t.isInstanceOf[DayTimeIntervalType] || t.isInstanceOf[YearMonthIntervalType] ||
      t == CalendarIntervalType
    def atomic(t: DataType) = numeric(t) || t.isInstanceOf[StringType] || (t match {
      case BooleanType | DateType | TimestampType | TimestampNTZType | BinaryType => true
      case _ => false
    })
    if (interval(from) || interval(to)) false
    else if (Cast.canUpCast(from, to)) true
    else if ((numeric(from) || from == BooleanType) && fractional(to)) true // rounds, never raises
    else c.evalMode != EvalMode.ANSI && atomic(from) && (
      to.isInstanceOf[StringType] ||
        (numeric(to) && (numeric(from) || from.isInstanceOf[StringType] || from == BooleanType)))
  }

  private def aggregateCannotFail(f: AggregateFunction): Boolean = (f match {
    case _: Count | _: Min | _: Max | _: First | _: Last | _: AnyValue => true
    case s: Sum => (s.evalContext.evalMode != EvalMode.ANSI || fractional(s.dataType)) && numeric(s.dataType)
    case a: Average => (a.evalMode != EvalMode.ANSI || fractional(a.dataType)) && numeric(a.dataType)
    case _ => false
  }) && f.children.forall(cannotFail)

  // ---- plans ------------------------------------------------------------------------------------

  private def nodeCanFail(p: LogicalPlan): Boolean = p match {
    case _: Project | _: Filter | _: Join | _: Union | _: Aggregate | _: Distinct | _: Deduplicate | _: Sort |
         _: GlobalLimit | _: LocalLimit | _: Offset | _: SubqueryAlias | _: Sample | _: Repartition |
         _: RepartitionByExpression | _: Expand | _: ResolvedHint | _: Intersect | _: Except =>
      p.expressions.exists(canFail)
    // A file read with mode FAILFAST (CSV, JSON, XML) raises on a malformed record: a check the user
    // asked for, as an ANSI cast is, not a failure of the environment.
    case _: LogicalRelation | _: DataSourceV2Relation => readsFailFast(p)
    case _: LocalRelation | _: Range | _: OneRowRelation | _: HiveTableRelation => false
    case r: LogicalRDD => !r.rdd.isCheckpointed // user code in the RDD may throw
    case m: InMemoryRelation => !m.cacheBuilder.isCachedColumnBuffersLoaded && canFail(m.cacheBuilder.logicalPlan)
    case _ => true
  }

  private def readsFailFast(leaf: LogicalPlan): Boolean = leaf match {
    case LogicalRelation(h: HadoopFsRelation, _, _, _, _) => failFast(h.options)
    case r: DataSourceV2Relation => failFast(r.options.asScala.toMap)
    case _ => false
  }

  private def failFast(options: Map[String, String]): Boolean =
    options.exists { case (k, v) => k.equalsIgnoreCase("mode") && v.trim.equalsIgnoreCase("FAILFAST") }

  private def nodeVaries(p: LogicalPlan): Boolean = p match {
    case s: Sample => s.seed.isEmpty || !overRelation(s.child)
    case r: LogicalRDD => !r.rdd.isCheckpointed
    case _: ExternalRDD[_] => true
    case m: InMemoryRelation => canVary(m.cacheBuilder.logicalPlan)
    case other => !other.expressions.forall(_.deterministic)
  }

  /** Projections and filters over a stored relation: rows reach a sampler in the same order each time. */
  private def overRelation(p: LogicalPlan): Boolean = p match {
    case Project(_, c) => overRelation(c)
    case Filter(_, c) => overRelation(c)
    case SubqueryAlias(_, c) => overRelation(c)
    case _: LogicalRelation | _: DataSourceV2Relation | _: HiveTableRelation | _: Range | _: LocalRelation => true
    case _ => false
  }
}
