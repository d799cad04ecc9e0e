/**
 * Micro-benchmark of the value indexes (src/iceberg/keyindex/memory-value-index.ts), beside the key
 * index's (bench/key-index.ts): the memory they take per row, the rows a build adds per second, the
 * lookups per second a delete makes, and how fast a commit's deletion vectors apply. N rows (default
 * 1,000,000) over data files of 100,000 rows, two kinds:
 *
 * - the row index of a keyless table: each row's whole-row encoding (TableKey: a BIGINT, a
 *   VARCHAR(20), a DECIMAL(10,2), a DATE), every row twice (N/2 distinct rows, two copies each); a
 *   lookup takes one live copy of a random row, as a binlog DELETE does;
 * - the FK index of a cascade child: a numeric FK (ten children per parent), each row with its
 *   BIGINT primary key; a lookup walks every child of a random parent, as a cascade does.
 *
 * Memory per row: `process.memoryUsage()` heapUsed + arrayBuffers after a full GC with the index
 * built, minus the same before (the values are made inside the measured span, as a build reads them).
 * Deletes: a commit whose DVs remove N/5 random rows, applied as a landed commit is.
 *
 * `npm run bench` runs it with --key-index-keys rows in the key index's child process
 * (bench/key-index-child.ts), and `npm run bench:summary` renders its figures beside the key index's.
 * Alone: `node --import tsx bench/value-index.ts [--rows N]`.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PositionBitmap } from '../src/iceberg/puffin/position-bitmap.js';
import { MemoryValueIndex } from '../src/iceberg/keyindex/memory-value-index.js';
import { Schema } from '../src/iceberg/spec/schema.js';
import { Types } from '../src/iceberg/spec/types.js';
import { TableKey, type KeyId } from '../src/iceberg/keyindex/table-key.js';
import type { ValueEntry } from '../src/iceberg/keyindex/value-index.js';
import { prng } from '../src/util/prng.js';
import { dataFile, ROWS_PER_FILE } from './key-index.js';

export interface ValueIndexFigures {
  /** 'row' (a keyless table's row index) or 'fk' (a cascade child's FK index). */
  index: 'row' | 'fk';
  kind: string;
  rows: number;
  heapBytesPerRow: number;
  buildRowsPerSecond: number;
  lookups: number;
  lookupsPerSecond: number;
  deadRowsPerSecond: number;
}

async function collect(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  if (typeof gc !== 'function') throw new Error('bench: value index: V8 did not expose gc() after --expose-gc; heap figures need a full collection');
  for (let i = 0; i < 2; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  gc();
}

const used = (): number => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

async function measure(index: 'row' | 'fk', kind: string, rows: number, seed: number, valueOf: (i: number) => KeyId, ownerOf: (i: number) => KeyId | undefined, lookupValue: (r: () => number) => KeyId, takeOne: boolean): Promise<ValueIndexFigures> {
  const files = Array.from({ length: Math.ceil(rows / ROWS_PER_FILE) }, (_, i) => dataFile(i));
  await collect();
  const before = used();
  const started = performance.now();
  const values = new MemoryValueIndex(undefined);
  for (let f = 0; f < files.length; f++) {
    const entries: ValueEntry[] = [];
    for (let pos = 0; pos < ROWS_PER_FILE && f * ROWS_PER_FILE + pos < rows; pos++) {
      const i = f * ROWS_PER_FILE + pos;
      entries.push({ value: valueOf(i), file: files[f]!, pos, owner: ownerOf(i) });
    }
    values.addRows(entries);
  }
  const buildSeconds = (performance.now() - started) / 1000;
  await collect();
  const heapBytesPerRow = (used() - before) / rows;

  const rand = prng(seed + 10);
  const lookups = Math.min(rows, 200_000);
  let found = 0;
  const t = performance.now();
  for (let n = 0; n < lookups; n++) {
    values.rowsOf(lookupValue(rand), () => {
      found++;
      return takeOne;
    });
  }
  const lookupsPerSecond = lookups / ((performance.now() - t) / 1000);
  if (found === 0) throw new Error(`bench: value index (${kind}): the lookups found no row`);

  const dead = new Map<string, PositionBitmap>();
  for (let n = 0; n < rows / 5; n++) {
    const i = Math.floor(rand() * rows);
    const path = files[Math.floor(i / ROWS_PER_FILE)]!.filePath;
    let b = dead.get(path);
    if (!b) dead.set(path, (b = new PositionBitmap()));
    b.add(i % ROWS_PER_FILE);
  }
  const d = performance.now();
  values.apply({ setCount: 0, forEachSet: () => {}, deadRows: [...dead].map(([filePath, positions]) => ({ filePath, positions })) }, 1n);
  const deadRowsPerSecond = rows / 5 / ((performance.now() - d) / 1000);
  return { index, kind, rows, heapBytesPerRow, buildRowsPerSecond: rows / buildSeconds, lookups, lookupsPerSecond, deadRowsPerSecond };
}

/** The row index of a keyless table and the FK index of a cascade child, `rows` rows each. */
export async function valueIndexBench(rows: number, seed = 1): Promise<ValueIndexFigures[]> {
  const schema = new Schema(0, [
    { id: 1, name: 'id', required: false, type: Types.long },
    { id: 2, name: 'name', required: false, type: Types.string },
    { id: 3, name: 'amount', required: false, type: Types.decimal(10, 2) },
    { id: 4, name: 'day', required: false, type: Types.date },
  ], []);
  const whole = TableKey.allColumns(schema);
  const rowOf = (d: number): KeyId => whole.encode([BigInt(d), `customer ${d % 5000}`, `${d % 100000}.25`, 19000 + (d % 365)]);
  const distinct = Math.max(1, Math.floor(rows / 2));
  const parents = Math.max(1, Math.floor(rows / 10));
  return [
    await measure('row', 'row index of a keyless table (whole row, two copies each)', rows, seed, (i) => rowOf(i % distinct), () => undefined, (r) => rowOf(Math.floor(r() * distinct)), true),
    await measure('fk', 'FK index of a cascade child (INT FK, BIGINT key, 10 children a parent)', rows, seed, (i) => Math.floor(i / 10), (i) => i, (r) => Math.floor(r() * parents), false),
  ];
}

export function formatValueIndex(figures: readonly ValueIndexFigures[]): string {
  return figures
    .map(
      (f) =>
        `${f.kind}: ${f.rows.toLocaleString('en-US')} rows, ${f.heapBytesPerRow.toFixed(1)} heap B/row, built at ${Math.round(f.buildRowsPerSecond).toLocaleString('en-US')} rows/s, ` +
        `${Math.round(f.lookupsPerSecond).toLocaleString('en-US')} lookups/s (${f.lookups.toLocaleString('en-US')}), DVs applied at ${Math.round(f.deadRowsPerSecond).toLocaleString('en-US')} rows/s`,
    )
    .join('\n');
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const at = process.argv.indexOf('--rows');
  const rows = at > 0 ? Number(process.argv[at + 1]) : 1_000_000;
  if (!Number.isSafeInteger(rows) || rows < 10) {
    process.stderr.write(`usage: node --import tsx bench/value-index.ts [--rows N]; --rows expects a whole number of at least 10, found ${JSON.stringify(process.argv[at + 1])}\n`);
    process.exitCode = 2;
  } else process.stdout.write(`${formatValueIndex(await valueIndexBench(rows))}\n`);
}
