/**
 * The disk key index's store, chosen by measurement (LMDB and LevelDB bindings were the candidates
 * beside SQLite; the decision and its figures: docs/key-index-store.md). Three
 * embedded stores run the key-index workload of deletion-vector upserts on local disk, driven the
 * way floe drives its index (src/iceberg/keyindex/key-index.ts): floe's own SQLite store
 * (sqlite-key-index.ts itself), LMDB (lmdb-js) and LevelDB (classic-level), each configured as
 * bench/key-index-store-drivers.ts says, all with the same crash safety (a commit survives SIGKILL;
 * a power loss may lose the last ones but never corrupts).
 *
 * Workload, for N keys (default 1,000,000) of a BIGINT key and of a composite (BIGINT, VARCHAR) key
 * as TableKey encodes them (bench/key-index.ts's keys), over data files of 100,000 rows:
 *   build      the bulk load of a rebuild: every key in file order, one transaction per 50,000 rows
 *              (sqlite-key-index.ts BUILD_BATCH), the stamp in the last; keys/s and CPU seconds
 *              (process.cpuUsage: every thread, the stores' background threads included)
 *   disk       after the load, the store still open: the sizes (st_size) and allocated blocks
 *              (st_blocks × 512, what `du` counts) of every file in the store's directory — the
 *              SQLite WAL and shared memory, lmdb's lock file, LevelDB's logs, manifest and tables
 *   lookups    `get` of every key once in a random order (all present), each answer checked; the
 *              files are in the page cache by then (a 1M-key store is tens of MB); per second and
 *              per CPU-second of the process (on a shared machine the latter moves less)
 *   checkpoint B batches (default 10) of M keys (default 10,000) moved to a new data file, each one
 *              transaction with the files' new deletes (a DV per file a moved key left) and the
 *              stamp — floe's `apply` after a commit; batches/s, and the disk after them
 *
 * `npm run bench:key-index-stores [-- --keys N] [--batch M] [--batches B] [--stores sqlite,lmdb,leveldb]
 * [--dir DIR] [--seed S] [--json FILE]`. `npm run bench` measures floe's own store (sqlite) beside
 * the memory index (bench/run.ts).
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataFile } from '../src/iceberg/spec/data-file.js';
import type { KeyId } from '../src/iceberg/keyindex/table-key.js';
import { prng } from '../src/util/prng.js';
import { benchKeys, dataFile, ROWS_PER_FILE } from './key-index.js';
import { openStore, STORES, storeVersions, type Candidate, type StoreName } from './key-index-store-drivers.js';
import { describeMachine, machineLine, type Machine } from './report.js';

export interface StoreOptions {
  keys: number;
  /** Keys moved per checkpoint batch. */
  batchKeys: number;
  batches: number;
  seed: number;
  /** Where the stores' directories are made (local disk). */
  dir: string;
}

export const DEFAULT_STORE_OPTIONS: StoreOptions = { keys: 1_000_000, batchKeys: 10_000, batches: 10, seed: 1, dir: tmpdir() };

export interface DiskUsage {
  /** Sum of the files' sizes (st_size). */
  bytes: number;
  /** Sum of their allocated blocks (st_blocks × 512, what `du` counts). */
  allocatedBytes: number;
  files: number;
  /** Allocated bytes by kind of file (numbers in names as #: LevelDB's `#.ldb`, `#.log`, `MANIFEST-#`). */
  byKind: Record<string, number>;
}

export interface StoreFigures {
  store: StoreName;
  key: string;
  keys: number;
  dataFiles: number;
  buildSeconds: number;
  buildKeysPerSecond: number;
  buildCpuSeconds: number;
  /** After the load, the store open. */
  disk: DiskUsage;
  /** allocatedBytes over keys (the larger of size and allocation for a sparse or preallocated file). */
  bytesPerKey: number;
  lookups: number;
  lookupsPerSecond: number;
  /** Lookups per CPU-second of the process (less moved by other work on a shared machine). */
  lookupsPerCpuSecond: number;
  batches: number;
  batchKeys: number;
  batchesPerSecond: number;
  slowestBatchSeconds: number;
  /** After the checkpoint batches, the store open. */
  diskAfterBatches: DiskUsage;
  bytesPerKeyAfterBatches: number;
}

