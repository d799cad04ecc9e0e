/**
 * The SQLite database file of a disk-backed key index (sqlite-key-index.ts; docs/key-index-store.md):
 * its tables, pragmas and integrity check, the statements the index runs, and the `stamp` row that
 * says which table state the file holds. Creating a file removes whatever was at its path; opening
 * one checks every page first (`quick_check`), so a damaged file is rebuilt, never trusted.
 *
 * Tables: `stamp` (one row: table uuid, key field ids and types, schema id, snapshot id, row count,
 * format), `files(id, path, deletes)`, `rows(k PRIMARY KEY, file, pos) WITHOUT ROWID`.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { errorMessage, FloeError } from '../../util/errors.js';
import type { FileScanTask } from '../scan/scan-plan.js';
import type { KeyId } from './table-key.js';

const SUBSYSTEM = 'iceberg.writer';
/** The layout version written in the stamp; another one is rebuilt. */
export const FORMAT = 1;

export type SqlKey = bigint | string;
/** Numeric KeyIds bound as INTEGER (a varint on disk, not an 8-byte REAL). */
export const sqlKey = (k: KeyId): SqlKey => (typeof k === 'number' ? BigInt(k) : k);

export interface StampRow {
  table_uuid: string;
  key_field_ids: string;
  key_types: string;
  schema_id: number;
  snapshot_id: string;
  row_count: number;
  format: number;
}

/** A row of `files`; `deletes` is a `signature`, NULL when floe's own commit changed them since. */
export interface FileRow {
  id: number;
  path: string;
  deletes: string | null;
}

/**
 * Which delete files applied to a data file when the index read it. Compared at replay with the
 * current snapshot's: equal → the file's rows are as indexed; different (or unknown) → re-checked.
 */
export function deletesSignature(task: FileScanTask): string {
  const d = task.deletes;
  return signature(d.dv?.file.filePath, d.position.map((r) => r.file.filePath), d.equality.map((r) => r.file.filePath));
}

export function signature(dv: string | undefined, position: readonly string[], equality: readonly string[]): string {
  return [dv ?? '', ...[...position].sort(), '|', ...[...equality].sort()].join('\n');
}

/** The statements a disk key index runs, prepared once per database. */
export function indexStatements(db: Database.Database) {
  return {
    get: db.prepare<[SqlKey], { file: number; pos: number }>('SELECT file, pos FROM rows WHERE k = ?'),
    insert: db.prepare<[SqlKey, number, number]>('INSERT OR IGNORE INTO rows (k, file, pos) VALUES (?, ?, ?)'),
    update: db.prepare<[number, number, SqlKey]>('UPDATE rows SET file = ?, pos = ? WHERE k = ?'),
    del: db.prepare<[SqlKey]>('DELETE FROM rows WHERE k = ?'),
    delAt: db.prepare<[SqlKey, number, number]>('DELETE FROM rows WHERE k = ? AND file = ? AND pos = ?'),
    addFile: db.prepare<[number, string, string | null]>('INSERT INTO files (id, path, deletes) VALUES (?, ?, ?)'),
    fileDeletes: db.prepare<[string | null, number]>('UPDATE files SET deletes = ? WHERE id = ?'),
    stamp: db.prepare<[string, string, string, number, string, number]>('INSERT OR REPLACE INTO stamp (one, table_uuid, key_field_ids, key_types, schema_id, snapshot_id, row_count, format) VALUES (1, ?, ?, ?, ?, ?, ?, ' + FORMAT + ')'),
  };
}

/** Removes a database file and its WAL and shared-memory files. */
export function removeDatabaseFiles(path: string): void {
  for (const p of [path, `${path}-wal`, `${path}-shm`]) rmSync(p, { force: true });
}

/**
 * A new, empty database file at `path` for a table's disk-backed `index` (whatever was there is
 * removed); `bound` is the setting that keeps the index in memory instead.
 */
export function freshDatabaseFile(path: string, index: string, bound: string): Database.Database {
  try {
    removeDatabaseFiles(path);
    mkdirSync(dirname(path), { recursive: true });
    return new Database(path);
  } catch (e) {
    throw new FloeError(SUBSYSTEM, 'io', `${index}: expected to create ${path} for a table's disk-backed ${index}, found ${errorMessage(e)}; point --state-dir (config stateDir) at a writable local directory, or raise ${bound}`, { cause: e });
  }
}

/** A new, empty, unstamped database at `path` (whatever was there is removed). */
export function createIndexDatabase(path: string): Database.Database {
  const db = freshDatabaseFile(path, 'key index', 'iceberg.keyIndex.memoryMaxRows');
  try {
    db.pragma('journal_mode = WAL');
    // NORMAL in WAL mode: a power loss may lose the last transactions but never corrupts; the
    // lake is the truth and an older stamp is replayed
    db.pragma('synchronous = NORMAL');
    db.exec(`CREATE TABLE stamp (one INTEGER PRIMARY KEY CHECK (one = 1), table_uuid TEXT NOT NULL, key_field_ids TEXT NOT NULL, key_types TEXT NOT NULL, schema_id INTEGER NOT NULL, snapshot_id TEXT NOT NULL, row_count INTEGER NOT NULL, format INTEGER NOT NULL);
      CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, deletes TEXT);
      CREATE TABLE rows (k PRIMARY KEY, file INTEGER NOT NULL, pos INTEGER NOT NULL) WITHOUT ROWID;`);
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}

/** Opens an existing database and reads its stamp and files (throws when unreadable). */
export function openIndexDatabase(path: string): { db: Database.Database; stamp: StampRow | undefined; files: FileRow[] } {
  const db = new Database(path, { fileMustExist: true });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    // garbage bytes fail here ("file is not a database"); a damaged page inside a valid file fails
    // quick_check — reading every page, seconds per GB, worth it before trusting the cache
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`quick_check: ${String(check)}`);
    const stamp = db.prepare<[], StampRow>('SELECT table_uuid, key_field_ids, key_types, schema_id, snapshot_id, row_count, format FROM stamp').get();
    const files = db.prepare<[], FileRow>('SELECT id, path, deletes FROM files').all();
    return { db, stamp, files };
  } catch (e) {
    db.close();
    throw e;
  }
}
