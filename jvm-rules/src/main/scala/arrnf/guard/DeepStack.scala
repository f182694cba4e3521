package arrnf.guard

/** Walks that recurse once per plan level need more stack than py4j's threads (and the explain
 *  provider's) have on 300-level plans; and what the extension's guards catch when they do not. */
private[arrnf] object DeepStack {
  private val DeepStackBytes = 512L << 20

  /** Runs `body` on a fresh thread with a 512 MB stack (reserved, not committed) and returns its
   *  result or rethrows its failure. The active session (an inheritable thread-local) carries over. */
  def onDeepStack[T](body: => T): T = {
    @volatile var result: Either[Throwable, T] = scala.util.Left(new IllegalStateException("normalizer thread did not finish"))
    val t = new Thread(null, () => { result = try scala.util.Right(body) catch { case e: Throwable => scala.util.Left(e) } },
      "arrnf-normalizer", DeepStackBytes)
    t.start()
    t.join()
    result.fold(e => throw e, identity)
  }

  /** A stack overflow, also where the JVM reports it wrapped: the stack ran out while a lambda's
   *  call site was being linked, which throws an `InternalError` caused by it. */
  object Overflow {
    def unapply(e: Throwable): Boolean =
      Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(8).exists(_.isInstanceOf[StackOverflowError])
  }

  /** What the extension's guards catch and contain: a non-fatal failure or a stack overflow. */
  object Contained {
    def unapply(e: Throwable): Boolean = scala.util.control.NonFatal(e) || Overflow.unapply(e)
  }
}
