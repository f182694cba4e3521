// The JVM half of pyspark-arrnf: Catalyst rules, the ArrNF normalizer and the extension that
// registers them.
//
// Spark is provided, never packaged: the jar runs inside the Spark that PySpark starts, so it is
// compiled against exactly that Spark — the jars of the installed PySpark wheel. (Spark 4.3.0 is on
// PyPI but not on Maven Central, the only JVM registry this project may use.) dev/sbt finds them
// through the project's Python (or ARRNF_SPARK_JARS); the Python side checks the version again
// when it configures a session.

val sparkLine = "4.3" // any 4.3.x, as pyproject.toml's pyspark>=4.3,<4.4 and jar.py's check

lazy val sparkJarsDir: File = sys.env.get("ARRNF_SPARK_JARS").map(file).getOrElse(
  sys.error("ARRNF_SPARK_JARS is not set: run sbt through dev/sbt, which finds PySpark's jars."))

// The exact Spark of those jars (its catalyst jar's version), written into the jar's properties.
lazy val sparkVersion: String = {
  val Catalyst = """spark-catalyst_2\.13-(.+)\.jar""".r
  (sparkJarsDir * "spark-catalyst_2.13-*.jar").get.map(_.getName).collect { case Catalyst(v) => v } match {
    case Seq(v) if v.startsWith(sparkLine + ".") => v
    case found => sys.error(s"$sparkJarsDir has ${found.mkString(", ")} for Spark's catalyst: " +
      s"this build is for Spark $sparkLine.x (pip install 'pyspark>=$sparkLine,<4.4').")
  }
}

// The version is written once, in the Python package (pyspark_arrnf/_version.py): the jar's name
// (arrnf-jvm-rules_2.13-<version>.jar, sbt's own), its Maven coordinates and the wheel agree.
ThisBuild / organization := "io.github.pyspark-arrnf"
ThisBuild / version      := {
  val f = (ThisBuild / baseDirectory).value / "pyspark_arrnf" / "_version.py"
  """(?m)^__version__\s*=\s*"([^"]+)"""".r.findFirstMatchIn(IO.read(f)).map(_.group(1))
    .getOrElse(sys.error(s"$f has no __version__ line"))
}
ThisBuild / scalaVersion := "2.13.18"

lazy val jvmRules = (project in file("jvm-rules"))
  .settings(
    name := "arrnf-jvm-rules",
    // Spark (and its own Scala library) from PySpark: on the compile and test classpaths only.
    Compile / unmanagedJars ++= {
      sparkVersion // fails early for a Spark other than 4.3.x
      val jars = (sparkJarsDir * "*.jar").classpath
      // sbt brings the Scala library and compiler itself; keep PySpark's other scala-* modules
      // (scala-parallel-collections: Spark runs a Union's partitions with it).
      jars.filterNot(j => Set("scala-library", "scala-reflect", "scala-compiler").exists(n => j.data.getName.startsWith(n + "-")))
    },
    // The Scala library is Spark's too: "provided" in the POM, so that `--packages` / spark.jars.packages
    // resolve the jar alone (Spark's jars, unmanaged above, are not in the POM at all).
    autoScalaLibrary := false,
    libraryDependencies += "org.scala-lang" % "scala-library" % scalaVersion.value % Provided,
    libraryDependencies += "org.scalatest" %% "scalatest" % "3.2.19" % Test,
    scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-Xlint:-unused,_", "-release", "17"),
    // The jar tells the Python side which Spark it was built for.
    Compile / resourceGenerators += Def.task {
      val f = (Compile / resourceManaged).value / "arrnf-build.properties"
      IO.write(f, s"spark.version=$sparkVersion\nscala.version=${scalaVersion.value}\narrnf.version=${version.value}\n")
      Seq(f)
    }.taskValue,
    // Spark in a forked JVM on Java 17 needs these packages opened (as in Spark's own launcher).
    Test / fork := true,
    Test / parallelExecution := false,
    Test / javaOptions ++= Seq(
      "-Xmx2g",
      "-XX:+IgnoreUnrecognizedVMOptions",
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
      "--add-opens=java.base/java.io=ALL-UNNAMED",
      "--add-opens=java.base/java.net=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
      "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
      "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
      "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
      "-Djdk.reflect.useDirectMethodHandle=false",
      "-Dio.netty.tryReflectionSetAccessible=true",
      "-Dspark.testing=true"
    ),
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    // The jar keeps sbt's name and place (target/scala-2.13/arrnf-jvm-rules_2.13-<version>.jar);
    // dev/build-jar asks sbt for it. No Scaladoc jar in a publication (local repositories only).
    Compile / packageDoc / publishArtifact := false,
    pomIncludeRepository := (_ => false),
    licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0"))
  )

lazy val root = (project in file("."))
  .aggregate(jvmRules)
  .settings(publish / skip := true)
