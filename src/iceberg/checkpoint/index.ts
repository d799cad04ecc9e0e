/**
 * Checkpoint commits: the public surface of `src/iceberg/checkpoint/` (docs/design.md §4).
 *
 * - `TableCommitter`: buffers one table's changes (a `TableChangeWriter`) and commits them as one
 *   stamped snapshot per checkpoint, replay-safe; its key index comes from src/iceberg/keyindex/.
 *   When to commit is not its call: the checkpoint coordinator (src/pipeline/checkpoint.ts) decides.
 * - `lastCommitted(table, jobId)`: where a job stands in a table, read from the table itself; the
 *   stamp keys (`JOB_ID_KEY`, `CHECKPOINT_ID_KEY`) for readers of snapshot summaries.
 * - `findExistingDeletes`: the deletes a table holds for data files a new deletion vector replaces.
 */
export { TableCommitter, type TableCommitOutcome, type TableCommitterOptions } from './table-committer.js';
export type { SchemaCommit } from './checkpoint-commit.js';
export { CHECKPOINT_ID_KEY, everyStampedProgress, JOB_ID_KEY, lastCommitted, type CommittedCheckpoint } from './checkpoint-stamps.js';
export { findExistingDeletes } from './existing-deletes.js';
