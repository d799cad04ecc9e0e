/**
 * The MySQL session the source engine talks through: a small interface over the subset of `mysql2`
 * it calls (kysely's `MysqlPool` idea: type only what is used, inject the driver).
 *
 * Every session floe opens is configured the same way, because the value converters depend on it:
 * - `time_zone = '+00:00'`: TIMESTAMP values are instants and come back as UTC wall-clock text
 *   (docs/design.md §6); DATETIME values are wall-clock and are unaffected by the session zone.
 * - `dateStrings`, `supportBigNumbers` + `bigNumberStrings`, `jsonStrings`, no `decimalNumbers`: MySQL
 *   values stay text where the lake wants text or exact values; `JSON.parse` and `Date` are both slow
 *   and lossy here (STYLE.md "Hot paths").
 * - a fixed `sql_mode` without PAD_CHAR_TO_FULL_LENGTH (CHAR values must read as the binlog carries
 *   them: without trailing spaces) and without ANSI_QUOTES (floe quotes identifiers with backticks).
 * - `net_write_timeout` raised: a streamed chunk read pauses the socket while the consumer is busy;
 *   the server must not drop the connection after its default 60 seconds.
 *
 * Data reads use `rowsAsArray` (one array per row, in select-list order) and can be streamed, so a
 * chunk never has to be in memory as a whole.
 *
 * Every session goes over the transport of `tls.mode` (tls/tls-settings.ts): for `preferred`, TLS
 * when the server offers it. Its handshake completes before the first statement, so a connection
 * that fails is reported as one (connect-error.ts), never as a failed statement.
 */
import mysql from 'mysql2';
import { FloeError, errorMessage } from '../../util/errors.js';
import { connectError } from './connect-error.js';
import { DEFAULT_TLS, driverSsl, transportsToTry, type TlsSettings, type Transport } from './tls/tls-settings.js';

/** Where and as whom to connect. Never logged with its password or its TLS key. */
export interface MysqlConnectionConfig {
  host: string;
  port: number;
  user: string;
  password: string;
  database?: string;
  /** TLS to the server (tls-settings.ts); default `preferred`, as the MySQL client's. */
  tls?: TlsSettings;
  /** Connect timeout in milliseconds (default 10 s). */
  connectTimeoutMs?: number;
}

// ---- the subset of mysql2 floe calls ------------------------------------------------------------

interface DriverQueryOptions {
  sql: string;
  rowsAsArray?: boolean;
}

interface DriverFieldPacket {
  name: string;
  columnType?: number;
  characterSet?: number;
  flags?: number;
}

