/**
 * The primary-key index of one table for deletion-vector upserts: key → (data file, row position)
 * of every live row. With it an UPDATE or DELETE of a row committed in an earlier checkpoint becomes
 * a deletion-vector entry on that row's data file (spec "Deletion Vectors": positions of one data
 * file, one DV per data file per snapshot) instead of an equality delete — which readers must apply
 * to every older file, and which PyIceberg cannot read at all.
 *
 * The lake is the truth, the index a cache of it: it is built from the table's live rows (the key
 * columns of each data file, deletes applied, with their positions) and says which snapshot it
 * matches (`snapshotId`). The writer changes it only through the delta of a commit that landed
 * (`apply`), or the rows floe's own compaction moved (`rewrite`), so it stays exactly the table's
 * state after that commit. When the table moved on without floe (another writer's commit), the
 * owner rebuilds it.
 *
 * Memory: one entry per live row (key-locations.ts: 16 bytes in typed arrays for a numeric key, a Map
 * entry for a string key) plus one DataFile per data file. Beyond `iceberg.keyIndex.memoryMaxRows` rows the
 * index lives on local disk instead (sqlite-key-index.ts), persisted across restarts.
 */
import type { Row } from '../../model/values.js';
import type { DataFile } from '../spec/data-file.js';
import type { FileIO } from '../../io/file-io.js';
import { DeleteLoader } from '../scan/delete-loader.js';
import { planScan, type FileScanTask } from '../scan/scan-plan.js';
import { readTaskIntegers, readTaskPositions, sortedDeletedPositions } from '../scan/task-reader.js';
import { Schema } from '../spec/schema.js';
import { ancestorsOf, currentSnapshot } from '../spec/snapshot-ids.js';
import type { Snapshot, TableMetadata } from '../spec/table-metadata.js';
import type { KeyId, TableKey } from './table-key.js';
import { KeyLocations, type KeyLocationsState } from './key-locations.js';
import type { KeyTableBuilder } from './key-table-builder.js';
import { NumberKeyTable } from './number-key-table.js';


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
  readonly deleted: readonly KeyId[];
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
 * What the writer and the committer need of an index. `get` is synchronous: the writer asks it
 * once per changed row on its hot path (better-sqlite3 answers synchronously too).
 */
export interface KeyIndex {
  /** The snapshot whose live rows the index holds (undefined: the table has none). */
  readonly snapshotId: bigint | undefined;
  readonly size: number;
  /** 'memory' (a Map) or 'disk' (SQLite under the state directory, sqlite-key-index.ts). */
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

/** A memory index as plain data (saved-index-file.ts): its snapshot, its file slots (undefined: freed) and its entries. */
export interface SavedMemoryIndex extends KeyLocationsState {
  readonly snapshotId: bigint | undefined;
  readonly files: readonly (DataFile | undefined)[];
}

export class MemoryKeyIndex implements KeyIndex {
  readonly kind = 'memory' as const;
  /** Slot → data file; undefined only for a freed slot of a saved index (no entry points at it). */
  private readonly files: (DataFile | undefined)[] = [];
  private readonly fileIds = new Map<string, number>();
  /** Key → (slot in `files`, position). */
  private readonly rows: KeyLocations;
  /** Slots of `files` no row points at any more (a compaction removed them): reused first. */
  private readonly freeIds: number[] = [];
  /** The file `set` resolved last, and its slot (cleared when a compaction frees slots). */
  private lastFile: DataFile | undefined;
  private lastFileId = -1;

  /**
   * `rows`: room for as many numeric keys without growing (an index built from the lake), the table
   * of numeric keys built already (in a worker: buildKeyIndex), its first values slots of `files`, or
   * every entry (a saved index, saved-index-file.ts). `files`: the data file of each slot, undefined
   * for a slot no entry points at (freed by a compaction).
   */
  constructor(
    public snapshotId: bigint | undefined,
    rows: number | NumberKeyTable | KeyLocations = 0,
    files: readonly (DataFile | undefined)[] = [],
  ) {
    this.rows = rows instanceof KeyLocations ? rows : new KeyLocations(rows);
    for (const [slot, file] of files.entries()) {
      this.files.push(file);
      if (file) this.fileIds.set(file.filePath, slot);
      else this.freeIds.push(slot);
    }
  }

  /** The index `saved()` gave, matching `snapshotId` (its own or one only manifest rewrites lead on to). */
  static fromSaved(snapshotId: bigint | undefined, saved: SavedMemoryIndex): MemoryKeyIndex {
    return new MemoryKeyIndex(snapshotId, KeyLocations.fromState(saved), saved.files);
  }

