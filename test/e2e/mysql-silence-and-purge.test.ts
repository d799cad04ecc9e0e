/**
 * More MySQL faults, for real: `floe run` (a child process) against a server of its own (MariaDB, or
 * MySQL 8 in the mysql8 project).
 *
 * - A long silence: no write at all for many times the binlog read watchdog's limit (3 heartbeat
 *   periods, src/source/mysql/binlog/zongji/binlog-session.ts; `source.heartbeatMs` set small here). The server's
 *   heartbeats keep the connection alive: the same Binlog Dump thread before and after, no reconnect
 *   and no restart in floe's log — and they keep the run loop turning, so an idle table still commits
 *   its offset (checkpoint.ts, idle tables) while nothing happens. The writes after it land.
 * - The last changes before a silence (heartbeats 10 minutes apart: no event at all follows them)
 *   are committed one commit interval after the checkpoint before them: the run loop's wait for the
 *   next event ends when a checkpoint is due (checkpoint.ts `msUntilDue`).
 * - A backlog (floe restarted after 100,000 changes) is committed as soon as the stream goes quiet
 *   after it (`commit.whenCaughtUp`), not an interval later; a trickle of changes never is.
 * - A stall: the connection goes silent without closing (a TCP proxy that stops forwarding,
 *   test/support/tcp-stall-proxy.ts) while writes go on on the server. The watchdog notices, floe
 *   reconnects (or restarts the pipeline from the lake) once the path is back, and the lake equals
 *   MySQL, nothing lost or doubled.
 * - The binlog purged while floe is stopped: floe exits 1 before committing anything with an error
 *   naming every table whose offset is gone and what to do (src/pipeline/purged-binlog-check.ts); the
 *   lake is untouched; after following the advice, floe runs and the lake equals MySQL. With tables at
 *   different offsets (a SIGKILL left idle tables behind), only the purged ones are named, and the
 *   others resume from their own offsets without a new snapshot. Resumed by GTIDs (the server's
 *   identity changed, as after a failover), the server refuses the start itself (error 1236) and floe
 *   names the tables standing there.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import type { TableIdentifier } from '../../src/iceberg/metadata/catalog.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { CHECKPOINT_ID_KEY, JOB_ID_KEY } from '../../src/iceberg/checkpoint/index.js';
import { compareOffsets, formatOffset, type BinlogOffset } from '../../src/source/mysql/offset/offset.js';
import type { TestServer } from '../support/mariadb.js';
import { serverKind, startTestServer } from '../support/servers.js';
import { TcpStallProxy } from '../support/tcp-stall-proxy.js';
import { prng } from '../../src/util/prng.js';
import { committedOffset, serverPosition, waitForCatchUp, watchedTables, whileRunning } from './support/catch-up.js';
import { FloeProcess, type LogRecord } from './support/floe-process.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'mysql-silence';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const servers: TestServer[] = [];
const cleanup: string[] = [];
const proxies: TcpStallProxy[] = [];

afterAll(async () => {
  for (const p of proxies) await p.close().catch(() => {}); // best effort: the test's own result stands
  for (const s of servers) await s.stop().catch(() => {});
  for (const p of cleanup) await rm(p, { recursive: true, force: true });
});

type Conn = Pick<TestServer, 'host' | 'port' | 'user' | 'password'>;

async function connect(server: Conn, db?: string): Promise<mysql.Connection> {
  return mysql.createConnection({ host: server.host, port: server.port, user: server.user, password: server.password, database: db, supportBigNumbers: true, bigNumberStrings: true });
}

/** Database `db` with tables `names`, each with `rows` rows. */
async function createTables(server: TestServer, db: string, names: readonly string[], rows: number): Promise<void> {
  const c = await connect(server);
  try {
    await c.query(`CREATE DATABASE \`${db}\``);
    for (const name of names) {
      await c.query(`CREATE TABLE \`${db}\`.\`${name}\` (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, qty BIGINT NOT NULL, price DECIMAL(12,3))`);
      const values: string[] = [];
      for (let id = 1; id <= rows; id++) values.push(`(${id}, '${name}-${id}', ${id * 7}, ${id}.125)`);
      await c.query(`INSERT INTO \`${db}\`.\`${name}\` VALUES ${values.join(',')}`);
    }
  } finally {
    await c.end();
  }
}

/** Random single-row transactions on `tables` (round robin) until stopped; failures are retried. */
class Writer {
  transactions = 0;
  private running = false;
  private done: Promise<void> = Promise.resolve();
  constructor(
    private readonly server: Conn,
    private readonly db: string,
    private readonly tables: readonly string[],
    private readonly random: () => number,
    private readonly maxId: number,
  ) {}

