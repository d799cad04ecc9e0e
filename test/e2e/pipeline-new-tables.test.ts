/**
 * Tables that start matching the include patterns later get their own snapshot without the others
 * being snapshotted again: one created while floe streams (CREATE TABLE in the binlog: the source is
 * restarted in process with the table added) and one created while floe is stopped (found at start:
 * snapshotted while the streaming tables resume from their committed offsets). The lake equals
 * MySQL for every table after each step; no checkpoint id repeats.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { parseConfig } from '../../src/config/load.js';
import type { FloeConfig } from '../../src/config/schema.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { CHECKPOINT_ID_KEY, JOB_ID_KEY } from '../../src/iceberg/checkpoint/index.js';
import type { RecordingSink } from '../../src/pipeline/observe/notifications.js';
import type { RunResult } from '../../src/pipeline/runner.js';
import { openTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';
import { catchUp, startPipeline, untilNotified } from '../support/pipeline-run.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'new-tables';
let db: string;
let conn: mysql.Connection;
let warehouse: string;
let config: FloeConfig;
let catalog: FileSystemCatalog;

beforeAll(async () => {
  ({ db, conn } = await openTestDatabase('e2e_new'));
  await conn.query(`CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(20))`);
  await conn.query(`INSERT INTO a VALUES ${Array.from({ length: 500 }, (_, i) => `(${i}, 'a${i}')`).join(', ')}`);
  await conn.query(`CREATE TABLE ignored_table (id INT PRIMARY KEY)`);
  warehouse = await mkdtemp(join(tmpdir(), 'floe-e2e-new-'));
  const server = sharedMysqlConfig();
  config = parseConfig({
    job: { id: JOB },
    source: { ...server, serverId: 40_000 + (process.pid % 5000) * 8, include: [`${db}.*`], exclude: [`${db}.ignored*`], snapshot: { chunkSize: 100, parallelism: 2 } },
    warehouse: { location: warehouse },
    commit: { intervalMs: 300, idleCheckpoints: 2 },
  });
  catalog = new FileSystemCatalog({ warehouse });
});

afterAll(async () => {
  await conn?.end();
  if (warehouse) await rm(warehouse, { recursive: true, force: true });
});

async function catchUpAndCompare(tables: string[], result: Promise<RunResult>): Promise<void> {
  await catchUp({ result }, { catalog, job: JOB, db, tables });
  for (const t of tables) {
    const lake = await lakeTableRows(catalog, { namespace: [db], name: t });
    const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, db, t, lake.columns);
    expect({ table: t, ...multisetDifference(expected, lake.rows) }).toEqual({ table: t, missing: [], unexpected: [] });
    expect(lake.rows.length).toBe(expected.length);
  }
}

const snapshotsOf = (sink: RecordingSink) => sink.received.filter((n) => n.type === 'snapshot-started').map((n) => (n as { tables: string[] }).tables);

describe('tables joining later', () => {
  it('snapshots a table created while streaming, and one created while stopped, without re-snapshotting the others', async () => {
    const first = startPipeline(config);
    await untilNotified(first, (n) => n.type === 'streaming-started');
    await conn.query(`UPDATE a SET v = 'before b' WHERE id < 10`);
    await conn.query(`CREATE TABLE b (k VARCHAR(10) PRIMARY KEY, n BIGINT NOT NULL)`);
    await conn.query(`INSERT INTO b VALUES ${Array.from({ length: 300 }, (_, i) => `('k${i}', ${i})`).join(', ')}`);
    await conn.query(`UPDATE a SET v = 'after b' WHERE id BETWEEN 10 AND 19`);
    await untilNotified(first, (n) => n.type === 'table-snapshot-finished' && (n as { table: string }).table === `${db}.b`);
    await conn.query(`UPDATE b SET n = -n WHERE n < 50`);
    await conn.query(`DELETE FROM b WHERE n > 250`);
    await conn.query(`DELETE FROM a WHERE id >= 400`);
    await catchUpAndCompare(['a', 'b'], first.result);
    expect((await first.stop()).reason).toBe('stopped');
    expect(snapshotsOf(first.sink)).toEqual([[`${db}.a`], [`${db}.b`]]);
    expect(await catalog.tableExists({ namespace: [db], name: 'ignored_table' })).toBe(false);

    await conn.query(`CREATE TABLE c (id INT PRIMARY KEY, note TEXT)`);
    await conn.query(`INSERT INTO c VALUES ${Array.from({ length: 250 }, (_, i) => `(${i}, 'c${i}')`).join(', ')}`);
    await conn.query(`UPDATE a SET v = 'while stopped' WHERE id < 5`);
    await conn.query(`INSERT INTO b VALUES ('new', 1)`);
    const second = startPipeline(config);
    await untilNotified(second, (n) => n.type === 'streaming-started');
    await conn.query(`UPDATE c SET note = NULL WHERE id % 3 = 0`);
    await conn.query(`UPDATE a SET v = 'second run' WHERE id % 7 = 0`);
    await catchUpAndCompare(['a', 'b', 'c'], second.result);
    expect((await second.stop()).reason).toBe('stopped');
    expect(snapshotsOf(second.sink)).toEqual([[`${db}.c`]]);

    for (const t of ['a', 'b', 'c']) {
      const table = await loadCatalogTable(catalog, { namespace: [db], name: t });
      const ids = table.metadata.snapshots.filter((s) => s.summary[JOB_ID_KEY] === JOB).map((s) => s.summary[CHECKPOINT_ID_KEY]);
      expect(new Set(ids).size).toBe(ids.length);
    }
  });
});
