/**
 * The change model the upsert writer consumes: one row-level change of one table, in the table
 * schema's top-level field order (src/model/values.ts). It is what the pipeline makes of a source
 * ChangeEvent after routing and column transforms; the writer never sees MySQL types.
 *
 * - `insert`: `after` is the new row.
 * - `update`: `after` is the new row; the row it replaces is identified by `key`, else by `before`'s
 *   key, else (key unchanged) by `after`'s key. When that key differs from `after`'s key, the old key
 *   is deleted too (a primary-key change).
 * - `delete`: the row is identified by `key` or by `before`'s key.
 *
 * In keyless tables (append mode) the row is its own identity: `delete` and `update` need `before`.
 *
 * - `delete-matching` (delete-matching.ts): every live row whose named fields equal the given values
 *   is deleted — the child rows of a MySQL ON DELETE CASCADE, which the binlog does not carry.
 *
 * Delivery: an insert of a key that exists is treated as an upsert, and a delete of a key that does
 * not exist is a no-op, so a replayed change leaves the table as it was (docs/design.md §4; docs/seeds/seed-003.txt "UPSERT는
 * 멱등합니다").
 */
import type { Row, Value } from '../../model/values.js';
import type { MatchingDelete } from './delete-matching.js';

type ChangeOp = 'insert' | 'update' | 'delete';

/** A row-level change, or a matching delete (`delete-matching`, delete-matching.ts). */
export type RowChange = KeyedRowChange | MatchingDelete;

interface KeyedRowChange {
  op: ChangeOp;
  /** The row before the change (update: optional when `key` is given or the key is unchanged). */
  before?: Row;
  /** The row after the change (insert, update). */
  after?: Row;
  /**
   * Identifier-field values (schema order) of the row the change replaces or deletes; derived from
   * `before` (or, for an update without `before`, from `after`) when absent.
   */
  key?: Value[];
}

export function insert(after: Row): RowChange {
  return { op: 'insert', after };
}

export function update(after: Row, before?: Row): RowChange {
  return before === undefined ? { op: 'update', after } : { op: 'update', before, after };
}

export function remove(before: Row): RowChange {
  return { op: 'delete', before };
}

export function removeKey(key: Value[]): RowChange {
  return { op: 'delete', key };
}
