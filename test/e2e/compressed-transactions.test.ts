/**
 * `floe run` (a child process, filesystem catalog) against a real MySQL 8.0.31 that logs every
 * transaction compressed (`--binlog-transaction-compression=ON`: one zstd TRANSACTION_PAYLOAD_EVENT
 * per transaction). `floe check` reports the setting and passes. Transactions of 100,000 rows each
 * are written while floe streams, and floe is killed with SIGKILL while it applies one — until a kill
 * has landed after MySQL committed such a transaction and before the lake held it — and started
 * again. Then transactions that mix four tables (inserts, updates, key changes, deletes; one table
 * without a primary key) run while floe is killed again, once at a random moment and once inside a
 * commit (a failpoint), and while a last run streams; it catches up and stops cleanly: every table
 * equals its MySQL table row for row (a multiset: nothing lost, nothing doubled), no checkpoint id
 * appears twice in a table's history, and the server logged every transaction of the run compressed.
 *
 * MySQL only (listed in test/mysql8-suites.ts MYSQL8_ONLY_SUITES). The mixed writer's seed is
 * printed; FLOE_COMPRESSED_SEED replays it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import type { LocalServer } from '../../src/demo/local-server.js';
import { startMysql } from '../../src/demo/local-mysql.js';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { CHECKPOINT_ID_KEY, JOB_ID_KEY } from '../../src/iceberg/checkpoint/index.js';
import { compareOffsets, type BinlogOffset } from '../../src/source/mysql/offset/offset.js';
import { prng } from '../../src/util/prng.js';
import { runFloe } from '../cli/run-floe.js';
import { committedOffset, serverPosition, waitForCatchUp, watchedTables, whileRunning } from './support/catch-up.js';
import { FloeProcess } from './support/floe-process.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'compressed';
const DB = 'cz';
const TABLES = ['big', 'a', 'b', 'c'];
const BIG_ROWS = 100_000;
/** Mixed transactions written while the last run streams. */
const AFTER_KILLS = 150;

let server: LocalServer;
let source: { host: string; port: number; user: string; password: string };
let conn: mysql.Connection;
let dir: string;
let configPath: string;
let catalog: FileSystemCatalog;

beforeAll(async () => {
  server = await startMysql({ extraArgs: ['--binlog-transaction-compression=ON'] });
  source = { host: server.host, port: server.port, user: server.user, password: server.password };
  conn = await mysql.createConnection({ ...source, supportBigNumbers: true, bigNumberStrings: true });
  await conn.query(`CREATE DATABASE ${DB}`);
  await conn.query(`CREATE TABLE ${DB}.big (id INT PRIMARY KEY, name VARCHAR(64) CHARACTER SET utf8mb4, amount DECIMAL(12,3), at DATETIME(6))`);
  await conn.query(`CREATE TABLE ${DB}.a (id BIGINT UNSIGNED PRIMARY KEY, v VARCHAR(40) CHARACTER SET utf8mb4, j JSON, ts TIMESTAMP(3) NULL)`);
  await conn.query(`CREATE TABLE ${DB}.b (k1 INT, k2 VARCHAR(10), n DECIMAL(8,2), PRIMARY KEY (k1, k2))`);
  await conn.query(`CREATE TABLE ${DB}.c (id INT, note VARCHAR(10))`);
  await conn.query('SET SESSION cte_max_recursion_depth = 1000000');
  dir = await mkdtemp(join(tmpdir(), 'floe-e2e-compressed-'));
  configPath = join(dir, 'floe.json');
  await writeFile(
    configPath,
    JSON.stringify({
      job: { id: JOB },
      source: { ...source, serverId: 40_000 + (process.pid % 5000), include: [`${DB}.*`] },
      warehouse: { location: join(dir, 'warehouse') },
      stateDir: join(dir, 'state'),
      commit: { intervalMs: 2000, idleCheckpoints: 3 },
    }),
  );
  catalog = new FileSystemCatalog({ warehouse: join(dir, 'warehouse') });
});

