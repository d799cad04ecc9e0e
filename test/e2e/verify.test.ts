/**
 * `floe verify` end to end, with real `floe` processes against the run's server (MariaDB, and MySQL 8
 * in the mysql8 project): a lake floe run keeps verifies equal (exit 0) while floe streams; --repair
 * is refused while floe run holds the job (exit 3), and so is a second floe run of it; then the lake
 * is made to differ in known ways — an ON DELETE SET NULL child the server changed without binlog
 * events, a row deleted and a value changed by another writer, a whole chunk missing — and verify
 * finds exactly those chunks and rows (exit 4), --repair fixes them as a checkpoint of the job
 * (exit 4, "repaired"), a second verify exits 0, and floe run streams on from the repaired lake,
 * which still verifies equal.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { readTableRows } from '../../src/iceberg/scan/index.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import type { Row } from '../../src/model/values.js';
import { openTestDatabase, sharedMysqlConfig, sharedSource } from '../support/shared-mysql.js';
import { FloeProcess } from './support/floe-process.js';
import { catchUpTables, whileRunning } from './support/catch-up.js';
import { floeVerify, foundRows, intrude, writeConfig } from './support/verify-lake.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'verify-e2e';
const TABLES = ['customers', 'orders', 'events'];
let db: string;
let conn: mysql.Connection;
let dir: string;
let configPath: string;
let catalog: FileSystemCatalog;

const exec = (s: string) => conn.query(s);

beforeAll(async () => {
  ({ db, conn } = await openTestDatabase('verify_e2e'));
  await exec('CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL)');
  await exec('CREATE TABLE orders (id BIGINT PRIMARY KEY, customer_id INT NULL, amount DECIMAL(12,2) NOT NULL, created DATETIME(6) NOT NULL, CONSTRAINT fk_customer FOREIGN KEY (customer_id) REFERENCES customers (id) ON DELETE SET NULL)');
  await exec('CREATE TABLE events (id INT PRIMARY KEY, payload JSON, at TIMESTAMP(3) NULL, score DOUBLE)');
  await exec(`INSERT INTO customers VALUES ${Array.from({ length: 20 }, (_, i) => `(${i + 1}, 'customer ${i + 1}')`).join(', ')}`);
  await exec(`INSERT INTO orders VALUES ${Array.from({ length: 600 }, (_, i) => `(${i + 1}, ${(i % 20) + 1}, ${((i * 13.37) % 1000).toFixed(2)}, '2024-05-${String(1 + (i % 28)).padStart(2, '0')} 12:00:00.${String(i).padStart(6, '0')}')`).join(', ')}`);
  await exec(`INSERT INTO events VALUES ${Array.from({ length: 1000 }, (_, i) => `(${i + 1}, '{"n": ${i}, "tags": ["a", "b"]}', '2024-01-01 00:00:00.${String(i % 1000).padStart(3, '0')}', ${i / 7})`).join(', ')}`);
  dir = await mkdtemp(join(tmpdir(), 'floe-verify-e2e-'));
  configPath = await writeConfig(dir, {
    job: { id: JOB },
    source: sharedSource(40_000, db, TABLES, { snapshot: { chunkSize: 100, parallelism: 2 } }),
    warehouse: { location: join(dir, 'warehouse') },
    stateDir: join(dir, 'state'),
    commit: { intervalMs: 300, idleCheckpoints: 1 },
  });
  catalog = new FileSystemCatalog({ warehouse: join(dir, 'warehouse') });
});

afterAll(async () => {
  await conn?.end();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function startFloe(): Promise<FloeProcess> {
  const p = new FloeProcess(configPath);
  const started = await p.waitFor((r) => r.notification === 'streaming-started');
  if (!started) throw new Error(`floe run ended before streaming:\n${p.tail()}`);
  return p;
}

async function catchUp(p: FloeProcess): Promise<void> {
  await catchUpTables({ catalog, job: JOB, db, tables: TABLES }, { server: sharedMysqlConfig(), check: whileRunning(p) });
}

async function stop(p: FloeProcess): Promise<void> {
  p.kill('SIGTERM');
  expect((await p.exited).code, p.tail()).toBe(0);
}

async function lakeRows(table: string): Promise<Map<number, Row>> {
  const rows = await readTableRows(await loadCatalogTable(catalog, { namespace: [db], name: table }));
  return new Map(rows.map((r) => [Number(r[0]), r]));
}

function statuses(tables: readonly { table: string; status: string }[]): Record<string, string> {
  return Object.fromEntries(tables.map((t) => [t.table.slice(db.length + 1), t.status]));
}

describe('floe verify', () => {
  it('finds exactly the chunks and rows that differ, repairs them, and floe run streams on', async () => {
    const floe = await startFloe();
    await exec(`UPDATE orders SET amount = amount + 1 WHERE id % 50 = 0`);
    await exec(`DELETE FROM events WHERE id = 1000`);
    await catchUp(floe);

    const live = await floeVerify(configPath);
    expect(live.code, live.stderr).toBe(0);
    expect(statuses(live.tables)).toEqual({ customers: 'equal', orders: 'equal', events: 'equal' });

    const refused = await floeVerify(configPath, ['--repair']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/floe verify --repair: job verify-e2e is in use by another process .*stop it first/);
    // a second floe run of the job is refused the same way
    const second = new FloeProcess(configPath);
    expect((await second.exited).code).toBe(1);
    expect(second.tail()).toMatch(/floe run: job verify-e2e is in use by another process/);

    // the server sets the orders of customer 7 to NULL without a binlog event for them
    await exec('DELETE FROM customers WHERE id = 7');
    await catchUp(floe);
    await stop(floe);

    // another writer: one row deleted, one value changed, and a whole chunk's rows gone
    const events = await lakeRows('events');
    const changed = events.get(43)!;
    await intrude(catalog, { namespace: [db], name: 'events' }, [
      { op: 'delete', before: events.get(42)! },
      { op: 'insert', after: [changed[0]!, '{"n": -1}', ...changed.slice(2)] },
      ...Array.from({ length: 100 }, (_, i) => ({ op: 'delete' as const, before: events.get(301 + i)! })),
    ]);

    const found = await floeVerify(configPath, ['--rows', '200']);
    expect(found.code, found.stderr).toBe(4);
    expect(statuses(found.tables)).toEqual({ customers: 'equal', orders: 'differs', events: 'differs' });
    const orders = found.tables.find((t) => t.table === `${db}.orders`)!;
    const setNull = Array.from({ length: 30 }, (_, i) => 7 + 20 * i).map((key) => ({ kind: 'differs', key, columns: ['customer_id'], chunkHoldsKey: true }));
    expect(foundRows(orders, 'id').sort((a, b) => a.key - b.key)).toEqual(setNull);
    const ev = found.tables.find((t) => t.table === `${db}.events`)!;
    expect(foundRows(ev, 'id').sort((a, b) => a.key - b.key)).toEqual([
      { kind: 'only in MySQL', key: 42, chunkHoldsKey: true },
      { kind: 'differs', key: 43, columns: ['payload'], chunkHoldsKey: true },
      ...Array.from({ length: 100 }, (_, i) => ({ kind: 'only in MySQL', key: 301 + i, chunkHoldsKey: true })),
    ]);
    // the missing rows are one whole chunk (an even split of ids 1..999 by 100) and the two rows another
    const missingChunk = ev.differences.find((d) => d.rows.onlyInMysql === 100)!;
    expect(missingChunk).toMatchObject({ lower: [301], upper: [401], rows: { onlyInLake: 0, differing: 0 } });
    expect(ev.differences).toHaveLength(2);
    expect(ev.stats!.rowByRow).toBe(2);

    const repaired = await floeVerify(configPath, ['--repair']);
    expect(repaired.code, repaired.stderr).toBe(4);
    expect(statuses(repaired.tables)).toEqual({ customers: 'equal', orders: 'repaired', events: 'repaired' });
    expect(repaired.tables.find((t) => t.table === `${db}.events`)!.repair).toMatchObject({ chunks: 2, rowsWritten: 102, rowsDeleted: 0, stillDiffering: 0 });
    const again = await floeVerify(configPath);
    expect(again.code, again.stderr).toBe(0);

    // floe run takes the repaired lake as its own, and streams on
    const next = await startFloe();
    await exec(`UPDATE events SET payload = '{"n": 43, "again": true}' WHERE id = 43`);
    await exec('DELETE FROM orders WHERE id = 27');
    await exec(`INSERT INTO events VALUES (5000, NULL, NULL, -0.0)`);
    await catchUp(next);
    await stop(next);
    const after = await floeVerify(configPath);
    expect(after.code, after.stderr).toBe(0);
    expect(statuses(after.tables)).toEqual({ customers: 'equal', orders: 'equal', events: 'equal' });
  }, 420_000);
});