/** An object-mode Readable (mysql2's query stream), as much of it as floe uses. */
interface DriverRowStream extends AsyncIterable<unknown> {
  read(): unknown;
  on(event: 'readable' | 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  destroy(error?: Error): unknown;
}

/** A running mysql2 query; `stream()` turns its rows into an object-mode Readable with back-pressure. */
interface DriverQuery {
  stream(options?: { highWaterMark?: number }): DriverRowStream;
}

export interface DriverConnection {
  query(
    options: DriverQueryOptions,
    callback: (err: Error | null, rows: unknown, fields: DriverFieldPacket[] | undefined) => void,
  ): unknown;
  query(options: DriverQueryOptions): DriverQuery;
  /** Completes the handshake (mysql2 otherwise connects at the first statement). */
  connect(callback: (err: Error | null) => void): void;
  end(callback: (err?: Error | null) => void): void;
  destroy(): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
  readonly threadId: number | null;
}

type DriverConnectionFactory = (options: Record<string, unknown>) => DriverConnection;

const defaultFactory: DriverConnectionFactory = (options) =>
  mysql.createConnection(options as mysql.ConnectionOptions) as unknown as DriverConnection;

// ---- floe's view of a session -------------------------------------------------------------------

type SqlRow = Record<string, unknown>;

/** One MySQL session. Not safe for concurrent use by several callers; open one per parallel reader. */
export interface MysqlClient {
  /** Rows as objects keyed by column label (metadata queries). */
  query<T extends SqlRow = SqlRow>(sql: string): Promise<T[]>;
  /** Rows as arrays in select-list order, with the result's field descriptions. */
  queryArrays(sql: string): Promise<{ rows: unknown[][]; fields: DriverFieldPacket[] }>;
  /**
   * Rows as arrays, streamed with back-pressure: the socket is paused while the consumer is busy, so
   * memory stays bounded by `highWaterMark` rows. Breaking out of the loop early is allowed (the rest of
   * the result is drained and discarded by the driver before the session's next statement runs).
   */
  stream(sql: string, options?: { highWaterMark?: number }): AsyncIterable<unknown[]>;
  /**
   * The same stream handed out in batches: each batch is every row buffered when the consumer asks
   * (at most `highWaterMark`), so a fast reader pays one await per batch, not per row (the snapshot
   * reader's hot path). Same back-pressure and early-exit rules as `stream`.
   */
  streamBatches(sql: string, options?: { highWaterMark?: number }): AsyncIterable<unknown[][]>;
  /** The server's id for this session (`CONNECTION_ID()`), e.g. to KILL it. */
  readonly threadId: number | null;
  /** Whether the session runs over TLS: by its `tls.mode`, and for `preferred` by what the server offered. */
  readonly encrypted: boolean;
  readonly config: Readonly<Omit<MysqlConnectionConfig, 'password' | 'tls'>>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Inject another driver (tests, proxies). Defaults to `mysql2.createConnection`. */
  driver?: DriverConnectionFactory;
  /** Statements run right after connecting, after floe's own session settings. */
  initStatements?: string[];
}

/** The session settings every floe session starts with (see the module header for why). */
const SESSION_INIT_STATEMENTS: readonly string[] = [
  "SET time_zone = '+00:00'",
  "SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'",
  'SET SESSION net_write_timeout = 3600',
];

/** mysql2 options that shape returned values; the binlog reader's connection must use the same. */
export const VALUE_SHAPING_OPTIONS = {
  dateStrings: true,
  supportBigNumbers: true,
  bigNumberStrings: true,
  jsonStrings: true,
  decimalNumbers: false,
  timezone: 'Z',
  charset: 'UTF8MB4_GENERAL_CI',
} as const;

/**
 * mysql2 connection options for a connection of `config` over `transport` (for code that must hand
 * mysql2 options to a library: the binlog connection goes over the transport its control session
 * found, `MysqlClient.encrypted`). Plain data: they cross to the binlog worker thread.
 */
export async function driverOptions(config: MysqlConnectionConfig, transport: Transport): Promise<Record<string, unknown>> {
  const ssl = await driverSsl(config.tls ?? DEFAULT_TLS, transport);
  return {
    host: config.host,
    port: config.port,
    user: config.user,
    password: config.password,
    ...(config.database ? { database: config.database } : {}),
    ...(ssl ? { ssl } : {}),
    connectTimeout: config.connectTimeoutMs ?? 10_000,
    multipleStatements: false,
    ...VALUE_SHAPING_OPTIONS,
  };
}

/** Opens a session (see the module header for its transport) and applies floe's session settings. */
export async function connectMysql(config: MysqlConnectionConfig, options: ConnectOptions = {}): Promise<MysqlClient> {
  const transports = transportsToTry((config.tls ?? DEFAULT_TLS).mode);
  let driver: DriverConnection | undefined;
  let transport: Transport = 'plain';
  for (const [i, t] of transports.entries()) {
    let candidate: DriverConnection | undefined;
    try {
      candidate = (options.driver ?? defaultFactory)(await driverOptions(config, t));
      const opening = candidate;
      await new Promise<void>((resolve, reject) => opening.connect((err) => (err ? reject(err) : resolve())));
      driver = candidate;
      transport = t;
      break;
    } catch (e) {
      // a connection given up on: a late error of its socket has no one left to tell
      candidate?.on('error', () => {});
      candidate?.destroy();
      // `preferred`: plain only when the server does not offer TLS at all (MySQL's --ssl-mode=PREFERRED)
      const noTls = (e as { code?: string }).code === 'HANDSHAKE_NO_SSL_SUPPORT';
      if (!(noTls && i < transports.length - 1)) throw await connectError(config, e);
    }
  }
  const client = new DriverClient(driver!, config, transport === 'tls');
  try {
    for (const statement of [...SESSION_INIT_STATEMENTS, ...(options.initStatements ?? [])]) {
      await client.query(statement);
    }
  } catch (e) {
    driver!.destroy();
    throw e;
  }
  return client;
}

class DriverClient implements MysqlClient {
  readonly config: Readonly<Omit<MysqlConnectionConfig, 'password' | 'tls'>>;
  private lastError: Error | undefined;

