/**
 * DOUBLE and FLOAT values reach the value model bit for bit through both paths: the snapshot (the
 * chunk reader, `readSnapshot`) and the binlog (`BinlogReader`, whose row events carry the IEEE bytes).
 * Values at every precision — 1 to 17 significant digits for DOUBLE, 1 to 9 for FLOAT, over the whole
 * exponent range — and the extremes (subnormals, the smallest normals, the largest finite values, ±0;
 * MySQL refuses infinities and NaN) are inserted once through prepared-statement parameters (8-byte
 * doubles on the wire, no decimal text involved) and once as literals with 17 significant digits, and
 * every value read is compared with the inserted one by its bytes. DOUBLE(10,2) and FLOAT(7,3) columns,
 * which round what they store, are compared between the two paths.
 *
 * Selected as plain columns, 94.24777960769379 arrived as 94.2477796076938 and 939.3362034233481 as
 * 939.336203423348 (mysql2 parses numeric text of up to 17 characters by accumulating digits in a
 * double, which rounds once the digits exceed 2^53), and a DOUBLE(10,2) holding 0.21999999999999997
 * as 0.22 (the server prints its 2 decimals).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { createTestDatabase } from '../../../support/shared-mysql.js';
import { decodingFor, replicaId, sourceConfig, sql } from '../binlog/helpers.js';
import { connectMysql, type MysqlClient } from '../../../../src/source/mysql/client.js';
import { detectDialect, type ServerDialect } from '../../../../src/source/mysql/dialect.js';
import { captureTableSchema } from '../../../../src/source/mysql/schema/table-schema.js';
import { mapTable, type MappedTable } from '../../../../src/source/mysql/schema/type-mapping.js';
import { createKeyComparator } from '../../../../src/source/mysql/snapshot/key-compare.js';
import { splitTable } from '../../../../src/source/mysql/snapshot/chunk-splitter.js';
import type { Chunk } from '../../../../src/source/mysql/snapshot/chunk.js';
import { readSnapshot } from '../../../../src/source/mysql/snapshot/snapshot-reader.js';
import { BinlogReader } from '../../../../src/source/mysql/binlog/binlog-reader.js';
import { readServerIdentity, readWatermark } from '../../../../src/source/mysql/snapshot/watermark.js';
import type { Row, Value } from '../../../../src/model/values.js';
import { prng } from '../../../../src/util/prng.js';


/** A decimal mantissa of exactly `n` significant digits (first and last digit non-zero). */
function mantissa(rand: () => number, n: number): string {
  let m = String(1 + Math.floor(rand() * 9));
  for (let i = 1; i < n; i++) m += String(i === n - 1 ? 1 + Math.floor(rand() * 9) : Math.floor(rand() * 10));
  return m.length === 1 ? m : `${m[0]}.${m.slice(1)}`;
}

const rand = prng(14);
const sign = () => (rand() < 0.25 ? '-' : '');

const doubles: number[] = [];
for (let n = 1; n <= 17; n++) {
  for (const e of [-323, -320, -310, -308, -307, -300, -200, -100, -30, -16, -10, -5, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 10, 15, 16, 17, 20, 21, 22, 50, 100, 200, 300, 307, 308]) {
    for (let k = 0; k < 2; k++) {
      const x = Number(`${sign()}${mantissa(rand, n)}e${e}`);
      if (Number.isFinite(x) && x !== 0) doubles.push(x);
    }
  }
}
// 15 to 17 digits in plain notation, where mysql2's own parse failed (at most 17 characters, digits above 2^53)
for (let n = 15; n <= 17; n++) for (let k = 0; k < 60; k++) doubles.push(Number((rand() * 10 ** Math.floor(rand() * 8 - 2)).toPrecision(n)));
doubles.push(
  94.24777960769379, 939.3362034233481, 992569.2903408235, 0.30000000000000004, 0.1, 1 / 3, Math.PI, 2 ** 53, 2 ** 53 + 2, 2 ** 63, 2 ** 64,
  5e-324, -5e-324, 3 * 2 ** -1074, 2.225073858507201e-308, -2.225073858507201e-308, // subnormals: the smallest, the largest
  2.2250738585072014e-308, -2.2250738585072014e-308, 1e-308, -1e-308, // the smallest normal, and 1e-308 (subnormal)
  1e308, -1e308, 1.7976931348623157e308, -1.7976931348623157e308, // the largest finite
  0, -0,
);

