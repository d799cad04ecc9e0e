/**
 * Which server a test file runs against, and private servers of that kind. The suite runs twice over
 * the files in test/mysql8-suites.ts: in the `integration` project against MariaDB, in the `mysql8`
 * project against Oracle MySQL 8 (global-setup.ts provides the kind with the shared server's URL).
 * A test that needs a server of its own (other options, a restart, a replica) starts it with
 * {@link startTestServer}, which gives it the same kind as the shared one; the replication helpers
 * below speak each kind's statements (MariaDB's `CHANGE MASTER TO … MASTER_USE_GTID`, MySQL 8's
 * `CHANGE REPLICATION SOURCE TO … SOURCE_AUTO_POSITION=1`).
 */
import { inject } from 'vitest';
import mysql from 'mysql2/promise';
import type { LocalServer, StartLocalServerOptions } from '../../src/demo/local-server.js';
import { startMariaDb } from '../../src/demo/local-mariadb.js';
import { startMysql } from '../../src/demo/local-mysql.js';

export type ServerKind = 'mariadb' | 'mysql';

/** The kind of the run's shared server (and of the servers {@link startTestServer} starts). */
export function serverKind(): ServerKind {
  return inject('serverKind');
}

/** Starts a private server of the run's kind. */
export function startTestServer(options: StartLocalServerOptions = {}): Promise<LocalServer> {
  return startServerOfKind(serverKind(), options);
}

export function startServerOfKind(kind: ServerKind, options: StartLocalServerOptions = {}): Promise<LocalServer> {
  return kind === 'mysql' ? startMysql(options) : startMariaDb(options);
}

/**
 * Options of a server that takes part in GTID replication and logs what it applies as a replica, so
 * that it can be promoted: MariaDB `log_slave_updates` and `gtid_strict_mode`; MySQL 8
 * `log_replica_updates` (its GTIDs are on in every server local-mysql.ts starts).
 */
export function gtidReplicationArgs(kind: ServerKind = serverKind()): string[] {
  return kind === 'mysql' ? ['--log-replica-updates=ON'] : ['--log-slave-updates=ON', '--gtid-strict-mode=ON'];
}

async function withConnection<T>(server: LocalServer, use: (c: mysql.Connection) => Promise<T>): Promise<T> {
  const c = await mysql.createConnection({ host: server.host, port: server.port, user: server.user, password: server.password });
  try {
    return await use(c);
  } finally {
    await c.end();
  }
}

/**
 * Makes `replica` replicate `source` by GTIDs from the start. Both must come from the same template
 * (an empty GTID history), so there is nothing to seed.
 */
export async function replicateFrom(replica: LocalServer, source: LocalServer, kind: ServerKind = serverKind()): Promise<void> {
  await withConnection(replica, async (c) => {
    if (kind === 'mysql') {
      await c.query(`CHANGE REPLICATION SOURCE TO SOURCE_HOST='${source.host}', SOURCE_PORT=${source.port}, SOURCE_USER='${source.user}', SOURCE_PASSWORD='${source.password}', SOURCE_AUTO_POSITION=1`);
      await c.query('START REPLICA');
    } else {
      await c.query(`CHANGE MASTER TO MASTER_HOST='${source.host}', MASTER_PORT=${source.port}, MASTER_USER='${source.user}', MASTER_PASSWORD='${source.password}', MASTER_USE_GTID=slave_pos`);
      await c.query('START SLAVE');
    }
  });
}

/** The transactions `server` has executed: MySQL `@@gtid_executed`, MariaDB `@@gtid_binlog_pos`. */
export function executedGtids(server: LocalServer, kind: ServerKind = serverKind()): Promise<string> {
  return withConnection(server, async (c) => {
    const [rows] = (await c.query(kind === 'mysql' ? 'SELECT @@GLOBAL.gtid_executed AS g' : 'SELECT @@GLOBAL.gtid_binlog_pos AS g')) as unknown as [{ g: string }[]];
    return String(rows[0]!.g).replace(/\s+/g, '');
  });
}

/** Waits until `replica` has applied `gtids` (what {@link executedGtids} read on its source). */
export async function waitForReplica(replica: LocalServer, gtids: string, kind: ServerKind = serverKind(), timeoutSeconds = 60): Promise<void> {
  await withConnection(replica, async (c) => {
    const deadline = Date.now() + timeoutSeconds * 1000;
    for (;;) {
      // both return 0 once the GTIDs are applied, 1 (MySQL) or -1 (MariaDB) after the timeout
      const [rows] = (await c.query(kind === 'mysql' ? 'SELECT WAIT_FOR_EXECUTED_GTID_SET(?, 1) AS r' : 'SELECT MASTER_GTID_WAIT(?, 1) AS r', [gtids])) as unknown as [{ r: number }[]];
      if (Number(rows[0]?.r) === 0) return;
      if (Date.now() > deadline) throw new Error(`the replica on port ${replica.port} did not apply ${gtids} within ${timeoutSeconds} s`);
    }
  });
}

/** Promotes a replica: stops replicating and forgets its source. */
export async function promoteReplica(replica: LocalServer, kind: ServerKind = serverKind()): Promise<void> {
  await withConnection(replica, async (c) => {
    await c.query(kind === 'mysql' ? 'STOP REPLICA' : 'STOP SLAVE');
    await c.query(kind === 'mysql' ? 'RESET REPLICA ALL' : 'RESET SLAVE ALL');
  });
}
