/**
 * Micro-benchmark of the deletion-vector upserts' key index in memory
 * (src/iceberg/keyindex/memory-key-index.ts): the memory it takes per key, the lookups per second it
 * serves one at a time and in a sorted batch (as a checkpoint makes them, keyed-change-writer.ts),
 * how fast it takes a commit's changes, and its persisted form (index-store.ts) — bytes per key on
 * disk, keys loaded per second. N keys (default 1,000,000) over data files of 100,000 rows, in
 * three layouts:
 *
 * - BIGINT key, snapshot layout: each file a few chunks of 8,096 ascending keys, the chunks of four
 *   readers interleaved across files — as floe's snapshot writes a table; the index holds them as
 *   runs (8 bytes a key);
 * - BIGINT key, change layout: the same keys in random order in their files — rows a CDC checkpoint
 *   wrote, or every row after updates moved them all; the index holds them in its hash;
 * - (BIGINT, VARCHAR) key: a string per key (TableKey's encoding), in its hash.
 *
 * Memory per key: `process.memoryUsage()` heapUsed + arrayBuffers after a full GC with the index
 * built, minus the same before, over the key count (the keys are made inside the measured span, as a
 * build reads them from Parquet). The GC is V8's own, reached with --expose-gc set at run time.
 * Lookups: `find` of N keys drawn at random (all present), one at a time, then the same keys sorted
 * (the sort counted in the time). Disk: the index persisted as an image, then loaded back (read and
 * applied), in a temporary directory. Changes: then a commit's delta of N/5 random updates (each key
 * moved to a new data file, its old row dead), applied as a landed commit is.
 *
 * Part of `npm run bench` (bench/run.ts); alone: `node --import tsx bench/key-index.ts [--keys N]`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { DataFile } from '../src/iceberg/spec/data-file.js';
import { Schema } from '../src/iceberg/spec/schema.js';
import { Types } from '../src/iceberg/spec/types.js';
import { PositionBitmap } from '../src/iceberg/puffin/position-bitmap.js';
import { MemoryKeyIndex } from '../src/iceberg/keyindex/memory-key-index.js';
import { IndexStore, loadStoredIndex, storedIndexBytes } from '../src/iceberg/keyindex/index-store.js';
import { TableKey, type KeyId } from '../src/iceberg/keyindex/table-key.js';
import { prng } from '../src/util/prng.js';

export interface KeyIndexFigures {
  key: string;
  /** 'runs' (snapshot layout), 'hash' (change layout, or string keys). */
  layout: 'runs' | 'hash';
  keys: number;
  dataFiles: number;
  buildSeconds: number;
  heapBytesPerKey: number;
  lookups: number;
  lookupsPerSecond: number;
  /** The same lookups sorted first (the sort in the time). */
  sortedLookupsPerSecond: number;
  /** A commit's delta of random updates, applied. */
  applyChangesPerSecond: number;
  /** The persisted image's bytes per key, and keys loaded per second from it. */
  diskBytesPerKey: number;
  loadKeysPerSecond: number;
}

/** Rows per data file the keys are spread over (the stores benchmark uses the same, bench/key-index-stores.ts). */
export const ROWS_PER_FILE = 100_000;
/** A snapshot chunk (floe's default `source.snapshot.chunkSize`), and the readers whose chunks interleave. */
const CHUNK = 8_096;
const READERS = 4;

/**
 * A full collection that has settled: V8 frees the backing stores of dead array buffers on a
 * background thread after a collection (its array-buffer sweeper), so `arrayBuffers` read right
 * after gc() may still count them. A pause after the collection, and a second one, let the sweep
 * finish first.
 */
function collector(): () => Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  if (typeof gc !== 'function') throw new Error('bench: key index: V8 did not expose gc() after --expose-gc; heap figures need a full collection');
  return async () => {
    for (let i = 0; i < 2; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    gc();
  };
}

export function dataFile(i: number, rows = ROWS_PER_FILE): DataFile {
  return {
    content: 'data',
    filePath: `file:///warehouse/db/orders/data/00000-${i}-0c0ffee0-${String(i).padStart(6, '0')}.parquet`,
    fileFormat: 'PARQUET',
    specId: 0,
    partition: [],
    recordCount: BigInt(rows),
    fileSizeInBytes: 4_000_000n,
  };
}

/**
 * The row order of the snapshot layout: key index i (0-based) → its row number across the files.
 * Chunks of `CHUNK` keys are written by `READERS` readers taking chunks in turn, each reader's rows
 * going to the file being written when its chunk is done: consecutive chunks land in the same file
 * in an order the readers decide, so a file holds ascending stretches from ranges far apart.
 */
