/**
 * `floe run` accepts the REST catalog by config. The real pipeline (snapshot,
 * then streaming; format v3 with a partitioned table, so deletion vectors and the unpartitioned spec
 * for global equality deletes go through REST commits) writes through floe's REST client to
 * `floe catalog serve` (the REST server, in this process) over a filesystem catalog on local disk.
 * A second run resumes from what the tables committed, read back through REST. After each run the
 * lake, read through the REST catalog, equals MySQL; no checkpoint id repeats; and nothing is written
 * under the config's own `warehouse.location` (with REST, the server chooses table locations).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { RestCatalog } from '../../src/catalog/rest/rest-catalog.js';
import { RestCatalogServer } from '../../src/catalog/server/rest-server.js';
import { parseConfig } from '../../src/config/load.js';
import type { FloeConfig } from '../../src/config/schema.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { CHECKPOINT_ID_KEY, JOB_ID_KEY } from '../../src/iceberg/checkpoint/index.js';
import type { RunResult } from '../../src/pipeline/runner.js';
import { openTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';
import { catchUp, startPipeline, untilNotified } from '../support/pipeline-run.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'rest-run';
const TOKEN = 'rest-e2e-token';
const TABLES = ['orders', 'visits'];

let db: string;
let conn: mysql.Connection;
let dir: string;
let backend: FileSystemCatalog;
let server: RestCatalogServer;
let rest: RestCatalog;
let config: FloeConfig;

beforeAll(async () => {
  ({ db, conn } = await openTestDatabase('e2e_rest'));
  await conn.query(`CREATE TABLE orders (id BIGINT UNSIGNED PRIMARY KEY, customer VARCHAR(40) NOT NULL, amount DECIMAL(12,2), placed DATETIME(6) NOT NULL, paid TIMESTAMP(6) NULL)`);
  await conn.query(
    `INSERT INTO orders VALUES ${Array.from({ length: 400 }, (_, i) => `(${i === 0 ? '18446744073709551615' : i}, 'c${i % 13}', ${i}.${i % 100}, '2026-03-0${1 + (i % 5)} 10:00:00.${String(i).padStart(6, '0')}', ${i % 4 === 0 ? 'NULL' : `'2026-03-10 00:00:0${i % 10}.25'`})`).join(', ')}`,
  );
  // No primary key: append mode with whole-row equality deletes.
  await conn.query(`CREATE TABLE visits (page VARCHAR(20) NOT NULL, n INT NOT NULL)`);
  await conn.query(`INSERT INTO visits VALUES ${Array.from({ length: 150 }, (_, i) => `('p${i % 9}', ${i})`).join(', ')}`);

  dir = await mkdtemp(join(tmpdir(), 'floe-e2e-rest-'));
  backend = new FileSystemCatalog({ warehouse: join(dir, 'served-warehouse') });
  server = new RestCatalogServer({ catalog: backend, warehouse: backend.warehouse, token: TOKEN });
  const uri = await server.listen(0);
  rest = new RestCatalog({ uri, token: TOKEN });
  config = parseConfig({
    job: { id: JOB },
    source: { ...sharedMysqlConfig(), serverId: 50_000 + (process.pid % 5000) * 8, include: [`${db}.*`], snapshot: { chunkSize: 64, parallelism: 2 } },
    // Not used with a REST catalog: the server places the tables. The test checks it stays untouched.
    warehouse: { location: join(dir, 'config-warehouse') },
    catalog: { type: 'rest', uri, token: TOKEN },
    tables: { overrides: { [`${db}.orders`]: { partitionBy: ['day(placed)'] } } },
    commit: { intervalMs: 300, idleCheckpoints: 2 },
  });
});

afterAll(async () => {
  await conn?.end();
  await rest?.close();
  await server?.close();
  await backend?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function catchUpAndCompare(result: Promise<RunResult>): Promise<void> {
  await catchUp({ result }, { catalog: rest, job: JOB, db, tables: TABLES });
  for (const t of TABLES) {
    const lake = await lakeTableRows(rest, { namespace: [db], name: t });
    const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, db, t, lake.columns);
    expect({ table: t, ...multisetDifference(expected, lake.rows) }).toEqual({ table: t, missing: [], unexpected: [] });
    expect(lake.rows.length).toBe(expected.length);
  }
}

describe('floe run with catalog.type rest (→ floe catalog serve → filesystem catalog)', () => {
  it('snapshots, streams, stops, resumes from the offsets committed through REST, and the lake equals MySQL', async () => {
    const first = startPipeline(config);
    await untilNotified(first, (n) => n.type === 'streaming-started');
    await conn.query(`UPDATE orders SET amount = amount + 1, paid = NULL WHERE id % 7 = 0`);
    // Same key, another partition (day(placed)): the global equality delete must reach the old row.
    await conn.query(`UPDATE orders SET placed = '2026-04-01 08:00:00.000001' WHERE id % 11 = 1`);
    await conn.query(`UPDATE orders SET id = 100000 WHERE id = 5`);
    await conn.query(`DELETE FROM orders WHERE id % 13 = 0`);
    // Inserted and changed again within one checkpoint: a deletion vector on a file of that checkpoint.
    await conn.beginTransaction();
    await conn.query(`INSERT INTO orders VALUES (9007199254740993, 'beyond 2^53', 0.01, '1999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999999')`);
    await conn.query(`UPDATE orders SET customer = 'changed' WHERE id = 9007199254740993`);
    await conn.commit();
    await conn.query(`DELETE FROM visits WHERE n % 10 = 0`);
    await conn.query(`INSERT INTO visits VALUES ('p1', 1000), ('p1', 1000)`);
    await catchUpAndCompare(first.result);
    expect((await first.stop()).reason).toBe('stopped');

    // While stopped, and after the restart: the second run resumes from the committed offsets.
    await conn.query(`UPDATE orders SET customer = 'while stopped' WHERE id < 20`);
    const second = startPipeline(config);
    await untilNotified(second, (n) => n.type === 'streaming-started');
    await conn.query(`DELETE FROM orders WHERE id BETWEEN 20 AND 40`);
    await conn.query(`UPDATE visits SET n = -n WHERE page = 'p2'`);
    await catchUpAndCompare(second.result);
    expect((await second.stop()).reason).toBe('stopped');
    // The restart did not snapshot again.
    expect(second.sink.received.filter((n) => n.type === 'snapshot-started')).toEqual([]);

    for (const t of TABLES) {
      const table = await loadCatalogTable(rest, { namespace: [db], name: t });
      const ids = table.metadata.snapshots.filter((s) => s.summary[JOB_ID_KEY] === JOB).map((s) => s.summary[CHECKPOINT_ID_KEY]);
      expect(ids.length).toBeGreaterThan(1);
      expect(new Set(ids).size, `checkpoint ids of ${t}: ${ids.join(',')}`).toBe(ids.length);
      // The tables live where the server put them (under the served warehouse), in format v3.
      expect(table.metadata.location.startsWith(`file://${join(dir, 'served-warehouse')}`) || table.metadata.location.startsWith(join(dir, 'served-warehouse'))).toBe(true);
      expect(table.metadata.formatVersion).toBe(3);
    }
    const orders = await loadCatalogTable(rest, { namespace: [db], name: 'orders' });
    expect(orders.metadata.partitionSpecs.some((s) => s.fields.length === 0), 'the unpartitioned spec for global deletes').toBe(true);
    expect(existsSync(join(dir, 'config-warehouse')), 'nothing written under warehouse.location').toBe(false);
  });
});