  /** The index as plain data; it shares the numeric table's buffer (the index stays usable). */
  saved(): SavedMemoryIndex {
    const free = new Set(this.freeIds);
    return { snapshotId: this.snapshotId, files: this.files.map((f, slot) => (free.has(slot) ? undefined : f)), ...this.rows.state() };
  }

  get size(): number {
    return this.rows.size;
  }

  get(k: KeyId): IndexedRow | undefined {
    const rows = this.rows;
    return rows.find(k) ? { file: this.files[rows.foundSlot]!, pos: rows.foundPos } : undefined;
  }

  foundPos = 0;

  find(k: KeyId): DataFile | undefined {
    const rows = this.rows;
    if (!rows.find(k)) return undefined;
    this.foundPos = rows.foundPos;
    return this.files[rows.foundSlot]!;
  }

  set(k: KeyId, file: DataFile, pos: number): void {
    // A commit's delta and an index build set the keys of one file after another: the file of the
    // previous call is the likely one, and comparing the object spares a hash of its long path.
    let id = file === this.lastFile ? this.lastFileId : this.fileIds.get(file.filePath);
    if (id === undefined) {
      const free = this.freeIds.pop();
      if (free === undefined) id = this.files.push(file) - 1;
      else this.files[(id = free)] = file;
      this.fileIds.set(file.filePath, id);
    }
    this.lastFile = file;
    this.lastFileId = id;
    this.rows.set(k, id, pos);
  }

  rewrite(moved: readonly (readonly [KeyId, DataFile, number])[], removed: readonly string[], _added: readonly DataFile[], snapshotId: bigint): void {
    for (const [k, file, pos] of moved) this.set(k, file, pos);
    for (const path of removed) {
      const id = this.fileIds.get(path);
      if (id === undefined) continue;
      this.fileIds.delete(path);
      this.freeIds.push(id);
    }
    this.lastFile = undefined; // its slot may have been freed
    this.snapshotId = snapshotId;
  }

  delete(k: KeyId): void {
    this.rows.delete(k);
  }

  apply(delta: KeyIndexDelta, snapshotId: bigint | undefined): void {
    for (const k of delta.deleted) this.rows.delete(k);
    // keys new to the index grow it — a snapshot's chunks add every key they set, a stream of updates
    // hardly any (each replaces a key the delta deleted): one rehash for them, not one per doubling
    this.rows.reserve(Math.max(0, delta.setCount - delta.deleted.length));
    delta.forEachSet((k, file, pos) => this.set(k, file, pos));
    this.snapshotId = snapshotId;
  }

  *entries(): Iterable<readonly [KeyId, DataFile, number]> {
    for (const [k, slot, pos] of this.rows.entries()) yield [k, this.files[slot]!, pos];
  }

