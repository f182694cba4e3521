package arrnf.guard

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

import scala.jdk.CollectionConverters._

import arrnf.BuildInfo

/** Counters the Python side and the tests read (through py4j: `arrnf.ArrnfStatus`). */
object ArrnfStatus {
  private val failureCounts = new ConcurrentHashMap[String, AtomicLong]()

  def recordFailure(rule: String): Unit =
    failureCounts.computeIfAbsent(rule, _ => new AtomicLong()).incrementAndGet()

  /** Failures per rule since the JVM started. */
  def failures(): java.util.Map[String, java.lang.Long] =
    failureCounts.asScala.map { case (k, v) => k -> java.lang.Long.valueOf(v.get()) }.asJava

  def failureCount(rule: String): Long = Option(failureCounts.get(rule)).map(_.get()).getOrElse(0L)

  def sparkVersion: String = BuildInfo.sparkVersion
  def version: String = BuildInfo.version
}
