package arrnf

import java.util.Properties

/** What the jar was built against, read from the resource sbt writes at build time. */
object BuildInfo {
  private lazy val props: Properties = {
    val p = new Properties()
    val in = getClass.getResourceAsStream("/arrnf-build.properties")
    if (in != null) try p.load(in) finally in.close()
    p
  }
  def sparkVersion: String = props.getProperty("spark.version", "unknown")
  def scalaVersion: String = props.getProperty("scala.version", "unknown")
  def version: String = props.getProperty("arrnf.version", "unknown")
}
