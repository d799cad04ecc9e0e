/**
 * Micro-benchmark of the deletion-vector upserts' key index (src/iceberg/keyindex/key-index.ts): the
 * heap it takes per key and the lookups per second it serves, with N keys (default 1,000,000)
 * spread over data files of 100,000 rows — for a BIGINT primary key (the index keeps a number per
 * key) and for a composite (BIGINT, VARCHAR) key (a string per key, TableKey's encoding).
 *
 * Heap per key: `process.memoryUsage()` heapUsed + arrayBuffers after a full GC with the index built,
 * minus the same before, over the key count — the index's Maps and typed arrays (number-key-table.ts
 * holds numeric keys outside the JS heap), its DataFile objects and the key strings it holds
 * (the keys are made inside the measured span, as the index builder reads them from Parquet). The
 * GC is V8's own, reached with --expose-gc set at run time (node:v8 setFlagsFromString). Lookups:
 * `get` of keys in a random order (every one present), timed with performance.now().
 *
 * Part of `npm run bench` (bench/run.ts); alone: `node --import tsx bench/key-index.ts [--keys N]`.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { DataFile } from '../src/iceberg/spec/data-file.js';
import { Schema } from '../src/iceberg/spec/schema.js';
import { Types } from '../src/iceberg/spec/types.js';
import { MemoryKeyIndex } from '../src/iceberg/keyindex/key-index.js';
import { TableKey, type KeyId } from '../src/iceberg/keyindex/table-key.js';
import { prng } from '../src/util/prng.js';

export interface KeyIndexFigures {
  key: string;
  keys: number;
  dataFiles: number;
  buildSeconds: number;
  heapBytesPerKey: number;
  lookups: number;
  lookupsPerSecond: number;
}

/** Rows per data file the keys are spread over (the stores benchmark uses the same, bench/key-index-stores.ts). */
export const ROWS_PER_FILE = 100_000;

/**
 * A full collection that has settled: V8 frees the backing stores of dead array buffers on a
 * background thread after a collection (its array-buffer sweeper), so `arrayBuffers` read right
 * after gc() may still count them — on Node 24 a 20,000-key run read a negative heap per key. A
 * pause after the collection, and a second one, let the sweep finish first.
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

export function dataFile(i: number): DataFile {
  return {
    content: 'data',
    filePath: `file:///warehouse/db/orders/data/00000-${i}-0c0ffee0-${String(i).padStart(6, '0')}.parquet`,
    fileFormat: 'PARQUET',
    specId: 0,
    partition: [],
    recordCount: BigInt(ROWS_PER_FILE),
    fileSizeInBytes: 4_000_000n,
  };
}

async function measure(label: string, keys: number, encode: (i: number) => KeyId, seed: number): Promise<KeyIndexFigures> {
  const gc = collector();
  await gc();
  const used = (): number => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const before = used();
  const t0 = performance.now();
  const index = new MemoryKeyIndex(1n);
  const files: DataFile[] = [];
  for (let i = 0; i < keys; i++) {
    const f = Math.floor(i / ROWS_PER_FILE);
    if (f === files.length) files.push(dataFile(f));
    index.set(encode(i), files[f], i % ROWS_PER_FILE);
  }
  const buildSeconds = (performance.now() - t0) / 1000;
  await gc();
  const heapBytesPerKey = (used() - before) / keys;
  if (index.size !== keys) throw new Error(`bench: key index holds ${index.size} keys, expected ${keys}`);

  // lookups in a random order, the keys made beforehand (an upsert's key is already encoded)
  const rand = prng(seed);
  const order: KeyId[] = new Array(keys);
  for (let i = 0; i < keys; i++) order[i] = encode(Math.floor(rand() * keys));
  let found = 0;
  const t1 = performance.now();
  for (let i = 0; i < keys; i++) if (index.get(order[i]) !== undefined) found++;
  const lookupSeconds = (performance.now() - t1) / 1000;
  if (found !== keys) throw new Error(`bench: key index found ${found} of ${keys} keys it holds`);
  return { key: label, keys, dataFiles: files.length, buildSeconds, heapBytesPerKey, lookups: keys, lookupsPerSecond: keys / lookupSeconds };
}

/** The two keys measured: a BIGINT primary key and a composite (BIGINT, VARCHAR) one, as TableKey encodes them. */
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

export async function keyIndexBench(keys: number, seed = 1): Promise<KeyIndexFigures[]> {
  const out: KeyIndexFigures[] = [];
  for (const k of benchKeys()) out.push(await measure(k.label, keys, k.encode, seed));
  return out;
}

export function formatKeyIndex(figures: readonly KeyIndexFigures[]): string {
  const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
  return figures
    .map((f) => `key index, ${f.key} key: ${int.format(f.keys)} keys in ${f.dataFiles} files, ${f.heapBytesPerKey.toFixed(0)} heap bytes/key, ${int.format(f.lookupsPerSecond)} lookups/s (built in ${f.buildSeconds.toFixed(2)} s)`)
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