/** A store that could not be measured (it did not install, load or run here). */
export interface StoreFailure {
  store: StoreName;
  key: string;
  error: string;
}

export interface StoresResult {
  options: Omit<StoreOptions, 'dir'> & { dir: string };
  machine: Machine;
  figures: StoreFigures[];
  failures: StoreFailure[];
}


/** Every file under `dir` (the store's own directory). */
export function diskUsage(dir: string): DiskUsage {
  const u: DiskUsage = { bytes: 0, allocatedBytes: 0, files: 0, byKind: {} };
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const s = statSync(join(e.parentPath, e.name));
    u.bytes += s.size;
    u.allocatedBytes += s.blocks * 512;
    u.files++;
    const kind = e.name.replace(/\d+/g, '#');
    u.byKind[kind] = (u.byKind[kind] ?? 0) + Math.max(s.size, s.blocks * 512);
  }
  return u;
}

function perKey(u: DiskUsage, keys: number): number {
  return Math.max(u.bytes, u.allocatedBytes) / keys;
}

/** A deletion vector of `file` (what floe's commit adds when a key leaves it). */
function dvOf(file: DataFile, batch: number): DataFile {
  return {
    content: 'position-deletes',
    filePath: file.filePath.replace(/\.parquet$/, `-dv-${batch}.puffin`),
    fileFormat: 'PUFFIN',
    specId: 0,
    partition: [],
    recordCount: 1n,
    fileSizeInBytes: 100n,
    referencedDataFile: file.filePath,
  };
}

