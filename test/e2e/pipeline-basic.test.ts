/**
 * The pipeline end to end, in process, on the harness server (MariaDB; MySQL 8 in the mysql8 project)
 * and a local warehouse with the filesystem catalog: snapshot + streaming of tables with a composite key (partitioned by day), a
 * BIGINT UNSIGNED key near 2^64, every supported type, a table without primary key, and a table
 * with column transforms (hashed primary key, hashed / masked / dropped columns). After live changes
 * of every kind, the lake equals MySQL row for row; a restart streams on without a second snapshot;
 * no checkpoint id repeats in any table's history.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { parseConfig } from '../../src/config/load.js';
import type { FloeConfig } from '../../src/config/schema.js';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { CHECKPOINT_ID_KEY, JOB_ID_KEY } from '../../src/iceberg/checkpoint/index.js';
import { formatDate } from '../../src/model/values.js';
import { openTestDatabase, sharedMysqlConfig, sharedSource } from '../support/shared-mysql.js';
import { ALL_TYPES_COLUMNS, ALL_TYPES_DDL, ALL_TYPES_SESSION, ALL_TYPES_VALUES } from './support/all-types.js';
import { catchUp, startPipeline, untilStreaming } from '../support/pipeline-run.js';
import { lakeTableRows, multisetDifference, mysqlTableRows, type ExpectedTransform } from './support/lake-compare.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'basic-e2e';
const TABLES = ['orders', 'big', 'all_types', 'logs', 'people'];
const SALT = 'pepper';
const TRANSFORMS: Record<string, ExpectedTransform> = {
  login: { kind: 'hash', salt: SALT, text: (v) => String(v) },
  email: { kind: 'hash', salt: SALT, text: (v) => String(v) },
  born: { kind: 'mask', keepLast: 2, text: (v) => formatDate(v as number) },
  phone: { kind: 'mask', keepLast: 4, text: (v) => String(v) },
};

let db: string;
let conn: mysql.Connection;
let warehouse: string;
let config: FloeConfig;
let catalog: FileSystemCatalog;

function exec(statement: string): Promise<unknown> {
  return conn.query(statement);
}

beforeAll(async () => {
  ({ db, conn } = await openTestDatabase('e2e_basic'));
  for (const s of ALL_TYPES_SESSION) await conn.query(s);
  await exec(`CREATE TABLE orders (region CHAR(2) NOT NULL, id INT NOT NULL, amount DECIMAL(12,2) NOT NULL DEFAULT 0.00, note VARCHAR(40), created DATETIME(6) NOT NULL, PRIMARY KEY (region, id))`);
  await exec(`CREATE TABLE big (id BIGINT UNSIGNED PRIMARY KEY, v VARCHAR(30) NOT NULL DEFAULT 'none')`);
  await exec(ALL_TYPES_DDL('all_types'));
  await exec(`CREATE TABLE logs (msg VARCHAR(60) NOT NULL, n INT, at DATE)`);
  await exec(`CREATE TABLE people (login VARCHAR(30) PRIMARY KEY, email VARCHAR(80), phone VARCHAR(20), born DATE, ssn CHAR(11), name VARCHAR(40))`);

  const orders = Array.from({ length: 300 }, (_, i) => `('${['eu', 'us', 'kr'][i % 3]}', ${i}, ${(i * 7.25).toFixed(2)}, 'n${i}', '2024-0${1 + (i % 9)}-1${i % 10} 1${i % 10}:00:00.${String(i).padStart(6, '0')}')`);
  await exec(`INSERT INTO orders VALUES ${orders.join(', ')}`);
  const top = 18446744073709551615n;
  const big = Array.from({ length: 200 }, (_, i) => `(${i < 100 ? BigInt(i) : top - BigInt(i)}, 'v${i}')`);
  await exec(`INSERT INTO big VALUES ${big.join(', ')}`);
  await exec(`INSERT INTO all_types (${ALL_TYPES_COLUMNS}) VALUES ${ALL_TYPES_VALUES.map((v, i) => `(${i + 1}, ${v})`).join(', ')}`);
  await exec(`INSERT INTO logs VALUES ${Array.from({ length: 50 }, (_, i) => `('line ${i}', ${i % 7}, '2024-05-${String(1 + (i % 28)).padStart(2, '0')}')`).join(', ')}`);
  await exec(`INSERT INTO people VALUES ${Array.from({ length: 20 }, (_, i) => `('user${i}', 'u${i}@example.com', '+82-10-0000-${String(i).padStart(4, '0')}', '1990-01-${String(1 + i).padStart(2, '0')}', '123-45-${String(i).padStart(4, '0')}', 'Name ${i}')`).join(', ')}`);

  warehouse = await mkdtemp(join(tmpdir(), 'floe-e2e-basic-'));
  config = parseConfig({
    job: { id: JOB },
    source: sharedSource(20_000, db, TABLES, { snapshot: { chunkSize: 40, parallelism: 2 }, timeAsMicros: [`${db}.all_types.dur`] }),
    warehouse: { location: warehouse },
    tables: { overrides: { [`${db}.orders`]: { partitionBy: ['day(created)'], properties: { 'write.parquet.compression-codec': 'zstd' } } } },
    commit: { intervalMs: 300, idleCheckpoints: 2 },
    transforms: [
      { column: `${db}.people.login`, type: 'hash', salt: SALT },
      { column: `${db}.people.email`, type: 'hash', salt: SALT },
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

async function expectLakeEqualsMysql(): Promise<void> {
  for (const t of TABLES) {
    const lake = await lakeTableRows(catalog, { namespace: [db], name: t });
    const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, db, t, lake.columns, {
      typeMapping: { timeAsMicros: [`${db}.all_types.dur`] },
      transforms: t === 'people' ? TRANSFORMS : undefined,
    });
    const diff = multisetDifference(expected, lake.rows);
    expect({ table: t, ...diff, count: lake.rows.length }).toEqual({ table: t, missing: [], unexpected: [], count: expected.length });
  }
}

async function checkpointHistory(table: string): Promise<bigint[]> {
  const t = await loadCatalogTable(catalog, { namespace: [db], name: table });
  return t.metadata.snapshots.filter((s) => s.summary[JOB_ID_KEY] === JOB).map((s) => BigInt(s.summary[CHECKPOINT_ID_KEY]!));
}

async function applyChanges(round: number): Promise<void> {
  const r = round * 1000;
  await exec(`INSERT INTO orders VALUES ('eu', ${r + 5000}, 1.00, 'new', '2024-12-31 23:59:59.999999'), ('us', ${r + 5001}, 2.00, NULL, '2025-01-01 00:00:00')`);
  await exec(`UPDATE orders SET amount = amount + 1, note = 'upd' WHERE id % 10 = ${round % 10} AND id < 300`);
  await exec(`UPDATE orders SET id = id + 100000 WHERE region = 'kr' AND id = ${2 + round * 3}`); // key change
  await exec(`UPDATE orders SET created = '2030-06-0${1 + round} 00:00:00' WHERE region = 'us' AND id = ${1 + round * 3}`); // partition move
  await exec(`DELETE FROM orders WHERE region = 'eu' AND id IN (${round * 3}, ${30 + round * 3})`);
  await conn.beginTransaction();
  await exec(`INSERT INTO big VALUES (${18446744073709551615n - BigInt(1000 + round)}, 'tx')`);
  await exec(`UPDATE big SET v = 'top' WHERE id = 18446744073709551615`);
  await exec(`DELETE FROM big WHERE id = ${round}`);
  await conn.commit();
  await exec(`UPDATE all_types SET vc = 'changed ${round}', dur = '-12:00:00.5', ts6 = '2001-02-03 04:05:06.7' WHERE id = 5`);
  await exec(`INSERT INTO all_types (${ALL_TYPES_COLUMNS}) SELECT id + ${100 + r}, ti, tiu, b1, si, siu, mi, miu, i, iu, bi, biu, f, d, dec1, dec65, dec0, bit1, bit12, bit64, dt, dtm, dtm6, ts, ts6, tm, tm3, dur, y, c, vc, vcbin, txt, latin, bn, vb, bl, e, s, j FROM all_types WHERE id <= 5`);
  await exec(`DELETE FROM all_types WHERE id = ${3 + round}`);
  await exec(`INSERT INTO logs VALUES ('late ${round}', NULL, NULL), ('late ${round}', 1, '2024-01-01')`);
  await exec(`UPDATE logs SET n = 100 + ${round} WHERE msg = 'line ${10 + round}' LIMIT 1`);
  await exec(`DELETE FROM logs WHERE msg = 'line ${20 + round}'`);
  await exec(`UPDATE people SET email = 'changed${round}@example.com', phone = NULL WHERE login = 'user${round}'`);
  await exec(`DELETE FROM people WHERE login = 'user${10 + round}'`);
  await exec(`INSERT INTO people VALUES ('new${round}', 'n@example.com', '555-1234', '2000-02-29', '000-00-0000', 'New')`);
}

describe('pipeline end to end (in process)', () => {
  it('snapshots, streams every kind of change, and restarts without a second snapshot', async () => {
    const first = startPipeline(config);
    await untilStreaming(first);
    await applyChanges(0);
    await catchUp(first, { catalog, job: JOB, db, tables: TABLES });
    expect((await first.stop()).reason).toBe('stopped');
    await expectLakeEqualsMysql();

    const kinds = first.sink.received.map((n) => n.type);
    expect(kinds.indexOf('snapshot-started')).toBeLessThan(kinds.indexOf('snapshot-finished'));
    expect(kinds.indexOf('snapshot-finished')).toBeLessThan(kinds.indexOf('streaming-started'));
    const finished = first.sink.received.filter((n) => n.type === 'table-snapshot-finished');
    expect(new Set(finished.map((n) => (n as { table: string }).table))).toEqual(new Set(TABLES.map((t) => `${db}.${t}`)));
    expect(finished.find((n) => (n as { table: string }).table === `${db}.orders`)).toMatchObject({ rows: 300 });

    // The Iceberg schema: key, required-ness, v3 write-defaults, transformed and dropped columns.
    const orders = await loadCatalogTable(catalog, { namespace: [db], name: 'orders' });
    const ordersSchema = orders.metadata.schemas.find((s) => s.schemaId === orders.metadata.currentSchemaId)!;
    expect(ordersSchema.identifierFieldIds.map((id) => ordersSchema.findField(id)!.name)).toEqual(['region', 'id']);
    expect(ordersSchema.fields.map((f) => [f.id, f.name, f.required])).toEqual([
      [1, 'region', true],
      [2, 'id', true],
      [3, 'amount', true],
      [4, 'note', false],
      [5, 'created', false], // a zero DATETIME reads as null
    ]);
    expect(ordersSchema.findFieldByName('amount')!.writeDefault).toBe('0.00');
    expect(orders.metadata.properties['write.parquet.compression-codec']).toBe('zstd');
    expect(orders.metadata.partitionSpecs.some((s) => s.fields.length === 0)).toBe(true); // global equality deletes
    const people = await loadCatalogTable(catalog, { namespace: [db], name: 'people' });
    const peopleSchema = people.metadata.schemas.find((s) => s.schemaId === people.metadata.currentSchemaId)!;
    expect(peopleSchema.fields.map((f) => `${f.name}:${JSON.stringify(f.type)}`)).toEqual([
      'login:{"kind":"string"}',
      'email:{"kind":"string"}',
      'phone:{"kind":"string"}',
      'born:{"kind":"string"}',
      'name:{"kind":"string"}',
    ]);
    expect(peopleSchema.identifierFieldIds).toEqual([1]);

    // Restart: streaming continues from the committed offsets; no chunk is read again.
    const second = startPipeline(config);
    await untilStreaming(second);
    await applyChanges(1);
    await catchUp(second, { catalog, job: JOB, db, tables: TABLES });
    expect((await second.stop()).reason).toBe('stopped');
    expect(second.sink.received.map((n) => n.type)).not.toContain('snapshot-started');
    await expectLakeEqualsMysql();

    for (const t of TABLES) {
      const ids = await checkpointHistory(t);
      expect(new Set(ids).size, `checkpoint ids of ${t}: ${ids.join(',')}`).toBe(ids.length);
    }
  });

});
