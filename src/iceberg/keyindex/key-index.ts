/**
 * The primary-key index of one table for deletion-vector upserts: key → (data file, row position)
 * of every live row. With it an UPDATE or DELETE of a row committed in an earlier checkpoint becomes
 * a deletion-vector entry on that row's data file (spec "Deletion Vectors": positions of one data
 * file, one DV per data file per snapshot) instead of an equality delete — which readers must apply
 * to every older file, and which PyIceberg cannot read at all.
 *
 * The lake is the truth, the index a cache of it: it is built from the table's live rows (the key
 * columns of each data file, deletes applied, with their positions: key-index-build.ts) and says
 * which snapshot it matches (`snapshotId`). The writer changes it only through the delta of a commit
 * that landed (`apply`), or the rows floe's own compaction moved (`rewrite`), so it stays exactly the
 * table's state after that commit. When the table moved on without floe (another writer's commit),
 * the owner catches it up from the lake or rebuilds it (key-index-lifecycle.ts).
 *
 * Two stores: in memory (memory-key-index.ts: 8 bytes per key of a snapshotted numeric key, runs of
 * keys at consecutive positions; a hash entry for a row that moved or a string key), persisted by
 * index-store.ts; and SQLite on local disk (sqlite-key-index.ts) for an index beyond
 * `iceberg.keyIndex.memoryMaxBytes`.
 */
import type { DataFile } from '../spec/data-file.js';
import type { PositionBitmap } from '../puffin/position-bitmap.js';
import { ancestorsOf } from '../spec/snapshot-ids.js';
import type { Snapshot, TableMetadata } from '../spec/table-metadata.js';
import type { KeyId } from './table-key.js';


export interface IndexedRow {
  readonly file: DataFile;
  readonly pos: number;
}

/** What a landed commit changed: keys now at a new place, keys whose row is gone. */
export interface KeyIndexDelta {
  /** How many keys are at a new place. */
  readonly setCount: number;
  /**
   * `each(k, file, pos)` for every key now at a new place — not a list of them: a snapshot commit's
   * delta holds half a million, and an array per entry was most of what its commit allocated.
   */
  forEachSet(each: (k: KeyId, file: DataFile, pos: number) => void): void;
  /** Keys whose committed row the commit deleted (an UPDATE's too: its key is also set anew). */
  readonly deleted: readonly KeyId[];
  /**
   * The committed rows the commit's deletion vectors removed, per data file: where `deleted` keys
   * were. A memory index marks them dead without looking each key up (memory-key-index.ts);
   * without them it looks the keys up.
   */
  readonly deadRows?: readonly { readonly filePath: string; readonly positions: PositionBitmap }[];
}

/** What floe's own compaction moved (maintenance/rewrite-data-files.ts), for the index to follow it. */
export interface CompactionCommit {
  readonly snapshotId: bigint;
  readonly parentSnapshotId: bigint | undefined;
  readonly removedDataFiles: readonly DataFile[];
  readonly addedDataFiles: readonly DataFile[];
}

/** A delta of listed entries. */
export function keyIndexDelta(set: readonly (readonly [KeyId, DataFile, number])[], deleted: readonly KeyId[]): KeyIndexDelta {
  return {
    setCount: set.length,
    forEachSet: (each) => {
      for (const [k, file, pos] of set) each(k, file, pos);
    },
    deleted,
  };
}

/** The delta of a commit that moves no row (a manifest rewrite, a stamps-only commit, no keyed writer). */
export const NO_KEY_MOVES: KeyIndexDelta = keyIndexDelta([], []);

/**
 * What the writer and the committer need of an index. `find` is synchronous: the writer asks it once
 * per committed row a checkpoint deletes, in key order at the checkpoint (keyed-change-writer.ts);
 * better-sqlite3 answers synchronously too.
 */
export interface KeyIndex {
  /** The snapshot whose live rows the index holds (undefined: the table has none). */
  readonly snapshotId: bigint | undefined;
  readonly size: number;
  /** 'memory' (memory-key-index.ts) or 'disk' (SQLite under the state directory, sqlite-key-index.ts). */
  readonly kind: 'memory' | 'disk';
  get(k: KeyId): IndexedRow | undefined;
  /**
   * `get` without an object per answer (the writer's hot path: one per UPDATE and DELETE): the data
   * file of `k`'s row, its position left in `foundPos`, or undefined.
   */
  find(k: KeyId): DataFile | undefined;
  /** The position of the row the last successful `find` found. */
  readonly foundPos: number;
  set(k: KeyId, file: DataFile, pos: number): void;
  delete(k: KeyId): void;
  /**
   * Applies a landed commit's delta; the index then matches `snapshotId` (atomically on disk).
   * `committed`: the commit's files (a disk index records which deletes its files now have).
   */
  apply(delta: KeyIndexDelta, snapshotId: bigint | undefined, committed?: { readonly dataFiles: readonly DataFile[]; readonly deleteFiles: readonly DataFile[] }): void;
  /**
   * Follows floe's own compaction (maintenance/rewrite-data-files.ts): `moved` are the new places of
   * every row of the `removed` data files (the rewrite keeps each live row, so after it no key points
   * at a removed file), which are then forgotten; the index matches `snapshotId`, the `replace`
   * commit (atomically on disk). `added` are the new data files, which no delete applies to.
   */
  rewrite(moved: readonly (readonly [KeyId, DataFile, number])[], removed: readonly string[], added: readonly DataFile[], snapshotId: bigint): void;
  /** Every entry (spilling a memory index to disk). */
  entries(): Iterable<readonly [KeyId, DataFile, number]>;
  close(): void;
}

/** Summary counts of file changes (spec "Optional Snapshot Summary Fields"); a manifest rewrite has none. */
const FILE_CHANGE_KEYS = ['added-data-files', 'deleted-data-files', 'added-delete-files', 'removed-delete-files', 'added-records', 'deleted-records'];

/**
 * A manifest rewrite (maintenance/rewrite-manifests.ts, Java `RewriteManifests`): operation
 * `replace` carrying Java's `manifests-replaced` count and no added or removed file. It moves
 * entries between manifests and leaves every live row in its file at its position. A `replace`
 * without those marks may be a compaction (which moves rows) and never counts.
 */
export function isManifestRewrite(s: Snapshot): boolean {
  const sum = s.summary;
  if (sum.operation !== 'replace' || sum['manifests-replaced'] === undefined) return false;
  return FILE_CHANGE_KEYS.every((k) => sum[k] === undefined || sum[k] === '0');
}

/**
 * Whether an index of snapshot `from` also matches snapshot `to`: `to` is `from`, or descends from it
 * through manifest rewrites only. floe's maintenance rewrites manifests between checkpoints; without
 * this every rewrite would cost the next checkpoint a rebuild of the index (a read of every data
 * file's key column).
 */
export function indexStillMatches(metadata: TableMetadata, from: bigint | undefined, to: bigint | undefined): boolean {
  if (from === to) return true;
  if (from === undefined || to === undefined) return false;
  for (const s of ancestorsOf(metadata, to)) {
    if (s.snapshotId === from) return true;
    if (!isManifestRewrite(s)) return false;
  }
  return false; // `from` is not an ancestor (expired, or another branch of history)
}
