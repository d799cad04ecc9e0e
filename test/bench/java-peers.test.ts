/**
 * The peers of `npm run bench` (bench/peers/) cannot rot: each harness is built (a no-op once
 * bench/peers/install has run: .ci/run builds them before the suite) and run once at a tiny size
 * against a MariaDB of their own:
 *   - Debezium: its initial snapshot of a 200-row table and its streaming of the 100 row changes
 *     applied after the offset it is given. It must count exactly those (it goes on consuming for
 *     3 s after the expected count, so one record too many fails too);
 *   - Flink CDC: its parallel snapshot of a 300-row table in 50-row chunks over two readers, a
 *     bounded job: it must end, having counted each row exactly once.
 * Skipped only where java or mvn is missing (the bench skips the peers there too).
 *
 * Its own server, not the suite's shared one (as the bench has its own): Debezium parses every DDL
 * statement of the binlog it reads into its schema history, and its MariaDB grammar refuses some
 * of what other test files create there (hostile identifiers, MySQL 8 vectors) — that failed the
 * test depending on which files ran before it.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTable } from '../../bench/dataset.js';
import { debeziumSnapshot, debeziumStreaming } from '../../bench/peers/debezium.js';
import { flinkCdcSnapshot } from '../../bench/peers/flink-cdc.js';
import { buildPeer, type PeerTarget } from '../../bench/peers/java-peer.js';
import { applyWorkload } from '../../bench/workload.js';
import { connectMysql } from '../../src/source/mysql/client.js';
import { detectDialect } from '../../src/source/mysql/dialect.js';
import { readServerIdentity, readWatermark } from '../../src/source/mysql/snapshot/watermark.js';
import { startMariaDb, type TestServer } from '../support/mariadb.js';

function missingTool(): string | undefined {
  for (const tool of ['java', 'mvn']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return tool;
    }
  }
  return undefined;
}

const missing = missingTool();
if (missing) console.warn(`java-peers.test.ts skipped: ${missing} is not on PATH (install a JDK 17+ and Maven)`);

describe.skipIf(missing !== undefined)('bench peers', () => {
  let server: TestServer | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  async function serverWith(database: string): Promise<PeerTarget> {
    server ??= await startMariaDb({ serverId: 41 });
    const connection = { host: server.host, port: server.port, user: server.user, password: server.password };
    const client = await connectMysql(connection);
    try {
      await client.query(`CREATE DATABASE IF NOT EXISTS ${database}`);
      return { connection, database, flavor: (await detectDialect(client)).flavor, timeoutMs: 60_000, settleMs: 3000 };
    } finally {
      await client.close();
    }
  }

  it('Debezium snapshots 200 rows and streams 100 changes from the given offset, counting each exactly once', async () => {
    const build = await buildPeer('debezium');
    if (!build.ok) throw new Error(`the Debezium harness did not build: ${build.reason}`);
    const target = await serverWith('floe_peer');
    const { connection, database, flavor } = target;

    await loadTable(connection, database, 200, 1);
    const snapshot = await debeziumSnapshot(build, target, 200);
    expect(snapshot.count).toBe(200);
    expect(snapshot.connector).toBe(flavor === 'mariadb' ? 'io.debezium.connector.mariadb.MariaDbConnector' : 'io.debezium.connector.mysql.MySqlConnector');

    const c = await connectMysql(connection);
    let from;
    try {
      const dialect = await detectDialect(c);
      from = await readWatermark(c, dialect, await readServerIdentity(c, dialect.flavor));
    } finally {
      await c.close();
    }
    const work = await applyWorkload(connection, database, 200, 100, 1);
    expect(work.updates + work.deletes).toBe(100);
    const streaming = await debeziumStreaming(build, target, from, 100);
    expect(streaming.count).toBe(100);
    for (const run of [snapshot, streaming]) {
      expect(run.windowMs).toBeGreaterThanOrEqual(0);
      expect(run.totalMs).toBeGreaterThan(0);
      expect(run.peakRssBytes).toBeGreaterThan(0);
    }
  }, 240_000);

  it('Flink CDC snapshots 300 rows in six chunks over two readers, counting each exactly once, and ends', async () => {
    const build = await buildPeer('flink-cdc');
    if (!build.ok) throw new Error(`the Flink CDC harness did not build: ${build.reason}`);
    const target = await serverWith('floe_peer_flink');
    await loadTable(target.connection, target.database, 300, 2);
    const run = await flinkCdcSnapshot(build, target, 300, { parallelism: 2, splitSize: 50 });
    expect(run.count).toBe(300);
    expect(run.connector).toBe('org.apache.flink.cdc.connectors.mysql.source.MySqlSource');
    expect(run.version).toMatch(/^3\.\d+\.\d+ on Flink 1\.\d+\.\d+$/);
    expect(run.windowMs).toBeGreaterThanOrEqual(0);
    expect(run.totalMs).toBeGreaterThan(run.windowMs);
    expect(run.peakRssBytes).toBeGreaterThan(0);
  }, 240_000);
});
