package arrnf.render

import scala.collection.mutable
import scala.util.Try

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.trees.TreePattern.{ALIAS, ATTRIBUTE_REFERENCE, OUTER_REFERENCE}
import org.apache.spark.sql.types.{DataType, NullType}

/**
 * Column positions of an input, by expression id (as `AttributeMap` keys them; a repeated id
 * answers its last position, as `AttributeMap` built from the input does). Narrow inputs are
 * scanned: building a hash map of every column costs more than the few lookups most inputs get.
 * The normalizer keeps one per input, for the text form and the SQL form alike.
 */
final class Positions(in: Seq[Attribute]) {
  private val ids: Array[ExprId] = in.iterator.map(_.exprId).toArray
  private lazy val byId: java.util.HashMap[ExprId, Integer] = {
    val m = new java.util.HashMap[ExprId, Integer](ids.length * 2)
    ids.indices.foreach(i => m.put(ids(i), i))
    m
  }
  /** The position of `a` in the input, or -1. */
  def of(a: Attribute): Int =
    if (ids.length > Positions.ScanUpTo) { val i = byId.get(a.exprId); if (i == null) -1 else i.intValue }
    else {
      val id = a.exprId
      var i = ids.length - 1
      while (i >= 0 && ids(i) != id) i -= 1
      i
    }
}

object Positions {
  private val ScanUpTo = 48
  /** No input (a constant's values). */
  val empty = new Positions(Nil)
}

/** An expression that prints as fixed text: how column references and subqueries are shown. */
final case class ShownAs(text: String) extends LeafExpression with Unevaluable {
  override def dataType: DataType = NullType
  override def nullable: Boolean = true
  override def toString: String = text
}

/** How expressions print in the text form: column references as `#position{name}`. */
object ExpressionText {
  def ref(i: Int, name: String): String = s"#$i{$name}"

  /** The position in a reference `#12{name}`, or -1. A plain loop: it runs for every column of
   *  every projection the text form prints. */
  private def positionOf(r: String): Int = {
    var i = 1
    var n = 0
    while (i < r.length && i <= 9 && r.charAt(i) >= '0' && r.charAt(i) <= '9') { n = n * 10 + (r.charAt(i) - '0'); i += 1 }
    if (r.startsWith("#") && i > 1 && r.startsWith("{", i)) n else -1
  }

  /** `#2{a}, #3{b}, #4{c}, #5{d}` → `#2{a}..=#5{d}` for runs of four or more. */
  def compress(refs: Seq[String]): Seq[String] = {
    val rs = refs.toIndexedSeq
    val nums = rs.map(positionOf)
    val out = mutable.ArrayBuffer[String]()
    var i = 0
    while (i < rs.size) {
      var j = i
      while (j + 1 < rs.size && nums(i) >= 0 && nums(j + 1) == nums(j) + 1) j += 1
      if (j - i >= 3) { out += s"${rs(i)}..=${rs(j)}"; i = j + 1 }
      else { out += rs(i); i += 1 }
    }
    out.toSeq
  }

  /** Renders `e` with attribute references as `#position{name}`, positions from `index`. Subtrees
   *  without references or aliases are printed as they are (no copy); the rest is rebuilt bottom-up
   *  with `mapChildren`, which, unlike `transformUp`, sets no thread-local origin per node. */
  def showIndexed(e: Expression, index: Positions, withNames: Boolean = true): String = {
    def shown(x: Expression): Expression = x match {
      case a: AttributeReference =>
        val i = index.of(a)
        ShownAs(if (i < 0) s"#?{${a.name}}" else if (withNames) ref(i, a.name) else s"#$i")
      case o: OuterReference => ShownAs(s"outer(${o.name})")
      case al: Alias => ShownAs(s"${shown(al.child)} AS ${al.name}")
      case _ if !x.containsAnyPattern(ATTRIBUTE_REFERENCE, OUTER_REFERENCE, ALIAS) => x
      case _ => x.mapChildren(shown)
    }
    Try(shown(e).toString).getOrElse(e.toString)
  }
}
