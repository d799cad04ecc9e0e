/**
 * Pre-flight checks of a MySQL / MariaDB source (`floe check`): everything floe needs from the server
 * before a snapshot starts, each failure saying which setting or grant to change (Flink CDC checks
 * binlog_format, binlog_row_image and binlog_row_value_options the same way, docs/seeds/seed-001.txt).
 *
 * | check                          | requirement                                                     |
 * |--------------------------------|-----------------------------------------------------------------|
 * | server                         | MySQL 5.7+ or MariaDB 10.2+ (flavour and version reported)      |
 * | log_bin                        | ON                                                              |
 * | binlog_format                  | ROW                                                             |
 * | binlog_row_image               | FULL (before and after images hold every column)                |
 * | binlog_row_value_options       | '' or PARTIAL_JSON on MySQL 8.0.3+ (diffs applied to the before  |
 * |                                | image, partial-update-rows.ts; reported)                        |
 * | binlog_transaction_compression | reported on MySQL 8.0.20+ (ON and OFF both read)                |
 * | binlog_row_metadata            | FULL recommended (warning): row events describe their columns   |
 * | log_replica_updates            | ON when the server is itself a replica                          |
 * | privileges                     | REPLICATION SLAVE, REPLICATION CLIENT (MariaDB: BINLOG MONITOR),|
 * |                                | SELECT on the captured databases; SHOW DATABASES (warning)      |
 * | lock_tables                    | MySQL, captured tables without a primary key: LOCK TABLES on    |
 * |                                | their databases (warning; snapshot/locked-read-view.ts)         |
 * | gtid                           | MySQL gtid_mode=ON (warning otherwise); MariaDB GTID position    |
 * | server_id                      | floe's replica id differs from the server's and its replicas'   |
 * | binlog_retention               | retention ≥ 2 × the estimated snapshot duration                 |
 *
 * `ok: false` with severity 'error' blocks a pipeline; 'warning' lines are advice.
 *
 * MySQL 8.4 removed the MASTER / SLAVE statements (SHOW MASTER STATUS, SHOW SLAVE STATUS, SHOW SLAVE
 * HOSTS; MySQL 8.4 Release Notes, 8.4.0, "SQL statements removed") and `expire_logs_days` went in 8.2
 * (MySQL Server Version Reference, "Option and Variable Changes for MySQL 8.2"): the checks use the
 * REPLICA / BINARY LOG statements from the versions that have them (dialect.ts), read
 * `log_replica_updates` before its deprecated alias `log_slave_updates`, and take a variable the
 * server does not have as unset (test/source/mysql/recorded-servers.test.ts replays 8.4 and 9.x).
 */
import { errorMessage, isFloeError } from '../../util/errors.js';
import type { MysqlClient, MysqlConnectionConfig } from './client.js';
import { connectMysql, quoteString } from './client.js';
import type { ServerDialect } from './dialect.js';
import { detectDialect, versionAtLeast } from './dialect.js';
import { canLockDatabase, canSelectDatabase, canSelectTable, hasGlobal, parseGrants, type GrantSet } from './grants.js';
import type { TableId } from './schema/table-schema.js';
import { tableKey } from './schema/table-schema.js';

type CheckSeverity = 'error' | 'warning' | 'info';

export interface PreflightCheck {
  check: string;
  ok: boolean;
  /** How much a failure matters; 'info' lines only report (always ok). */
  severity: CheckSeverity;
  message: string;
}

export interface PreflightOptions {
  /** The replica server id floe's binlog reader will register with. */
  serverId?: number;
  /** The tables floe will capture (for grants and the snapshot estimate). */
  tables?: readonly TableId[];
  /** Expected snapshot duration; estimated from row counts when absent. */
  expectedSnapshotSeconds?: number;
  /** Read rate used for the estimate (default 20,000 rows/s). */
  snapshotRowsPerSecond?: number;
}

export interface PreflightReport {
  dialect?: ServerDialect;
  checks: PreflightCheck[];
}

/** True when no check failed with severity 'error'. */
export function preflightPassed(checks: readonly PreflightCheck[]): boolean {
  return checks.every((c) => c.ok || c.severity !== 'error');
}

/** Connects and runs every check; a connection failure is reported as the failed 'connection' check. */
export async function checkSource(config: MysqlConnectionConfig, options: PreflightOptions = {}): Promise<PreflightReport> {
  let client: MysqlClient;
  try {
    client = await connectMysql(config);
  } catch (e) {
    // a check line names its check: the connection error's own text, without its subsystem
    return { checks: [{ check: 'connection', ok: false, severity: 'error', message: isFloeError(e) ? e.detail : errorMessage(e) }] };
  }
  try {
    return await runPreflight(client, options);
  } finally {
    await client.close();
  }
}