const floats: number[] = [];
for (let n = 1; n <= 9; n++) {
  for (const e of [-45, -44, -42, -40, -39, -38, -37, -30, -10, -5, -2, -1, 0, 1, 2, 3, 5, 7, 8, 10, 20, 30, 37, 38]) {
    for (let k = 0; k < 2; k++) {
      const x = Math.fround(Number(`${sign()}${mantissa(rand, n)}e${e}`));
      if (Number.isFinite(x) && x !== 0) floats.push(x);
    }
  }
}
floats.push(
  3.140625, Math.fround(3.1415927), Math.fround(0.1), Math.fround(1 / 3), 16777216, 16777218, Math.fround(16777217 * 3),
  2 ** -149, -(2 ** -149), 2 ** -126 - 2 ** -149, -(2 ** -126 - 2 ** -149), // float32 subnormals: the smallest, the largest
  2 ** -126, -(2 ** -126), Math.fround(1.17549435e-38), // the smallest normal float32
  Math.fround(3.4028235e38), Math.fround(-3.4028235e38), // the largest finite float32
  0, -0,
);

const N = Math.max(doubles.length, floats.length);
type Column = 'd' | 'f' | 'dm' | 'fm';
/**
 * Row id → the inserted values: ids 1..N through parameters, N+1..2N through literals. `dm` DOUBLE(10,2)
 * and `fm` FLOAT(7,3) get values with more decimals than they keep: the server rounds them when storing
 * (0.22 can become 0.21999999999999997), so for those only the binlog says what is stored.
 */
const inserted = new Map<number, Record<Column, number | null>>();
for (let i = 0; i < N; i++) {
  const values = { d: doubles[i] ?? null, f: floats[i] ?? null, dm: Number(((rand() - 0.5) * 10 ** (1 + Math.floor(rand() * 7))).toFixed(5)), fm: Number(((rand() - 0.5) * 10 ** Math.floor(rand() * 4)).toFixed(5)) };
  inserted.set(i + 1, values);
  inserted.set(N + i + 1, values);
}
const COLUMNS: Column[] = ['d', 'f', 'dm', 'fm'];

/** A double literal with 17 significant digits (a FLOAT column receives the float32's exact double). */
function literal(x: number | null): string {
  if (x === null) return 'NULL';
  if (Object.is(x, -0)) return '-0e0';
  return x.toExponential(16);
}

/** The IEEE bytes of a number (big-endian hex), or the value itself when it is not a number. */
function bits(v: Value | undefined): string {
  if (typeof v !== 'number') return String(v);
  const b = Buffer.alloc(8);
  b.writeDoubleBE(v);
  return b.toString('hex');
}

let db: string;
let conn: mysql.Connection;
let client: MysqlClient;
let dialect: ServerDialect;
let table: MappedTable;
const binlogRows = new Map<number, Row>();
const snapshotRows = new Map<number, Row>();

beforeAll(async () => {
  db = await createTestDatabase('floats');
  conn = await sql();
  client = await connectMysql(sourceConfig());
  dialect = await detectDialect(client);
  await conn.query(`CREATE TABLE \`${db}\`.t (id INT PRIMARY KEY, d DOUBLE NULL, f FLOAT NULL, dm DOUBLE(10,2) NULL, fm FLOAT(7,3) NULL)`);
  const id = { database: db, table: 't' };
  table = mapTable(await captureTableSchema(client, id, dialect.flavor));
  const decoding = await decodingFor([id]);
  const identity = await readServerIdentity(client, dialect.flavor);

  const low = await readWatermark(client, dialect, identity);
  const ids = [...inserted.keys()];
  for (let i = 0; i < ids.length; i += 200) {
    const batch = ids.slice(i, i + 200);
    const params = batch.filter((k) => k <= N);
    if (params.length > 0) {
      // mysql2 sends a JS number parameter as an 8-byte MYSQL_TYPE_DOUBLE: no decimal text involved
      await conn.execute(`INSERT INTO \`${db}\`.t VALUES ${params.map(() => '(?, ?, ?, ?, ?)').join(', ')}`, params.flatMap((k) => [k, ...COLUMNS.map((c) => inserted.get(k)![c])]));
    }
    const literals = batch.filter((k) => k > N);
    if (literals.length > 0) {
      await conn.query(`INSERT INTO \`${db}\`.t VALUES ${literals.map((k) => `(${k}, ${COLUMNS.map((c) => literal(inserted.get(k)![c])).join(', ')})`).join(', ')}`);
    }
  }
  const high = await readWatermark(client, dialect, identity);

  const reader = new BinlogReader({ connection: sourceConfig(), serverId: replicaId(), start: { kind: 'offset', offset: low }, stopAt: high, tables: [id], ddlDatabases: [], decoding, dialect, progressIntervalMs: 60_000 });
  for await (const e of reader) {
    if (e.kind !== 'transaction') continue;
    for (const c of e.changes) if (c.after) binlogRows.set(c.after[0] as number, c.after);
  }

  const chunks: Chunk[] = [];
  for await (const c of splitTable(client, table, dialect.flavor, { chunkSize: 500 })) chunks.push(c);
  for await (const r of readSnapshot({
    connection: sourceConfig(),
    dialect,
    identity,
    tables: [{ table, chunks, comparator: createKeyComparator([table.columns[0]]) }],
    parallelism: 2,
    backfill: false,
    decoding,
    serverIdBase: replicaId() + 100,
  })) {
    for (const row of r.rows) snapshotRows.set(row[0] as number, row);
  }
});

