/**
 * What a table writer's `prepare` hands the committer for ONE row-delta commit (docs/design.md §4):
 * the files written, what they replace, and — deletion-vector upserts — how the key index moves and
 * how to locate the deletes of committed rows again when another writer got in the way
 * (`relocate`, built here by `withRelocation`).
 */
import type { DataFile } from '../spec/data-file.js';
import { PositionBitmap } from '../puffin/position-bitmap.js';
import type { IndexedRow, KeyIndexDelta } from '../keyindex/key-index.js';
import type { ValueIndexDelta } from '../keyindex/value-index.js';
import type { KeyId } from '../keyindex/table-key.js';
import type { ExistingDeletes, PositionDeleteTarget } from './position-delete-writers.js';
import type { WriterStats } from './writer-stats.js';

export interface PrepareOptions {
  /**
   * Spec id for the equality deletes of a partitioned table: an unpartitioned spec present in the
   * table's specs. Default: one found in the metadata; error when there is none.
   */
  equalityDeleteSpecId?: number;
  /**
   * Deletes already committed for data files this writer position-deletes (v3: they must be merged
   * into the new DV and replaced): the committed files a DV upsert deletes rows of
   * (`committedTargetPaths`, checkpoint/existing-deletes.ts). Files written in this checkpoint have
   * none. A promise is awaited only once the checkpoint's data files are written, so that reading
   * those deletes overlaps the encoding.
   */
  existingDeletes?: ReadonlyMap<string, ExistingDeletes> | Promise<ReadonlyMap<string, ExistingDeletes>>;
}

export interface PreparedChanges {
  dataFiles: DataFile[];
  /** Equality deletes, position-delete files (v2) or deletion vectors (v3). */
  deleteFiles: DataFile[];
  /** Earlier DVs replaced by merged ones (to be marked DELETED). */
  removedDeleteFiles: DataFile[];
  /** Every object written for this checkpoint (to delete if it is never committed). */
  writtenPaths: string[];
  stats: WriterStats;
  /** With a key index: how the table's rows move once this commit lands (apply it only then). */
  indexDelta?: KeyIndexDelta;
  /** With a row index (keyless tables): how the table's rows move once this commit lands (apply it only then). */
  rowIndexDelta?: ValueIndexDelta;
  /**
   * A v3 child of cascades (checkpoint/value-indexes.ts): per FK column set, the rows this commit
   * wrote that are live, with their FK values and identities (primary key, or whole row).
   */
  fkRows?: ReadonlyMap<string, readonly { value: KeyId; file: DataFile; pos: number; owner: KeyId }[]>;
  /** With a key or row index: data files committed earlier that this commit's DVs delete rows of. */
  committedTargets?: readonly string[];
  /**
   * With a key index: the same changes with the deletes of committed rows located again, through
   * `index` (built from the table as it is now) — for a commit another writer got in the way of, by
   * rewriting a data file whose rows this checkpoint deletes (a compaction) or giving it a DV. The
   * data files stay; the deletion vectors are written anew (their existing deletes from
   * `existingFor`). `replacedPaths`: the DV files of these prepared changes, which the new ones
   * replace and no commit may reference.
   */
  relocate?: (index: RowLocator, existingFor: (targets: ReadonlySet<string>) => Promise<ReadonlyMap<string, ExistingDeletes>>) => Promise<PreparedChanges & { replacedPaths: string[] }>;
}

/**
 * Where the committed row of a key is, in an index of the table as it is now: the key index, or —
 * keyless tables — a row index that hands out each live copy of a row once (dv-replan.ts).
 */
export interface RowLocator {
  get(k: KeyId): IndexedRow | undefined;
}

/**
 * `prepared` with its key-index delta and a `relocate` that writes the position deletes again for
 * the committed targets found through a new index; every relocation's files are named apart
 * (`generation`) and carry their own `relocate`.
 */
export function withRelocation(
  prepared: PreparedChanges,
  args: {
    /** The key index's delta (keyed tables; keyless ones have none). */
    indexDelta: KeyIndexDelta | undefined;
    /** The keys whose committed row the changes delete (a keyless row once per copy). */
    deleted: readonly KeyId[];
    committedTargets: readonly string[];
    /** The delete files that are not position deletes (equality deletes): kept as they are. */
    otherDeletes: readonly DataFile[];
    /** The paths written that are not position deletes. */
    otherPaths: readonly string[];
    /** The position-delete files of `prepared` (what the first relocation replaces). */
    positionalPaths: string[];
    /** Writes the position deletes of this checkpoint's data files and `targets` (paths to `written`). */
    rewrite: (targets: PositionDeleteTarget[], existing: ReadonlyMap<string, ExistingDeletes>, written: string[], generation: number) => Promise<{ deleteFiles: DataFile[]; removed: DataFile[] }>;
  },
): PreparedChanges {
  let generation = 0;
  const relocator = (current: PreparedChanges, currentPaths: string[]): NonNullable<PreparedChanges['relocate']> => async (index, existingFor) => {
    const found = new Map<string, PositionDeleteTarget>();
    for (const k of args.deleted) {
      const at = index.get(k);
      if (!at) continue; // no live row of k any more: nothing to delete
      let t = found.get(at.file.filePath);
      if (!t) found.set(at.file.filePath, (t = { dataFilePath: at.file.filePath, specId: at.file.specId, partition: at.file.partition, positions: new PositionBitmap() }));
      t.positions.add(at.pos);
    }
    const existing = await existingFor(new Set(found.keys()));
    const paths: string[] = [];
    const again = await args.rewrite([...found.values()], existing, paths, ++generation);
    const deadRows = [...found.values()].map((t) => ({ filePath: t.dataFilePath, positions: t.positions }));
    const next: PreparedChanges = {
      ...current,
      deleteFiles: [...args.otherDeletes, ...again.deleteFiles],
      removedDeleteFiles: again.removed,
      writtenPaths: [...args.otherPaths, ...paths],
      committedTargets: [...found.keys()],
      // the rows the relocated DVs remove, where the index the delta goes to has them
      indexDelta: args.indexDelta && { ...args.indexDelta, deadRows },
    };
    next.relocate = relocator(next, paths);
    return { ...next, replacedPaths: currentPaths };
  };
  const withIndex: PreparedChanges = { ...prepared, indexDelta: args.indexDelta, committedTargets: args.committedTargets };
  withIndex.relocate = relocator(withIndex, args.positionalPaths);
  return withIndex;
}
