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
export { insert, remove, removeKey, update,   type RowChange } from './row-change.js';
export { deleteMatching,   type MatchingDelete } from './delete-matching.js';
export {
  TableChangeWriter,
  
  type PreparedChanges,
  type TableChangeWriterOptions,
  type WriteMode,
  
  
} from './table-change-writer.js';
export {
  CheckpointCommitter,
  
  
  
  
} from './checkpoint-committer.js';
export {
  CHECKPOINT_ID_KEY,
  JOB_ID_KEY,
  
  
  
  
  lastCommitted,
  type CommittedCheckpoint,
} from './checkpoint-stamps.js';
;
export { encodeKey,  } from './row-key.js';
;
export {  writeDeletionVectors,    } from './position-delete-writers.js';
export { findExistingDeletes } from './existing-deletes.js';
;
