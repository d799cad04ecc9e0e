/**
 * MySQL faults, for real: `floe run` (a child process) streams from a server of its own (MariaDB, or
 * MySQL 8 in the mysql8 project) that the test restarts mid-snapshot and mid-stream, and, with GTIDs,
 * a primary whose replica (`log_slave_updates` / `log_replica_updates`) takes over the writes — floe
 * pointed at the replica after a clean stop resumes by GTID; and a replica promoted while floe streams
 * through an address that moves to it (a TCP proxy standing for a virtual IP): floe's binlog
 * connection breaks, reconnects to the same address, finds another server and resumes by GTID without
 * a restart. Each ends with the lake equal to the server that holds the data, row for row, and no
 * checkpoint id twice.
 *
 * (A long silence, a stalled connection and the binlog purged while floe is stopped:
 * mysql-silence-and-purge.test.ts. The binlog connection killed with KILL and resuming from GTIDs
 * alone are covered at the reader level: test/source/mysql/binlog/binlog-reader.test.ts.)
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { CHECKPOINT_ID_KEY, JOB_ID_KEY } from '../../src/iceberg/checkpoint/index.js';
import type { TestServer } from '../support/mariadb.js';
import { executedGtids, gtidReplicationArgs, promoteReplica, replicateFrom, startTestServer, waitForReplica } from '../support/servers.js';
import { TcpStallProxy } from '../support/tcp-stall-proxy.js';
import { prng } from '../../src/util/prng.js';
import { serverPosition, waitForCatchUp } from './support/catch-up.js';
import { FloeProcess } from './support/floe-process.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'mysql-faults';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const servers: TestServer[] = [];
const cleanup: string[] = [];

afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => {}); // best effort: the test's own result stands
  for (const p of cleanup) await rm(p, { recursive: true, force: true });
});


async function connect(server: TestServer, db?: string): Promise<mysql.Connection> {
  return mysql.createConnection({ host: server.host, port: server.port, user: server.user, password: server.password, database: db, supportBigNumbers: true, bigNumberStrings: true });
}

/** A table `items` with `rows` rows in database `db`. */
async function createItems(server: TestServer, db: string, rows: number): Promise<void> {
  const c = await connect(server);
  try {
    await c.query(`CREATE DATABASE \`${db}\``);
    await c.query(`CREATE TABLE \`${db}\`.items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, qty BIGINT NOT NULL, price DECIMAL(12,3), seen DATETIME(6))`);
    for (let start = 1; start <= rows; start += 1000) {
      const values: string[] = [];
      for (let id = start; id < Math.min(start + 1000, rows + 1); id++) values.push(`(${id}, 'item-${id}', ${id * 7}, ${id}.125, '2024-05-0${1 + (id % 9)} 10:00:00.${String(id % 1000000).padStart(6, '0')}')`);
      await c.query(`INSERT INTO \`${db}\`.items VALUES ${values.join(',')}`);
    }
  } finally {
    await c.end();
  }
}

/**
 * Random single-row transactions on `items`, tolerant of the server going away: a transaction that
 * fails because the server restarted is simply not counted (the comparison is with what the server
 * holds afterwards, so a COMMIT whose outcome the writer never learnt is fine either way).
 */
class ItemsWriter {
  transactions = 0;
  failures = 0;
  private running = false;
  private done: Promise<void> = Promise.resolve();
  constructor(
    private target: TestServer,
    private readonly db: string,
    private readonly random: () => number,
    private readonly maxId: number,
  ) {}

  retarget(server: TestServer): void {
    this.target = server;
  }

