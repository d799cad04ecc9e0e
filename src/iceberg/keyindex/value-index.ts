/**
 * A value index of one table (docs/how-floe-writes.md): a column value → the places (data file, row
 * position) of the live rows that hold it. A multiset: rows with the same value are as many
 * entries. floe keeps two kinds, each beside (or instead of) the key index (key-index.ts):
 *
 * - the foreign-key index of an `ON DELETE CASCADE` child (value-index-build.ts): FK value → the
 *   child's rows, each with its identity (`owner`: its primary key, or the whole row of a keyless
 *   child), so that a parent's delete becomes deletion-vector entries on exactly the child rows
 *   that reference it — not an equality delete on the FK columns, which PyIceberg cannot read;
 * - the row index of a keyless table: the whole row (its canonical encoding, row-key.ts: exact, no
 *   hash) → the places of its copies, so that a binlog DELETE, which MySQL applies to one row,
 *   removes exactly one copy through a deletion vector — a whole-row equality delete removes them all.
 *
 * Like the key index it is a cache of the lake that says which snapshot it matches, changed only by
 * the delta of a commit that landed, and rows go dead by position: a deletion vector's positions are
 * dead for every index of the table, whatever the change that wrote it (an update, a delete, a
 * cascade) — so a delete of one copy among identical rows kills exactly the position it chose. It
 * lives in memory (memory-value-index.ts), on local disk beyond the memory bound
 * (sqlite-value-index.ts), and is built from the lake at each start, and again when its table moved
 * in a way it does not follow (value-index-lifecycle.ts).
 */
import type { DataFile } from '../spec/data-file.js';
import type { PositionBitmap } from '../puffin/position-bitmap.js';
import type { KeyId } from './table-key.js';

/** One row of a value index: the row at `pos` of `file` holds `value`; `owner` is its primary key (keyed tables). */
export interface ValueEntry {
  readonly value: KeyId;
  readonly file: DataFile;
  readonly pos: number;
  readonly owner: KeyId | undefined;
}

/** What a landed commit changed: rows written (with their values), rows its deletion vectors removed. */
export interface ValueIndexDelta {
  readonly setCount: number;
  forEachSet(each: (value: KeyId, file: DataFile, pos: number, owner: KeyId | undefined) => void): void;
  /** The committed rows the commit's deletion vectors removed, per data file. */
  readonly deadRows: readonly { readonly filePath: string; readonly positions: PositionBitmap }[];
}

/** The delta of a commit that moves no row. */
export const NO_VALUE_MOVES: ValueIndexDelta = { setCount: 0, forEachSet: () => {}, deadRows: [] };

export interface ValueIndex {
  /** The snapshot whose live rows the index holds (undefined: the table has none). */
  readonly snapshotId: bigint | undefined;
  /** Entries held (a memory index also counts dead ones not dropped yet). */
  readonly size: number;
  readonly kind: 'memory' | 'disk';
  /** `each(file, pos, owner)` for every live row holding `value`, until `each` returns true. */
  rowsOf(value: KeyId, each: (file: DataFile, pos: number, owner: KeyId | undefined) => boolean | void): void;
  /** Applies a landed commit's delta; the index then matches `snapshotId`. */
  apply(delta: ValueIndexDelta, snapshotId: bigint | undefined): void;
  /** Every live entry (tests). */
  entries(): Iterable<ValueEntry>;
  close(): void;
}

/** A value index a build fills and a lifecycle keeps: in memory, or on disk (memoryBytes 0). */
export interface KeptValueIndex extends ValueIndex {
  /** About how many bytes of memory the index holds. */
  readonly memoryBytes: number;
  /** Rows of data files read from the lake. */
  addRows(entries: readonly ValueEntry[]): void;
}
