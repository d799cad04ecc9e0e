/**
 * `floe verify` while floe run streams random DML (real processes, the run's server — MariaDB, and
 * MySQL 8 in the mysql8 project): for over a minute, inserts, updates (key moves among them) and
 * deletes run against a table with an integer key, one with a string key under a case-insensitive
 * collation and one without a key, while floe run commits every second — and every `floe verify`
 * run meanwhile reports no difference (exit 0): lag is never taken for one (the table without a key
 * only grows, duplicates among its rows included). Then floe run is killed
 * (SIGKILL) at random moments under the same load and started again, verify runs between the
 * crashes, and the lake it leaves verifies equal. floe run's own scheduled verification
 * (verify.intervalMs) reports the same through its notification and its gauges.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { freePort } from '../../src/demo/local-server.js';
import { prng } from '../../src/util/prng.js';
import { stringifyJson } from '../../src/util/json.js';
import { openTestDatabase, sharedMysqlConfig, sharedSource } from '../support/shared-mysql.js';
import { FloeProcess } from './support/floe-process.js';
import { catchUpTables, whileRunning } from './support/catch-up.js';
import { floeVerify, writeConfig, type VerifyRun } from './support/verify-lake.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'verify-streaming';
const TABLES = ['acc', 'kv', 'audit'];
let db: string;
let dml: mysql.Connection;
let dir: string;
let configPath: string;
let catalog: FileSystemCatalog;
let metricsPort: number;

beforeAll(async () => {
  ({ db, conn: dml } = await openTestDatabase('verify_stream'));
  await dml.query('CREATE TABLE acc (id INT PRIMARY KEY, balance DECIMAL(12,2) NOT NULL, note VARCHAR(40), updated DATETIME(6) NOT NULL)');
  await dml.query('CREATE TABLE kv (k VARCHAR(20) COLLATE utf8mb4_general_ci PRIMARY KEY, v INT NOT NULL, f FLOAT)');
  await dml.query('CREATE TABLE audit (msg VARCHAR(40) NOT NULL, n INT)');
  await dml.query(`INSERT INTO acc VALUES ${Array.from({ length: 2000 }, (_, i) => `(${i * 3}, ${(i * 1.5).toFixed(2)}, 'n${i}', '2024-01-01 00:00:00.${String(i).padStart(6, '0')}')`).join(', ')}`);
  await dml.query(`INSERT INTO kv VALUES ${Array.from({ length: 500 }, (_, i) => `('Key-${i}', ${i}, ${i / 3})`).join(', ')}`);
  await dml.query(`INSERT INTO audit VALUES ${Array.from({ length: 100 }, (_, i) => `('line ${i % 40}', ${i % 9})`).join(', ')}`);
  dir = await mkdtemp(join(tmpdir(), 'floe-verify-streaming-'));
  metricsPort = await freePort();
  configPath = await writeConfig(dir, {
    job: { id: JOB },
    source: sharedSource(45_000, db, TABLES, { snapshot: { chunkSize: 100, parallelism: 2 } }),
    warehouse: { location: join(dir, 'warehouse') },
    stateDir: join(dir, 'state'),
    commit: { intervalMs: 1000, idleCheckpoints: 1 },
    verify: { intervalMs: 15_000 },
    metrics: { port: metricsPort },
  });
  catalog = new FileSystemCatalog({ warehouse: join(dir, 'warehouse') });
});

afterAll(async () => {
  await dml?.end();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Random transactions until `stop` resolves: about 40 a second. */
