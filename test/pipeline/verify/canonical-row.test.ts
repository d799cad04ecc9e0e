/**
 * The two sides of verification's row checksum agree: for every row of a table with every type floe
 * maps, at its edges (test/e2e/support/all-types.ts), the canonical text the server computes in SQL
 * (source/mysql/verify/canonical-sql.ts) is the text the lake side computes from the values floe
 * writes (canonical-row.ts) — plain, and with every column hashed and masked as the pipeline's
 * transforms do it — and the chunk checksum (count, sum of 64-bit row hashes) agrees. Doubles and
 * floats are held to the server's own text over thousands of values: random bit patterns, random
 * decimal texts, and the extremes (server-float-text.ts). Runs against MariaDB and MySQL 8.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { parsePrimitive } from '../../../src/iceberg/spec/types.js';
import { ChunkSum, columnPart, RowHasher } from '../../../src/pipeline/verify/canonical-row.js';
import { calibrateFloatText, FLOAT_PROBES, type FloatTextStyle } from '../../../src/pipeline/verify/server-float-text.js';
import { valueTransformer, type ColumnTransform } from '../../../src/pipeline/transforms.js';
import { connectMysql, type MysqlClient } from '../../../src/source/mysql/client.js';
import { detectDialect, type ServerDialect } from '../../../src/source/mysql/dialect.js';
import { chunkSql } from '../../../src/source/mysql/snapshot/chunk.js';
import { doubleLiteral } from '../../../src/source/mysql/snapshot/key-sql.js';
import { createSnapshotRowConverter } from '../../../src/source/mysql/snapshot/snapshot-values.js';
import { captureTableSchema } from '../../../src/source/mysql/schema/table-schema.js';
import { mapTable, type MappedTable } from '../../../src/source/mysql/schema/type-mapping.js';
import { canonicalRowSql, transformComputable, type CanonicalColumn } from '../../../src/source/mysql/verify/canonical-sql.js';
import { readChunkChecksum } from '../../../src/source/mysql/verify/chunk-reads.js';
import { serverFloatTexts } from '../../../src/source/mysql/verify/float-text.js';
import { readServerIdentity } from '../../../src/source/mysql/snapshot/watermark.js';
import type { Row, Value } from '../../../src/model/values.js';
import { openTestDatabase } from '../../support/shared-mysql.js';
import { sourceConfig } from '../../source/mysql/binlog/helpers.js';
import { ALL_TYPES_COLUMNS, ALL_TYPES_DDL, ALL_TYPES_SESSION, ALL_TYPES_VALUES } from '../../e2e/support/all-types.js';

let db: string;
let conn: mysql.Connection;
let client: MysqlClient;
let dialect: ServerDialect;
let style: FloatTextStyle;

beforeAll(async () => {
  ({ db, conn } = await openTestDatabase('verify_canonical'));
  for (const s of ALL_TYPES_SESSION) await conn.query(s);
  await conn.query(ALL_TYPES_DDL('all_types'));
  await conn.query(`INSERT INTO all_types (${ALL_TYPES_COLUMNS}) VALUES ${ALL_TYPES_VALUES.map((v, i) => `(${i + 1}, ${v})`).join(', ')}`);
  client = await connectMysql({ ...sourceConfig(), database: db });
  dialect = await detectDialect(client);
  style = calibrateFloatText(await serverFloatTexts(client, FLOAT_PROBES))!;
});

afterAll(async () => {
  await client?.close();
  await conn?.end();
});

async function mapped(table: string): Promise<MappedTable> {
  return mapTable(await captureTableSchema(client, { database: db, table }, dialect.flavor), { timeAsMicros: [`${db}.all_types.dur`] });
}

/** [server text, lake-side text] of every row, over `columns` (transformed per `transform`). */
async function bothSides(m: MappedTable, transform?: (c: CanonicalColumn['column']) => ColumnTransform | undefined): Promise<[string, string][]> {
  const columns: CanonicalColumn[] = m.columns.map((column) => {
    const t = transform?.(column);
    return t && t.kind !== 'drop' ? { column, transform: t } : { column };
  }).filter((c) => transformComputable(c) && !(c.transform && (c.column.kind === 'float' || c.column.kind === 'double')));
  const id = { database: db, table: m.schema.id.table };
  const { rows: server } = await client.queryArrays(`SELECT ${canonicalRowSql(columns)} FROM \`${db}\`.\`${id.table}\` ORDER BY 1`);
  const convert = createSnapshotRowConverter(m);
  const { rows: raw } = await client.queryArrays(chunkSql(m, { table: id, index: 0, keyColumns: [] }, dialect.flavor));
  const transformers = columns.map((c) => (c.transform ? valueTransformer(c.transform, parsePrimitive(c.column.icebergType)) : (v: Value) => v));
  const indexes = columns.map((c) => m.columns.indexOf(c.column));
  const hasher = new RowHasher(columns.map((_, i) => i), columns.map((c) => columnPart(c.column, c.transform !== undefined, style)));
  const lake = raw.map((r) => {
    const row = convert(r);
    return hasher.text(indexes.map((i, k) => (row[i] === null ? null : transformers[k]!(row[i]!))) as Row);
  });
  const serverTexts = server.map((r) => Buffer.from(r[0] as Uint8Array).toString('utf8')).sort();
  return serverTexts.map((s, i) => [s, [...lake].sort()[i]!]);
}

