/**
 * The idempotent upsert writer: the public surface of `src/iceberg/writer/` (docs/design.md §4).
 *
 * - `RowChange` (+ `insert`/`update`/`remove`/`removeKey` helpers): one row change of one table.
 * - `TableChangeWriter`: one table's changes of one checkpoint → data files, equality deletes, position
 *   deletes (v2) or deletion vectors (v3), for one row-delta commit.
 * - `TableCommitter`: buffers one table's changes and commits them as one stamped snapshot per
 *   checkpoint, replay-safe (its key index: key-index-lifecycle.ts; DVs planned again: dv-replan.ts).
 *   When to commit is not its call: the checkpoint coordinator (src/pipeline/checkpoint.ts) decides.
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
export { TableCommitter, type SchemaCommit, type TableCommitOutcome, type TableCommitterOptions } from './table-committer.js';
export type { KeyTableBuilder } from './key-table-builder.js';
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