function snapshotOrder(keys: number, rand: () => number): Int32Array {
  const chunks = Math.ceil(keys / CHUNK);
  const order: number[] = [];
  for (let c = 0; c < chunks; c += READERS) {
    const batch = Array.from({ length: Math.min(READERS, chunks - c) }, (_, i) => c + i);
    for (let i = batch.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [batch[i], batch[j]] = [batch[j]!, batch[i]!];
    }
    order.push(...batch);
  }
  const rowOf = new Int32Array(keys);
  let row = 0;
  for (const c of order) for (let k = c * CHUNK; k < Math.min(keys, (c + 1) * CHUNK); k++) rowOf[k] = row++;
  return rowOf;
}

async function measure(label: string, layout: 'runs' | 'hash', keys: number, encode: (i: number) => KeyId, seed: number): Promise<KeyIndexFigures> {
  const gc = collector();
  const rand = prng(seed);
  // where each key's row is: the snapshot layout's order, or a random one
  let rowOf: Int32Array;
  if (layout === 'runs' && typeof encode(0) === 'number') rowOf = snapshotOrder(keys, rand);
  else {
    rowOf = Int32Array.from({ length: keys }, (_, i) => i);
    for (let i = keys - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [rowOf[i], rowOf[j]] = [rowOf[j]!, rowOf[i]!];
    }
  }
  const fileCount = Math.ceil(keys / ROWS_PER_FILE);
  const keyAt = new Int32Array(keys); // row → key index
  for (let i = 0; i < keys; i++) keyAt[rowOf[i]!] = i;
  await gc();
  const used = (): number => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const before = used();
  const t0 = performance.now();
  const index = new MemoryKeyIndex(1n);
  const files: DataFile[] = [];
  for (let f = 0; f < fileCount; f++) {
    const rows = Math.min(ROWS_PER_FILE, keys - f * ROWS_PER_FILE);
    const file = dataFile(f, rows);
    files.push(file);
    const numbers = new Float64Array(rows).fill(Number.NaN);
    const strings: [string, number][] = [];
    for (let p = 0; p < rows; p++) {
      const k = encode(keyAt[f * ROWS_PER_FILE + p]!);
      if (typeof k === 'number') numbers[p] = k;
      else strings.push([k, p]);
    }
    index.addFileRows(file, numbers, strings);
  }
  const buildSeconds = (performance.now() - t0) / 1000;
  await gc();
  const heapBytesPerKey = (used() - before) / keys;
  // the layout's arrays, made before `before`, stay live until here: else they are freed during the build and their bytes counted off the index's
  if (rowOf.length !== keys || keyAt.length !== keys) throw new Error('bench: key index layout arrays changed');
  if (index.size !== keys) throw new Error(`bench: key index holds ${index.size} keys, expected ${keys}`);

  // lookups of keys drawn at random, the keys made beforehand (an upsert's key is already encoded)
  const lookups = Math.min(keys, 1_000_000);
  const order: KeyId[] = new Array(lookups);
  for (let i = 0; i < lookups; i++) order[i] = encode(Math.floor(rand() * keys));
  const t1 = performance.now();
  const found = lookupAll(index, order);
  const lookupSeconds = (performance.now() - t1) / 1000;
  if (found !== lookups) throw new Error(`bench: key index found ${found} of ${lookups} keys it holds`);
  const t2 = performance.now();
  const sorted: ArrayLike<KeyId> = typeof order[0] === 'number' ? Float64Array.from(order as number[]).sort() : [...(order as string[])].sort();
  if (lookupAll(index, sorted) !== lookups) throw new Error('bench: key index missed keys in a sorted batch');
  const sortedSeconds = (performance.now() - t2) / 1000;

  // persisted, then loaded back
  const dir = await mkdtemp(join(tmpdir(), 'floe-bench-keyindex-'));
  let diskBytesPerKey: number;
  let loadSeconds: number;
  try {
    const path = join(dir, 'table.keyindex');
    const identity = { tableUuid: 'bench', keyFieldIds: [1], keyTypes: label };
    const store = new IndexStore(path, identity, (m) => {
      throw new Error(`bench: ${m}`);
    });
    store.writeImage(index.image());
    await store.flush();
    await store.close();
    diskBytesPerKey = (await storedIndexBytes(path)) / keys;
    const t4 = performance.now();
    const loaded = await loadStoredIndex(path, identity);
    if (!loaded.patches) throw new Error(`bench: the persisted key index did not load: ${loaded.why}`);
    const back = new MemoryKeyIndex(undefined);
    for (const p of loaded.patches) back.applyPatch(p);
    loadSeconds = (performance.now() - t4) / 1000;
    if (back.size !== keys || back.snapshotId !== 1n) throw new Error(`bench: the loaded key index holds ${back.size} keys at ${String(back.snapshotId)}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  // a commit's delta: random keys updated, each to a new file, its old row dead (as the writer's DVs say)
  const updates = Math.max(1, Math.floor(keys / 5));
  const moved = new Set<number>();
  while (moved.size < updates) moved.add(Math.floor(rand() * keys));
  const target = dataFile(fileCount, updates);
  const dead = new Map<string, PositionBitmap>();
  const set: [KeyId, number][] = [];
  for (const i of moved) {
    const k = encode(i);
    const at = index.get(k)!;
    let b = dead.get(at.file.filePath);
    if (!b) dead.set(at.file.filePath, (b = new PositionBitmap()));
    b.add(at.pos);
    set.push([k, set.length]);
  }
  const t3 = performance.now();
  index.apply(
    { setCount: set.length, forEachSet: (each) => set.forEach(([k, pos]) => each(k, target, pos)), deleted: set.map(([k]) => k), deadRows: [...dead].map(([filePath, positions]) => ({ filePath, positions })) },
    2n,
  );
  const applySeconds = (performance.now() - t3) / 1000;
  if (index.size !== keys || lookupAll(index, order) !== lookups) throw new Error('bench: key index lost keys applying a delta');

  return {
    key: label,
    layout,
    keys,
    dataFiles: files.length,
    buildSeconds,
    heapBytesPerKey,
    lookups,
    lookupsPerSecond: lookups / lookupSeconds,
    sortedLookupsPerSecond: lookups / sortedSeconds,
    applyChangesPerSecond: updates / applySeconds,
    diskBytesPerKey,
    loadKeysPerSecond: keys / loadSeconds,
  };
}

function lookupAll(index: MemoryKeyIndex, keys: ArrayLike<KeyId>): number {
  let found = 0;
  for (let i = 0; i < keys.length; i++) if (index.find(keys[i]!) !== undefined) found++;
  return found;
}

/** The keys measured: a BIGINT primary key and a composite (BIGINT, VARCHAR) one, as TableKey encodes them. */
export function benchKeys(): { label: string; encode: (i: number) => KeyId }[] {
  const long = TableKey.identifier(new Schema(0, [{ id: 1, name: 'id', required: true, type: Types.long }], [1]));
  const composite = TableKey.identifier(
    new Schema(
      0,
      [
        { id: 1, name: 'tenant', required: true, type: Types.long },
        { id: 2, name: 'sku', required: true, type: Types.string },
      ],
      [1, 2],
    ),
  );
  return [
    { label: 'BIGINT', encode: (i) => long.encode([BigInt(i + 1)]) },
    { label: '(BIGINT, VARCHAR)', encode: (i) => composite.encode([BigInt(i % 1000), `sku-${i}`]) },
  ];
}

/** The cases: the BIGINT key as snapshotted (runs) and in change order (hash), the composite key (hash). */
function indexCases(): { label: string; layout: 'runs' | 'hash'; encode: (i: number) => KeyId }[] {
  const [bigint, composite] = benchKeys();
  return [
    { ...bigint!, layout: 'runs' },
    { ...bigint!, layout: 'hash' },
    { ...composite!, layout: 'hash' },
  ];
}

export async function keyIndexBench(keys: number, seed = 1): Promise<KeyIndexFigures[]> {
  const out: KeyIndexFigures[] = [];
  for (const k of indexCases()) out.push(await measure(k.label, k.layout, keys, k.encode, seed));
  return out;
}

/** What the layout is, in words. */
export function layoutName(f: Pick<KeyIndexFigures, 'key' | 'layout'>): string {
  if (f.key !== 'BIGINT') return `${f.key} key`;
  return f.layout === 'runs' ? 'BIGINT key, as snapshotted (sorted runs)' : 'BIGINT key, rows in change order (hash)';
}

export function formatKeyIndex(figures: readonly KeyIndexFigures[]): string {
  const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
  return figures
    .map(
      (f) =>
        `key index, ${layoutName(f)}: ${int.format(f.keys)} keys in ${f.dataFiles} files, ${f.heapBytesPerKey.toFixed(1)} bytes/key in memory, ${f.diskBytesPerKey.toFixed(1)} on disk; ` +
        `${int.format(f.lookupsPerSecond)} lookups/s one by one, ${int.format(f.sortedLookupsPerSecond)} sorted; ${int.format(f.applyChangesPerSecond)} changes/s applied; loaded at ${int.format(f.loadKeysPerSecond)} keys/s (built in ${f.buildSeconds.toFixed(2)} s)`,
    )
    .join('\n');
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const at = process.argv.indexOf('--keys');
  const keys = at >= 0 ? Number(process.argv[at + 1]) : 1_000_000;
  if (!Number.isSafeInteger(keys) || keys < 1) {
    process.stderr.write(`usage: node --import tsx bench/key-index.ts [--keys N]; --keys expects a whole number of at least 1, found ${JSON.stringify(process.argv[at + 1])}\n`);
    process.exitCode = 2;
  } else process.stdout.write(`${formatKeyIndex(await keyIndexBench(keys))}\n`);
}
