/**
 * The SQL catalog's PostgreSQL driver (`pg`): a small pool, `?` placeholders rewritten to `$n`, and a
 * `search_path` when the URL names a schema (`?currentSchema=` as in PostgreSQL's JDBC driver, so the
 * same URL works for Trino and Spark).
 */
import pg from 'pg';
import { errorCode, SOCKET_ERROR_CODES, type SqlDriver, type SqlExecutor, type SqlParam, type SqlResult } from './sql-driver.js';

export interface PostgresConnection {
  host: string;
  port: number;
  user?: string;
  password?: string;
  database?: string;
  /** Schema holding the catalog tables; created when missing. */
  schema?: string;
  /** Pool size. Default 4. */
  maxConnections?: number;
}

/** `?` → `$1`, `$2`, … outside quoted literals. */
export function toPostgresPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let quote: string | undefined;
  for (const c of sql) {
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      out += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      out += c;
    } else if (c === '?') {
      out += `$${++n}`;
    } else {
      out += c;
    }
  }
  return out;
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function toResult(r: pg.QueryResult): SqlResult {
  return { rows: r.rows ?? [], affectedRows: r.rowCount ?? 0 };
}

function asParams(params: readonly SqlParam[]): unknown[] {
  // pg sends bigint via String(); all catalog params are strings or null anyway.
  return params.map((p) => (typeof p === 'bigint' ? p.toString() : p));
}

export class PostgresDriver implements SqlDriver {
  readonly dialect = 'postgresql' as const;
  readonly description: string;
  private readonly pool: pg.Pool;
  private readonly schema: string | undefined;
  private schemaReady: Promise<void> | undefined;

  constructor(connection: PostgresConnection) {
    this.schema = connection.schema;
    this.description = `postgresql://${connection.host}:${connection.port}/${connection.database ?? ''}${connection.schema ? ` (schema ${connection.schema})` : ''}`;
    this.pool = new pg.Pool({
      host: connection.host,
      port: connection.port,
      user: connection.user,
      password: connection.password,
      database: connection.database,
      max: connection.maxConnections ?? 4,
      ...(connection.schema !== undefined ? { options: `-c search_path=${quoteIdentifier(connection.schema)}` } : {}),
    });
    // An idle client losing its connection must not crash the process; the next query reports it.
    this.pool.on('error', () => {});
  }

  async execute(sql: string, params: readonly SqlParam[] = []): Promise<SqlResult> {
    await this.ensureSchema();
    return toResult(await this.pool.query(toPostgresPlaceholders(sql), asParams(params)));
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    await this.ensureSchema();
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const tx: SqlExecutor = {
        execute: async (sql, params = []) => toResult(await client.query(toPostgresPlaceholders(sql), asParams(params))),
      };
      const result = await fn(tx);
      await client.query('COMMIT');
      return result;
    } catch (e) {
      broken = this.isConnectionLoss(e);
      // the statement's own error is the one to report; if ROLLBACK fails too, the server rolls back when the connection ends
      if (!broken) await client.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      client.release(broken ? true : undefined);
    }
  }

  isUniqueViolation(e: unknown): boolean {
    return errorCode(e) === '23505';
  }

  isConnectionLoss(e: unknown): boolean {
    const code = errorCode(e);
    if (code !== undefined) {
      // SQLSTATE class 08 (connection exception), 57P01..03 (server shutting down / terminated us).
      if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') return true;
      if (SOCKET_ERROR_CODES.has(code)) return true;
    }
    const message = e instanceof Error ? e.message : '';
    return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable/i.test(message);
  }

  async columnExists(table: string, column: string): Promise<boolean> {
    const r = await this.execute(
      'SELECT 1 AS found FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?',
      [table, column],
    );
    return r.rows.length > 0;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private ensureSchema(): Promise<void> {
    if (this.schema === undefined) return Promise.resolve();
    this.schemaReady ??= this.pool.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(this.schema)}`).then(
      () => undefined,
      (e: unknown) => {
        this.schemaReady = undefined;
        throw e;
      },
    );
    return this.schemaReady;
  }
}
