/**
 * The counters of one table writer's checkpoint (`TableChangeWriter.stats`, reported per table by
 * the committer), shared by the sinks and mode writers that the table writer is made of.
 */
export interface WriterStats {
  changes: number;
  rowsWritten: number;
  positionDeletes: number;
  equalityDeletes: number;
  /** Data files dropped before commit because every row in them was deleted again. */
  droppedDataFiles: number;
  /** Data files opened for the checkpoint's rows: one per partition they touched (rolled files aside). */
  dataFilesOpened: number;
}
