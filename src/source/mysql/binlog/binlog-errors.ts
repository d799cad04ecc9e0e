/**
 * What a failure of the binlog connection means for the reader: reconnect and resume, or stop with
 * an error that tells the operator what to do. Errors come from mysql2 (`code`, `errno`,
 * `sqlMessage`) through zongji's 'error' event, or from zongji itself (plain `Error`).
 */
import { FloeError, errorMessage } from '../../../util/errors.js';
import { formatOffset, serializeOffset, type BinlogOffset } from '../offset/offset.js';

export const SUBSYSTEM = 'source.mysql.binlog';

interface DriverError {
  code?: string;
  errno?: number;
  sqlMessage?: string;
  fatal?: boolean;
}

/** Connection-level failures after which reconnecting and resuming is the right answer. */
const RETRYABLE_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ER_CONNECTION_KILLED',
  'ER_SERVER_SHUTDOWN',
  'ER_QUERY_INTERRUPTED',
  'PROTOCOL_SEQUENCE_TIMEOUT',
]);
/** ER_SERVER_SHUTDOWN 1053, ER_QUERY_INTERRUPTED 1317, ER_CONNECTION_KILLED 1927 (MariaDB), CR_SERVER_LOST 2013 */
const RETRYABLE_ERRNOS = new Set([1053, 1317, 1927, 2006, 2013]);
/** Access denied / missing privilege: no retry helps. */
const PRIVILEGE_ERRNOS = new Set([1044, 1045, 1142, 1227, 1370]);
/** ER_MASTER_FATAL_ERROR_READING_BINLOG: the requested binlog is gone (or unreadable). */
const ER_MASTER_FATAL_ERROR_READING_BINLOG = 1236;

export function purgedBinlogError(resumeFrom: BinlogOffset | undefined, serverMessage: string, cause?: unknown): FloeError {
  return new FloeError(
    SUBSYSTEM,
    'source',
    `expected the server to still hold the binlog at ${resumeFrom ? formatOffset(resumeFrom) : 'the requested start'}, ` +
      `found it unavailable (server: ${serverMessage}). The binlog was purged (binlog_expire_logs_seconds / expire_logs_days, ` +
      'or PURGE BINARY LOGS) before floe read it, so changes since then cannot be streamed: re-snapshot the affected tables, ' +
      'and keep binlogs longer than the longest expected pause or snapshot',
    { retryable: false, cause, context: { reason: 'binlog-purged', ...(resumeFrom ? { offset: serializeOffset(resumeFrom) } : {}) } },
  );
}

export function serverChangedError(expected: string, found: string, resumeFrom: BinlogOffset): FloeError {
  return new FloeError(
    SUBSYSTEM,
    'source',
    `expected the binlog of server ${expected} (offset ${formatOffset(resumeFrom)}), found server ${found}: a file/position offset ` +
      'means nothing on another server and the offset carries no GTIDs to resume from. Re-snapshot the tables, or enable GTIDs ' +
      '(gtid_mode=ON on MySQL; MariaDB always has them) so that streaming can follow a failover',
    { retryable: false, context: { reason: 'server-changed' } },
  );
}

/** Turns any error from the binlog connection into a FloeError; `retryable` says whether to reconnect. */
export function classifyBinlogError(e: unknown, resumeFrom: BinlogOffset | undefined): FloeError {
  if (e instanceof FloeError) return e;
  const d = (e ?? {}) as DriverError;
  const msg = d.sqlMessage ?? errorMessage(e);
  if (d.errno === ER_MASTER_FATAL_ERROR_READING_BINLOG) return purgedBinlogError(resumeFrom, msg, e);
  if (d.errno !== undefined && PRIVILEGE_ERRNOS.has(d.errno)) {
    return new FloeError(
      SUBSYSTEM,
      'source',
      `expected the user to be allowed to read the binlog, found: ${msg}. GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* (and SELECT on the captured tables)`,
      { retryable: false, cause: e, context: { reason: 'privilege' } },
    );
  }
  if (/PARTIAL_UPDATE_ROWS_EVENT/.test(msg)) {
    return new FloeError(SUBSYSTEM, 'source', `expected full row images, found partial JSON updates: set binlog_row_value_options='' (${msg})`, {
      retryable: false,
      cause: e,
      context: { reason: 'config' },
    });
  }
  const retryable = (d.code !== undefined && RETRYABLE_CODES.has(d.code)) || (d.errno !== undefined && RETRYABLE_ERRNOS.has(d.errno)) || /Connection lost|closed the connection|socket|read timeout/i.test(msg);
  return new FloeError(SUBSYSTEM, 'source', `binlog connection failed: ${msg}${d.code ? ` (${d.code}${d.errno ? ' ' + d.errno : ''})` : ''}`, {
    retryable,
    cause: e,
    context: { reason: retryable ? 'connection-lost' : 'unknown' },
  });
}
