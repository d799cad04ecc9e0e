/**
 * Where a table's key index comes from when the committer has none that matches the table's head
 * (key-index-lifecycle.ts), cheapest first:
 *
 * 1. the memory index persisted under the state directory (index-store.ts: its image and the
 *    patches logged after it) — as it stands when it holds the head, else caught up with the
 *    commits after it from the lake (key-index-catch-up.ts);
 * 2. the disk index (SQLite, sqlite-index-open.ts), replayed to the head;
 * 3. built from the lake (key-index-build.ts): in memory within the memory bound, on disk beyond.
 *
 * Each step that cannot be used says why (logged), and the next is tried.
 */
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { mapConcurrently } from '../../util/concurrent.js';
import type { DataFile } from '../spec/data-file.js';
import type { Schema } from '../spec/schema.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { CatalogTable } from '../table/index.js';
import { ManifestReads } from '../table/manifest-reads.js';
import { buildKeyIndex } from './key-index-build.js';
import { catchUpFromLake } from './key-index-catch-up.js';
import { indexStillMatches, NO_KEY_MOVES, type KeyIndex } from './key-index.js';
import { DEFAULT_MEMORY_MAX_BYTES, DEFAULT_SAVE_MIN_ROWS, type KeyIndexLoads, type KeyIndexOptions } from './key-index-options.js';
import { IndexStore, loadStoredIndex, type IndexIdentity } from './index-store.js';
import { MemoryKeyIndex } from './memory-key-index.js';
import { DiskKeyIndex, type DiskIndexIdentity } from './sqlite-key-index.js';
import { openDiskKeyIndex } from './sqlite-index-open.js';
import { TableKey } from './table-key.js';

/** Manifests read at once. */
const MANIFESTS_AT_ONCE = 8;
/** Bytes a row takes in a memory index built from the lake, about: a numeric key's runs, or hash entries. */
const NUMERIC_ROW_BYTES = 8;
const OTHER_ROW_BYTES = 100;

export interface LoadContext {
  readonly name: string;
  readonly jobId: string;
  readonly options: KeyIndexOptions;
  readonly loads: KeyIndexLoads;
}

/** A loaded index, with the store that persists it (a memory index under a state directory). */
export interface LoadedIndex {
  index: KeyIndex;
  store?: IndexStore;
}

export function imagePath(ctx: LoadContext, table: CatalogTable): string | undefined {
  const dir = ctx.options.keyIndex?.stateDir;
  return dir ? join(dir, ctx.jobId, `${table.metadata.tableUuid}.keyindex`) : undefined;
}

export function sqlitePath(ctx: LoadContext, table: CatalogTable): string | undefined {
  const dir = ctx.options.keyIndex?.stateDir;
  return dir ? join(dir, ctx.jobId, `${table.metadata.tableUuid}.keyindex.sqlite`) : undefined;
}

export function indexIdentity(tableUuid: string, key: TableKey): IndexIdentity {
  return { tableUuid, keyFieldIds: key.fieldIds, keyTypes: JSON.stringify(key.types) };
}

function diskIdentity(tableUuid: string, key: TableKey, schema: Schema): DiskIndexIdentity {
  return { ...indexIdentity(tableUuid, key), schemaId: schema.schemaId };
}

/** Whether an index of `bytes` (memory-key-index.ts `memoryBytes`) and `rows` live rows stays in memory. */
export function fitsInMemory(options: KeyIndexOptions, bytes: number, rows: number): boolean {
  const k = options.keyIndex;
  if (!k?.stateDir) return true; // no disk to go to
  return bytes <= (k.memoryMaxBytes ?? DEFAULT_MEMORY_MAX_BYTES) && (k.memoryMaxRows === undefined || rows <= k.memoryMaxRows);
}

/** The index of `table` as it is now (see the header). */
export async function loadKeyIndex(table: CatalogTable, schema: Schema, ctx: LoadContext): Promise<LoadedIndex> {
  const m = table.metadata;
  const key = TableKey.identifier(schema);
  const image = imagePath(ctx, table);
  const warn = (message: string): void => ctx.options.warn?.(message);
  if (image) {
    await rm(`${image}.mem`, { force: true }); // the saved file of an earlier layout: never read
    const loaded = await loadPersisted(image, table, key, schema, ctx);
    if (loaded) return loaded;
  }
  const sqlite = sqlitePath(ctx, table);
  if (sqlite) {
    const opened = await openDiskKeyIndex(sqlite, table, key, diskIdentity(m.tableUuid, key, schema));
    if (opened.index) {
      ctx.loads[opened.how]++;
      if (opened.how === 'replayed') ctx.options.info?.(`${ctx.name}: key index ${sqlite} caught up with snapshot ${String(opened.index.snapshotId)} (${opened.replayedFiles} data file(s) read)`);
      return { index: opened.index };
    }
    if (!opened.missing) warn(`${ctx.name}: key index ${sqlite} cannot be used: ${opened.why}; rebuilding it from the lake`);
  }
  const records = Number(currentSnapshot(m)?.summary['total-records'] ?? '0');
  const started = Date.now();
  let lastReport = started;
  const progress = (done: number, total: number, rows: number): void => {
    const now = Date.now();
    if (done === total || now - lastReport >= 10_000) {
      lastReport = now;
      ctx.options.info?.(`${ctx.name}: building the key index from the lake: ${done}/${total} data files, ${rows} rows, ${((now - started) / 1000).toFixed(1)} s`);
    }
  };
  const perRow = key.integerField ? NUMERIC_ROW_BYTES : OTHER_ROW_BYTES;
  if (sqlite && !fitsInMemory(ctx.options, perRow * records, records)) {
    const index = await DiskKeyIndex.build(sqlite, diskIdentity(m.tableUuid, key, schema), currentSnapshot(m)?.snapshotId, async (set, fileRead) => {
      await buildKeyIndex(table, key, { into: { set, fileRead }, progress });
    });
    ctx.loads.builtOnDisk++;
    return { index };
  }
  const index = await buildKeyIndex(table, key, { progress, offThread: ctx.options.keyColumnReader });
  ctx.loads.built++;
  return { index, store: image ? persist(index, image, indexIdentity(m.tableUuid, key), ctx) : undefined };
}

