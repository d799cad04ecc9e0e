/**
 * The upsert writer: the public surface of `src/iceberg/writer/` (docs/design.md §4) — one table's
 * changes of one checkpoint in, the files of one row-delta commit out.
 *
 * - `RowChange` (+ `insert`/`update`/`remove`/`removeKey` helpers): one row change of one table.
 * - `TableChangeWriter`: one table's changes of one checkpoint → data files, equality deletes, position
 *   deletes (v2) or deletion vectors (v3, through a key index: src/iceberg/keyindex/), for one
 *   row-delta commit. Who commits them, replay-safe and stamped: src/iceberg/checkpoint/.
 * - `deleteMatching`: cascade child deletes by foreign-key value.
 */
export { insert, remove, removeKey, update, type RowChange } from './row-change.js';
export { deleteMatching, type MatchingDelete } from './delete-matching.js';
export type { RemovedRows } from './cascade-removals.js';
export { TableChangeWriter, type PreparedChanges, type TableChangeWriterOptions, type WriteMode } from './table-change-writer.js';
export { writeDeletionVectors } from './position-delete-writers.js';
