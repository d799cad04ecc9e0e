/**
 * Table mapping on tables captured from the harness server: field ids in column order, required =
 * NOT NULL, the primary key as identifier fields, v3 write-defaults from literal defaults (none on
 * v2, with a note), transformed and dropped columns, names from templates and overrides, partition
 * specs and properties; creating the table in a filesystem catalog and refusing a drifted one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { parseConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/pipeline/observe/logger.js';
import { ensureIcebergTable } from '../../src/pipeline/table-mapping-catalog.js';
import { icebergIdentifier, planTableMapping } from '../../src/pipeline/table-mapping.js';
import { compileTransforms } from '../../src/pipeline/transforms.js';
import { connectMysql } from '../../src/source/mysql/client.js';
import { detectDialect } from '../../src/source/mysql/dialect.js';
import { captureTableSchema } from '../../src/source/mysql/schema/table-schema.js';
import { mapTable, type MappedTable } from '../../src/source/mysql/schema/type-mapping.js';
import { parseDate } from '../../src/model/values.js';
import { openTestDatabase } from '../support/shared-mysql.js';
import { sourceConfig } from '../source/mysql/binlog/helpers.js';

let db: string;
let conn: mysql.Connection;
let warehouse: string;

async function mapped(table: string): Promise<MappedTable> {
  const client = await connectMysql(sourceConfig());
  try {
    return mapTable(await captureTableSchema(client, { database: db, table }, (await detectDialect(client)).flavor));
  } finally {
    await client.close();
  }
}

function config(extra: Record<string, unknown> = {}) {
  return parseConfig({ source: { include: [`${db}.*`] }, ...extra });
}

beforeAll(async () => {
  ({ db, conn } = await openTestDatabase('mapping'));
  await conn.query(`CREATE TABLE t (
    b BIGINT UNSIGNED NOT NULL, a VARCHAR(10) NOT NULL, qty INT NOT NULL DEFAULT 5, price DECIMAL(8,3) DEFAULT '2.5',
    created DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, d DATE DEFAULT '2020-02-29', email VARCHAR(50) DEFAULT 'x@y', secret TEXT,
    note VARCHAR(20) COMMENT 'a note', PRIMARY KEY (a, b))`);
  await conn.query(`CREATE TABLE nokey (x INT, y VARCHAR(5))`);
  warehouse = await mkdtemp(join(tmpdir(), 'floe-mapping-'));
});
afterAll(async () => {
  await conn?.end();
  await rm(warehouse, { recursive: true, force: true });
});

describe('table mapping', () => {
  it('maps columns to fields 1..n in column order with key, required-ness, types and v3 defaults', async () => {
    const m = planTableMapping(await mapped('t'), config(), compileTransforms([]));
    expect(m.identifier).toEqual({ namespace: [db], name: 't' });
    expect(m.formatVersion).toBe(3);
    expect(m.keyless).toBe(false);
    expect(m.schema.fields.map((f) => [f.id, f.name, f.required, JSON.stringify(f.type)])).toEqual([
      [1, 'b', true, '{"kind":"decimal","precision":20,"scale":0}'],
      [2, 'a', true, '{"kind":"string"}'],
      [3, 'qty', true, '{"kind":"int"}'],
      [4, 'price', false, '{"kind":"decimal","precision":8,"scale":3}'],
      [5, 'created', false, '{"kind":"timestamp"}'], // zero dates read as null: never required
      [6, 'd', false, '{"kind":"date"}'],
      [7, 'email', false, '{"kind":"string"}'],
      [8, 'secret', false, '{"kind":"string"}'],
      [9, 'note', false, '{"kind":"string"}'],
    ]);
    expect(m.schema.identifierFieldIds).toEqual([2, 1]); // primary key order (a, b)
    expect(m.schema.fields.map((f) => f.writeDefault)).toEqual([undefined, undefined, 5, '2.500', undefined, parseDate('2020-02-29'), 'x@y', undefined, undefined]);
    expect(m.schema.findFieldByName('note')!.doc).toBe('a note');
    expect(m.notes.join('\n')).toMatch(/created: default not carried.*evaluated per row/);
    expect(m.properties).toEqual({ 'write.target-file-size-bytes': String(128 * 1024 * 1024), 'write.metadata.delete-after-commit.enabled': 'true', 'write.metadata.previous-versions-max': '20' });
  });

  it('format v2 carries no defaults and says so; keyless tables have no identifier fields', async () => {
    const v2 = planTableMapping(await mapped('t'), config({ iceberg: { formatVersion: 2 } }), compileTransforms([]));
    expect(v2.schema.fields.every((f) => f.writeDefault === undefined)).toBe(true);
    expect(v2.notes.join('\n')).toMatch(/4 literal column default\(s\) not carried: format v2/);
    // a table's override wins over iceberg.formatVersion, for that table only
    const perTable = config({ tables: { overrides: { [`${db}.t`]: { formatVersion: 2 } } } });
    const overridden = planTableMapping(await mapped('t'), perTable, compileTransforms([]));
    expect(overridden.formatVersion).toBe(2);
    expect(overridden.schema.fields.every((f) => f.writeDefault === undefined)).toBe(true);
    expect(planTableMapping(await mapped('nokey'), perTable, compileTransforms([])).formatVersion).toBe(3);
    const nokey = planTableMapping(await mapped('nokey'), config(), compileTransforms([]));
    expect(nokey.keyless).toBe(true);
    expect(nokey.schema.identifierFieldIds).toEqual([]);
  });

  it('applies transforms (a hashed key stays the key) and drops columns', async () => {
    const rules = compileTransforms([
      { column: `${db}.t.a`, type: 'hash', salt: 's' },
      { column: `${db}.t.email`, type: 'mask', keepLast: 2 },
      { column: `${db}.t.secret`, type: 'drop' },
    ]);
    const m = planTableMapping(await mapped('t'), config(), rules);
    expect(m.schema.fields.map((f) => f.name)).toEqual(['b', 'a', 'qty', 'price', 'created', 'd', 'email', 'note']);
    expect(m.schema.fields.map((f) => f.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(m.schema.identifierFieldIds).toEqual([2, 1]);
    expect(m.schema.findFieldByName('email')!.writeDefault).toBe('*@y'); // the default is masked too
    expect(m.columns.find((c) => c.name === 'note')!.sourceIndex).toBe(8);
    expect(m.sourceColumnCount).toBe(9);
  });

  it('refuses masking or dropping a key column', async () => {
    const t = await mapped('t');
    expect(() => planTableMapping(t, config(), compileTransforms([{ column: `${db}.t.b`, type: 'mask', keepLast: 1 }]))).toThrow(/part of the primary key and cannot be masked/);
    expect(() => planTableMapping(t, config(), compileTransforms([{ column: `${db}.t.a`, type: 'drop' }]))).toThrow(/cannot be dropped/);
  });

  it('names tables from templates and overrides; partition specs and properties from the config', async () => {
    const c = config({
      tables: { namespace: 'lake.{database}', name: 'src_{table}', overrides: { [`${db}.t`]: { name: 'facts', partitionBy: ['bucket(4, b)', 'day(d)'], properties: { owner: 'ops' } } } },
      iceberg: { properties: { owner: 'data', 'format-version-note': 'x' }, targetFileSizeBytes: 1 << 20 },
    });
    expect(icebergIdentifier({ database: db, table: 'nokey' }, c)).toEqual({ namespace: ['lake', db], name: 'src_nokey' });
    const m = planTableMapping(await mapped('t'), c, compileTransforms([]));
    expect(m.identifier).toEqual({ namespace: ['lake', db], name: 'facts' });
    expect(m.partitionSpec.fields.map((f) => [f.name, f.sourceId])).toEqual([
      ['b_bucket', 1],
      ['d_day', 6],
    ]);
    expect(m.properties).toEqual({ 'write.target-file-size-bytes': String(1 << 20), 'write.metadata.delete-after-commit.enabled': 'true', 'write.metadata.previous-versions-max': '20', owner: 'ops', 'format-version-note': 'x' });
    const bad = config({ tables: { overrides: { [`${db}.t`]: { partitionBy: ['day(nope)'] } } } });
    const t = await mapped('t');
    expect(() => planTableMapping(t, bad, compileTransforms([]))).toThrow(/partitionBy.*nope/);
    // a Parquet codec some engine cannot read is refused before the table is created with it
    const codec = config({ iceberg: { properties: { 'write.parquet.compression-codec': 'brotli' } } });
    expect(() => planTableMapping(t, codec, compileTransforms([]))).toThrow(`table ${db}.t (iceberg.properties and tables.overrides["${db}.t"].properties): property write.parquet.compression-codec is "brotli"; floe writes Parquet with zstd, snappy, gzip or uncompressed`);
    const snappy = config({ tables: { overrides: { [`${db}.t`]: { properties: { 'write.parquet.compression-codec': 'snappy' } } } } });
    expect(planTableMapping(t, snappy, compileTransforms([])).properties['write.parquet.compression-codec']).toBe('snappy');
  });

  it('creates the table (namespace levels, unpartitioned spec for deletes) and refuses a drifted one', async () => {
    const catalog = new FileSystemCatalog({ warehouse });
    const c = config({ tables: { namespace: 'lake.{database}', overrides: { [`${db}.t`]: { partitionBy: ['day(d)'] } } } });
    const m = planTableMapping(await mapped('t'), c, compileTransforms([]));
    const ready = await ensureIcebergTable(catalog, m, silentLogger);
    expect(ready.created).toBe(true);
    expect(await catalog.namespaceExists(['lake'])).toBe(true);
    expect(ready.table.metadata.partitionSpecs.map((s) => s.fields.length).sort()).toEqual([0, 1]);
    const row = [1n, 'k', 5, null, null, null, null, 'secret', 'n'];
    expect(ready.project(row)).toEqual(row);
    const again = await ensureIcebergTable(catalog, m, silentLogger);
    expect(again.created).toBe(false);

    await conn.query(`ALTER TABLE t ADD COLUMN extra INT, MODIFY qty BIGINT NOT NULL`);
    const drifted = planTableMapping(await mapped('t'), c, compileTransforms([]));
    await expect(ensureIcebergTable(catalog, drifted, silentLogger)).rejects.toThrow(/does not match.*qty is int in Iceberg, expected long.*extra is in MySQL but not in the Iceberg table/);

    // A table the job streams into may be behind MySQL by DDL still ahead in the binlog: rows carry
    // the Iceberg columns by name meanwhile (a column MySQL dropped reads null).
    await conn.query(`ALTER TABLE t DROP COLUMN note`);
    const ahead = planTableMapping(await mapped('t'), c, compileTransforms([]));
    const lenient = await ensureIcebergTable(catalog, ahead, silentLogger, { pendingDdlPossible: () => true });
    expect(lenient.project([1n, 'k', 5n, null, null, null, 'e', 'secret', 42])).toEqual([1n, 'k', 5n, null, null, null, 'e', 'secret', null]);
    // …but a required Iceberg column MySQL no longer has can never be written
    await conn.query(`ALTER TABLE t DROP COLUMN qty`);
    const gone = planTableMapping(await mapped('t'), c, compileTransforms([]));
    await expect(ensureIcebergTable(catalog, gone, silentLogger, { pendingDdlPossible: () => true })).rejects.toThrow(/required column qty is in the Iceberg table but not in MySQL/);
  });
});
