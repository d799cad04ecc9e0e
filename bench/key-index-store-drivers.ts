/**
 * The three stores of the key-index store benchmark (bench/key-index-stores.ts), each driven the way
 * floe drives its disk index (src/iceberg/keyindex/key-index.ts): a build in transactions of 50,000
 * rows with the stamp last, a synchronous `get`, and a checkpoint — the moved keys, the deletes of
 * the files the commit touched and the stamp — in one transaction. Loaded lazily: a store that does
 * not install or load here fails alone (the benchmark records it).
 *
 *   sqlite   floe's own store, sqlite-key-index.ts itself (DiskKeyIndex.build / get / apply): its
 *            schema, statements and pragmas (WAL, synchronous=NORMAL), better-sqlite3
 *   lmdb     `lmdb` (lmdb-js): named databases rows / files / stamp in one environment; keys the
 *            KeyId itself (lmdb-js's ordered-binary key encoding), values raw bytes; writes in
 *            `transactionSync`, inserts with MDB_NOOVERWRITE (the row count, as SQLite's INSERT OR
 *            IGNORE); `overlappingSync` with NO_SYNC_FLUSH commits
 *   leveldb  `classic-level`: one database, a prefix byte per table (rows, files, stamp); keys 8
 *            order-preserving bytes for a numeric KeyId, its UTF-8 otherwise; writes in one chained
 *            batch per transaction, `sync: false`; LevelDB's defaults (Snappy, 4 MiB write buffer,
 *            8 MiB block cache)
 *
 * Values are what floe stores: (data file, position) — a file id (the files table maps it to the
 * path and the deletes last read) and the row position, two varints in lmdb and LevelDB (SQLite's
 * record format stores them as small integers).
 *
 * Crash safety, the same in all three: a committed transaction survives a SIGKILL of the process
 * (it is in the OS page cache), and a power loss may lose the last transactions but leaves a
 * consistent store — SQLite WAL + synchronous=NORMAL (fsync at checkpoints only), lmdb
 * overlappingSync (the flush runs after the commit; the meta pages are switched so that the last
 * flushed transaction survives a power loss), LevelDB `sync: false` (the log is written, not fsynced;
 * recovery drops a torn tail by its checksums). The lake is the truth and the index a stamped cache
 * (sqlite-key-index.ts header): an older state is replayed, so none needs an fsync per commit.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { DataFile } from '../src/iceberg/spec/data-file.js';
import { keyIndexDelta, type IndexedRow } from '../src/iceberg/keyindex/key-index.js';
import { DiskKeyIndex, type DiskIndexIdentity } from '../src/iceberg/keyindex/sqlite-key-index.js';
import type { KeyId } from '../src/iceberg/keyindex/table-key.js';
import { ROWS_PER_FILE } from './key-index.js';

export type StoreName = 'sqlite' | 'lmdb' | 'leveldb';
export const STORES: readonly StoreName[] = ['sqlite', 'lmdb', 'leveldb'];

/** Rows per build transaction, as sqlite-key-index.ts's BUILD_BATCH. */
const BUILD_BATCH = 50_000;

type Moved = readonly (readonly [KeyId, DataFile, number])[];
interface Committed {
  readonly dataFiles: readonly DataFile[];
  readonly deleteFiles: readonly DataFile[];
}

/** A store under test, driven as floe drives its disk index. */
export interface Candidate {
  /** Keys 0..n-1 in file order, a transaction per BUILD_BATCH rows, the stamp in the last. */
  load(n: number, encode: (i: number) => KeyId, files: readonly DataFile[]): Promise<void>;
  get(k: KeyId): IndexedRow | undefined;
  /** One transaction: the moved keys, the deletes of the files the commit touched, the stamp. */
  checkpoint(moved: Moved, committed: Committed, snapshotId: bigint): Promise<void>;
  close(): Promise<void>;
}

/** The stamp's identity (the same for both keys: no store reads it back in the benchmark). */
const IDENTITY: DiskIndexIdentity = { tableUuid: '5f0c6e1e-0000-4000-8000-00000000be4c', keyFieldIds: [1], keyTypes: '["long"]', schemaId: 0 };

function stampText(snapshotId: bigint, rowCount: number): string {
  return JSON.stringify({ ...IDENTITY, snapshotId: String(snapshotId), rowCount, format: 1 });
}