  start(): void {
    this.running = true;
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  /** Writes for `ms`, then stops. */
  async burst(ms: number): Promise<void> {
    this.start();
    await sleep(ms);
    await this.stop();
  }

  private async loop(): Promise<void> {
    let c: mysql.Connection | undefined;
    while (this.running) {
      try {
        c ??= await connect(this.server, this.db);
        const table = this.tables[this.transactions % this.tables.length]!;
        const id = 1 + Math.floor(this.random() * this.maxId);
        const r = this.random();
        if (r < 0.5) await c.query(`UPDATE \`${table}\` SET qty = qty + 1, name = ? WHERE id = ?`, [`upd-${this.transactions}`, id]);
        else if (r < 0.75) await c.query(`DELETE FROM \`${table}\` WHERE id = ?`, [id]);
        else await c.query(`INSERT INTO \`${table}\` VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE qty = VALUES(qty)`, [id, `ins-${this.transactions}`, this.transactions, `${id}.5`]);
        this.transactions++;
      } catch {
        await c?.destroy();
        c = undefined;
        await sleep(100);
      }
      await sleep(3);
    }
    await c?.end().catch(() => {}); // closing after the writes ended: nothing to keep
  }
}

interface Lake {
  warehouse: string;
  configPath: string;
  catalog: FileSystemCatalog;
}

async function lakeFor(name: string): Promise<Lake> {
  const warehouse = await mkdtemp(join(tmpdir(), `floe-${name}-`));
  cleanup.push(warehouse);
  return { warehouse, configPath: join(warehouse, 'floe.json'), catalog: new FileSystemCatalog({ warehouse: join(warehouse, 'lake') }) };
}

async function writeConfig(lake: Lake, via: Conn, db: string, serverId: number, extra: { source?: Record<string, unknown>; commit?: Record<string, unknown> } = {}): Promise<void> {
  await writeFile(
    lake.configPath,
    JSON.stringify({
      job: { id: JOB },
      source: { host: via.host, port: via.port, user: via.user, password: via.password, serverId, include: [`${db}.*`], snapshot: { chunkSize: 500, parallelism: 2 }, ...extra.source },
      warehouse: { location: join(lake.warehouse, 'lake') },
      commit: { intervalMs: 300, ...extra.commit },
      maintenance: { enabled: false },
    }),
  );
}

const ident = (db: string, table: string): TableIdentifier => ({ namespace: [db], name: table });

async function notified(p: FloeProcess, type: string): Promise<void> {
  const r = await p.waitFor((x) => x.notification === type);
  if (!r) throw new Error(`floe exited before '${type}':\n${p.tail()}`);
}

/** One transaction that changes a row of every table (an upsert of id 1: it logs a row either way). */
async function changeEveryTable(server: Conn, db: string, tables: readonly string[]): Promise<void> {
  const c = await connect(server, db);
  try {
    await c.beginTransaction();
    for (const t of tables) await c.query(`INSERT INTO \`${t}\` VALUES (1, 'last', 1, 1.5) ON DUPLICATE KEY UPDATE qty = qty + 1`);
    await c.commit();
  } finally {
    await c.end();
  }
}

/** Waits until every table committed past the server's position now. */
async function catchUp(p: FloeProcess, lake: Lake, server: Conn, db: string, tables: readonly string[]): Promise<void> {
  const target = await serverPosition(server);
  await waitForCatchUp(lake.catalog, watchedTables(db, tables), JOB, target, { timeoutMs: 60_000, check: whileRunning(p, 'floe') });
}

/** The lake equals MySQL for every table, row for row, and no checkpoint id appears twice. */
async function expectLakeEqualsMysql(lake: Lake, server: Conn, db: string, tables: readonly string[]): Promise<void> {
  for (const t of tables) {
    const rows = await lakeTableRows(lake.catalog, ident(db, t));
    const expected = await mysqlTableRows({ host: server.host, port: server.port, user: server.user, password: server.password }, db, t, rows.columns);
    expect({ table: t, ...multisetDifference(expected, rows.rows), rows: rows.rows.length }).toEqual({ table: t, missing: [], unexpected: [], rows: expected.length });
    const table = await loadCatalogTable(lake.catalog, ident(db, t));
    const ids = table.metadata.snapshots.filter((s) => s.summary[JOB_ID_KEY] === JOB).map((s) => s.summary[CHECKPOINT_ID_KEY]);
    expect(new Set(ids).size, `${t} checkpoint ids: ${ids.join(',')}`).toBe(ids.length);
  }
}

async function stopCleanly(p: FloeProcess): Promise<void> {
  p.kill('SIGTERM');
  expect(await p.exited, p.tail()).toEqual({ code: 0, signal: null });
}

/** Ids of the server's Binlog Dump threads (one per connected binlog reader). */
async function dumpThreads(server: Conn): Promise<number[]> {
  const c = await connect(server);
  try {
    const [rows] = await c.query("SELECT ID AS id FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%' ORDER BY ID");
    return (rows as { id: number | string }[]).map((r) => Number(r.id));
  } finally {
    await c.end();
  }
}

const text = (r: LogRecord) => JSON.stringify(r);
const isReconnectOrRestart = (r: LogRecord) => /binlog read timeout|reconnecting in|restarting the pipeline/.test(text(r));

async function offsetOf(lake: Lake, db: string, table: string): Promise<BinlogOffset | undefined> {
  return committedOffset(lake.catalog, ident(db, table), JOB);
}

describe('MySQL silence and stalls', () => {
  it('a backlog drained is committed as soon as the stream goes quiet (commit.whenCaughtUp), a trickle of changes only at the interval', async () => {
    const server = await startTestServer({ serverId: 34 });
    servers.push(server);
    const db = 'caught_up';
    await createTables(server, db, ['items'], 20_000);
    const lake = await lakeFor('caught-up');
    await writeConfig(lake, server, db, 7204, { commit: { intervalMs: 200 } });
    const caughtUp = (r: LogRecord) => r.msg === 'checkpoint committed' && /caught up/.test(text(r));
    // A backlog is read at full speed (floe restarts after it was written) for far longer than the
    // 200 ms interval; its tail is committed as soon as the stream goes quiet, never an interval
    // later: by a checkpoint cut as caught up or — the interval counting from a checkpoint's start —
    // when the commit before outlasted the interval, by the next checkpoint at once (`tailAtOnce`).
    // Unless an interval checkpoint happened to take the last transaction (the tail then has nothing
    // left to commit): a new backlog then, at most three.
    const tailAtOnce = (records: readonly LogRecord[]): boolean => {
      const cps = records.filter((r) => r.msg === 'checkpoint committed' && r.reason !== 'stop');
      const last = cps.at(-1);
      const before = cps.at(-2);
      if (!last) return false;
      if (caughtUp(last)) return true;
      const startedMs = Date.parse(String(last.time)) - Number(last.ms);
      return before !== undefined && Number(before.ms) >= 200 && startedMs - Date.parse(String(before.time)) < 50;
    };
    let backlogs = 0;
    let logs: LogRecord[] = [];
    while (backlogs < 3 && !tailAtOnce(logs)) {
      const c = await connect(server, db);
      // 200 transactions of 500 rows: 100,000 changes
      for (let i = 0; i < 200; i++) await c.query('UPDATE items SET qty = qty + 1 WHERE id > ? AND id <= ?', [(i % 40) * 500, (i % 40) * 500 + 500]);
      await c.end();
      const p = new FloeProcess(lake.configPath, { logLevel: 'debug' });
      try {
        await catchUp(p, lake, server, db, ['items']);
        // its log line may come a moment after the commit the lake shows (floe's stdout is read apart)
        await Promise.race([p.waitFor(caughtUp), sleep(2000)]);
        await stopCleanly(p);
      } finally {
        p.kill();
      }
      logs = p.logs;
      backlogs++;
    }
    expect(tailAtOnce(logs), `the tail committed as soon as the stream went quiet after ${backlogs} backlog(s): ${logs.filter((r) => r.msg === 'checkpoint committed').map(text).join(' ')}`).toBe(true);
    await expectLakeEqualsMysql(lake, server, db, ['items']);

    // A trickle: a wait for every change longer than the quiet spell, so no stretch of changes ever
    // lasts an interval — the interval alone commits them. The wait is also longer than a checkpoint's
    // commit (tens of ms idle, several hundred on a loaded machine): a change that arrives while one
    // commits continues the stretch it interrupted (checkpoint.ts, Router.routableDuringCommit).
    const TRICKLE_GAP_MS = 600;
    const p = new FloeProcess(lake.configPath, { logLevel: 'debug' });
    try {
      await notified(p, 'streaming-started');
      const c = await connect(server, db);
      // One change first, committed before the trickle: it makes floe build the table's key index
      // from the lake (20,000 rows; seconds on a loaded machine), inside that change's commit — a
      // trickle arriving during so long a commit would reach the run loop as one stretch of changes.
      await c.query("UPDATE items SET name = 'before the trickle' WHERE id = 20");
      await catchUp(p, lake, server, db, ['items']);
      await sleep(500); // its commit's log line may come a moment after the lake shows it
      const trickleStart = p.logs.length;
      for (let id = 1; id <= 12; id++) {
        await c.query('UPDATE items SET name = ? WHERE id = ?', [`trickle-${id}`, id]);
        await sleep(TRICKLE_GAP_MS);
      }
      await c.end();
      await catchUp(p, lake, server, db, ['items']);
      await stopCleanly(p);
      const trickle = p.logs.slice(trickleStart);
      expect(trickle.filter((r) => r.msg === 'checkpoint committed').length, 'the trickle was committed by checkpoints').toBeGreaterThan(0);
      expect(trickle.filter(caughtUp).map(text), 'no checkpoint cut as caught up during a trickle').toEqual([]);
    } finally {
      p.kill();
    }
    await expectLakeEqualsMysql(lake, server, db, ['items']);
  });

  it("a restart's backlog shorter than the interval is committed as soon as it is read, not an interval later (commit.whenCaughtUp)", async () => {
    const server = await startTestServer({ serverId: 36 });
    servers.push(server);
    const db = 'start_backlog';
    await createTables(server, db, ['items'], 2_000);
    const lake = await lakeFor('start-backlog');
    await writeConfig(lake, server, db, 7206);
    const first = new FloeProcess(lake.configPath);
    try {
      await catchUp(first, lake, server, db, ['items']);
    } finally {
      first.kill(); // a crash: the restart reads what came since from the lake's offsets
    }
    await first.exited;
    // written while floe is down: 40 transactions, read again in well under a second
    const c = await connect(server, db);
    for (let i = 0; i < 40; i++) await c.query('UPDATE items SET qty = qty + 1 WHERE id > ? AND id <= ?', [i * 50, i * 50 + 50]);
    await c.end();
    // an interval the test would time out waiting for: the backlog's checkpoint must not wait for it
    await writeConfig(lake, server, db, 7206, { commit: { intervalMs: 600_000 } });
    const p = new FloeProcess(lake.configPath, { logLevel: 'debug' });
    try {
      const committed = await Promise.race([p.waitFor((r) => r.msg === 'checkpoint committed'), sleep(60_000).then(() => undefined)]);
      expect(committed ? text(committed) : 'no checkpoint within 60 s', p.tail()).toMatch(/"reason":"caught up \(no event for 25 ms after [0-9.]+ s of changes\)"/);
      await catchUp(p, lake, server, db, ['items']);
      await stopCleanly(p);
    } finally {
      p.kill();
    }
    await expectLakeEqualsMysql(lake, server, db, ['items']);
  });

  it('a long silence: heartbeats keep the binlog connection, an idle table still commits its offset, and the writes after it land', async () => {
    const server = await startTestServer({ serverId: 31 });
    servers.push(server);
    const db = 'silence_hb';
    await createTables(server, db, ['busy', 'quiet'], 1000);
    const lake = await lakeFor('silence');
    // heartbeat 300 ms: the watchdog gives up after 900 ms of silence; an idle table commits its
    // offset once its last commit is 5 s old (idleMaxMs) — at a checkpoint, which the run loop only
    // takes between source events: in a silence, the heartbeats' progress marks
    await writeConfig(lake, server, db, 7201, { source: { heartbeatMs: 300 }, commit: { idleCheckpoints: 1000, idleMaxMs: 5000 } });
    const p = new FloeProcess(lake.configPath, { logLevel: 'debug' });
    try {
      await notified(p, 'streaming-started');
      const quietAtStart = await offsetOf(lake, db, 'quiet');
      expect(quietAtStart, 'quiet streams from the hand-over').toBeDefined();
      await new Writer(server, db, ['busy'], prng(3), 1000).burst(1000);
      // one change of quiet, then one of busy: quiet commits it (and its offset) now, so its next
      // commit — an offset-only one — is due 5 s later, inside the silence; busy's change puts the
      // server's position past quiet's offset
      const w = await connect(server, db);
      await w.query("UPDATE quiet SET name = 'touched' WHERE id = 1");
      await catchUp(p, lake, server, db, ['quiet']);
      await w.query("UPDATE busy SET name = 'last' WHERE id = 2");
      await w.end();
      await catchUp(p, lake, server, db, ['busy']);
      const position = await serverPosition(server);
      const threads = await dumpThreads(server);
      expect(threads, 'one binlog reader is streaming').toHaveLength(1);
      const logsBefore = p.logs.length;
      // quiet last committed with its own change (just now): its offset is still behind busy's
      const quietBefore = await offsetOf(lake, db, 'quiet');
      expect(compareOffsets(quietBefore!, position), 'quiet has not committed the new position before the silence').toBeLessThan(0);

      // ---- the silence: 8 s = 26 heartbeat periods, more than 8 watchdog limits -------------------
      await sleep(8000);
      expect(p.hasExited, p.tail()).toBe(false);
      expect(await dumpThreads(server), 'the same Binlog Dump thread: the connection was never dropped').toEqual(threads);
      expect(p.logs.slice(logsBefore).filter(isReconnectOrRestart).map(text), 'no reconnect, no restart during the silence').toEqual([]);
      // quiet had no change since, yet its offset moved up to where the server stands
      const quiet = await offsetOf(lake, db, 'quiet');
      expect(quiet && compareOffsets(quiet, quietBefore!) > 0, `quiet moved past ${formatOffset(quietBefore!)} during the silence`).toBe(true);
      expect(quiet && compareOffsets(quiet, position) >= 0, `quiet at ${quiet ? formatOffset(quiet) : '-'} reached ${formatOffset(position)} while idle`).toBe(true);
      expect(p.logs.slice(logsBefore).some((r) => r.msg === 'checkpoint committed'), 'a checkpoint committed during the silence').toBe(true);

      // ---- writes again --------------------------------------------------------------------------
      await new Writer(server, db, ['busy', 'quiet'], prng(4), 1000).burst(1500);
      await catchUp(p, lake, server, db, ['busy', 'quiet']);
      expect(await dumpThreads(server), 'still the same Binlog Dump thread after the silence').toEqual(threads);
      expect(p.logs.filter(isReconnectOrRestart).map(text)).toEqual([]);
      await stopCleanly(p);
      await expectLakeEqualsMysql(lake, server, db, ['busy', 'quiet']);
    } finally {
      p.kill();
    }
  });

  it('the last changes before a silence are committed one commit interval after the checkpoint before them, not at the next event', async () => {
    const server = await startTestServer({ serverId: 33 });
    servers.push(server);
    const db = 'silence_tail';
    await createTables(server, db, ['items'], 100);
    const lake = await lakeFor('tail');
    // heartbeats every 10 minutes: in the silence after the writes no event at all reaches floe, so
    // only the run loop's own wait (checkpoint.ts msUntilDue) can commit what it buffered
    await writeConfig(lake, server, db, 7203, { source: { heartbeatMs: 600_000 }, commit: { intervalMs: 500 } });
    const p = new FloeProcess(lake.configPath, { logLevel: 'debug' });
    try {
      await notified(p, 'streaming-started');
      // back to back: the checkpoint the first ones make due leaves the later ones buffered, with
      // no event after them
      const c = await connect(server, db);
      for (let id = 1; id <= 20; id++) await c.query('UPDATE items SET qty = qty + 1, name = ? WHERE id = ?', [`tail-${id}`, id]);
      await c.end();
      await catchUp(p, lake, server, db, ['items']); // within 60 s: long before any heartbeat
      // its log line may come a moment after the commit the lake shows (floe's stdout is read apart)
      // ('interval, no event since'; on a machine slow enough that the 20 updates took an interval,
      // 'caught up (no event for 25 ms …)' — the same wait, commit.whenCaughtUp)
      const byWait = await Promise.race([p.waitFor((r) => r.msg === 'checkpoint committed' && /no event (since|for)/.test(text(r))), sleep(30_000).then(() => 'none in 30 s')]);
      expect(byWait === undefined || typeof byWait === 'string' ? `a checkpoint the wait made due: ${byWait ?? 'floe exited'}` : 'logged').toBe('logged');
      expect(p.logs.filter(isReconnectOrRestart).map(text)).toEqual([]);
      await stopCleanly(p);
      await expectLakeEqualsMysql(lake, server, db, ['items']);
    } finally {
      p.kill();
    }
  });

  it('a stalled connection (silent, not closed): the watchdog notices, floe reconnects once the path is back, and the lake equals MySQL', async () => {
    const server = await startTestServer({ serverId: 32 });
    servers.push(server);
    const proxy = await TcpStallProxy.start(server.host, server.port);
    proxies.push(proxy);
    const db = 'silence_stall';
    await createTables(server, db, ['items', 'other'], 1000);
    const lake = await lakeFor('stall');
    await writeConfig(lake, { ...server, host: '127.0.0.1', port: proxy.port }, db, 7202, {
      source: { heartbeatMs: 300, restart: { maxAttempts: 20, initialDelayMs: 200, maxDelayMs: 1000 } },
    });
    const p = new FloeProcess(lake.configPath, { logLevel: 'debug' });
    // the writer goes to the server directly: the server keeps taking writes while floe's path is stalled
    const writer = new Writer(server, db, ['items', 'other'], prng(9), 1000);
    try {
      await notified(p, 'streaming-started');
      writer.start();
      await sleep(1000);
      const threads = await dumpThreads(server);
      expect(threads).toHaveLength(1);
      const logsBefore = p.logs.length;
      const atStall = writer.transactions;
      proxy.stall();
      const timedOut = await Promise.race([p.waitFor((r) => /binlog read timeout/.test(text(r))), sleep(10_000).then(() => undefined)]);
      expect(timedOut, `the watchdog fired within 10 s of the stall:\n${p.tail()}`).toBeDefined();
      expect(p.logs.indexOf(timedOut!), 'the timeout came after the stall began').toBeGreaterThanOrEqual(logsBefore);
      // The stall outlasts a connection attempt: floe's reconnects go into it (the TCP handshake
      // completes, the MySQL greeting never comes) and time out after 10 s (connectTimeout), then
      // it tries again.
      const timedOutConnect = await Promise.race([p.waitFor((r) => p.logs.indexOf(r) > p.logs.indexOf(timedOut!) && /ETIMEDOUT|connect ?timeout/i.test(text(r))), sleep(20_000).then(() => undefined)]);
      expect(timedOutConnect, `a reconnect attempt timed out inside the stall:\n${p.tail()}`).toBeDefined();
      expect(p.hasExited, p.tail()).toBe(false);
      expect(writer.transactions, 'changes made while the path was stalled').toBeGreaterThan(atStall);
      proxy.resume();
      await sleep(1500);
      await writer.stop();
      await catchUp(p, lake, server, db, ['items', 'other']);
      // the stalled dump thread ends once the server notices its socket is gone (its next heartbeat)
      let now = await dumpThreads(server);
      for (const deadline = Date.now() + 10_000; (now.length !== 1 || now[0] === threads[0]) && Date.now() < deadline; now = await dumpThreads(server)) await sleep(200);
      expect(now, `a new Binlog Dump thread replaced the stalled one (was ${threads[0]})`).toHaveLength(1);
      expect(now[0]).not.toBe(threads[0]);
      await stopCleanly(p);
      await expectLakeEqualsMysql(lake, server, db, ['items', 'other']);
    } finally {
      p.kill();
      await writer.stop();
    }
  });
});

/**
 * Restarts `server` as another server (as a failover looks to floe): MariaDB's identity is its server
 * id; MySQL's is its server UUID, which it reads from auto.cnf in its data directory at start (and
 * writes anew when the file is missing) — the GTIDs it executed stay in its binlog and
 * mysql.gtid_executed, as a promoted replica's do.
 */
async function changeIdentity(server: TestServer, serverId: number): Promise<void> {
  if (serverKind() === 'mysql') await rm(join(server.dataDir!, 'auto.cnf'));
  await server.restart!([`--server-id=${serverId}`]);
}

/** Every file under the lake (relative paths): the lake "untouched" means this list, byte for byte the same names. */
async function lakeFiles(lake: Lake): Promise<string[]> {
  const root = join(lake.warehouse, 'lake');
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(root.length + 1)).sort();
}