const VARIABLES = [
  'log_bin', 'binlog_format', 'binlog_row_image', 'binlog_row_value_options', 'binlog_transaction_compression', 'binlog_row_metadata',
  'gtid_mode', 'enforce_gtid_consistency', 'gtid_binlog_pos', 'server_id', 'expire_logs_days', 'binlog_expire_logs_seconds',
  'binlog_expire_logs_auto_purge', 'log_slave_updates', 'log_replica_updates',
];

export async function runPreflight(client: MysqlClient, options: PreflightOptions = {}): Promise<PreflightReport> {
  const dialect = await detectDialect(client);
  const checks: PreflightCheck[] = [];
  const add = (check: string, ok: boolean, severity: CheckSeverity, message: string): void => {
    checks.push({ check, ok, severity, message });
  };
  const rows = await client.query(`SHOW GLOBAL VARIABLES WHERE Variable_name IN (${VARIABLES.map(quoteString).join(', ')})`);
  const vars = new Map(rows.map((r) => [String(r.Variable_name).toLowerCase(), r.Value === null ? '' : String(r.Value)]));
  const v = (name: string): string | undefined => vars.get(name);
  const dynamic = dialect.flavor === 'mysql' ? 'SET PERSIST' : 'SET GLOBAL (and in my.cnf)';

  // server
  const supported = dialect.flavor === 'mysql' ? versionAtLeast(dialect.version, 5, 7) : versionAtLeast(dialect.version, 10, 2);
  add('server', supported, 'error', supported
    ? `${dialect.flavor === 'mysql' ? 'MySQL' : 'MariaDB'} ${dialect.versionString}`
    : `server ${dialect.versionString} is too old: expected MySQL 5.7+ or MariaDB 10.2+`);

  // log_bin
  const logBin = (v('log_bin') ?? '').toUpperCase();
  const binlogOn = logBin === 'ON' || logBin === '1';
  add('log_bin', binlogOn, 'error', binlogOn
    ? 'binary log is on'
    : `binary log is off (log_bin=${logBin || 'OFF'}): start the server with log-bin (log_bin=<basename> in my.cnf; on MySQL 8 remove skip-log-bin / disable-log-bin) and restart it`);

  // binlog_format
  const format = (v('binlog_format') ?? '').toUpperCase();
  add('binlog_format', format === 'ROW', 'error', format === 'ROW'
    ? 'binlog_format=ROW'
    : `binlog_format is ${format || 'unset'}: set binlog_format=ROW (${dynamic} binlog_format='ROW'; sessions already open keep their format until they reconnect)`);

  // binlog_row_image
  const image = (v('binlog_row_image') ?? 'FULL').toUpperCase();
  add('binlog_row_image', image === 'FULL', 'error', image === 'FULL'
    ? 'binlog_row_image=FULL'
    : `binlog_row_image is ${image}: set binlog_row_image=FULL (${dynamic} binlog_row_image='FULL'), otherwise row events lack the columns an update did not change`);

  // binlog_row_value_options (MySQL 8.0.3+)
  if (dialect.hasRowValueOptions) {
    const rvo = (v('binlog_row_value_options') ?? '').trim().toUpperCase();
    const known = rvo === '' || rvo === 'PARTIAL_JSON';
    add('binlog_row_value_options', known, 'error', rvo === ''
      ? "binlog_row_value_options=''"
      : known
        ? 'binlog_row_value_options=PARTIAL_JSON: partial JSON updates are applied to the document of the full before image (binlog_row_image=FULL)'
        : `binlog_row_value_options is ${rvo}: expected '' or PARTIAL_JSON; set binlog_row_value_options='' (${dynamic} binlog_row_value_options='')`);
  }

  // binlog_transaction_compression (MySQL 8.0.20+): either way the transactions are read
  // (binlog/transaction-payload.ts); sessions may set it for themselves, so this reports the default
  if (dialect.hasTransactionCompression) {
    const comp = (v('binlog_transaction_compression') ?? 'OFF').toUpperCase();
    const on = comp === 'ON' || comp === '1';
    add('binlog_transaction_compression', true, 'info', on
      ? 'binlog_transaction_compression=ON: transactions are logged compressed (zstd); floe decompresses them'
      : 'binlog_transaction_compression=OFF (sessions that turn it on are read too)');
  }

  // binlog_row_metadata (advice)
  if (dialect.hasRowMetadata) {
    const meta = (v('binlog_row_metadata') ?? '').toUpperCase();
    add('binlog_row_metadata', meta === 'FULL', 'warning', meta === 'FULL'
      ? 'binlog_row_metadata=FULL'
      : `binlog_row_metadata is ${meta || 'unset'}: set binlog_row_metadata=FULL (${dynamic} binlog_row_metadata='FULL') so row events carry their column names and types; otherwise they are decoded with column metadata read later from information_schema, which an ALTER TABLE in between can make wrong`);
  }

  await checkReplicaUpdates(client, dialect, v, add);
  const grants = await readGrants(client);
  checkPrivileges(grants, dialect, options, add);
  await checkKeylessLocks(client, dialect, grants, options, add);
  await checkGtids(client, dialect, v, add);
  await checkServerId(client, dialect, Number(v('server_id') ?? 0), options.serverId, add);
  await checkRetention(client, dialect, v, options, add);
  return { dialect, checks };
}

