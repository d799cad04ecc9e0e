/**
 * A value index on local disk (value-index.ts), for a table whose value indexes outgrow
 * `iceberg.keyIndex.memoryMaxBytes`: one SQLite database per index (better-sqlite3, as the disk key
 * index, sqlite-key-index.ts), `<state-dir>/<job id>/<table uuid>.<index>.valueindex.sqlite`.
 *
 * It is a working file, not a persisted cache: it is created empty (whatever a crashed run left at
 * its path is removed first), filled from the memory index it replaces or from the lake, and
 * deleted when the index is dropped. A restart builds the indexes from the lake again, as it does a
 * memory one (value-index-lifecycle.ts), so it needs no stamp, and no fsync (`synchronous = OFF`:
 * after a crash the file is thrown away).
 *
 * Tables: `files(id, path)` — the data files rows point at, their DataFile objects kept in memory by
 * id (a table has thousands of files, not millions of rows) — and `entries(file, pos, value, owner)`
 * keyed by place, with an index on `value`. A row goes dead by position, whatever deleted it (as in
 * the memory index): its entry is removed by (file, pos). Values and owners are KeyIds: an integer
 * is stored as an SQLite INTEGER and a string as TEXT, which never compare equal (untyped columns:
 * no affinity converts one into the other).
 */
import type Database from 'better-sqlite3';
import { FloeError } from '../../util/errors.js';
import type { DataFile } from '../spec/data-file.js';
import type { MemoryValueIndex } from './memory-value-index.js';
import { freshDatabaseFile, removeDatabaseFiles } from './sqlite-index-file.js';
import type { KeyId } from './table-key.js';
import type { ValueEntry, ValueIndex, ValueIndexDelta } from './value-index.js';

const SUBSYSTEM = 'iceberg.keyindex';
/** Rows per transaction while an index is filled. */
const FILL_BATCH = 100_000;

type SqlValue = string | number | bigint;
const sqlValue = (k: KeyId): SqlValue => (typeof k === 'number' && Number.isSafeInteger(k) ? BigInt(k) : k);
const keyId = (v: SqlValue | null): KeyId | undefined => (v === null ? undefined : typeof v === 'bigint' ? Number(v) : v);

interface EntryRow {
  file: number;
  pos: number;
  value: SqlValue;
  owner: SqlValue | null;
}

export class DiskValueIndex implements ValueIndex {
  readonly kind = 'disk' as const;
  readonly memoryBytes = 0;
  snapshotId: bigint | undefined;
  private readonly files = new Map<number, DataFile>();
  private readonly ids = new Map<string, number>();
  private nextId = 1;
  private count = 0;
  private readonly q: ReturnType<typeof statements>;

  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
    snapshotId: bigint | undefined,
  ) {
    this.snapshotId = snapshotId;
    this.q = statements(db);
  }

  /** A new, empty index at `path` (whatever was there is removed), holding the live rows of `snapshotId`. */
  static create(path: string, snapshotId: bigint | undefined): DiskValueIndex {
    const db = freshDatabaseFile(path, 'value index', 'iceberg.keyIndex.memoryMaxBytes');
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = OFF');
      db.exec(`CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
        CREATE TABLE entries (file INTEGER NOT NULL, pos INTEGER NOT NULL, value NOT NULL, owner, PRIMARY KEY (file, pos)) WITHOUT ROWID;
        CREATE INDEX entries_by_value ON entries (value);`);
    } catch (e) {
      db.close();
      throw e;
    }
    return new DiskValueIndex(db, path, snapshotId);
  }

  get size(): number {
    return this.count;
  }

  rowsOf(value: KeyId, each: (file: DataFile, pos: number, owner: KeyId | undefined) => boolean | void): void {
    // all of the value's rows at once, not iterated: better-sqlite3 refuses every other statement
    // of the connection while an iteration is open, and `each` may stop a walk part-way
    const rows = this.q.byValue.all(sqlValue(value));
    for (const r of rows) {
      const file = this.files.get(r.file);
      if (!file) throw new FloeError(SUBSYSTEM, 'internal', `value index ${this.path}: a row points at file id ${r.file}, which the files table does not hold`);
      if (each(file, r.pos, keyId(r.owner)) === true) return;
    }
  }

  apply(delta: ValueIndexDelta, snapshotId: bigint | undefined): void {
    this.db.transaction(() => {
      for (const { filePath, positions } of delta.deadRows) {
        const id = this.ids.get(filePath);
        // a data file the index holds no row of (every row's value null, for a foreign key): nothing to remove
        if (id === undefined) continue;
        for (const pos of positions.sortedNumbers()) this.count -= this.q.remove.run(id, pos).changes;
      }
      delta.forEachSet((value, file, pos, owner) => this.put(value, file, pos, owner));
    })();
    this.snapshotId = snapshotId;
  }

  /** Rows of data files read from the lake (a build). */
  addRows(entries: readonly ValueEntry[]): void {
    this.fill((put) => entries.forEach((e) => put(e.value, e.file, e.pos, e.owner)));
  }

  /** The live entries of the memory index it replaces, streamed into it. */
  static fromMemory(path: string, memory: MemoryValueIndex): DiskValueIndex {
    const disk = DiskValueIndex.create(path, memory.snapshotId);
    try {
      disk.fill((put) => memory.forEachLive(put));
    } catch (e) {
      disk.close();
      throw e;
    }
    return disk;
  }

  /** Entries `source` puts, in transactions of FILL_BATCH rows (a bounded WAL while a large index moves in). */
  private fill(source: (put: (value: KeyId, file: DataFile, pos: number, owner: KeyId | undefined) => void) => void): void {
    let n = 0;
    this.db.exec('BEGIN');
    try {
      source((value, file, pos, owner) => {
        this.put(value, file, pos, owner);
        if (++n % FILL_BATCH === 0) this.db.exec('COMMIT; BEGIN');
      });
      this.db.exec('COMMIT');
    } catch (e) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw e;
    }
  }

  *entries(): Iterable<ValueEntry> {
    for (const r of this.q.all.iterate()) {
      const file = this.files.get(r.file);
      if (file) yield { value: keyId(r.value)!, file, pos: r.pos, owner: keyId(r.owner) };
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
    removeDatabaseFiles(this.path);
  }

  private put(value: KeyId, file: DataFile, pos: number, owner: KeyId | undefined): void {
    this.count += this.q.put.run(this.fileId(file), pos, sqlValue(value), owner === undefined ? null : sqlValue(owner)).changes > 0 ? 1 : 0;
  }

  private fileId(file: DataFile): number {
    let id = this.ids.get(file.filePath);
    if (id === undefined) {
      id = this.nextId++;
      this.q.addFile.run(id, file.filePath);
      this.ids.set(file.filePath, id);
    }
    this.files.set(id, file);
    return id;
  }
}

function statements(db: Database.Database) {
  return {
    byValue: db.prepare<[SqlValue], EntryRow>('SELECT file, pos, value, owner FROM entries WHERE value = ?'),
    all: db.prepare<[], EntryRow>('SELECT file, pos, value, owner FROM entries'),
    // a place is written once (a data file's rows are never rewritten in place); OR IGNORE keeps the count exact if not
    put: db.prepare<[number, number, SqlValue, SqlValue | null]>('INSERT OR IGNORE INTO entries (file, pos, value, owner) VALUES (?, ?, ?, ?)'),
    remove: db.prepare<[number, number]>('DELETE FROM entries WHERE file = ? AND pos = ?'),
    addFile: db.prepare<[number, string]>('INSERT INTO files (id, path) VALUES (?, ?)'),
  };
}