interface LakeState {
  files: string[];
  tables: Map<string, { metadataLocation: string; rows: string[] }>;
}

async function lakeState(lake: Lake, db: string, tables: readonly string[]): Promise<LakeState> {
  const out = new Map<string, { metadataLocation: string; rows: string[] }>();
  for (const t of tables) {
    const table = await loadCatalogTable(lake.catalog, ident(db, t));
    const rows = await lakeTableRows(lake.catalog, ident(db, t));
    out.set(t, { metadataLocation: table.metadataLocation, rows: rows.rows.map((r) => JSON.stringify(r)).sort() });
  }
  return { files: await lakeFiles(lake), tables: out };
}

/** FLUSH BINARY LOGS, then PURGE every file before the new one; returns the oldest file left. */
async function flushAndPurge(server: Conn, to?: string): Promise<string> {
  const c = await connect(server);
  try {
    await c.query('FLUSH BINARY LOGS');
    const [status] = await c.query('SHOW MASTER STATUS');
    const file = to ?? (status as { File: string }[])[0]!.File;
    // MariaDB keeps a file until its binlog checkpoint has passed it (the engine made its transactions
    // durable: about a second with innodb_flush_log_at_trx_commit=2), so the purge may need a retry
    let oldest = '';
    for (const deadline = Date.now() + 20_000; oldest !== file && Date.now() < deadline; await sleep(250)) {
      await c.query(`PURGE BINARY LOGS TO '${file}'`);
      const [logs] = await c.query('SHOW BINARY LOGS');
      oldest = (logs as { Log_name: string }[])[0]!.Log_name;
    }
    expect(oldest, 'the binlog files before it were purged').toBe(file);
    return file;
  } finally {
    await c.end();
  }
}