describe('canonical row text', () => {
  it('is the same on the server and from the values floe writes, for every type at its edges', async () => {
    const pairs = await bothSides(await mapped('all_types'));
    expect(pairs.length).toBe(ALL_TYPES_VALUES.length);
    for (const [server, lake] of pairs) expect(lake).toBe(server);
  });

  it('is the same for hashed and masked columns of every type', async () => {
    const m = await mapped('all_types');
    for (const t of [{ kind: 'hash', salt: 'päpper' } as const, { kind: 'mask', keepLast: 3 } as const]) {
      const pairs = await bothSides(m, (c) => (c.column.name === 'id' ? undefined : t));
      for (const [server, lake] of pairs) expect(lake).toBe(server);
    }
  });

  it("holds doubles and floats to the server's own text", async () => {
    await conn.query('CREATE TABLE floats (id INT PRIMARY KEY, d DOUBLE, f FLOAT)');
    let seed = 20240229;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const bits = new DataView(new ArrayBuffer(8));
    const values: number[] = [...FLOAT_PROBES, Number.MIN_VALUE, -Number.MAX_VALUE, 2 ** 53 + 2, 1 / 3, -2 / 3];
    while (values.length < 3000) {
      bits.setUint32(0, Math.floor(random() * 2 ** 32));
      bits.setUint32(4, Math.floor(random() * 2 ** 32));
      const v = bits.getFloat64(0);
      if (Number.isFinite(v)) values.push(v);
      const digits = Array.from({ length: 1 + Math.floor(random() * 17) }, () => Math.floor(random() * 10)).join('');
      values.push(Number(`${random() < 0.5 ? '-' : ''}0.${digits}e${Math.floor(random() * 80) - 40}`));
    }
    const floatLiteral = (v: number) => (Number.isFinite(Math.fround(v)) ? doubleLiteral(Math.fround(v)) : 'NULL');
    for (let i = 0; i < values.length; i += 500) {
      await conn.query(`INSERT INTO floats VALUES ${values.slice(i, i + 500).map((v, j) => `(${i + j}, ${doubleLiteral(v)}, ${floatLiteral(v)})`).join(', ')}`);
    }
    // the values as stored (not as read back: on MySQL 8 the server's 22-character text of a few
    // doubles has 15 or 16 digits only, which the snapshot path then reads as another double)
    const m = await mapped('floats');
    const [d, f] = [m.columns[1]!, m.columns[2]!].map((c) => columnPart(c, false, style).write);
    const { rows } = await client.queryArrays(`SELECT id, ${canonicalRowSql([{ column: m.columns[1]! }, { column: m.columns[2]! }])} FROM floats`);
    const wrong = rows
      .map((r) => [Number(r[0]), Buffer.from(r[1] as Uint8Array).toString('utf8')] as const)
      .filter(([id, server]) => {
        const v = values[id]!;
        const fv = Math.fround(v);
        return `${d!(v)}#${Number.isFinite(fv) ? f!(fv) : 'N'}` !== server;
      });
    expect(rows.length).toBe(values.length);
    expect(wrong.slice(0, 5)).toEqual([]);
  });

  it("keeps NULL, '' and 'N' apart, and a '#' in a text from moving a boundary", async () => {
    await conn.query('CREATE TABLE texts (id INT PRIMARY KEY, a VARCHAR(5), b VARCHAR(5) CHARACTER SET latin1, n INT)');
    await conn.query("INSERT INTO texts VALUES (1, NULL, 'N', NULL), (2, '', NULL, 0), (3, 'N', '', NULL), (4, NULL, NULL, NULL), (5, 'N#', '', 1), (6, 'N', '#', 1)");
    const pairs = await bothSides(await mapped('texts'));
    for (const [server, lake] of pairs) expect(lake).toBe(server);
    expect(new Set(pairs.map(([server]) => server.slice(server.indexOf('#')))).size).toBe(6);
  });

  it('sums to the same chunk checksum on both sides', async () => {
    const m = await mapped('all_types');
    const columns = m.columns.map((column) => ({ column }));
    const server = await readChunkChecksum(client, { dialect, identity: await readServerIdentity(client, dialect.flavor) }, m, { table: m.schema.id, index: 0, keyColumns: [] }, columns);
    const convert = createSnapshotRowConverter(m);
    const hasher = new RowHasher(m.columns.map((_, i) => i), m.columns.map((c) => columnPart(c, false, style)));
    const sum = new ChunkSum();
    for (const raw of (await client.queryArrays(chunkSql(m, { table: m.schema.id, index: 0, keyColumns: [] }, dialect.flavor))).rows) sum.add(...hasher.hash(convert(raw)));
    expect(sum.total()).toEqual({ rows: server.rows, sum: server.sum });
    expect(server.rows).toBe(BigInt(ALL_TYPES_VALUES.length));
  });
});