async function randomDml(seed: number, until: Promise<void>): Promise<number> {
  const random = prng(seed);
  const pick = (n: number) => Math.floor(random() * n);
  let stopped = false;
  void until.then(() => (stopped = true));
  let n = 0;
  let next = 10_000;
  while (!stopped) {
    const statements: string[] = [];
    for (let i = 1 + pick(3); i > 0; i--) {
      const r = random();
      if (r < 0.3) statements.push(`UPDATE acc SET balance = balance + ${pick(100)}, note = 'u${n}', updated = NOW(6) WHERE id = ${pick(2000) * 3}`);
      else if (r < 0.4) statements.push(`INSERT INTO acc VALUES (${next++}, ${pick(1000)}.25, NULL, NOW(6))`);
      else if (r < 0.5) statements.push(`DELETE FROM acc WHERE id = ${pick(2000) * 3 + (pick(2) ? 0 : 1)}`);
      else if (r < 0.55) statements.push(`UPDATE acc SET id = ${next++} WHERE id = ${pick(2000) * 3}`); // a key move
      else if (r < 0.75) statements.push(`INSERT INTO kv VALUES ('key-${pick(700)}', ${pick(1000)}, ${pick(1000) / 7}) ON DUPLICATE KEY UPDATE v = v + 1, f = f * 2`);
      else if (r < 0.85) statements.push(`DELETE FROM kv WHERE k = 'KEY-${pick(700)}'`);
      // the table without a key only grows (duplicates among its rows): its deletes are the keyless writer's tests' matter
      else statements.push(`INSERT INTO audit VALUES ('line ${pick(40)}', ${pick(9)})`);
    }
    await dml.beginTransaction();
    for (const s of statements) await dml.query(s);
    await dml.commit();
    n++;
    await new Promise((r) => setTimeout(r, 25));
  }
  return n;
}

async function catchUp(p: FloeProcess): Promise<void> {
  await catchUpTables({ catalog, job: JOB, db, tables: TABLES }, { server: sharedMysqlConfig(), timeoutMs: 120_000, check: whileRunning(p) });
}

function expectEqual(run: VerifyRun, when: string): void {
  const detail = stringifyJson(run.tables.filter((t) => t.status !== 'equal')).slice(0, 4000) + run.stderr.slice(-2000);
  expect({ when, code: run.code, tables: run.tables.map((t) => [t.table, t.status, t.reason, t.differences.length]) }, detail).toEqual({
    when,
    code: 0,
    tables: TABLES.map((t) => [`${db}.${t}`, 'equal', undefined, 0]).sort(),
  });
}

describe('floe verify while floe run streams', () => {
  it('reports no difference over a minute of random DML, nor after crashes and restarts', async () => {
    let floe = new FloeProcess(configPath);
    expect(await floe.waitFor((r) => r.notification === 'streaming-started'), floe.tail()).toBeDefined();
    let stopDml!: () => void;
    const dmlDone = randomDml(36, new Promise<void>((r) => (stopDml = r)));

    try {
      const started = Date.now();
      const runs: VerifyRun[] = [];
      while (Date.now() - started < 65_000) {
        const run = await floeVerify(configPath);
        expectEqual(run, `verify ${runs.length + 1} while floe streams (${Math.round((Date.now() - started) / 1000)} s)`);
        runs.push(run);
      }
      expect(runs.length).toBeGreaterThanOrEqual(3);
      // the chunks that changed while they were compared went row by row — and compared equal
      expect(runs.some((r) => r.tables.some((t) => (t.stats?.rowByRow ?? 0) > 0))).toBe(true);

      // floe run's own scheduled verification said the same
      const scheduled = await floe.waitFor((r) => r.notification === 'verify-finished');
      expect(scheduled, floe.tail()).toMatchObject({ notification: 'verify-finished', status: 'equal' });
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(metrics).toMatch(new RegExp(`floe_verify_differing_rows\\{table="${db}.acc"\\} 0`));
      expect(metrics).toMatch(/floe_verify_last_run_timestamp_seconds \d/);

      // crashes under load, a verification between them
      const random = prng(7);
      for (let crash = 0; crash < 3; crash++) {
        await new Promise((r) => setTimeout(r, 1000 + random() * 4000));
        floe.kill('SIGKILL');
        await floe.exited;
        if (crash === 1) expectEqual(await floeVerify(configPath), 'verify while floe run is down');
        floe = new FloeProcess(configPath);
        expect(await floe.waitFor((r) => r.notification === 'streaming-started'), floe.tail()).toBeDefined();
      }
      stopDml();
      expect(await dmlDone).toBeGreaterThan(1000);
      await catchUp(floe);
      floe.kill('SIGTERM');
      expect((await floe.exited).code, floe.tail()).toBe(0);
      expectEqual(await floeVerify(configPath), 'verify after the crashes');
    } finally {
      stopDml();
      await dmlDone.catch(() => 0);
      floe.kill('SIGKILL');
    }
  }, 420_000);
});
