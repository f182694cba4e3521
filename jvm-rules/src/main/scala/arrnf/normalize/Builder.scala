package arrnf.normalize

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

import arrnf.model._

/** A block being built: what the normalizer knows of it until the program is finished. */
private[normalize] final class Builder(val name: String, val prefix: String) {
  var head: Option[Head] = None
  var branches: Seq[Branch] = Nil
  var columns: Seq[String] = Nil
  var sharing = 0
  val consumers = mutable.ArrayBuffer[Consumer]()
  val notes = mutable.LinkedHashSet[String]()
  var keySets = mutable.ArrayBuffer[(String, Seq[String], Seq[Expression])]() // canonical, shown, exprs
  var plan: LogicalPlan = _       // the subtree whose output the block holds (for statistics)
  var input: LogicalPlan = _      // the subtree arranged by the head (for statistics)
  var headKeys: Seq[Expression] = Nil // what a head other than ArrangeBy is keyed by (for its cost)
}

/** Where a body is being built: the block that will hold it. */
private[normalize] final case class Ctx(block: Builder)

private[normalize] final case class Body(branches: Vector[Branch], output: Seq[Attribute])
