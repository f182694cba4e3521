// The JVM half of pyspark-arrnf: Catalyst rules, the ArrNF normalizer and the extension that
// registers them.
//
// Spark is provided, never packaged: the jar runs inside the Spark that PySpark starts, so it is
// compiled against exactly that Spark — the jars of the installed PySpark wheel. (Spark 4.3.0 is on
// PyPI but not on Maven Central, the only JVM registry this project may use.) dev/sbt finds them
// through the project's Python (or ARRNF_SPARK_JARS); the Python side checks the version again
// when it configures a session.

val sparkVersion = "4.3.0"

lazy val sparkJarsDir: File = sys.env.get("ARRNF_SPARK_JARS").map(file).getOrElse(
  sys.error("ARRNF_SPARK_JARS is not set: run sbt through dev/sbt, which finds PySpark's jars."))

ThisBuild / organization := "io.github.pyspark-arrnf"
ThisBuild / version      := "0.1.0"
ThisBuild / scalaVersion := "2.13.18"

lazy val jvmRules = (project in file("jvm-rules"))
  .settings(
    name := "arrnf-jvm-rules",
    // Spark (and its own Scala library) from PySpark: on the compile and test classpaths only.
    Compile / unmanagedJars ++= {
      val jars = (sparkJarsDir * "*.jar").classpath
      val catalyst = s"spark-catalyst_2.13-$sparkVersion.jar"
      if (!jars.exists(_.data.getName == catalyst))
        sys.error(s"$sparkJarsDir has no $catalyst: this build is for Spark $sparkVersion (pip install pyspark==$sparkVersion).")
      // sbt brings the Scala library and compiler itself; keep PySpark's other scala-* modules
      // (scala-parallel-collections: Spark runs a Union's partitions with it).
      jars.filterNot(j => Set("scala-library", "scala-reflect", "scala-compiler").exists(n => j.data.getName.startsWith(n + "-")))
    },
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
    Compile / packageBin / artifactPath := baseDirectory.value / "target" / "arrnf-jvm-rules.jar"
  )

lazy val root = (project in file("."))
  .aggregate(jvmRules)
  .settings(publish / skip := true)
