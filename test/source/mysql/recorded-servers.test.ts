/**
 * MySQL 8.4 and 9.x, which cannot run here, replayed: floe's dialect, watermark and pre-flight talk to
 * a recorded server (test/support/recorded-server.ts) that answers each statement as that version
 * does — the statements 8.4 removed (SHOW MASTER STATUS, SHOW SLAVE STATUS, SHOW SLAVE HOSTS) with the
 * syntax error 8.4 gives, `expire_logs_days` (removed in 8.2) absent from SHOW GLOBAL VARIABLES — and
 * fails on any statement it has no recording for. So each test shows which statements floe sends to
 * such a server and what it makes of the answers.
 *
 * Sources of the recordings (MySQL Reference Manual 8.4, and 9.x where it says the same):
 * - MySQL 8.4 Release Notes, 8.4.0, "SQL statements removed": SHOW MASTER STATUS (use SHOW BINARY LOG
 *   STATUS), SHOW SLAVE HOSTS (SHOW REPLICAS), SHOW SLAVE STATUS (SHOW REPLICA STATUS), and the other
 *   MASTER / SLAVE statements.
 * - "SHOW BINARY LOG STATUS Statement": columns File, Position, Binlog_Do_DB, Binlog_Ignore_DB,
 *   Executed_Gtid_Set (several source UUIDs separated by a comma and a line break, as gtid_executed
 *   prints them).
 * - "SHOW REPLICAS Statement": columns Server_Id, Host, Port, Source_Id, Replica_UUID.
 * - "SHOW REPLICA STATUS Statement": an empty result on a server that is no replica.
 * - "SHOW BINARY LOGS Statement": columns Log_name, File_size, Encrypted.
 * - MySQL Server Version Reference, "Option and Variable Changes for MySQL 8.2": expire_logs_days removed
 *   (binlog_expire_logs_seconds stays); "… for MySQL 8.4": default_authentication_plugin removed (floe
 *   reads neither). binlog_row_metadata defaults to MINIMAL and gtid_mode to OFF: the recordings set
 *   what floe asks of a server, as an operator would.
 */
import { describe, expect, it } from 'vitest';
import { connectMysql, type MysqlClient } from '../../../src/source/mysql/client.js';
import { detectDialect } from '../../../src/source/mysql/dialect.js';
import { preflightPassed, runPreflight, type PreflightCheck } from '../../../src/source/mysql/preflight.js';
import { readWatermark, listBinlogFiles } from '../../../src/source/mysql/snapshot/watermark.js';
import { formatOffset } from '../../../src/source/mysql/offset/offset.js';
import { parseError, recordedDriver, type RecordedServer } from '../../support/recorded-server.js';

const SOURCE_UUID = '8a94f357-aab4-11df-86ab-c80aa9429562';
const OTHER_UUID = '2174b383-5441-11e8-b90a-c80aa9422222';