type Add = (check: string, ok: boolean, severity: CheckSeverity, message: string) => void;

async function checkReplicaUpdates(client: MysqlClient, dialect: ServerDialect, v: (n: string) => string | undefined, add: Add): Promise<void> {
  let isReplica = false;
  try {
    isReplica = (await client.query(dialect.replicaStatusSql)).length > 0;
  } catch {
    return; // no privilege to ask; the privileges check reports REPLICATION CLIENT
  }
  if (!isReplica) return;
  const value = (v('log_replica_updates') ?? v('log_slave_updates') ?? '').toUpperCase();
  const on = value === 'ON' || value === '1';
  const name = dialect.flavor === 'mysql' && versionAtLeast(dialect.version, 8, 0, 26) ? 'log_replica_updates' : 'log_slave_updates';
  add('log_replica_updates', on, 'error', on
    ? `the server is a replica and writes replicated changes to its binlog (${name}=ON)`
    : `the server is a replica but ${name} is ${value || 'OFF'}: changes it replicates never reach its binlog; set ${name}=ON in my.cnf and restart, or read from the primary`);
}

async function readGrants(client: MysqlClient): Promise<GrantSet | Error> {
  try {
    const rows = await client.query('SHOW GRANTS FOR CURRENT_USER()');
    return parseGrants(rows.map((r) => String(Object.values(r)[0])));
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

function checkPrivileges(grants: GrantSet | Error, dialect: ServerDialect, options: PreflightOptions, add: Add): void {
  if (grants instanceof Error) {
    add('privileges', false, 'warning', `cannot read the user's grants (${grants.message}); make sure it has SELECT, REPLICATION SLAVE and REPLICATION CLIENT`);
    return;
  }
  const roleNote = grants.roles.length > 0 ? ` (privileges granted through roles ${grants.roles.join(', ')} are not visible here; grant them to the user directly or make the role a default role)` : '';
  const missingGlobal: string[] = [];
  if (!hasGlobal(grants, 'REPLICATION SLAVE', 'REPLICATION REPLICA')) missingGlobal.push('REPLICATION SLAVE');
  const clientPriv = dialect.flavor === 'mariadb' && versionAtLeast(dialect.version, 10, 5, 2) ? 'BINLOG MONITOR' : 'REPLICATION CLIENT';
  if (!hasGlobal(grants, 'REPLICATION CLIENT', 'BINLOG MONITOR')) missingGlobal.push(clientPriv);
  const tables = options.tables ?? [];
  let selectTargets: string[] = [];
  let deniedNote = '';
  if (tables.length === 0) {
    const anySelect = hasGlobal(grants, 'SELECT') || grants.databases.some((d) => d.privileges.has('SELECT') || d.privileges.has('ALL PRIVILEGES'));
    if (!anySelect) selectTargets = ['*.*'];
  } else {
    const denied = tables.filter((t) => !canSelectTable(grants, t.database, t.table));
    if (denied.length > 0) {
      selectTargets = [...new Set(denied.map((t) => t.database))].map((d) => `\`${d.replace(/`/g, '``')}\`.*`);
      deniedNote = ` (no SELECT on ${denied.slice(0, 5).map(tableKey).join(', ')}${denied.length > 5 ? ', …' : ''})`;
    }
  }
  const ok = missingGlobal.length === 0 && selectTargets.length === 0;
  const statements: string[] = [];
  if (missingGlobal.length > 0) statements.push(`GRANT ${missingGlobal.join(', ')} ON *.* TO <user>`);
  for (const target of selectTargets) statements.push(`GRANT SELECT ON ${target} TO <user>`);
  const lacking = [...missingGlobal, ...(selectTargets.length > 0 ? [`SELECT${deniedNote}`] : [])];
  add('privileges', ok, 'error', ok
    ? 'the user can read the binlog and the captured tables'
    : `the user lacks ${lacking.join(', ')}: ${statements.join('; ')}${roleNote}`);
  const showDatabases = hasGlobal(grants, 'SHOW DATABASES') || hasGlobal(grants, 'SELECT');
  const captured = [...new Set(tables.map((t) => t.database))];
  const perDb = captured.length > 0 && captured.every((d) => canSelectDatabase(grants, d));
  add('show_databases', showDatabases || perDb, 'warning', showDatabases || perDb
    ? 'the user can list the captured databases'
    : 'the user has neither SHOW DATABASES nor SELECT on every captured database: table patterns only see databases it has grants in; GRANT SHOW DATABASES ON *.* TO <user> to discover all of them');
}

