/**
 * The SQL catalog's SQLite driver (`better-sqlite3`): one catalog in one local file, for a single
 * machine. Several processes may share the file: SQLite serializes writers with its file lock and
 * `busy_timeout` makes a waiting writer retry instead of failing with SQLITE_BUSY; WAL journaling lets
 * readers proceed meanwhile. Never put the file on a network filesystem (SQLite's own advice: its
 * locks are unreliable there).
 *
 * better-sqlite3 is synchronous. Within this process, statements and transactions are queued one at a
 * time, so that a transaction's awaits cannot let another statement slip into it.
 */
import Database from 'better-sqlite3';
import { errorCode, type SqlDriver, type SqlExecutor, type SqlParam, type SqlResult } from './sql-driver.js';

export interface SqliteConnection {
  /** Path of the database file (created when missing), or `:memory:` (one process only). */
  file: string;
  /** Milliseconds a statement waits for another process's write lock. Default 30 s. */
  busyTimeoutMs?: number;
}

export class SqliteDriver implements SqlDriver {
  readonly dialect = 'sqlite' as const;
  readonly description: string;
  private readonly db: Database.Database;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(connection: SqliteConnection) {
    this.description = `sqlite:${connection.file}`;
    this.db = new Database(connection.file, { timeout: connection.busyTimeoutMs ?? 30_000 });
    if (connection.file !== ':memory:') this.db.pragma('journal_mode = WAL');
    // LIKE is ASCII-case-insensitive by default; namespace prefix matches must be exact.
    this.db.pragma('case_sensitive_like = ON');
  }

  execute(sql: string, params: readonly SqlParam[] = []): Promise<SqlResult> {
    return this.serialized(async () => this.run(sql, params));
  }

  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.serialized(async () => {
      // IMMEDIATE takes the write lock up front, so two processes' transactions cannot deadlock on
      // a read-to-write lock upgrade (which SQLite reports as SQLITE_BUSY without waiting).
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const result = await fn({ execute: async (sql, params = []) => this.run(sql, params) });
        this.db.exec('COMMIT');
        return result;
      } catch (e) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw e;
      }
    });
  }

  isUniqueViolation(e: unknown): boolean {
    const code = errorCode(e);
    return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
  }

  isConnectionLoss(e: unknown): boolean {
    // An in-process library: a statement either ran or threw before changing anything, except for
    // I/O errors in the middle of a commit, where SQLite's journal decides on the next open.
    const code = errorCode(e);
    return code !== undefined && code.startsWith('SQLITE_IOERR');
  }

  async columnExists(table: string, column: string): Promise<boolean> {
    const r = await this.execute('SELECT 1 AS found FROM pragma_table_info(?) WHERE name = ?', [table, column]);
    return r.rows.length > 0;
  }

  async close(): Promise<void> {
    await this.serialized(async () => this.db.close());
  }

  private run(sql: string, params: readonly SqlParam[]): SqlResult {
    const stmt = this.db.prepare(sql);
    if (stmt.reader) return { rows: stmt.all(...params) as Record<string, unknown>[], affectedRows: 0 };
    return { rows: [], affectedRows: stmt.run(...params).changes };
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    // the queue only orders the calls: each caller gets its own result or error from `next`
    this.queue = next.catch(() => undefined);
    return next;
  }
}
