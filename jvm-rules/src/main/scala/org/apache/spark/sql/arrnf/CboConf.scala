package org.apache.spark.sql.arrnf

import org.apache.spark.sql.internal.SQLConf

/**
 * A session's settings with cost-based estimation on (`spark.sql.cbo.enabled`), for Spark's
 * estimation on ArrNF's copies of a plan; the user's settings are untouched. Spark's clone sets and
 * checks every setting one by one (2–10% of the estimator's time over the TPC queries, by two profilers), so the
 * settings are copied as they are, and one copy is kept per session conf and made again once any of its settings changed. In Spark's package because
 * a conf's settings are private to it.
 */
object CboConf {
  private final class Kept(val settings: java.util.Map[String, String], val conf: SQLConf)

  // Weak keys: a session's conf that is gone takes its copy with it.
  private val kept = java.util.Collections.synchronizedMap(new java.util.WeakHashMap[SQLConf, Kept]())

  /** `conf`'s settings with cost-based estimation on: the same object while `conf`'s settings stay
   *  as they were (read it, do not change it). */
  def of(conf: SQLConf): SQLConf = {
    val k = kept.get(conf)
    if (k != null && k.settings == conf.settings) k.conf
    else {
      val now = conf.settings.synchronized(new java.util.HashMap[String, String](conf.settings))
      val c = new SQLConf
      // As they are, unchecked: a value a session started with that its check refuses is kept, not thrown.
      now.forEach((key, value) => if (value != null) c.settings.put(key, value))
      c.setConf(SQLConf.CBO_ENABLED, true)
      kept.put(conf, new Kept(now, c))
      c
    }
  }
}