afterAll(async () => {
  await conn?.end();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One transaction of BIG_ROWS new rows in `big`, ids from `first`; the server position after it. */
async function bigTransaction(first: number): Promise<BinlogOffset> {
  await conn.query('BEGIN');
  await conn.query(
    `INSERT INTO ${DB}.big WITH RECURSIVE seq(n) AS (SELECT ${first} UNION ALL SELECT n + 1 FROM seq WHERE n < ${first + BIG_ROWS - 1}) ` +
      `SELECT n, CONCAT('row-', n, '-', REPEAT('é', n % 23)), n * 1.125, TIMESTAMP('2024-02-29 23:59:59.999999') - INTERVAL n SECOND FROM seq`,
  );
  await conn.query('COMMIT');
  return serverPosition(source);
}

/** Where `big` stands in the lake (undefined: nothing streamed yet). */
function bigInLake(): Promise<BinlogOffset | undefined> {
  return committedOffset(catalog, { namespace: [DB], name: 'big' }, JOB);
}

/** Starts floe and waits until it streams. */
async function streaming(env: NodeJS.ProcessEnv = {}): Promise<FloeProcess> {
  const p = new FloeProcess(configPath, { env });
  const started = await p.waitFor((r) => r.notification === 'streaming-started');
  if (!started) throw new Error(`floe exited before streaming:\n${p.tail()}`);
  return p;
}

async function killed(p: FloeProcess): Promise<void> {
  p.kill('SIGKILL');
  const exit = await p.exited;
  if (exit.signal !== 'SIGKILL') throw new Error(`floe ended by itself (code ${exit.code}) before the kill:\n${p.tail()}`);
}

/** A transaction over the four tables: inserts, updates (a key change), deletes — compressed like every other. */
async function mixedTransaction(c: mysql.Connection, random: () => number, n: number): Promise<void> {
  const pick = (k: number) => Math.floor(random() * k);
  await c.query('BEGIN');
  const id = 1_000_000 + n;
  await c.query(`INSERT INTO ${DB}.a VALUES (?, ?, ?, FROM_UNIXTIME(?))`, [`${18446744073709551615n - BigInt(n)}`, `ü${n}`, JSON.stringify({ n, list: [n, 'x', null] }), 1_700_000_000 + n + 0.25]);
  await c.query(`INSERT INTO ${DB}.b VALUES (?, 'k', ?), (?, 'l', ?)`, [n, (n % 1000) / 4, n, -(n % 1000) / 8]);
  await c.query(`INSERT INTO ${DB}.c VALUES (?, 'x'), (?, 'y')`, [n, -n]);
  await c.query(`UPDATE ${DB}.big SET amount = -amount, name = CONCAT(LEFT(name, 62), '+') WHERE id BETWEEN ? AND ?`, [1 + pick(BIG_ROWS), 1 + pick(BIG_ROWS) + 20]);
  if (n > 1) {
    const old = 1 + pick(n - 1);
    await c.query(`UPDATE ${DB}.a SET id = id - 500000, v = CONCAT(v, '*') WHERE id = ?`, [`${18446744073709551615n - BigInt(old)}`]);
    await c.query(`UPDATE ${DB}.b SET k2 = 'm', n = n + 1 WHERE k1 = ? AND k2 = 'l'`, [old]);
    await c.query(`DELETE FROM ${DB}.b WHERE k1 = ? AND k2 = 'k'`, [old]);
    // no identical rows in the keyless table: the lake deletes whole-row matches (README, "Tables
    // without a primary key"), which removes every copy of a duplicated row
    await c.query(`UPDATE ${DB}.c SET note = CONCAT(LEFT(note, 9), '+') WHERE id = ?`, [old]);
    await c.query(`DELETE FROM ${DB}.c WHERE id = ?`, [-old]);
  }
  await c.query(`DELETE FROM ${DB}.big WHERE id = ?`, [id - 1_000_000 + pick(BIG_ROWS)]);
  await c.query('COMMIT');
}

describe('compressed transactions through floe run', () => {
  it('floe check reports binlog_transaction_compression=ON as supported and passes', async () => {
    const run = await runFloe(['check', '-c', configPath]);
    const lines = run.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { check: string; ok: boolean; severity: string; message: string });
    expect(lines.find((l) => l.check === 'source.binlog_transaction_compression')).toEqual({
      check: 'source.binlog_transaction_compression',
      ok: true,
      severity: 'info',
      message: 'binlog_transaction_compression=ON: transactions are logged compressed (zstd); floe decompresses them',
    });
    expect(lines.filter((l) => !l.ok && l.severity === 'error')).toEqual([]);
    expect(run.code, run.stderr).toBe(0);
  });

  it('replicates 100,000-row and mixed transactions exactly, across SIGKILLs inside them', async () => {
    const { seed, random } = (() => {
      const s = Number(process.env.FLOE_COMPRESSED_SEED ?? Math.floor(Math.random() * 2 ** 31));
      console.log(`compressed-transactions seed: FLOE_COMPRESSED_SEED=${s}`);
      return { seed: s, random: prng(s) };
    })();
    const start = await serverPosition(source);

    // 100,000-row transactions, floe killed while it applies one, until a kill landed inside one:
    // MySQL had committed it and the lake did not hold it yet
    const kills: string[] = [];
    let inside = 0;
    let rounds = 0;
    for (let round = 0; round < 4 && inside === 0; round++, rounds++) {
      const p = await streaming();
      const after = await bigTransaction(1 + round * BIG_ROWS);
      await sleep(200 + random() * 800);
      await killed(p);
      const lake = await bigInLake();
      const wasInside = lake === undefined || compareOffsets(lake, after) < 0;
      if (wasInside) inside++;
      kills.push(`round ${round}: SIGKILL ${wasInside ? 'inside' : 'after'} the 100,000-row transaction`);
    }
    console.log(kills.join('; '));
    expect(inside, kills.join('; ')).toBeGreaterThan(0);

    // mixed transactions while floe is killed at a random moment, then inside a commit, and then
    // AFTER_KILLS more while the last run streams
    const writer = await mysql.createConnection({ ...source, supportBigNumbers: true, bigNumberStrings: true });
    let n = 0;
    let writing: 'during kills' | 'during the last run' | 'stop' = 'during kills';
    let killedAt = 0;
    let writerFailure: unknown;
    const written = (async () => {
      while (writing === 'during kills' || (writing === 'during the last run' && n < killedAt + AFTER_KILLS)) await mixedTransaction(writer, random, ++n);
    })().catch((e: unknown) => {
      writerFailure = e;
    });
    const last = await (async () => {
      try {
        const first = await streaming();
        await sleep(500 + random() * 2000);
        await killed(first);
        const second = new FloeProcess(configPath, { env: { FLOE_FAILPOINTS: 'after-data-files:9:exit' } });
        const exit = await Promise.race([second.exited, sleep(60_000).then(() => undefined)]);
        if (exit?.signal !== 'SIGKILL') throw new Error(`expected floe to die at its failpoint, found ${JSON.stringify(exit)}:\n${second.tail()}`);
        killedAt = n;
        writing = 'during the last run';
        // a last run streams the rest, catches up, and stops cleanly
        const p = new FloeProcess(configPath);
        await written;
        if (writerFailure) throw writerFailure;
        console.log(`${n} mixed transactions, ${killedAt} of them written before the second kill`);
        const target = await serverPosition(source);
        try {
          await waitForCatchUp(catalog, watchedTables(DB, TABLES), JOB, target, { timeoutMs: 180_000, check: whileRunning(p, 'the last run') });
        } finally {
          p.kill('SIGTERM');
        }
        return p;
      } finally {
        writing = 'stop';
        await written;
        await writer.end();
      }
    })();
    expect(await last.exited, last.tail()).toEqual({ code: 0, signal: null });
    expect(killedAt).toBeGreaterThan(10);

    for (const t of TABLES) {
      const lake = await lakeTableRows(catalog, { namespace: [DB], name: t });
      const expected = await mysqlTableRows(source, DB, t, lake.columns);
      expect({ table: t, ...multisetDifference(expected, lake.rows), rows: lake.rows.length }, `seed ${seed}`).toEqual({ table: t, missing: [], unexpected: [], rows: expected.length });
      const table = await loadCatalogTable(catalog, { namespace: [DB], name: t });
      const ids = table.metadata.snapshots.filter((s) => s.summary[JOB_ID_KEY] === JOB).map((s) => s.summary[CHECKPOINT_ID_KEY]);
      expect(new Set(ids).size, `checkpoint ids of ${t}: ${ids.join(',')}`).toBe(ids.length);
    }
    const [[{ rows: bigRows }]] = (await conn.query(`SELECT COUNT(*) AS \`rows\` FROM ${DB}.big`)) as unknown as [{ rows: string }[]];
    // each mixed transaction deletes at most one row of `big`
    expect(Number(bigRows)).toBeGreaterThanOrEqual(rounds * BIG_ROWS - n);

    // every transaction of the run was logged compressed: no rows event outside a payload (inner
    // events are listed at their payload's end position, Pos = End_log_pos)
    const [logs] = (await conn.query('SHOW BINARY LOGS')) as unknown as [{ Log_name: string }[]];
    let payloads = 0;
    for (const { Log_name: file } of logs) {
      if (start.file !== undefined && file < start.file) continue;
      const [events] = (await conn.query(`SHOW BINLOG EVENTS IN '${file}'`)) as unknown as [{ Pos: number; End_log_pos: number; Event_type: string }[]];
      const own = events.filter((e) => Number(e.Pos) < Number(e.End_log_pos));
      payloads += own.filter((e) => e.Event_type === 'Transaction_payload').length;
      expect(own.filter((e) => /_rows$|^Table_map$/.test(e.Event_type))).toEqual([]);
    }
    expect(payloads).toBeGreaterThanOrEqual(n + rounds);
  });
});
