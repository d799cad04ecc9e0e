/**
 * `runVerification` in process against the harness server and a local warehouse that floe run (in
 * process) filled: every supported type, a string key under a case-insensitive collation, a hashed
 * key, masked / dropped columns and a table without a key verify equal; changes made in MySQL while
 * floe is stopped are lag, not differences; rows another writer deleted or changed in the lake are
 * found exactly (chunk, key, column), `repair` fixes them as a checkpoint of the job (a table without
 * a key is reported, not repaired), and floe run streams on from there.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { parseConfig } from '../../../src/config/load.js';
import type { FloeConfig } from '../../../src/config/schema.js';
import { FileSystemCatalog } from '../../../src/catalog/filesystem/filesystem-catalog.js';
import { readTableRows } from '../../../src/iceberg/scan/index.js';
import { loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import type { RowChange } from '../../../src/iceberg/writer/index.js';
import { silentLogger } from '../../../src/pipeline/observe/logger.js';
import { FanOutNotifier, RecordingSink } from '../../../src/pipeline/observe/notifications.js';
import { runPipeline, type RunResult } from '../../../src/pipeline/runner.js';
import { runVerification } from '../../../src/pipeline/verify/verify-run.js';
import type { VerifyOptions } from '../../../src/pipeline/verify/verify-session.js';
import type { Row } from '../../../src/model/values.js';
import { openTestDatabase, sharedMysqlConfig, sharedSource } from '../../support/shared-mysql.js';
import { ALL_TYPES_COLUMNS, ALL_TYPES_DDL, ALL_TYPES_SESSION, ALL_TYPES_VALUES } from '../../e2e/support/all-types.js';
import { serverPosition, waitForCatchUp } from '../../e2e/support/catch-up.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'verify-run';
const TABLES = ['items', 'all_types', 'people', 'logs'];
let db: string;
let conn: mysql.Connection;
let warehouse: string;
let config: FloeConfig;
let catalog: FileSystemCatalog;

const exec = (s: string) => conn.query(s);

beforeAll(async () => {
  ({ db, conn } = await openTestDatabase('verify_run'));
  for (const s of ALL_TYPES_SESSION) await conn.query(s);
  await exec('CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(10,2), seen DATETIME(3))');
  await exec(`INSERT INTO items VALUES ${Array.from({ length: 500 }, (_, i) => `(${i * 2}, 'item ${i}', ${(i * 1.25).toFixed(2)}, '2024-03-0${1 + (i % 9)} 10:00:00.${String(i % 1000).padStart(3, '0')}')`).join(', ')}`);
  await exec(ALL_TYPES_DDL('all_types'));
  await exec(`INSERT INTO all_types (${ALL_TYPES_COLUMNS}) VALUES ${ALL_TYPES_VALUES.map((v, i) => `(${i + 1}, ${v})`).join(', ')}`);
  await exec('CREATE TABLE people (login VARCHAR(30) COLLATE utf8mb4_general_ci PRIMARY KEY, email VARCHAR(80), phone VARCHAR(20), born DATE, ssn CHAR(11))');
  await exec(`INSERT INTO people VALUES ${Array.from({ length: 60 }, (_, i) => `('User${i}', 'u${i}@example.com', '+82-10-${String(i).padStart(4, '0')}', '1990-01-${String(1 + (i % 28)).padStart(2, '0')}', '123-45-${i}')`).join(', ')}`);
  await exec('CREATE TABLE logs (msg VARCHAR(60) NOT NULL, n INT)');
  await exec(`INSERT INTO logs VALUES ${Array.from({ length: 40 }, (_, i) => `('line ${i % 30}', ${i % 7})`).join(', ')}`);

  warehouse = await mkdtemp(join(tmpdir(), 'floe-verify-run-'));
  config = parseConfig({
    job: { id: JOB },
    source: sharedSource(30_000, db, TABLES, { snapshot: { chunkSize: 50, parallelism: 2 }, timeAsMicros: [`${db}.all_types.dur`] }),
    warehouse: { location: warehouse },
    commit: { intervalMs: 300, idleCheckpoints: 1 },
    transforms: [
      { column: `${db}.people.login`, type: 'hash', salt: 'pepper' },
      { column: `${db}.people.phone`, type: 'mask', keepLast: 4 },
      { column: `${db}.people.born`, type: 'mask', keepLast: 2 },
      { column: `${db}.people.ssn`, type: 'drop' },
    ],
  });
  catalog = new FileSystemCatalog({ warehouse });
});

afterAll(async () => {
  await conn?.end();
  if (warehouse) await rm(warehouse, { recursive: true, force: true });
});

function options(extra: Partial<VerifyOptions> = {}): VerifyOptions {
  return { chunkSize: 50, parallelism: 2, showValues: false, rowLimit: 20, repair: false, serverIdBase: config.source!.serverId + 100, ...extra };
}

async function runFloeUntilCaughtUp(): Promise<void> {
  const controller = new AbortController();
  const sink = new RecordingSink();
  const result: Promise<RunResult> = runPipeline(config, { mode: 'run', signal: controller.signal, notifications: new FanOutNotifier(JOB, [sink], silentLogger), logger: silentLogger });
  await Promise.race([sink.waitFor('streaming-started'), result.then((r) => Promise.reject(new Error(`floe ended: ${r.reason} ${String(r.error)}`)))]);
  const target = await serverPosition({ ...sharedMysqlConfig() });
  await waitForCatchUp(catalog, TABLES.map((t) => ({ identifier: { namespace: [db], name: t }, sourceKey: `${db}.${t}` })), JOB, target, { timeoutMs: 60_000 });
  controller.abort();
  const end = await result;
  expect(end.reason, String(end.error)).toBe('stopped');
}

/** Another writer (not the job) changes the lake: upserts / deletes through floe's own writer library. */
async function intrude(table: string, changes: RowChange[], mode: 'upsert' | 'append' = 'upsert'): Promise<void> {
  const committer = new TableCommitter({ catalog, identifier: { namespace: [db], name: table }, jobId: 'intruder' });
  await committer.open({ mode });
  await committer.write(changes);
  const last = await committer.lastCommitted();
  await committer.commit((last?.checkpointId ?? 0n) + 1n, '{}');
  committer.close();
}