  constructor(
    private readonly driver: DriverConnection,
    config: MysqlConnectionConfig,
    readonly encrypted: boolean,
  ) {
    const { password: _password, tls: _tls, ...rest } = config;
    this.config = rest;
    // mysql2 emits fatal connection errors on the connection; keep them for the next caller instead of
    // crashing the process with an unhandled 'error' event.
    driver.on('error', (err) => {
      this.lastError = err;
    });
  }

  get threadId(): number | null {
    return this.driver.threadId;
  }

  query<T extends SqlRow = SqlRow>(sql: string): Promise<T[]> {
    return new Promise((resolve, reject) => {
      this.driver.query({ sql }, (err, rows) => {
        if (err) reject(this.wrap(err, sql));
        else resolve(Array.isArray(rows) ? (rows as T[]) : []);
      });
    });
  }

  queryArrays(sql: string): Promise<{ rows: unknown[][]; fields: DriverFieldPacket[] }> {
    return new Promise((resolve, reject) => {
      this.driver.query({ sql, rowsAsArray: true }, (err, rows, fields) => {
        if (err) reject(this.wrap(err, sql));
        else resolve({ rows: Array.isArray(rows) ? (rows as unknown[][]) : [], fields: fields ?? [] });
      });
    });
  }

  async *stream(sql: string, options: { highWaterMark?: number } = {}): AsyncIterable<unknown[]> {
    const readable = this.driver.query({ sql, rowsAsArray: true }).stream({ highWaterMark: options.highWaterMark ?? 1024 });
    try {
      for await (const row of readable) yield row as unknown[];
    } catch (e) {
      throw this.wrap(e, sql);
    } finally {
      readable.destroy();
    }
  }

  async *streamBatches(sql: string, options: { highWaterMark?: number } = {}): AsyncIterable<unknown[][]> {
    const readable = this.driver.query({ sql, rowsAsArray: true }).stream({ highWaterMark: options.highWaterMark ?? 1024 });
    let ended = false;
    let failure: unknown;
    let wake: (() => void) | undefined;
    const signal = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    readable.on('readable', signal);
    readable.on('end', () => {
      ended = true;
      signal();
    });
    readable.on('close', () => {
      // closed without 'end' and without an error: rows are missing; never report that as the end
      if (!ended && failure === undefined) failure = new Error('the row stream closed before the end of the result (premature close)');
      signal();
    });
    readable.on('error', (e) => {
      failure = e;
      signal();
    });
    try {
      for (;;) {
        if (failure !== undefined) throw this.wrap(failure, sql);
        const batch: unknown[][] = [];
        let row: unknown;
        while ((row = readable.read()) !== null) batch.push(row as unknown[]);
        if (batch.length > 0) {
          yield batch;
          continue;
        }
        if (failure !== undefined) throw this.wrap(failure, sql);
        if (ended) return;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      readable.destroy();
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.driver.end(() => resolve());
    });
  }

  private wrap(e: unknown, sql: string): FloeError {
    if (e instanceof FloeError) return e;
    const err = e as { code?: string; errno?: number; fatal?: boolean };
    const fatal = err.fatal === true || this.lastError !== undefined;
    // A statement the server aborted because it is shutting down: MySQL answers the statements of the
    // sessions it closes with ER_SERVER_SHUTDOWN (1053) rather than dropping the connection, and the
    // server that comes back can run it again.
    const retryable = fatal || err.code === 'ER_SERVER_SHUTDOWN';
    const statement = sql.length > 300 ? sql.slice(0, 300) + '…' : sql;
    return new FloeError(
      'source.mysql',
      'source',
      `statement failed on ${this.config.host}:${this.config.port}: ${errorMessage(e)} [${statement}]`,
      { retryable, cause: e, context: err.code ? { code: err.code } : {} },
    );
  }
}

/** MySQL error code of a failure (from the driver), e.g. 'ER_SPECIFIC_ACCESS_DENIED_ERROR'. */
export function mysqlErrorCode(e: unknown): string | undefined {
  if (e instanceof FloeError && e.context.code) return e.context.code;
  const cause = (e as { cause?: unknown }).cause ?? e;
  return (cause as { code?: string }).code;
}

/** Backtick-quotes an identifier (MySQL: a backtick inside is doubled). */
export function quoteIdent(name: string): string {
  return '`' + name.replace(/`/g, '``') + '`';
}

/**
 * Quotes a string as a SQL literal for metadata queries. floe's sessions run with a fixed sql_mode
 * without NO_BACKSLASH_ESCAPES, so backslash escaping is the server's own rule here.
 */
export function quoteString(value: string): string {
  return mysql.escape(value);
}