  start(): void {
    this.running = true;
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  private async loop(): Promise<void> {
    let c: mysql.Connection | undefined;
    let on: TestServer | undefined;
    while (this.running) {
      try {
        if (!c || on !== this.target) {
          await c?.end().catch(() => {}); // the old server's connection: nothing to keep
          on = this.target;
          c = await connect(on, this.db);
        }
        const id = 1 + Math.floor(this.random() * this.maxId);
        const r = this.random();
        if (r < 0.5) await c.query('UPDATE items SET qty = qty + 1, name = ? WHERE id = ?', [`upd-${this.transactions}`, id]);
        else if (r < 0.75) await c.query('DELETE FROM items WHERE id = ?', [id]);
        else await c.query('INSERT INTO items VALUES (?, ?, ?, ?, NOW(6)) ON DUPLICATE KEY UPDATE qty = VALUES(qty)', [id, `ins-${this.transactions}`, this.transactions, `${id}.5`]);
        this.transactions++;
      } catch {
        // the server is restarting (or switched): reconnect on the next round
        this.failures++;
        await c?.destroy();
        c = undefined;
        await sleep(100);
      }
      await sleep(5);
    }
    await c?.end().catch(() => {}); // closing after the writes ended: nothing to keep
  }
}

interface Lake {
  warehouse: string;
  configPath: string;
  catalog: FileSystemCatalog;
}

async function lakeFor(server: TestServer, db: string, serverId: number, extra: Record<string, unknown> = {}): Promise<Lake> {
  const warehouse = await mkdtemp(join(tmpdir(), 'floe-mysql-faults-'));
  cleanup.push(warehouse);
  const configPath = join(warehouse, 'floe.json');
  await writeConfig(configPath, warehouse, server, db, serverId, extra);
  return { warehouse, configPath, catalog: new FileSystemCatalog({ warehouse: join(warehouse, 'lake') }) };
}

async function writeConfig(configPath: string, warehouse: string, server: TestServer, db: string, serverId: number, extra: Record<string, unknown> = {}): Promise<void> {
  await writeFile(
    configPath,
    JSON.stringify({
      job: { id: JOB },
      source: { host: server.host, port: server.port, user: server.user, password: server.password, serverId, include: [`${db}.*`], snapshot: { chunkSize: 200, parallelism: 2 }, ...extra },
      warehouse: { location: join(warehouse, 'lake') },
      commit: { intervalMs: 300 },
    }),
  );
}

/** Waits until floe committed past the server's current position, stops it, and compares. */
async function catchUpStopAndCompare(p: FloeProcess, lake: Lake, server: TestServer, db: string): Promise<void> {
  const target = await serverPosition({ host: server.host, port: server.port, user: server.user, password: server.password });
  try {
    await waitForCatchUp(lake.catalog, [{ identifier: { namespace: [db], name: 'items' }, sourceKey: `${db}.items` }], JOB, target, {
      timeoutMs: 120_000,
      check: () => {
        if (p.hasExited) throw new Error(`floe exited:\n${p.tail()}`);
      },
    });
  } finally {
    p.kill('SIGTERM');
  }
  expect(await p.exited, p.tail()).toEqual({ code: 0, signal: null });
  const identifier = { namespace: [db], name: 'items' };
  const rows = await lakeTableRows(lake.catalog, identifier);
  const expected = await mysqlTableRows({ host: server.host, port: server.port, user: server.user, password: server.password }, db, 'items', rows.columns);
  expect({ ...multisetDifference(expected, rows.rows), rows: rows.rows.length }).toEqual({ missing: [], unexpected: [], rows: expected.length });
  const table = await loadCatalogTable(lake.catalog, identifier);
  const ids = table.metadata.snapshots.filter((s) => s.summary[JOB_ID_KEY] === JOB).map((s) => s.summary[CHECKPOINT_ID_KEY]);
  expect(new Set(ids).size, `checkpoint ids: ${ids.join(',')}`).toBe(ids.length);
}

/** Resolves once `p` logged a notification of `type` (throws if it exits first). */
async function notified(p: FloeProcess, type: string): Promise<void> {
  const r = await p.waitFor((x) => x.notification === type);
  if (!r) throw new Error(`floe exited before '${type}':\n${p.tail()}`);
}

describe('MySQL faults', () => {
  it('the server restarted mid-snapshot and mid-stream: floe reconnects, resumes, and the lake equals MySQL', async () => {
    const server = await startTestServer({ serverId: 11, extraArgs: gtidReplicationArgs() });
    servers.push(server);
    const db = 'faults_restart';
    await createItems(server, db, 30_000);
    const lake = await lakeFor(server, db, 7101);
    const writer = new ItemsWriter(server, db, prng(7), 30_000);
    const p = new FloeProcess(lake.configPath);
    try {
      await notified(p, 'snapshot-started');
      writer.start();
      await sleep(300);
      const phase = p.notifications();
      await server.restart!(); // mid-snapshot: chunk reads and the binlog connection both lose the server
      expect(phase, 'the first restart came while floe was still snapshotting').not.toContain('streaming-started');
      await notified(p, 'streaming-started');
      await sleep(1500);
      await server.restart!(); // mid-stream: the binlog reader reconnects (or the pipeline restarts)
      const before = writer.transactions;
      await sleep(2000);
      await writer.stop();
      expect(writer.transactions, 'changes made after the mid-stream restart').toBeGreaterThan(before);
      expect(writer.transactions).toBeGreaterThan(50);
      await catchUpStopAndCompare(p, lake, server, db);
      // the snapshot's failure restarted the pipeline from the lake
      const restarts = p.logs.filter((r) => typeof r.msg === 'string' && r.msg.includes('restarting the pipeline from the lake')).length;
      expect(restarts, p.tail()).toBeGreaterThanOrEqual(1);
    } finally {
      p.kill();
      await writer.stop();
    }
  });

  it('failover to a replica with GTIDs: floe pointed at the new primary resumes by GTID and the lake equals it', async () => {
    const primary = await startTestServer({ serverId: 21, extraArgs: gtidReplicationArgs() });
    servers.push(primary);
    const replica = await startTestServer({ serverId: 22, extraArgs: gtidReplicationArgs() });
    servers.push(replica);
    const db = 'faults_failover';
    // The replica copies everything from the primary's first GTID on (both start from the same
    // template data directory, so there is nothing to seed).
    await replicateFrom(replica, primary);
    await createItems(primary, db, 5_000);
    const lake = await lakeFor(primary, db, 7102);
    const writer = new ItemsWriter(primary, db, prng(11), 5_000);
    let p = new FloeProcess(lake.configPath);
    try {
      await notified(p, 'streaming-started');
      writer.start();
      await sleep(2500);
      await writer.stop();
      // floe stops on the old primary (a clean stop; its checkpoints carry GTIDs)
      p.kill('SIGTERM');
      expect(await p.exited, p.tail()).toEqual({ code: 0, signal: null });

      // failover: the replica has applied everything, then becomes the primary and takes the writes
      await waitForReplica(replica, await executedGtids(primary));
      await promoteReplica(replica);
      await primary.stop();
      writer.retarget(replica);
      writer.start();
      await sleep(1000);

      // floe pointed at the new primary: same job, same lake, resumes by GTID
      await writeConfig(lake.configPath, lake.warehouse, replica, db, 7102);
      p = new FloeProcess(lake.configPath);
      await notified(p, 'streaming-started');
      await sleep(2000);
      await writer.stop();
      await catchUpStopAndCompare(p, lake, replica, db);
    } finally {
      p.kill();
      await writer.stop();
    }
  });

  it('a replica promoted while floe streams, behind an address that moves to it: floe reconnects, resumes by GTID and the lake equals the new primary', async () => {
    const primary = await startTestServer({ serverId: 31, extraArgs: gtidReplicationArgs() });
    servers.push(primary);
    const replica = await startTestServer({ serverId: 32, extraArgs: gtidReplicationArgs() });
    servers.push(replica);
    await replicateFrom(replica, primary);
    // floe's address for the source: a proxy to the primary now, to the replica after the failover
    const address = await TcpStallProxy.start(primary.host, primary.port);
    const db = 'faults_promoted';
    await createItems(primary, db, 5_000);
    const lake = await lakeFor({ ...primary, port: address.port }, db, 7103);
    const writer = new ItemsWriter(primary, db, prng(13), 5_000);
    // the binlog reader's notes are debug records
    const p = new FloeProcess(lake.configPath, { logLevel: 'debug' });
    try {
      await notified(p, 'streaming-started');
      writer.start();
      await sleep(2000);
      await writer.stop();
      const beforeFailover = writer.transactions;

      // the failover, with floe streaming: the replica has applied everything, is promoted, the
      // primary goes down and the address moves to the replica, which takes the writes
      await waitForReplica(replica, await executedGtids(primary));
      await promoteReplica(replica);
      await primary.stop();
      address.moveTo(replica.host, replica.port);
      writer.retarget(replica);
      writer.start();
      await sleep(3000);
      await writer.stop();
      expect(writer.transactions - beforeFailover, 'writes on the promoted replica').toBeGreaterThan(20);

      expect(p.hasExited, p.tail()).toBe(false);
      await catchUpStopAndCompare(p, lake, replica, db);
      // the stream followed the server change by GTID, in the same process
      expect(p.logs.some((r) => typeof r.msg === 'string' && /is from another server; resuming by GTIDs/.test(r.msg)), p.tail()).toBe(true);
    } finally {
      p.kill();
      await writer.stop();
      await address.close();
    }
  });
});