function statuses(report: { tables: readonly { table: string; status: string; reason?: string }[] }): [string, string, string | undefined][] {
  return report.tables.map((t) => [t.table, t.status, t.reason] as [string, string, string | undefined]).sort();
}

async function lakeRow(table: string, id: number): Promise<Row> {
  const rows = await readTableRows(await loadCatalogTable(catalog, { namespace: [db], name: table }));
  return rows.find((r) => r[0] === id)!;
}

describe('runVerification', () => {
  it('finds an equal lake equal, lag included', async () => {
    await runFloeUntilCaughtUp();
    const report = await runVerification(config, options(), silentLogger);
    expect(statuses(report)).toEqual(TABLES.map((t) => [`${db}.${t}`, 'equal', undefined]).sort());
    const people = report.tables.find((t) => t.table === `${db}.people`)!;
    expect(people.excludedColumns).toEqual([{ column: 'ssn', reason: 'dropped by a transform (not in the lake)' }]);
    expect(people.notes.join(' ')).toContain('compared as one chunk');

    // floe stopped: MySQL moves on, the lake stays at its offset — lag, not a difference
    await exec(`UPDATE items SET name = 'renamed' WHERE id < 40`);
    await exec(`DELETE FROM items WHERE id BETWEEN 100 AND 120`);
    await exec(`INSERT INTO items VALUES (5001, 'new', 1.00, NULL)`);
    await exec(`UPDATE all_types SET vc = 'later', dur = '-01:00:00' WHERE id = 2`);
    await exec(`INSERT INTO logs VALUES ('late', 1)`);
    const behind = await runVerification(config, options(), silentLogger);
    expect(statuses(behind)).toEqual(TABLES.map((t) => [`${db}.${t}`, 'equal', undefined]).sort());
  });

  it('finds rows another writer deleted or changed in the lake, repairs them, and floe streams on', async () => {
    await runFloeUntilCaughtUp();
    const changed = await lakeRow('items', 202);
    await intrude('items', [
      { op: 'delete', before: await lakeRow('items', 300) },
      { op: 'insert', after: [changed[0]!, 'tampered', ...changed.slice(2)] },
    ]);
    await intrude('logs', [{ op: 'insert', after: ['intruded', 99] }], 'append');
    const report = await runVerification(config, options(), silentLogger);
    expect(report.status).toBe('differs');
    const logs = report.tables.find((t) => t.table === `${db}.logs`)!;
    expect(logs.differences.map((d) => [d.rows.onlyInMysql, d.rows.onlyInLake, d.rows.differing])).toEqual([[0, 1, 0]]);
    const items = report.tables.find((t) => t.table === `${db}.items`)!;
    expect(items.status).toBe('differs');
    // exactly those rows, each in the chunk whose key range holds it
    const within = (key: number, d: (typeof items.differences)[number]) => (d.lower === undefined || Number(d.lower[0]) <= key) && (d.upper === undefined || key < Number(d.upper[0]));
    const found = items.differences.flatMap((d) => [
      ...d.rows.samples.differing.map((r) => ({ kind: 'differs', key: r.key.id, columns: r.columns, inRange: within(Number(r.key.id), d) })),
      ...d.rows.samples.onlyInMysql.map((r) => ({ kind: 'only in MySQL', key: r.id, inRange: within(Number(r.id), d) })),
      ...d.rows.samples.onlyInLake.map((r) => ({ kind: 'only in the lake', key: r.id, inRange: within(Number(r.id), d) })),
    ]);
    expect(found).toEqual([
      { kind: 'differs', key: 202, columns: ['name'], inRange: true },
      { kind: 'only in MySQL', key: 300, inRange: true },
    ]);
    expect(report.tables.filter((t) => t.table !== `${db}.items` && t.table !== `${db}.logs`).map((t) => t.status)).toEqual(['equal', 'equal']);

    const repaired = await runVerification(config, options({ repair: true }), silentLogger);
    expect(repaired.tables.find((t) => t.table === `${db}.items`)!.status).toBe('repaired');
    // a table without a key is reported, not repaired
    const unrepaired = repaired.tables.find((t) => t.table === `${db}.logs`)!;
    expect(unrepaired.status).toBe('differs');
    expect(unrepaired.notes.join(' ')).toMatch(/not repaired: .*has no primary key: its rows have no identity to upsert on/);
    await intrude('logs', [{ op: 'delete', before: ['intruded', 99] }], 'append');
    const again = await runVerification(config, options(), silentLogger);
    expect(again.status).toBe('equal');

    await exec(`UPDATE items SET price = 9.99 WHERE id = 300`);
    await runFloeUntilCaughtUp();
    expect((await runVerification(config, options(), silentLogger)).status).toBe('equal');
  });
});
