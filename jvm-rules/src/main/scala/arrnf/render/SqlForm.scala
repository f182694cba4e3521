package arrnf.render

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.{Average, Sum}
import org.apache.spark.sql.catalyst.optimizer.NormalizeNaNAndZero
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.types._

import arrnf.catalyst.Patterns
import arrnf.model.SqlPart

/** A column reference by position, printed as the placeholder `` `#n` ``. */
private[render] final case class SqlRef(i: Int, dataType: DataType, nullable: Boolean)
  extends LeafExpression with Unevaluable {
  override def sql: String = s"`#$i`"
  override def toString: String = sql
}

/** An expression that prints as fixed SQL text. */
private[render] final case class SqlText(text: String, dataType: DataType) extends LeafExpression with Unevaluable {
  override def nullable: Boolean = true
  override def sql: String = text
  override def toString: String = text
}

final class NoSqlForm(msg: String) extends Exception(msg)

object SqlForm {
  def unsupported(why: String): SqlPart = SqlPart("unsupported", text = Some(why))

  def quote(name: String): String = "`" + name.replace("`", "``") + "`"

  /** `part` unless building it fails: then an `unsupported` part saying why. */
  def guard(part: => SqlPart): Option[SqlPart] = try Some(part) catch {
    case e: NoSqlForm => Some(unsupported(e.getMessage))
    case NonFatal(e) => Some(unsupported(s"${e.getClass.getSimpleName}: ${String.valueOf(e.getMessage).take(200)}"))
  }

  private def hasUnscaled(e: Expression): Boolean = e.exists(_.isInstanceOf[UnscaledValue])

  /** Undo Spark's DecimalAggregates and float normalization: back to SQL functions. */
  private def revert(e: Expression): Expression = e.transformDown {
    case m: MakeDecimal if m.child.exists {
      case s: Sum => s.child.isInstanceOf[UnscaledValue]
      case _ => false
    } =>
      m.child.transformUp { case s: Sum if s.child.isInstanceOf[UnscaledValue] =>
        s.copy(child = s.child.asInstanceOf[UnscaledValue].child) }
    case c: Cast if c.dataType.isInstanceOf[DecimalType] && c.child.isInstanceOf[Divide] && c.child.exists {
      case a: Average => a.child.isInstanceOf[UnscaledValue]
      case _ => false
    } =>
      val inner = c.child.asInstanceOf[Divide].left.transformUp { case a: Average if a.child.isInstanceOf[UnscaledValue] =>
        a.copy(child = a.child.asInstanceOf[UnscaledValue].child) }
      Cast(inner, c.dataType)
    case k: KnownFloatingPointNormalized => k.child
    case n: NormalizeNaNAndZero => n.child
  }

  private def literal(l: Literal): Expression = (l.value, l.dataType) match {
    case (null, _) => l
    case (v: Decimal, t: DecimalType) =>
      SqlText(s"CAST(${v.toJavaBigDecimal.toPlainString} AS DECIMAL(${t.precision},${t.scale}))", t)
    case (v: Long, LongType) => SqlText(s"CAST($v AS BIGINT)", LongType)
    case (v: Short, ShortType) => SqlText(s"CAST($v AS SMALLINT)", ShortType)
    case (v: Byte, ByteType) => SqlText(s"CAST($v AS TINYINT)", ByteType)
    case (v: Double, DoubleType) if !v.isNaN && !v.isInfinite => SqlText(s"CAST(${v.toString} AS DOUBLE)", DoubleType)
    case (v: Float, FloatType) if !v.isNaN && !v.isInfinite => SqlText(s"CAST(${v.toString} AS FLOAT)", FloatType)
    case _ => l
  }

  /**
   * The SQL of `e` with column references as placeholders for their positions in the input; `block` names the
   * block (or cached relation) holding a subquery's plan.
   */
  def expr(e: Expression, index: Positions, block: LogicalPlan => Option[String]): String = {
    def blockOf(p: LogicalPlan): String =
      quote(block(p).getOrElse(throw new NoSqlForm("a subquery whose plan is no block")))
    val rewritten = revert(Patterns.stripAlias(e)).transformUp {
      case a: AttributeReference => index.of(a) match {
        case -1 => throw new NoSqlForm(s"column ${a.name} is not in the operator's input")
        case i => SqlRef(i, a.dataType, a.nullable)
      }
      case l: Literal => literal(l)
      case s: ScalarSubquery if s.outerAttrs.isEmpty => SqlText(s"(SELECT * FROM ${blockOf(s.plan)})", s.dataType)
      case s: Exists if s.outerAttrs.isEmpty => SqlText(s"EXISTS (SELECT * FROM ${blockOf(s.plan)})", BooleanType)
      case l: ListQuery if l.outerAttrs.isEmpty => l
      case i @ InSubquery(values, l: ListQuery) if l.outerAttrs.isEmpty =>
        SqlText(s"(${values.map(_.sql).mkString("(", ", ", ")")} IN (SELECT * FROM ${blockOf(l.plan)}))", BooleanType)
      case s: SubqueryExpression => throw new NoSqlForm(s"a correlated ${s.prettyName} subquery")
      case o: OuterReference => throw new NoSqlForm(s"an outer reference to ${o.name}")
      case r: RankLike => SqlText(s"${r.prettyName}()", r.dataType)
      case u: UnscaledValue => throw new NoSqlForm("an internal UnscaledValue")
      case m: MakeDecimal => throw new NoSqlForm("an internal MakeDecimal")
    }
    rewritten.sql
  }

  /** A query giving the rows of a leaf node (`values`), or unsupported. */
  def constant(leaf: LeafNode): SqlPart = {
    val names = leaf.output.map(_.name)
    def typedNulls = leaf.output.map(a => s"CAST(NULL AS ${a.dataType.sql}) AS ${quote(a.name)}").mkString(", ")
    leaf match {
      case l: LocalRelation if !l.isStreaming =>
        if (l.data.isEmpty || l.output.isEmpty) SqlPart("values", names = names,
          text = Some(s"SELECT ${if (l.output.isEmpty) "1 AS `_`" else typedNulls} WHERE false"))
        else {
          val rows = l.data.map { row =>
            l.output.zipWithIndex.map { case (a, i) =>
              val v = if (row.isNullAt(i)) null else row.get(i, a.dataType)
              expr(Literal(v, a.dataType), Positions.empty, _ => None)
            }.mkString("(", ", ", ")")
          }
          SqlPart("values", names = names,
            text = Some(s"SELECT * FROM VALUES ${rows.mkString(", ")} AS t(${names.map(quote).mkString(", ")})"))
        }
      case _: OneRowRelation => SqlPart("values", names = Nil, text = Some("SELECT 1 AS `_`"))
      case r: Range =>
        SqlPart("values", names = names, text = Some(s"SELECT id AS ${quote(names.head)} FROM range(${r.start}, ${r.end}, ${r.step})"))
      case e: EmptyRelation => SqlPart("values", names = names, text = Some(s"SELECT $typedNulls WHERE false"))
      case other => unsupported(s"${other.nodeName} has no SQL form")
    }
  }

}
