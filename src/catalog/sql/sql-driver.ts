/**
 * The seam between the SQL catalog and a database driver (kysely's `MysqlPool` idea: type only what
 * the catalog calls). The catalog writes portable SQL with `?` placeholders — the subset PostgreSQL,
 * MySQL/MariaDB and SQLite all accept — and each driver adapts placeholders, results and error
 * classification. Three drivers: postgres-driver.ts (`pg`), mysql-driver.ts (`mysql2`),
 * sqlite-driver.ts (`better-sqlite3`).
 */
export type SqlDialect = 'postgresql' | 'mysql' | 'sqlite';

export type SqlParam = string | number | bigint | null;

export interface SqlResult {
  /** Rows of a SELECT, keyed by lower-case column name; empty for other statements. */
  rows: Record<string, unknown>[];
  /** Rows inserted, updated or deleted (matched rows for UPDATE). */
  affectedRows: number;
}

export interface SqlExecutor {
  execute(sql: string, params?: readonly SqlParam[]): Promise<SqlResult>;
}

export interface SqlDriver extends SqlExecutor {
  readonly dialect: SqlDialect;
  /** Where the catalog lives, for messages (never with credentials). */
  readonly description: string;
  /** Runs `fn` on one connection inside BEGIN … COMMIT; rolls back when it throws. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Whether `e` says a primary-key / unique constraint was violated. */
  isUniqueViolation(e: unknown): boolean;
  /**
   * Whether `e` says the connection failed or was lost, so that a statement already sent may or may
   * not have been executed (the commit outcome is then unknown).
   */
  isConnectionLoss(e: unknown): boolean;
  /** Whether a column exists (used to upgrade a V0 JdbcCatalog table with `iceberg_type`). */
  columnExists(table: string, column: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Error codes of Node sockets that mean "the connection broke" (shared by the network drivers). */
export const SOCKET_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** The `code` property of a driver error, when it has one. */
export function errorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
