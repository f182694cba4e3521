package arrnf.stats;

import org.apache.spark.sql.execution.datasources.InMemoryFileIndex;

/**
 * The version of the files an {@code InMemoryFileIndex} serves: its map of leaf files, which Spark
 * builds when it lists the files and replaces on {@code refresh()} (REFRESH TABLE,
 * {@code spark.catalog.refreshByPath}), never changing it in place. Written in Java because the
 * accessor is protected in Scala's view and public in the bytecode.
 */
public final class IndexVersion {
  private IndexVersion() {}

  /** An object that is the same (by identity) exactly while {@code index} serves the same files. */
  public static Object of(InMemoryFileIndex index) {
    return index.leafFiles();
  }
}
