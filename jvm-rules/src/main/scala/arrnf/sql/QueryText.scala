package arrnf.sql

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.plans.logical.Command
import org.apache.spark.sql.arrnf.DatasetOfPlan
import org.apache.spark.sql.classic.{Dataset, SparkSession}
import org.apache.spark.sql.execution.CommandExecutionMode

/**
 * A query given as text, planned but never run. `spark.sql(text)` runs a command at once (`DROP
 * TABLE`, `INSERT`, `SET`, `CACHE TABLE` ...): explaining must not drop a table. So the text is
 * analyzed with command execution skipped, and refused when its plan holds any command (after
 * analysis, so that `INSERT INTO`, parsed as a statement, counts as the write command it becomes).
 */
object QueryText {
  /** Thrown for a command: `IllegalArgumentException` like every bad input of the SQL functions. */
  final class NotAQuery(message: String) extends IllegalArgumentException(message)

  def dataset(spark: SparkSession, text: String, caller: String): Dataset[Row] = {
    val parsed = spark.sessionState.sqlParser.parsePlan(text)
    val qe = spark.sessionState.executePlan(parsed, CommandExecutionMode.SKIP)
    qe.assertAnalyzed()
    qe.analyzed.collectFirst { case c: Command => c }.foreach { c =>
      throw new NotAQuery(s"$caller: the text is a command (${c.nodeName}), not a query; ArrNF describes " +
        "queries (SELECT, WITH, VALUES, TABLE, FROM ...) and never runs a command to explain it")
    }
    DatasetOfPlan(spark, parsed)
  }
}