/** floe's own: sqlite-key-index.ts, unchanged. */
async function sqliteCandidate(dir: string): Promise<Candidate> {
  const path = join(dir, 'table.keyindex.sqlite');
  let index: DiskKeyIndex | undefined;
  const open = (): DiskKeyIndex => {
    if (!index) throw new Error('bench: the SQLite index is not built');
    return index;
  };
  return {
    async load(n, encode, files) {
      index = await DiskKeyIndex.build(path, IDENTITY, 1n, async (set) => {
        for (let i = 0; i < n; i++) set(encode(i), files[Math.floor(i / ROWS_PER_FILE)], i % ROWS_PER_FILE);
      });
    },
    get: (k) => open().get(k),
    async checkpoint(moved, committed, snapshotId) {
      open().apply(keyIndexDelta(moved, []), snapshotId, committed);
    },
    async close() {
      index?.close();
    },
  };
}

function writeVarint(b: Buffer, at: number, v: number): number {
  while (v >= 0x80) {
    b[at++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  b[at++] = v;
  return at;
}

/** (file id, position) as two varints — small integers, as SQLite's record format keeps them. */
function packRow(fileId: number, pos: number): Buffer {
  const b = Buffer.allocUnsafe(10);
  return b.subarray(0, writeVarint(b, writeVarint(b, 0, fileId), pos));
}

function unpackRow(b: Uint8Array): [number, number] {
  const out: number[] = [];
  let v = 0;
  let scale = 1;
  for (let i = 0; i < b.length; i++) {
    v += (b[i] & 0x7f) * scale;
    if (b[i] < 0x80) {
      out.push(v);
      v = 0;
      scale = 1;
    } else scale *= 0x80;
  }
  return [out[0], out[1]];
}

/** Data files by id, as sqlite-key-index.ts keeps them (the store holds ids; DataFiles stay in memory). */
class FileIds {
  private readonly byPath = new Map<string, number>();
  private readonly byId: DataFile[] = [];

  /** The file's id, and whether it is new (its row must be written). */
  idOf(file: DataFile): [number, boolean] {
    const id = this.byPath.get(file.filePath);
    if (id !== undefined) return [id, false];
    const next = this.byId.push(file);
    this.byPath.set(file.filePath, next);
    return [next, true];
  }

  idOfPath(path: string): number | undefined {
    return this.byPath.get(path);
  }

  file(id: number): DataFile {
    const f = this.byId[id - 1];
    if (!f) throw new Error(`bench: a row points at file id ${id}, which the files table does not hold`);
    return f;
  }
}

/** Each file's deletes after a commit, as sqlite-key-index.ts's apply records them. */
function committedDeletes(committed: Committed): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of committed.dataFiles) out.set(f.filePath, '\n|');
  for (const d of committed.deleteFiles) if (d.fileFormat === 'PUFFIN' && d.referencedDataFile) out.set(d.referencedDataFile, `${d.filePath}\n|`);
  return out;
}

async function lmdbCandidate(dir: string): Promise<Candidate> {
  const { open, TransactionFlags } = await import('lmdb');
  const root = open({ path: dir, overlappingSync: true, maxDbs: 3, compression: false });
  const rows = root.openDB<Buffer, KeyId>('rows', { encoding: 'binary' });
  const filesDb = root.openDB<string, number>('files', { encoding: 'string' });
  const stamp = root.openDB<string, number>('stamp', { encoding: 'string' });
  // committed and visible when it returns, flushed after (overlappingSync): SQLite NORMAL's guarantee
  const flags = TransactionFlags.SYNCHRONOUS_COMMIT | TransactionFlags.NO_SYNC_FLUSH;
  const ids = new FileIds();
  let count = 0;
  const fileId = (file: DataFile): number => {
    const [id, fresh] = ids.idOf(file);
    if (fresh) filesDb.putSync(id, `${file.filePath}\n`);
    return id;
  };
  const set = (k: KeyId, file: DataFile, pos: number): void => {
    const v = packRow(fileId(file), pos);
    // MDB_NOOVERWRITE answers whether the key was new (lmdb-js returns it; its types say void)
    if (rows.putSync(k, v, { noOverwrite: true }) as unknown as boolean) count++;
    else rows.putSync(k, v);
  };
  return {
    async load(n, encode, files) {
      for (let start = 0; start < n; start += BUILD_BATCH) {
        root.transactionSync(() => {
          const end = Math.min(n, start + BUILD_BATCH);
          for (let i = start; i < end; i++) set(encode(i), files[Math.floor(i / ROWS_PER_FILE)], i % ROWS_PER_FILE);
          if (end === n) stamp.putSync(1, stampText(1n, count));
        }, flags);
      }
    },
    get(k) {
      const b = rows.getBinaryFast(k);
      if (b === undefined) return undefined;
      const [id, pos] = unpackRow(b);
      return { file: ids.file(id), pos };
    },
    async checkpoint(moved, committed, snapshotId) {
      root.transactionSync(() => {
        for (const [k, file, pos] of moved) set(k, file, pos);
        for (const [path, deletes] of committedDeletes(committed)) {
          const id = ids.idOfPath(path);
          if (id !== undefined) filesDb.putSync(id, `${path}\n${deletes}`);
        }
        stamp.putSync(1, stampText(snapshotId, count));
      }, flags);
    },
    async close() {
      await root.flushed;
      await root.close();
    },
  };
}

