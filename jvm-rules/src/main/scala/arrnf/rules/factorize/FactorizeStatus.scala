package arrnf.rules.factorize

import java.util.concurrent.ConcurrentLinkedDeque
import java.util.concurrent.atomic.AtomicLong

import scala.jdk.CollectionConverters._

/**
 * What [[FactorizeUnionOfJoins]] did, readable from Python through py4j:
 * `spark._jvm.arrnf.rules.FactorizeStatus.firings()` and `.reasons()`.
 */
object FactorizeStatus {
  private val fired = new AtomicLong()
  private val declined = new AtomicLong()
  private val recent = new ConcurrentLinkedDeque[String]()
  private val Keep = 200

  private def remember(s: String): Unit = {
    recent.addLast(s)
    while (recent.size > Keep) recent.pollFirst()
  }

  private[rules] def recordFiring(reason: String): Unit = { fired.incrementAndGet(); remember("fired: " + reason) }
  private[rules] def recordDecline(reason: String): Unit = { declined.incrementAndGet(); remember("declined: " + reason) }

  /** How often the rule rewrote a union since the JVM started (Spark may run a rule more than once per query). */
  def firings(): Long = fired.get()
  /** How often a common factor was found but the cost guard declined it. */
  def declines(): Long = declined.get()
  /** The most recent reasons, oldest first ("fired: …" or "declined: …"). */
  def reasons(): java.util.List[String] = recent.asScala.toList.asJava
  def reset(): Unit = { fired.set(0); declined.set(0); recent.clear() }
}