/** A well-configured MySQL of `version`: binlog ROW/FULL, GTIDs on, 30 days of binlogs, one replica. */
function recordedMysql(version: string, overrides: { variables?: Record<string, string>; replicaStatus?: Record<string, unknown>[]; keyless?: Record<string, unknown>[]; grants?: string[] } = {}): RecordedServer {
  return {
    version,
    // log_slave_updates (deprecated since 8.0.26) is left out: floe must not need it
    variables: {
      log_bin: 'ON',
      binlog_format: 'ROW',
      binlog_row_image: 'FULL',
      binlog_row_value_options: '',
      binlog_transaction_compression: 'OFF',
      binlog_row_metadata: 'FULL',
      gtid_mode: 'ON',
      enforce_gtid_consistency: 'ON',
      server_id: '1',
      binlog_expire_logs_seconds: '2592000',
      binlog_expire_logs_auto_purge: 'ON',
      log_replica_updates: 'ON',
      ...overrides.variables,
    },
    answers: [
      ['SHOW MASTER STATUS', { error: parseError('MASTER STATUS') }],
      ['SHOW SLAVE STATUS', { error: parseError('SLAVE STATUS') }],
      ['SHOW SLAVE HOSTS', { error: parseError('SLAVE HOSTS') }],
      ['SHOW BINARY LOG STATUS', { rows: [{ File: 'binlog.000007', Position: '5123', Binlog_Do_DB: '', Binlog_Ignore_DB: '', Executed_Gtid_Set: `${OTHER_UUID}:1-7,\n${SOURCE_UUID}:1-1042` }] }],
      ['SHOW REPLICAS', { rows: [{ Server_Id: 77, Host: 'replica-1', Port: 3306, Source_Id: 1, Replica_UUID: OTHER_UUID }] }],
      ['SHOW REPLICA STATUS', { rows: overrides.replicaStatus ?? [] }],
      ['SHOW BINARY LOGS', { rows: [{ Log_name: 'binlog.000006', File_size: '1073741950', Encrypted: 'No' }, { Log_name: 'binlog.000007', File_size: '5123', Encrypted: 'No' }] }],
      ['SHOW GRANTS FOR CURRENT_USER()', { rows: (overrides.grants ?? ['GRANT SELECT, RELOAD, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `floe`@`%`']).map((g) => ({ 'Grants for floe@%': g })) }],
      // the captured tables without a primary key (information_schema.TABLES and TABLE_CONSTRAINTS)
      [/^SELECT t\.TABLE_SCHEMA AS db, t\.TABLE_NAME AS tbl FROM information_schema\.TABLES t /, { rows: overrides.keyless ?? [] }],
      ['SELECT @@server_uuid AS uuid, @@server_id AS id', { rows: [{ uuid: SOURCE_UUID, id: 1 }] }],
      [/^SELECT COALESCE\(SUM\(TABLE_ROWS\), 0\) AS n FROM information_schema\.TABLES /, { rows: [{ n: '1200000' }] }],
    ],
  };
}

async function session(server: RecordedServer): Promise<{ client: MysqlClient; sent: string[] }> {
  const sent: string[] = [];
  const client = await connectMysql({ host: 'mysql.example', port: 3306, user: 'floe', password: 'pw' }, { driver: recordedDriver(server, sent) });
  return { client, sent };
}

function check(checks: readonly PreflightCheck[], name: string): PreflightCheck {
  const c = checks.find((x) => x.check === name);
  if (!c) throw new Error(`no check ${name} in ${checks.map((x) => x.check).join(', ')}`);
  return c;
}

/** Statements of the MASTER / SLAVE vocabulary 8.4 removed. */
const removedIn84 = (sent: readonly string[]) => sent.filter((s) => /^(SHOW|START|STOP|RESET|CHANGE|PURGE)\s.*\b(MASTER|SLAVE)\b/i.test(s));