afterAll(async () => {
  await conn?.query(`DROP DATABASE IF EXISTS \`${db}\``);
  await conn?.end();
  await client?.close();
});

/** The differences between what a path read and the expected values, one line each. */
function differences(rows: Map<number, Row>, columns: readonly Column[], expected: (id: number, column: Column) => Value | 'either zero'): string[] {
  const out: string[] = [];
  for (const id of inserted.keys()) {
    const row = rows.get(id);
    if (!row) {
      out.push(`row ${id}: missing`);
      continue;
    }
    columns.forEach((column) => {
      const want = expected(id, column);
      const got = row[COLUMNS.indexOf(column) + 1];
      if (want === 'either zero' ? got === 0 : bits(got) === bits(want)) return;
      out.push(`row ${id} ${column}: expected ${String(want)} (${bits(want === 'either zero' ? 0 : want)}), read ${String(got)} (${bits(got)})`);
    });
  }
  return out;
}

describe('DOUBLE and FLOAT through the snapshot and the binlog', () => {
  it(`inserts ${doubles.length} doubles (1–17 significant digits) and ${floats.length} floats (1–9) twice`, () => {
    expect(doubles.length).toBeGreaterThan(1000);
    expect(floats.length).toBeGreaterThan(300);
    expect(inserted.size).toBe(2 * N);
    // every precision is there: values whose shortest round-trip text has 1, 2, … 17 (9) digits
    const shortest = (x: number, round: (y: number) => number) => [...Array(17).keys()].map((p) => p + 1).find((p) => x === 0 || round(Number(x.toPrecision(p))) === x);
    const doubleDigits = new Set(doubles.map((x) => shortest(x, (y) => y)));
    const floatDigits = new Set(floats.map((x) => shortest(x, Math.fround)));
    expect([...doubleDigits].sort((a, b) => a! - b!)).toEqual([...Array(17).keys()].map((p) => p + 1));
    expect([...floatDigits].sort((a, b) => a! - b!)).toEqual([...Array(9).keys()].map((p) => p + 1));
  });

  it('the binlog carries exactly the inserted values (−0 may be stored as 0)', () => {
    // MariaDB stores −0 as 0 whichever way it arrives; MySQL keeps the sign. Either is the stored value.
    const diffs = differences(binlogRows, ['d', 'f'], (id, column) => {
      const v = inserted.get(id)![column];
      return v !== null && Object.is(v, -0) ? 'either zero' : v;
    });
    expect(diffs.slice(0, 20), `${diffs.length} values differ`).toEqual([]);
  });

  it('the snapshot reads exactly the inserted values', () => {
    const diffs = differences(snapshotRows, ['d', 'f'], (id, column) => {
      const v = inserted.get(id)![column];
      return v !== null && Object.is(v, -0) ? 'either zero' : v;
    });
    expect(diffs.slice(0, 20), `${diffs.length} values differ`).toEqual([]);
  });

  it('both paths give the same bytes for every value, −0 and DOUBLE(M,D) / FLOAT(M,D) included', () => {
    const diffs = differences(snapshotRows, COLUMNS, (id, column) => (binlogRows.has(id) ? binlogRows.get(id)![COLUMNS.indexOf(column) + 1] : 'missing'));
    // the rounded columns do hold values that D decimals do not print exactly
    expect([...binlogRows.values()].some((r) => typeof r[3] === 'number' && Number(r[3].toFixed(2)) !== r[3])).toBe(true);
    expect(diffs.slice(0, 20), `${diffs.length} values differ`).toEqual([]);
  });
});