/**
 * Starts persisting a memory index at `image` once it holds `saveMinRows` rows (its image written
 * now, its patches logged from now on); undefined while it is smaller.
 */
export function persist(index: MemoryKeyIndex, image: string, identity: IndexIdentity, ctx: LoadContext): IndexStore | undefined {
  if (index.size < (ctx.options.keyIndex?.saveMinRows ?? DEFAULT_SAVE_MIN_ROWS)) return undefined;
  const store = new IndexStore(image, identity, (message) => ctx.options.warn?.(`${ctx.name}: ${message}`));
  store.writeImage(index.image());
  index.onPatch = (patch) => store.append(patch);
  return store;
}

/** The persisted memory index brought to the head, or undefined (why logged) to try the next source. */
async function loadPersisted(image: string, table: CatalogTable, key: TableKey, schema: Schema, ctx: LoadContext): Promise<LoadedIndex | undefined> {
  const m = table.metadata;
  const stored = await loadStoredIndex(image, indexIdentity(m.tableUuid, key));
  if (!stored.patches) {
    if (!stored.missing) ctx.options.info?.(`${ctx.name}: the key index persisted at ${image} cannot be used (${stored.why}); building it from the lake`);
    return undefined;
  }
  const index = new MemoryKeyIndex(undefined);
  for (const patch of stored.patches) {
    // each patch applies on the snapshot the one before left; the first that does not ends the log
    if (patch.from !== 'image' && patch.from !== index.snapshotId) break;
    index.applyPatch(patch);
  }
  const head = currentSnapshot(m)?.snapshotId;
  const store = new IndexStore(image, indexIdentity(m.tableUuid, key), (message) => ctx.options.warn?.(`${ctx.name}: ${message}`));
  store.adopt(stored);
  index.onPatch = (patch) => store.append(patch);
  let how: 'restored' | 'caughtUp' = 'restored';
  if (indexStillMatches(m, index.snapshotId, head)) {
    for (const file of (await liveDataFiles(table)).values()) index.useFile(file);
    if (index.snapshotId !== head) index.apply(NO_KEY_MOVES, head); // manifest rewrites since: a new stamp
  } else {
    const caught = await catchUpFromLake(index, table, key, schema);
    if ('why' in caught) {
      await store.close();
      ctx.options.info?.(`${ctx.name}: the key index persisted at ${image} holds snapshot ${String(index.snapshotId)} and cannot be caught up with the table's ${String(head)} (${caught.why}); building it from the lake`);
      return undefined;
    }
    how = 'caughtUp';
    ctx.options.info?.(`${ctx.name}: key index persisted at ${image} caught up with snapshot ${String(head)} (${caught.filesRead} data file(s) read)`);
  }
  const unresolved = index.unresolvedPaths();
  if (unresolved.length > 0) {
    await store.close();
    ctx.options.info?.(`${ctx.name}: the key index persisted at ${image} names ${unresolved[0]}, which is not a live data file of the table; building it from the lake`);
    return undefined;
  }
  ctx.loads[how]++;
  ctx.options.info?.(`${ctx.name}: key index of ${index.size} rows loaded from ${image}`);
  return { index, store };
}

/** The head's live data files by path (its data manifests only). */
async function liveDataFiles(table: CatalogTable): Promise<Map<string, DataFile>> {
  const files = new Map<string, DataFile>();
  const snapshot = currentSnapshot(table.metadata);
  if (!snapshot) return files;
  const reads = new ManifestReads(table.io);
  const manifests = (await reads.manifestsOf(snapshot)).filter((manifest) => manifest.content === 'data');
  // side by side: beside a busy stream each read waits its turn on the thread
  for (const entries of await mapConcurrently(manifests, MANIFESTS_AT_ONCE, (manifest) => reads.entriesOf(manifest))) {
    for (const entry of entries) if (entry.status !== 'deleted') files.set(entry.dataFile.filePath, entry.dataFile);
  }
  return files;
}
