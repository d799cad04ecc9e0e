/**
 * The SQL catalog's MySQL / MariaDB driver (`mysql2`): a small pool with client-side `?` escaping
 * (`query`, not server-side prepared statements, so any server accepts it). mysql2 connects with
 * CLIENT_FOUND_ROWS, so `affectedRows` of an UPDATE counts matched rows, as the JDBC driver does.
 */
import mysql from 'mysql2/promise';
import { errorCode, SOCKET_ERROR_CODES, type SqlDriver, type SqlExecutor, type SqlParam, type SqlResult } from './sql-driver.js';

export interface MysqlConnection {
  host: string;
  port: number;
  user?: string;
  password?: string;
  database: string;
  /** Pool size. Default 4. */
  maxConnections?: number;
}

/** mysql2 error numbers that mean the connection is gone (CR_SERVER_GONE_ERROR, CR_SERVER_LOST, …). */
const LOST_ERRNOS: ReadonlySet<number> = new Set([2002, 2003, 2006, 2013, 2055, 1927 /* ER_CONNECTION_KILLED */, 1053 /* ER_SERVER_SHUTDOWN */]);

type Queryable = Pick<mysql.Pool, 'query'> | Pick<mysql.PoolConnection, 'query'>;

async function run(on: Queryable, sql: string, params: readonly SqlParam[]): Promise<SqlResult> {
  const [result] = await on.query(sql, params as SqlParam[]);
  if (Array.isArray(result)) {
    const rows = (result as Record<string, unknown>[]).map((row) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(row)) out[k.toLowerCase()] = v;
      return out;
    });
    return { rows, affectedRows: 0 };
  }
  return { rows: [], affectedRows: (result as mysql.ResultSetHeader).affectedRows };
}

export class MysqlDriver implements SqlDriver {
  readonly dialect = 'mysql' as const;
  readonly description: string;
  private readonly pool: mysql.Pool;
  private readonly database: string;

  constructor(connection: MysqlConnection) {
    this.database = connection.database;
    this.description = `mysql://${connection.host}:${connection.port}/${connection.database}`;
    this.pool = mysql.createPool({
      host: connection.host,
      port: connection.port,
      user: connection.user,
      password: connection.password,
      database: connection.database,
      connectionLimit: connection.maxConnections ?? 4,
      charset: 'utf8mb4',
      supportBigNumbers: true,
      bigNumberStrings: true,
    });
  }

  execute(sql: string, params: readonly SqlParam[] = []): Promise<SqlResult> {
    return run(this.pool, sql, params);
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const conn = await this.pool.getConnection();
    let broken = false;
    try {
      await conn.query('START TRANSACTION');
      const result = await fn({ execute: (sql, params = []) => run(conn, sql, params) });
      await conn.query('COMMIT');
      return result;
    } catch (e) {
      broken = this.isConnectionLoss(e);
      // the statement's own error is the one to report; if ROLLBACK fails too, the server rolls back when the connection ends
      if (!broken) await conn.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      if (broken) conn.destroy();
      else conn.release();
    }
  }

  isUniqueViolation(e: unknown): boolean {
    return errorCode(e) === 'ER_DUP_ENTRY' || (e as { errno?: number })?.errno === 1062;
  }

  isConnectionLoss(e: unknown): boolean {
    const code = errorCode(e);
    if (code !== undefined && (SOCKET_ERROR_CODES.has(code) || code === 'PROTOCOL_CONNECTION_LOST' || code === 'PROTOCOL_SEQUENCE_TIMEOUT')) return true;
    const errno = (e as { errno?: unknown })?.errno;
    if (typeof errno === 'number' && LOST_ERRNOS.has(errno)) return true;
    return (e as { fatal?: unknown })?.fatal === true;
  }

  async columnExists(table: string, column: string): Promise<boolean> {
    const r = await this.execute(
      'SELECT 1 AS found FROM information_schema.columns WHERE table_schema = ? AND table_name = ? AND column_name = ?',
      [this.database, table, column],
    );
    return r.rows.length > 0;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