/** One store, one key kind: build, disk, lookups, checkpoint batches, disk again. */
export async function measureStore(store: StoreName, key: { label: string; encode: (i: number) => KeyId }, o: StoreOptions): Promise<StoreFigures> {
  const dir = mkdtempSync(join(o.dir, `floe-kstore-${store}-`));
  let candidate: Candidate | undefined;
  try {
    candidate = await openStore[store](dir);
    const n = o.keys;
    const files = Array.from({ length: Math.ceil(n / ROWS_PER_FILE) }, (_, i) => dataFile(i));

    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await candidate.load(n, key.encode, files);
    const buildSeconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const disk = diskUsage(dir);

    // lookups of every key in a random order, the keys encoded beforehand (an upsert's key is)
    const rand = prng(o.seed);
    const order = new Int32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      const t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    const lookupKeys: KeyId[] = Array.from(order, (i) => key.encode(i));
    let wrong = 0;
    const cpu1 = process.cpuUsage();
    const t1 = performance.now();
    for (let j = 0; j < n; j++) {
      const i = order[j];
      const r = candidate.get(lookupKeys[j]);
      if (r === undefined || r.file !== files[Math.floor(i / ROWS_PER_FILE)] || r.pos !== i % ROWS_PER_FILE) wrong++;
    }
    const lookupSeconds = (performance.now() - t1) / 1000;
    const lookupCpu = process.cpuUsage(cpu1);
    if (wrong > 0) throw new Error(`bench: ${store}: ${wrong} of ${n} lookups did not answer the key's (file, position)`);

    // checkpoint batches: M distinct keys moved to a new data file, a DV on each file they left
    const where = Int32Array.from({ length: n }, (_, i) => Math.floor(i / ROWS_PER_FILE));
    const all = [...files];
    const m = Math.min(o.batchKeys, n);
    let batchSeconds = 0;
    let slowest = 0;
    let last: { keys: number[]; file: DataFile } | undefined;
    for (let b = 0; b < o.batches; b++) {
      const picked = new Set<number>();
      while (picked.size < m) picked.add(Math.floor(rand() * n));
      const keys = [...picked];
      const file = dataFile(all.length);
      const left = new Set(keys.map((i) => where[i]));
      const moved = keys.map((i, pos) => [key.encode(i), file, pos] as const);
      const committed = { dataFiles: [file], deleteFiles: [...left].map((f) => dvOf(all[f], b)) };
      const t = performance.now();
      await candidate.checkpoint(moved, committed, BigInt(2 + b));
      const s = (performance.now() - t) / 1000;
      batchSeconds += s;
      slowest = Math.max(slowest, s);
      for (const i of keys) where[i] = all.length;
      all.push(file);
      last = { keys, file };
    }
    if (last) {
      for (const [pos, i] of last.keys.entries()) {
        const r = candidate.get(key.encode(i));
        if (r?.file !== last.file || r.pos !== pos) throw new Error(`bench: ${store}: key ${i} moved by the last checkpoint batch reads ${r ? `${r.file.filePath}@${r.pos}` : 'nothing'}, expected ${last.file.filePath}@${pos}`);
      }
    }
    const diskAfterBatches = diskUsage(dir);
    return {
      store,
      key: key.label,
      keys: n,
      dataFiles: files.length,
      buildSeconds,
      buildKeysPerSecond: n / buildSeconds,
      buildCpuSeconds: (cpu.user + cpu.system) / 1e6,
      disk,
      bytesPerKey: perKey(disk, n),
      lookups: n,
      lookupsPerSecond: n / lookupSeconds,
      lookupsPerCpuSecond: n / ((lookupCpu.user + lookupCpu.system) / 1e6),
      batches: o.batches,
      batchKeys: m,
      batchesPerSecond: o.batches > 0 ? o.batches / batchSeconds : 0,
      slowestBatchSeconds: slowest,
      diskAfterBatches,
      bytesPerKeyAfterBatches: perKey(diskAfterBatches, n),
    };
  } finally {
    await candidate?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every store × both keys; a store that fails (install, load, run) is recorded, the others go on. */
export async function keyIndexStoresBench(o: StoreOptions, stores: readonly StoreName[] = STORES, log: (m: string) => void = () => {}): Promise<StoresResult> {
  const machine = describeMachine(storeVersions(stores));
  const figures: StoreFigures[] = [];
  const failures: StoreFailure[] = [];
  for (const key of benchKeys()) {
    for (const store of stores) {
      log(`${store}, ${key.label} key: ${o.keys} keys`);
      try {
        figures.push(await measureStore(store, key, o));
      } catch (e) {
        failures.push({ store, key: key.label, error: e instanceof Error ? e.message : String(e) });
      }
    }
  }
  return { options: o, machine, figures, failures };
}

/** floe's own store (SQLite) for `npm run bench`, both keys. */
export async function diskKeyIndexBench(keys: number, seed = 1): Promise<StoreFigures[]> {
  const o = { ...DEFAULT_STORE_OPTIONS, keys, seed };
  const out: StoreFigures[] = [];
  for (const key of benchKeys()) out.push(await measureStore('sqlite', key, o));
  return out;
}

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** One line per store and key, for `npm run bench` (`label`: what the store is called there) and the stores script. */
export function formatStoreLine(f: StoreFigures, label: string = f.store): string {
  return (
    `${label}, ${f.key} key: ${int.format(f.keys)} keys, ${f.bytesPerKey.toFixed(1)} bytes/key on disk in ${f.disk.files} files (${formatKinds(f.disk)}), ` +
    `${int.format(f.lookupsPerSecond)} lookups/s (${int.format(f.lookupsPerCpuSecond)} per CPU-s), build ${int.format(f.buildKeysPerSecond)} keys/s (${f.buildCpuSeconds.toFixed(1)} CPU-s), ` +
    `${f.batchesPerSecond.toFixed(1)} checkpoints/s of ${int.format(f.batchKeys)} keys (slowest ${(f.slowestBatchSeconds * 1000).toFixed(0)} ms), ` +
    `${f.bytesPerKeyAfterBatches.toFixed(1)} bytes/key after ${f.batches}`
  );
}

/** "table.keyindex.sqlite 15.2 MB, …-wal 4.0 MB": the largest kinds of file first. */
function formatKinds(u: DiskUsage): string {
  const mb = (b: number) => (b >= 1e6 ? `${(b / 1e6).toFixed(1)} MB` : `${(b / 1e3).toFixed(0)} kB`);
  return Object.entries(u.byKind)
    .sort((a, b) => b[1] - a[1])
    .map(([k, b]) => `${k} ${mb(b)}`)
    .join(', ');
}

/** The comparison as a table, each figure also as a ratio to SQLite's (floe's store). */
export function formatStores(r: StoresResult): string {
  const header = ['store', 'key', 'build keys/s', 'bytes/key', 'files', 'lookups/s', 'vs sqlite', 'per CPU-s', 'vs sqlite', 'checkpoints/s', 'vs sqlite', 'bytes/key after'];
  const rows = r.figures.map((f) => {
    const base = r.figures.find((g) => g.store === 'sqlite' && g.key === f.key);
    const ratio = (a: number, b: number | undefined) => (b ? `${(a / b).toFixed(2)}×` : '');
    return [
      f.store,
      f.key,
      int.format(f.buildKeysPerSecond),
      f.bytesPerKey.toFixed(1),
      String(f.disk.files),
      int.format(f.lookupsPerSecond),
      ratio(f.lookupsPerSecond, base?.lookupsPerSecond),
      int.format(f.lookupsPerCpuSecond),
      ratio(f.lookupsPerCpuSecond, base?.lookupsPerCpuSecond),
      f.batchesPerSecond.toFixed(1),
      ratio(f.batchesPerSecond, base?.batchesPerSecond),
      `${f.bytesPerKeyAfterBatches.toFixed(1)} (${f.diskAfterBatches.files} files)`,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((l) => l[i].length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  return [
    `key-index stores: ${int.format(r.options.keys)} keys over data files of ${int.format(ROWS_PER_FILE)} rows; checkpoints: ${r.options.batches} of ${int.format(r.options.batchKeys)} moved keys`,
    `machine: ${machineLine(r.machine)}`,
    '',
    fmt(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map(fmt),
    ...r.failures.map((f) => `${f.store}, ${f.key} key: FAILED: ${f.error}`),
  ].join('\n');
}

const USAGE = 'usage: npm run bench:key-index-stores -- [--keys N] [--batch M] [--batches B] [--stores sqlite,lmdb,leveldb] [--dir DIR] [--seed S] [--json FILE]';

export function parseStoresArgs(argv: readonly string[]): { options: StoreOptions; stores: StoreName[]; jsonFile?: string } {
  const options = { ...DEFAULT_STORE_OPTIONS };
  let stores = [...STORES];
  let jsonFile: string | undefined;
  const whole = (flag: string, text: string | undefined, min: number): number => {
    const v = Number(text?.replace(/[_,]/g, ''));
    if (text === undefined || !Number.isSafeInteger(v) || v < min) throw new Error(`bench: ${flag} expects a whole number of at least ${min}, found ${JSON.stringify(text)}\n${USAGE}`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => argv[++i];
    switch (flag) {
      case '--keys':
        options.keys = whole(flag, value(), 1);
        break;
      case '--batch':
        options.batchKeys = whole(flag, value(), 1);
        break;
      case '--batches':
        options.batches = whole(flag, value(), 0);
        break;
      case '--seed':
        options.seed = whole(flag, value(), 0);
        break;
      case '--dir': {
        const d = value();
        if (!d) throw new Error(`bench: --dir expects a directory on local disk\n${USAGE}`);
        options.dir = d;
        break;
      }
      case '--stores': {
        const list = (value() ?? '').split(',').map((s) => s.trim()).filter(Boolean);
        const unknown = list.filter((s) => !STORES.includes(s as StoreName));
        if (list.length === 0 || unknown.length > 0) throw new Error(`bench: --stores expects a comma-separated list of ${STORES.join(', ')}, found ${JSON.stringify(list.join(','))}\n${USAGE}`);
        stores = list as StoreName[];
        break;
      }
      case '--json':
        jsonFile = value();
        if (!jsonFile) throw new Error(`bench: --json expects a file name\n${USAGE}`);
        break;
      default:
        throw new Error(`bench: unknown argument ${JSON.stringify(flag)}\n${USAGE}`);
    }
  }
  return { options, stores, jsonFile };
}

async function main(): Promise<void> {
  let args: ReturnType<typeof parseStoresArgs>;
  try {
    args = parseStoresArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const started = performance.now();
  const result = await keyIndexStoresBench(args.options, args.stores, (m) => process.stderr.write(`bench: ${m}\n`));
  process.stdout.write(`${formatStores(result)}\n\n${result.figures.map((f) => formatStoreLine(f)).join('\n')}\n(${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
  if (args.jsonFile) writeFileSync(args.jsonFile, JSON.stringify(result, null, 2) + '\n');
  if (result.failures.length > 0) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main().catch((e) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  });
}
