package arrnf.stats

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeReference}
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Project}
import org.apache.spark.sql.execution.datasources.LogicalRelation
import org.apache.spark.sql.types._

/** The columns the sketch pass counts of a table, and which of them have ranges. */
private[arrnf] object SketchedColumns {
  /**
   * The columns of `optimized`, a table's optimized plan, where it reads one relation's files as they
   * are: the relation, or a projection of its columns (a CHAR(n) column padded as read among them).
   * None for a view that filters, joins or computes: it holds other rows or values than its files,
   * and its sketch, stored by the files, would be read as the table's by every query of the table.
   */
  def of(optimized: LogicalPlan): Option[Seq[Attribute]] = optimized match {
    case l: LogicalRelation => Some(l.output)
    case Project(list, _: LogicalRelation) if list.forall {
        case _: AttributeReference => true
        case Alias(s: StaticInvoke, _) => s.functionName == "readSidePadding"
        case _ => false
      } => Some(list.map(_.toAttribute))
    case _ => None
  }

  def sketchable(t: DataType): Boolean = t match {
    case _: NumericType | DateType | TimestampType | TimestampNTZType | BooleanType | _: StringType | BinaryType => true
    case _ => false
  }

  def ranged(t: DataType): Boolean = t match {
    case _: NumericType | DateType | TimestampType | TimestampNTZType => true
    case _ => false
  }
}