describe.each(['8.4.3', '9.1.0'])('MySQL %s, recorded', (version) => {
  it('the recording answers a removed statement as the server does', async () => {
    const { client } = await session(recordedMysql(version));
    await expect(client.query('SHOW MASTER STATUS')).rejects.toThrow(/ER_PARSE_ERROR|right syntax to use near 'MASTER STATUS'/);
    await client.close();
  });

  it('the dialect uses the statements the version has', async () => {
    const { client, sent } = await session(recordedMysql(version));
    const dialect = await detectDialect(client);
    expect(dialect).toMatchObject({
      flavor: 'mysql',
      versionString: version,
      binlogStatusSql: 'SHOW BINARY LOG STATUS',
      replicasSql: 'SHOW REPLICAS',
      replicaStatusSql: 'SHOW REPLICA STATUS',
      hasRowValueOptions: true,
      hasTransactionCompression: true,
      hasRowMetadata: true,
    });
    expect(sent.at(-1)).toBe('SELECT @@version AS v');
    await client.close();
  });

  it('a watermark comes from SHOW BINARY LOG STATUS, with every source of its GTID set', async () => {
    const { client, sent } = await session(recordedMysql(version));
    const offset = await readWatermark(client, await detectDialect(client));
    expect(formatOffset(offset)).toBe(formatOffset({ file: 'binlog.000007', position: 5123, gtids: offset.gtids!, serverUuid: SOURCE_UUID, serverId: 1 }));
    expect(offset).toMatchObject({ file: 'binlog.000007', position: 5123, serverUuid: SOURCE_UUID, serverId: 1 });
    expect(offset.gtids?.flavor).toBe('mysql');
    expect(offset.gtids?.flavor === 'mysql' && offset.gtids.set.toString()).toBe(`${OTHER_UUID}:1-7,${SOURCE_UUID}:1-1042`);
    expect(await listBinlogFiles(client)).toEqual([{ name: 'binlog.000006', size: 1073741950 }, { name: 'binlog.000007', size: 5123 }]);
    expect(sent).toContain('SHOW BINARY LOG STATUS');
    expect(removedIn84(sent)).toEqual([]);
    await client.close();
  });

  it('pre-flight passes on a well-configured server and sends none of the removed statements', async () => {
    const { client, sent } = await session(recordedMysql(version));
    const { checks } = await runPreflight(client, { serverId: 5001, tables: [{ database: 'shop', table: 'orders' }] });
    expect(checks.filter((c) => !c.ok)).toEqual([]);
    expect(preflightPassed(checks)).toBe(true);
    expect(check(checks, 'server').message).toBe(`MySQL ${version}`);
    expect(check(checks, 'gtid').message).toBe('gtid_mode=ON: floe resumes by GTID set');
    expect(check(checks, 'privileges').message).toBe('the user can read the binlog and the captured tables');
    // SHOW REPLICAS answered (one replica, id 77): floe's id is free
    expect(check(checks, 'server_id').message).toBe('server id 5001 is free (source server_id=1, 1 registered replica)');
    // no expire_logs_days on these versions: the retention is binlog_expire_logs_seconds
    expect(check(checks, 'binlog_retention').message).toBe('binlogs are kept for 30 d (binlog_expire_logs_seconds=2592000) and the snapshot is estimated to take 60 s (~1,200,000 rows at 20,000 rows/s)');
    expect(checks.some((c) => c.check === 'log_replica_updates'), 'not a replica: no log_replica_updates check').toBe(false);
    expect(checks.some((c) => c.check === 'lock_tables'), 'every captured table has a primary key: no lock_tables check').toBe(false);
    expect(sent).toEqual(expect.arrayContaining(['SHOW REPLICA STATUS', 'SHOW REPLICAS']));
    expect(removedIn84(sent)).toEqual([]);
    await client.close();
  });

  it('a replica id in SHOW REPLICAS is a clash, named by its host and port', async () => {
    const { client } = await session(recordedMysql(version));
    const { checks } = await runPreflight(client, { serverId: 77, expectedSnapshotSeconds: 60 });
    expect(check(checks, 'server_id')).toMatchObject({ ok: false, severity: 'error' });
    expect(check(checks, 'server_id').message).toBe('replica replica-1:3306 already uses server id 77; the server disconnects one of two readers with the same id: set the source option serverId to an unused value');
    await client.close();
  });

  it('a replica (SHOW REPLICA STATUS has a row) without log_replica_updates fails, naming that variable', async () => {
    const replica = recordedMysql(version, { variables: { log_replica_updates: 'OFF' }, replicaStatus: [{ Replica_IO_State: 'Waiting for source to send event', Source_Host: 'primary-1', Source_Port: 3306 }] });
    const { client } = await session(replica);
    const { checks } = await runPreflight(client, { serverId: 5001, expectedSnapshotSeconds: 60 });
    expect(check(checks, 'log_replica_updates')).toMatchObject({ ok: false, severity: 'error' });
    expect(check(checks, 'log_replica_updates').message).toBe("the server is a replica but log_replica_updates is OFF: changes it replicates never reach its binlog; set log_replica_updates=ON in my.cnf and restart, or read from the primary");
    await client.close();
  });

  it('a captured table without a primary key: LOCK TABLES on its database, or a warning naming the grant', async () => {
    const tables = [{ database: 'shop', table: 'orders' }, { database: 'shop', table: 'audit_log' }];
    const keyless = [{ db: 'shop', tbl: 'audit_log' }];
    const without = await session(recordedMysql(version, { keyless }));
    const refused = check((await runPreflight(without.client, { serverId: 5001, tables, expectedSnapshotSeconds: 60 })).checks, 'lock_tables');
    expect(refused).toMatchObject({ ok: false, severity: 'warning' });
    expect(refused.message).toBe('the user may not LOCK TABLES in shop: tables without a primary key (shop.audit_log) are then snapshotted at-least-once (a row changed while a chunk is read can reach the lake twice); GRANT LOCK TABLES ON `shop`.* TO <user>');
    await without.client.close();
    const grants = ['GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `floe`@`%`', 'GRANT LOCK TABLES ON `shop`.* TO `floe`@`%`'];
    const granted = await session(recordedMysql(version, { keyless, grants }));
    const ok = check((await runPreflight(granted.client, { serverId: 5001, tables, expectedSnapshotSeconds: 60 })).checks, 'lock_tables');
    expect(ok).toMatchObject({ ok: true, severity: 'warning' });
    expect(ok.message).toBe("tables without a primary key (shop.audit_log) are snapshotted exactly, each chunk's read view opened under a brief LOCK TABLES … READ");
    await granted.client.close();
  });

  it('binlog_expire_logs_auto_purge=OFF: binlogs are not purged automatically, whatever the expiry period', async () => {
    const { client } = await session(recordedMysql(version, { variables: { binlog_expire_logs_auto_purge: 'OFF' } }));
    const { checks } = await runPreflight(client, { serverId: 5001, expectedSnapshotSeconds: 90 * 86400 });
    expect(check(checks, 'binlog_retention')).toMatchObject({ ok: true, severity: 'info' });
    expect(check(checks, 'binlog_retention').message).toBe('binlogs are not purged automatically (binlog_expire_logs_auto_purge=OFF); purging them by hand during a snapshot of 90 d would force a re-snapshot');
    await client.close();
  });
});