const ROWS_PREFIX = 0x72; // 'r'
const FILES_PREFIX = 0x66; // 'f'
const STAMP_KEY = Buffer.from('s');

/** A row key: the prefix, then 8 order-preserving bytes (sign bit flipped) or the string's UTF-8. */
function levelRowKey(k: KeyId): Buffer {
  if (typeof k === 'number') {
    const b = Buffer.allocUnsafe(9);
    b[0] = ROWS_PREFIX;
    const hi = Math.floor(k / 4294967296);
    b.writeUInt32BE((hi ^ 0x80000000) >>> 0, 1);
    b.writeUInt32BE(k - hi * 4294967296, 5);
    return b;
  }
  const b = Buffer.allocUnsafe(1 + Buffer.byteLength(k));
  b[0] = ROWS_PREFIX;
  b.write(k, 1);
  return b;
}

function levelFileKey(id: number): Buffer {
  const b = Buffer.allocUnsafe(5);
  b[0] = FILES_PREFIX;
  b.writeUInt32BE(id, 1);
  return b;
}

async function levelCandidate(dir: string): Promise<Candidate> {
  const { ClassicLevel } = await import('classic-level');
  const db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  // written to the log, not fsynced: SQLite NORMAL's guarantee
  const write = { sync: false };
  const ids = new FileIds();
  let count = 0;
  type Batch = ReturnType<typeof db.batch>;
  const fileId = (batch: Batch, file: DataFile): number => {
    const [id, fresh] = ids.idOf(file);
    if (fresh) batch.put(levelFileKey(id), Buffer.from(`${file.filePath}\n`));
    return id;
  };
  return {
    async load(n, encode, files) {
      for (let start = 0; start < n; start += BUILD_BATCH) {
        const batch = db.batch();
        const end = Math.min(n, start + BUILD_BATCH);
        for (let i = start; i < end; i++) {
          // a build's keys are the live rows of a keyed table: counted without a read (LevelDB's
          // put cannot say whether the key was there)
          batch.put(levelRowKey(encode(i)), packRow(fileId(batch, files[Math.floor(i / ROWS_PER_FILE)]), i % ROWS_PER_FILE));
          count++;
        }
        if (end === n) batch.put(STAMP_KEY, Buffer.from(stampText(1n, count)));
        await batch.write(write);
      }
    },
    get(k) {
      const b = db.getSync(levelRowKey(k));
      if (b === undefined) return undefined;
      const [id, pos] = unpackRow(b);
      return { file: ids.file(id), pos };
    },
    async checkpoint(moved, committed, snapshotId) {
      const batch = db.batch();
      for (const [k, file, pos] of moved) {
        const key = levelRowKey(k);
        // a delta may insert: the stamp's row count needs to know (a read per key)
        if (db.getSync(key) === undefined) count++;
        batch.put(key, packRow(fileId(batch, file), pos));
      }
      for (const [path, deletes] of committedDeletes(committed)) {
        const id = ids.idOfPath(path);
        if (id !== undefined) batch.put(levelFileKey(id), Buffer.from(`${path}\n${deletes}`));
      }
      batch.put(STAMP_KEY, Buffer.from(stampText(snapshotId, count)));
      await batch.write(write);
    },
    async close() {
      await db.close();
    },
  };
}

/** Opens an empty store in `dir` (a directory of its own). */
export const openStore: Record<StoreName, (dir: string) => Promise<Candidate>> = { sqlite: sqliteCandidate, lmdb: lmdbCandidate, leveldb: levelCandidate };

function packageVersion(name: string): string {
  try {
    const p = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', name, 'package.json');
    return (JSON.parse(readFileSync(p, 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

/** The stores' versions (the machine line's server part). */
export function storeVersions(stores: readonly StoreName[]): string {
  const parts: string[] = [];
  if (stores.includes('sqlite')) {
    const db = new Database(':memory:');
    const v = db.prepare<[], { v: string }>('SELECT sqlite_version() AS v').get()?.v;
    db.close();
    parts.push(`SQLite ${v} (better-sqlite3 ${packageVersion('better-sqlite3')})`);
  }
  if (stores.includes('lmdb')) parts.push(`lmdb ${packageVersion('lmdb')}`);
  if (stores.includes('leveldb')) parts.push(`classic-level ${packageVersion('classic-level')}`);
  return parts.join(', ');
}