  close(): void {}
}

/** Where a built index goes: a fresh memory index, or a disk index being filled (sqlite-key-index.ts). */
export interface KeyIndexSink {
  set(k: KeyId, file: DataFile, pos: number): void;
  /** Called before a file's rows are set: the deletes it is read with. */
  fileRead?(task: FileScanTask): void;
}

/** Summary counts of file changes (spec "Optional Snapshot Summary Fields"); a manifest rewrite has none. */
const FILE_CHANGE_KEYS = ['added-data-files', 'deleted-data-files', 'added-delete-files', 'removed-delete-files', 'added-records', 'deleted-records'];

/**
 * A manifest rewrite (maintenance/rewrite-manifests.ts, Java `RewriteManifests`): operation
 * `replace` carrying Java's `manifests-replaced` count and no added or removed file. It moves
 * entries between manifests and leaves every live row in its file at its position. A `replace`
 * without those marks may be a compaction (which moves rows) and never counts.
 */
function isManifestRewrite(s: Snapshot): boolean {
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

/**
 * Builds the index of the table's current snapshot: reads the key columns of every live data file
 * (deletion vectors, position and equality deletes applied) with the rows' positions — into a memory
 * index, or into `into` (a disk index being filled). `progress` hears about every file read.
 * `offThread`: a memory index of a single integer key column is built by it (key-table-builder.ts),
 * this thread only reading the files and their deletes; where it cannot (see `buildOffThread`), or
 * it fails, the build runs here.
 */
export async function buildKeyIndex(
  table: { io: FileIO; metadata: TableMetadata },
  key: TableKey,
  options: { into?: KeyIndexSink; progress?: (filesDone: number, filesTotal: number, rows: number) => void; offThread?: KeyTableBuilder } = {},
): Promise<MemoryKeyIndex> {
  const m = table.metadata;
  const snapshot = currentSnapshot(m);
  // the live rows are at most the snapshot's records (equality deletes are not subtracted there)
  const expected = options.into ? 0 : Number(snapshot?.summary['total-records'] ?? '0');
  const plan = await planScan(table.io, m);
  if (plan.tasks.length === 0) return new MemoryKeyIndex(snapshot?.snapshotId);
  if (options.offThread && !options.into) {
    const built = await buildOffThread(table, key, plan.schema, plan.tasks, options.offThread, expected, options.progress);
    if (built) return built;
  }
  const index = new MemoryKeyIndex(snapshot?.snapshotId, expected);
  const sink: KeyIndexSink = options.into ?? index;
  const reader = keyReader(table, key, plan.schema);
  let rows = 0;
  let done = 0;
  for (const task of plan.tasks) {
    sink.fileRead?.(task);
    await reader.live(task, (k, pos) => {
      sink.set(k, task.file, pos);
      rows++;
    });
    options.progress?.(++done, plan.tasks.length, rows);
  }
  return index;
}

/**
 * The memory index built by `builder`: a single `int` / `long` key column of Parquet data files
 * without equality deletes (which match whole rows: read on this thread), as readTaskIntegers reads
 * it. Undefined — build on this thread — when that does not hold, when a key does not fit the
 * numeric table (null, beyond ±(2^53 − 1)), or when the builder failed (a file this thread then
 * fails to read gives the error its usual words).
 */
async function buildOffThread(
  table: { io: FileIO; metadata: TableMetadata },
  key: TableKey,
  schema: Schema,
  tasks: readonly FileScanTask[],
  builder: KeyTableBuilder,
  expected: number,
  progress: ((filesDone: number, filesTotal: number, rows: number) => void) | undefined,
): Promise<MemoryKeyIndex | undefined> {
  const field = key.integerField;
  const kind = field?.type.kind;
  if (!field || (kind !== 'int' && kind !== 'long')) return undefined;
  if (tasks.some((t) => t.file.fileFormat !== 'PARQUET' || t.deletes.equality.length > 0)) return undefined;
  const m = table.metadata;
  const loader = new DeleteLoader(table.io, schema, m.schemas);
  const files: DataFile[] = [];
  const slots = new Map<string, number>();
  const build = builder({ id: field.id, name: field.name, kind }, expected);
  let state;
  try {
    let rows = 0;
    for (const [done, task] of tasks.entries()) {
      const path = task.file.filePath;
      let slot = slots.get(path);
      if (slot === undefined) slots.set(path, (slot = files.push(task.file) - 1));
      const deleted = await sortedDeletedPositions(task, loader);
      rows += Number(task.file.recordCount) - (deleted?.length ?? 0);
      await build.add(await table.io.read(path), slot, deleted);
      progress?.(done + 1, tasks.length, rows);
    }
    state = await build.finish();
  } catch {
    build.abort();
    return undefined;
  }
  return state && new MemoryKeyIndex(currentSnapshot(m)?.snapshotId, NumberKeyTable.fromState(state), files);
}

/** Reads the key columns of data files: the live rows of a task, or every row of its file. */
export function keyReader(table: { io: FileIO; metadata: TableMetadata }, key: TableKey, schema: Schema) {
  const m = table.metadata;
  // only the key columns, in schema order: each read row is then the key's values (TableKey.encode)
  const keySchema = new Schema(schema.schemaId, key.fieldIds.map((id) => schema.findField(id)!), []);
  const loader = new DeleteLoader(table.io, schema, m.schemas);
  const ctx = { io: table.io, schema: keySchema, schemas: m.schemas, specs: m.partitionSpecs, loader };
  // a single integer key column is read from its Arrow buffers (no row, no BigInt per row);
  // a value that is not a number there (null, beyond 2^53) gets the key's own encoding
  const integer = key.integerField;
  // a callback per row, not an async generator: a build reads millions of rows
  async function read(task: FileScanTask, each: (k: KeyId, pos: number) => void): Promise<void> {
    if (integer && (await readTaskIntegers(task, ctx, integer, (v, pos) => each(typeof v === 'number' ? v : key.encode([v], 'indexed key'), pos)))) return;
    for await (const batch of readTaskPositions(task, ctx)) {
      const rows: Row[] = batch.rows;
      for (let i = 0; i < rows.length; i++) each(key.encode(rows[i]!, 'indexed key'), batch.positions ? batch.positions[i]! : batch.firstPosition + i);
    }
  }
  return {
    live: read,
    /** Every row of the file, deleted or not (to learn the keys of the positions deletes removed). */
    all: (task: FileScanTask, each: (k: KeyId, pos: number) => void) => read({ ...task, deletes: { equality: [], position: [], dv: undefined } }, each),
  };
}