describe('MySQL 8.0 before 8.0.26, recorded', () => {
  it('a replica with only log_slave_updates is read by that name', async () => {
    const server = recordedMysql('8.0.25', { replicaStatus: [{ Replica_IO_State: 'Waiting for master to send event' }] });
    const variables: Record<string, string> = { ...server.variables, log_slave_updates: 'OFF' };
    delete variables.log_replica_updates;
    const { client, sent } = await session({
      ...server,
      variables,
      // 8.0.25 has SHOW MASTER STATUS and no SHOW BINARY LOG STATUS yet (added in 8.2.0)
      answers: [['SHOW MASTER STATUS', { rows: [{ File: 'binlog.000002', Position: '157', Binlog_Do_DB: '', Binlog_Ignore_DB: '', Executed_Gtid_Set: `${SOURCE_UUID}:1-3` }] }], ['SHOW BINARY LOG STATUS', { error: parseError('BINARY LOG STATUS') }], ...server.answers.filter(([m]) => m !== 'SHOW MASTER STATUS')],
    });
    const dialect = await detectDialect(client);
    expect(dialect.binlogStatusSql).toBe('SHOW MASTER STATUS');
    expect((await readWatermark(client, dialect)).file).toBe('binlog.000002');
    const { checks } = await runPreflight(client, { serverId: 5001, expectedSnapshotSeconds: 60 });
    expect(check(checks, 'log_replica_updates').message).toBe("the server is a replica but log_slave_updates is OFF: changes it replicates never reach its binlog; set log_slave_updates=ON in my.cnf and restart, or read from the primary");
    expect(sent).toContain('SHOW REPLICA STATUS'); // 8.0.22+
    await client.close();
  });
});