/**
 * On MySQL a snapshot chunk of a table without a primary key is read under a brief LOCK TABLES … READ
 * (snapshot/locked-read-view.ts); a user who may not lock reads those tables at-least-once.
 */
async function checkKeylessLocks(client: MysqlClient, dialect: ServerDialect, grants: GrantSet | Error, options: PreflightOptions, add: Add): Promise<void> {
  const tables = options.tables ?? [];
  if (dialect.flavor !== 'mysql' || tables.length === 0 || grants instanceof Error) return;
  const keyless = await tablesWithoutPrimaryKey(client, tables);
  if (keyless.length === 0) return;
  const names = `${keyless.slice(0, 5).map(tableKey).join(', ')}${keyless.length > 5 ? ', …' : ''}`;
  const denied = [...new Set(keyless.map((t) => t.database))].filter((d) => !canLockDatabase(grants, d));
  add('lock_tables', denied.length === 0, 'warning', denied.length === 0
    ? `tables without a primary key (${names}) are snapshotted exactly, each chunk's read view opened under a brief LOCK TABLES … READ`
    : `the user may not LOCK TABLES in ${denied.join(', ')}: tables without a primary key (${names}) are then snapshotted at-least-once (a row changed while a chunk is read can reach the lake twice); ${denied.map((d) => `GRANT LOCK TABLES ON \`${d.replace(/`/g, '``')}\`.* TO <user>`).join('; ')}`);
}

async function tablesWithoutPrimaryKey(client: MysqlClient, tables: readonly TableId[]): Promise<TableId[]> {
  const where = tables.map((t) => `(t.TABLE_SCHEMA = ${quoteString(t.database)} AND t.TABLE_NAME = ${quoteString(t.table)})`).join(' OR ');
  const rows = await client.query<{ db: string; tbl: string }>(
    `SELECT t.TABLE_SCHEMA AS db, t.TABLE_NAME AS tbl FROM information_schema.TABLES t WHERE t.TABLE_TYPE = 'BASE TABLE' AND (${where}) AND NOT EXISTS (SELECT 1 FROM information_schema.TABLE_CONSTRAINTS c WHERE c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME AND c.CONSTRAINT_TYPE = 'PRIMARY KEY') ORDER BY t.TABLE_SCHEMA, t.TABLE_NAME`,
  );
  return rows.map((r) => ({ database: String(r.db), table: String(r.tbl) }));
}

async function checkGtids(client: MysqlClient, dialect: ServerDialect, v: (n: string) => string | undefined, add: Add): Promise<void> {
  if (dialect.flavor === 'mariadb') {
    const pos = v('gtid_binlog_pos') ?? '';
    add('gtid', true, 'info', `MariaDB GTID position ${pos === '' ? '(empty: no transaction binlogged yet)' : pos}; floe resumes by GTID position`);
    return;
  }
  const mode = (v('gtid_mode') ?? 'OFF').toUpperCase();
  if (mode === 'ON') {
    add('gtid', true, 'info', 'gtid_mode=ON: floe resumes by GTID set');
    return;
  }
  add('gtid', false, 'warning', `gtid_mode is ${mode}: floe resumes by binlog file and position, which a failover to another server invalidates; set enforce_gtid_consistency=ON and gtid_mode=ON (stepwise through OFF_PERMISSIVE and ON_PERMISSIVE) to resume by GTID`);
}

async function checkServerId(client: MysqlClient, dialect: ServerDialect, ownId: number, floeId: number | undefined, add: Add): Promise<void> {
  if (floeId === undefined) {
    add('server_id', true, 'info', `server_id=${ownId}; no replica server id configured for floe yet`);
    return;
  }
  if (floeId === ownId) {
    add('server_id', false, 'error', `floe's replica server id ${floeId} is the source server's own server_id: set the source option serverId to an id no server or replica in the topology uses`);
    return;
  }
  let replicas: Record<string, unknown>[];
  try {
    replicas = await client.query(dialect.replicasSql);
  } catch (e) {
    add('server_id', true, 'warning', `cannot list registered replicas with ${dialect.replicasSql} (${errorMessage(e)}); make sure no replica or other CDC client uses server id ${floeId}`);
    return;
  }
  const clash = replicas.find((r) => Number(field(r, 'server_id')) === floeId);
  if (clash) {
    add('server_id', false, 'error', `replica ${String(field(clash, 'host') ?? '?')}:${String(field(clash, 'port') ?? '?')} already uses server id ${floeId}; the server disconnects one of two readers with the same id: set the source option serverId to an unused value`);
    return;
  }
  add('server_id', true, 'info', `server id ${floeId} is free (source server_id=${ownId}, ${replicas.length} registered replica${replicas.length === 1 ? '' : 's'})`);
}

function field(row: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(row).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : row[key];
}

async function checkRetention(client: MysqlClient, dialect: ServerDialect, v: (n: string) => string | undefined, options: PreflightOptions, add: Add): Promise<void> {
  // MySQL 8.0.29+: binlog_expire_logs_auto_purge=OFF turns automatic purging off whatever the
  // expiry period says (MySQL 8.0 Reference Manual, "Binary Logging Options and Variables")
  const autoPurgeOff = ['OFF', '0'].includes((v('binlog_expire_logs_auto_purge') ?? 'ON').toUpperCase());
  const seconds = autoPurgeOff ? 0 : Number(v('binlog_expire_logs_seconds') ?? 0) || 0;
  const days = autoPurgeOff ? 0 : Number(v('expire_logs_days') ?? 0) || 0;
  const retention = seconds > 0 ? seconds : days > 0 ? days * 86400 : Infinity;
  const setting = autoPurgeOff ? 'binlog_expire_logs_auto_purge=OFF' : seconds > 0 ? `binlog_expire_logs_seconds=${seconds}` : days > 0 ? `expire_logs_days=${days}` : 'no automatic purge';
  const rate = options.snapshotRowsPerSecond ?? 20_000;
  let estimate = options.expectedSnapshotSeconds;
  let basis = 'as configured';
  if (estimate === undefined) {
    const rows = await estimateRows(client, options.tables);
    estimate = rows / rate;
    basis = `~${rows.toLocaleString('en-US')} rows at ${rate.toLocaleString('en-US')} rows/s`;
  }
  if (retention === Infinity) {
    add('binlog_retention', true, 'info', `binlogs are not purged automatically (${setting}); purging them by hand during a snapshot of ${duration(estimate)} would force a re-snapshot`);
    return;
  }
  const needed = Math.ceil(2 * estimate);
  const variable = dialect.flavor === 'mysql' || v('binlog_expire_logs_seconds') !== undefined ? 'binlog_expire_logs_seconds' : 'expire_logs_days';
  const advice = variable === 'binlog_expire_logs_seconds' ? `binlog_expire_logs_seconds to at least ${needed}` : `expire_logs_days to at least ${Math.ceil(needed / 86400)}`;
  const message = `binlogs are kept for ${duration(retention)} (${setting}) and the snapshot is estimated to take ${duration(estimate)} (${basis})`;
  if (retention >= needed) {
    add('binlog_retention', true, 'info', message);
  } else {
    add('binlog_retention', false, retention < estimate ? 'error' : 'warning',
      `${message}: streaming starts from the binlog position of the snapshot's start, which must still exist when the snapshot ends (with margin for restarts); raise ${advice}`);
  }
}

async function estimateRows(client: MysqlClient, tables?: readonly TableId[]): Promise<number> {
  const where = tables && tables.length > 0
    ? tables.map((t) => `(TABLE_SCHEMA = ${quoteString(t.database)} AND TABLE_NAME = ${quoteString(t.table)})`).join(' OR ')
    : "TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')";
  const rows = await client.query(`SELECT COALESCE(SUM(TABLE_ROWS), 0) AS n FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE' AND (${where})`);
  return Number(rows[0]?.n ?? 0);
}

function duration(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} d`;
}