async function currentBinlogFile(server: Conn): Promise<string> {
  const c = await connect(server);
  try {
    const [status] = await c.query('SHOW MASTER STATUS');
    return (status as { File: string }[])[0]!.File;
  } finally {
    await c.end();
  }
}

/** Runs floe until it exits on its own; returns the message of its 'pipeline failed' error. */
async function runExpectingFailure(lake: Lake): Promise<{ p: FloeProcess; message: string }> {
  const p = new FloeProcess(lake.configPath);
  const killer = setTimeout(() => p.kill(), 60_000);
  try {
    expect(await p.exited, `floe exits 1 on its own:\n${p.tail()}`).toEqual({ code: 1, signal: null });
  } finally {
    clearTimeout(killer);
  }
  const failed = p.logs.find((r) => r.msg === 'pipeline failed');
  expect(failed, p.tail()).toBeDefined();
  const err = failed!.err as { message?: string } | undefined;
  return { p, message: String(err?.message ?? text(failed!)) };
}

/** The `rm -r '<dir>'` commands of the error's advice, as directories. */
function directoriesToRemove(message: string): string[] {
  return [...message.matchAll(/rm -r '([^']+)'/g)].map((m) => m[1]!);
}

describe('the binlog purged while floe is stopped', () => {
  it('floe exits 1 naming every table and the way out, the lake untouched; after the tables are dropped as it says, floe runs and the lake equals MySQL', async () => {
    const server = await startTestServer({ serverId: 33 });
    servers.push(server);
    const db = 'purge_all';
    const tables = ['a', 'b', 'c'];
    await createTables(server, db, tables, 1000);
    const lake = await lakeFor('purge-all');
    await writeConfig(lake, server, db, 7203);
    let p = new FloeProcess(lake.configPath);
    try {
      await notified(p, 'streaming-started');
      await new Writer(server, db, tables, prng(21), 1000).burst(1000);
      await catchUp(p, lake, server, db, tables);
      await stopCleanly(p);
    } finally {
      p.kill();
    }
    const before = await lakeState(lake, db, tables);

    // while floe is stopped: changes to every table, then the binlog holding them is purged
    await new Writer(server, db, tables, prng(22), 1000).burst(700);
    const oldest = await flushAndPurge(server);

    const failure = await runExpectingFailure(lake);
    const message = failure.message;
    expect(message).toMatch(/purged/);
    expect(message, 'names every table whose offset is gone').toContain(`found it purged for 3 table(s): ${tables.map((t) => `${db}.${t}`).join(', ')} at binlog.000001:`);
    expect(message).toContain(`oldest binlog is ${oldest}`);
    expect(message).toMatch(/Re-snapshot them: with floe stopped, drop their Iceberg tables/);
    expect(message).toMatch(/start floe again/);
    expect(message, 'no unaffected table to name').not.toContain('The other tables');
    expect(failure.p.logs.filter((r) => /restarting the pipeline/.test(text(r))), 'not retried: a restart cannot bring the binlog back').toEqual([]);
    // nothing committed, nothing written: every file as it was, every table's rows as they were
    expect(await lakeState(lake, db, tables)).toEqual(before);

    // the way out, exactly as the error says: remove the table directories it names
    const dirs = directoriesToRemove(message);
    expect(dirs.sort()).toEqual(tables.map((t) => join(lake.warehouse, 'lake', db, t)).sort());
    for (const d of dirs) await rm(d, { recursive: true });
    p = new FloeProcess(lake.configPath);
    try {
      await notified(p, 'streaming-started');
      await new Writer(server, db, tables, prng(23), 1000).burst(700);
      await catchUp(p, lake, server, db, tables);
      await stopCleanly(p);
    } finally {
      p.kill();
    }
    await expectLakeEqualsMysql(lake, server, db, tables);
  });

  it('tables at different offsets: only the purged ones are named; once they are dropped the others resume from their own offsets, and the lake equals MySQL', async () => {
    const server = await startTestServer({ serverId: 34 });
    servers.push(server);
    const db = 'purge_some';
    const tables = ['cold', 'hot'];
    await createTables(server, db, tables, 1000);
    const lake = await lakeFor('purge-some');
    // an idle table never commits its offset on its own here (only at a clean stop, which this
    // run does not get): a SIGKILL leaves `cold` at the hand-over while `hot` moves on
    await writeConfig(lake, server, db, 7204, { commit: { idleCheckpoints: 100_000, idleMaxMs: 3_600_000 } });
    let p = new FloeProcess(lake.configPath);
    try {
      await notified(p, 'streaming-started');
      const c = await connect(server);
      await c.query('FLUSH BINARY LOGS');
      await c.end();
      await new Writer(server, db, ['hot'], prng(31), 1000).burst(1000);
      await catchUp(p, lake, server, db, ['hot']);
      p.kill('SIGKILL');
      await p.exited;
    } finally {
      p.kill();
    }
    const hotOffset = (await offsetOf(lake, db, 'hot'))!;
    const coldOffset = (await offsetOf(lake, db, 'cold'))!;
    expect([coldOffset.file, hotOffset.file]).toEqual(['binlog.000001', await currentBinlogFile(server)]);
    const hotSnapshots = (await loadCatalogTable(lake.catalog, ident(db, 'hot'))).metadata.snapshots.map((s) => s.snapshotId);
    const before = await lakeState(lake, db, tables);

    // binlog.000001 (where cold stands) purged; hot's file is still there. Then changes to both.
    await flushAndPurge(server, hotOffset.file);
    await new Writer(server, db, tables, prng(32), 1000).burst(700);

    const { message } = await runExpectingFailure(lake);
    expect(message).toContain(`found it purged for 1 table(s): ${db}.cold at binlog.000001:`);
    expect(message, 'hot is not among the purged tables').not.toContain(`${db}.hot at`);
    expect(message).toContain(`The other tables (${db}.hot) still have their binlog and resume from their own offsets`);
    expect(await lakeState(lake, db, tables)).toEqual(before);

    const dirs = directoriesToRemove(message);
    expect(dirs).toEqual([join(lake.warehouse, 'lake', db, 'cold')]);
    for (const d of dirs) await rm(d, { recursive: true });
    p = new FloeProcess(lake.configPath);
    try {
      await notified(p, 'streaming-started');
      // only cold was snapshotted again; hot went on from its offset
      const started = p.logs.find((r) => r.notification === 'snapshot-started');
      expect(started?.tables).toEqual([`${db}.cold`]);
      await new Writer(server, db, tables, prng(33), 1000).burst(700);
      // Idle tables never commit on their own here (idleCheckpoints above), so a table is only
      // stamped past the server's position when it has a change in the last checkpoint. The burst's
      // last transactions may all be the other table's (a DELETE or UPDATE of a missing row logs
      // nothing), and a checkpoint boundary before them left hot 2 GTIDs short once in CI: one last
      // transaction changes both tables.
      await changeEveryTable(server, db, tables);
      await catchUp(p, lake, server, db, tables);
      await stopCleanly(p);
    } finally {
      p.kill();
    }
    const hot = await loadCatalogTable(lake.catalog, ident(db, 'hot'));
    expect(hot.metadata.snapshots.length, 'hot added to its history').toBeGreaterThan(hotSnapshots.length);
    expect(hot.metadata.snapshots.slice(0, hotSnapshots.length).map((s) => s.snapshotId), 'hot kept its history (not re-created)').toEqual(hotSnapshots);
    await expectLakeEqualsMysql(lake, server, db, tables);
  });

  it('resumed by GTIDs (the server changed identity, as after a failover): the server refuses the purged start, floe names the tables standing there, and the way out works', async () => {
    const server = await startTestServer({ serverId: 35 });
    servers.push(server);
    const db = 'purge_gtid';
    const tables = ['a', 'b'];
    await createTables(server, db, tables, 1000);
    const lake = await lakeFor('purge-gtid');
    await writeConfig(lake, server, db, 7205);
    let p = new FloeProcess(lake.configPath);
    try {
      await notified(p, 'streaming-started');
      await new Writer(server, db, tables, prng(41), 1000).burst(700);
      await catchUp(p, lake, server, db, tables);
      await stopCleanly(p);
    } finally {
      p.kill();
    }
    await new Writer(server, db, tables, prng(42), 1000).burst(500);
    await flushAndPurge(server);
    // another server identity: the committed offsets are another server's, so floe resumes by GTIDs,
    // which SHOW BINARY LOGS cannot check — the server answers the dump request with error 1236
    await changeIdentity(server, 36);
    const before = await lakeState(lake, db, tables);

    const { message } = await runExpectingFailure(lake);
    expect(message).toMatch(/purged/);
    expect(message).toContain(`The tables at or before that offset: ${db}.a, ${db}.b. Re-snapshot them`);
    expect(await lakeState(lake, db, tables)).toEqual(before);

    const dirs = directoriesToRemove(message);
    expect(dirs.sort()).toEqual(tables.map((t) => join(lake.warehouse, 'lake', db, t)).sort());
    for (const d of dirs) await rm(d, { recursive: true });
    p = new FloeProcess(lake.configPath);
    try {
      await notified(p, 'streaming-started');
      await new Writer(server, db, tables, prng(43), 1000).burst(500);
      await catchUp(p, lake, server, db, tables);
      await stopCleanly(p);
    } finally {
      p.kill();
    }
    await expectLakeEqualsMysql(lake, server, db, tables);
  });
});
