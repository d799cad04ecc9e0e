/**
 * The idempotent upsert writer: the public surface of `src/iceberg/writer/` (docs/design.md §4).
 *
 * - `RowChange` (+ `insert`/`update`/`remove`/`removeKey` helpers): one row change of one table.
 * - `TableChangeWriter`: one table's changes of one checkpoint → data files, equality deletes, position
 *   deletes (v2) or deletion vectors (v3), for one row-delta commit.
 * - `CheckpointCommitter`: buffers changes of many tables and commits one stamped snapshot per table
 *   per checkpoint, replay-safe.
 * - `lastCommitted(table, jobId)`: where a job stands in a table, read from the table itself.
 */
export { insert, remove, removeKey, update, type ChangeOp, type KeyedRowChange, type RowChange } from './row-change.js';
export { deleteMatching, MatchingDeletes, resolveMatchFields, type MatchingDelete } from './delete-matching.js';
export {
  TableChangeWriter,
  type PrepareOptions,
  type PreparedChanges,
  type TableChangeWriterOptions,
  type WriteMode,
  type WriterStats,
  type WriterTable,
} from './table-change-writer.js';
export {
  CheckpointCommitter,
  type CheckpointCommitterOptions,
  type CheckpointOutcome,
  type TableCommitOutcome,
  type TableCommitStatus,
} from './checkpoint-committer.js';
export {
  CHECKPOINT_ID_KEY,
  JOB_ID_KEY,
  MAX_COMMITTED_CHECKPOINT_ID_KEY,
  SOURCE_OFFSET_KEY,
  checkpointSummary,
  isCheckpointCommitted,
  lastCommitted,
  type CommittedCheckpoint,
} from './checkpoint-stamps.js';
export { TableKey } from './table-key.js';
export { encodeKey, canonicalValue } from './row-key.js';
export { Partitioner, type PartitionKey, type PartitionOf } from './partitioner.js';
export { readExistingDeletionVector, writeDeletionVectors, writePositionDeleteFile, type ExistingDeletes, type PositionDeleteTarget } from './position-delete-writers.js';
export { findExistingDeletes } from './existing-deletes.js';
export { tableLocations, targetFileSizes } from './table-locations.js';
