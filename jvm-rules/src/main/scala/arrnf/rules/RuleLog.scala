package arrnf.rules

import java.util.concurrent.ConcurrentLinkedDeque
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import scala.jdk.CollectionConverters._

/**
 * What a cost-guarded rule did in this JVM: how often it fired and declined, and its most recent
 * reasons ("fired: …" or "declined: …", oldest first), readable from Python through `arrnf.Api`.
 */
class RuleLog {
  private val fired = new AtomicLong()
  private val declined = new AtomicLong()
  private val recent = new ConcurrentLinkedDeque[String]()
  // The deque's own size() walks it: counted here (planning records a reason per candidate).
  private val kept = new AtomicInteger()
  private val Keep = 200

  private def remember(s: String): Unit = {
    recent.addLast(s)
    if (kept.incrementAndGet() > Keep && recent.pollFirst() != null) kept.decrementAndGet()
  }

  private[rules] def recordFiring(reason: String): Unit = { fired.incrementAndGet(); remember("fired: " + reason) }
  private[rules] def recordDecline(reason: String): Unit = { declined.incrementAndGet(); remember("declined: " + reason) }

  /** How often the rule rewrote a plan since the JVM started (Spark may run a rule more than once per query). */
  def firings(): Long = fired.get()
  /** How often the rule found where its law holds but declined (cost, or unknown estimates). */
  def declines(): Long = declined.get()
  /** The most recent reasons, oldest first ("fired: …" or "declined: …"). */
  def reasons(): java.util.List[String] = recent.asScala.toList.asJava
  def reset(): Unit = synchronized { fired.set(0); declined.set(0); recent.clear(); kept.set(0) }
}
