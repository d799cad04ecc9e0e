/**
 * Every type round-trips: rows inserted while a raw zongji stream runs are read through the binlog
 * path (zongji + adaptZongjiTableMap + createBinlogRowConverter) and through the snapshot path
 * (chunkSql + createSnapshotRowConverter), and both must give identical value-model rows — with the
 * process in Asia/Seoul and the server's time_zone at +05:30, so neither zone can leak into a value.
 * It runs twice: with binlog_row_metadata=FULL (row events describe their columns) and MINIMAL (zongji
 * reads column metadata from information_schema, the MySQL default) — on a private server of the
 * run's kind (MariaDB, or MySQL 8 in the mysql8 project; test/mysql8-suites.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ZongJi from '@vlasky/zongji';
import { connectMysql, type MysqlClient } from '../../../../src/source/mysql/client.js';
import { detectDialect } from '../../../../src/source/mysql/dialect.js';
import { captureTableSchema } from '../../../../src/source/mysql/schema/table-schema.js';
import { mapTable, type MappedTable } from '../../../../src/source/mysql/schema/type-mapping.js';
import { createSnapshotRowConverter } from '../../../../src/source/mysql/snapshot/snapshot-values.js';
import { BINLOG_CONNECTION_OPTIONS, attachExactValueDecoding, createBinlogRowConverter } from '../../../../src/source/mysql/binlog/zongji/binlog-values.js';
import { chunkSql } from '../../../../src/source/mysql/snapshot/chunk.js';
import { parseTimestamp, parseDate, type Row } from '../../../../src/model/values.js';
import { parseMysqlUrl, type TestServer } from '../../../support/mariadb.js';
import { serverKind, startTestServer } from '../../../support/servers.js';

// Values must not depend on the process zone: run in a non-UTC one even if the runner forgot TZ.
process.env.TZ ??= 'Asia/Seoul';

const DDL = `CREATE TABLE all_types (
  id INT PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, b1 TINYINT(1), si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT, miu MEDIUMINT UNSIGNED,
  i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
  f FLOAT, d DOUBLE, dec1 DECIMAL(10,2), dec65 DECIMAL(65,30), dec0 DECIMAL(20,0),
  bit1 BIT(1), bit12 BIT(12), bit64 BIT(64),
  dt DATE, dtm DATETIME, dtm6 DATETIME(6), ts TIMESTAMP NULL DEFAULT NULL, ts6 TIMESTAMP(6) NULL DEFAULT NULL,
  tm TIME, tm3 TIME(3), dur TIME(6),
  y YEAR,
  c CHAR(10), vc VARCHAR(100), vcbin VARCHAR(50) COLLATE utf8mb4_bin, txt TEXT, latin VARCHAR(20) CHARACTER SET latin1,
  bn BINARY(6), vb VARBINARY(20), bl BLOB,
  e ENUM('a','b,c','d''e','x y'), s SET('p','q''','r'),
  j JSON,
  gv BIGINT AS (i * 2) VIRTUAL, gs VARCHAR(120) AS (CONCAT(vc, '!')) STORED
)`;

const COLUMNS = 'id, ti, tiu, b1, si, siu, mi, miu, i, iu, bi, biu, f, d, dec1, dec65, dec0, bit1, bit12, bit64, dt, dtm, dtm6, ts, ts6, tm, tm3, dur, y, c, vc, vcbin, txt, latin, bn, vb, bl, e, s, j';

const ROWS = [
  // 1: NULL everywhere
  '(1' + ', NULL'.repeat(39) + ')',
  // 2: maximum values
  `(2, 127, 255, 1, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807, 18446744073709551615,
    3.4028235e38, 1.7976931348623157e308, 99999999.99, 99999999999999999999999999999999999.999999999999999999999999999999, 99999999999999999999,
    b'1', b'111111111111', b'${'1'.repeat(64)}',
    '9999-12-31', '9999-12-31 23:59:59', '9999-12-31 23:59:59.999999', '2038-01-19 08:44:07', '2038-01-19 08:44:07.999999',
    '23:59:59', '23:59:59.999', '838:59:59.000000', 2155,
    'abc', _utf8mb4'😀 4-byte ✓ 한글 ü', 'AbC', REPEAT('long text ', 300), 'Ünïcödé €',
    X'000102000000', X'00ff00', X'', 'b,c', 'p,r', '{"b": 1, "a": [1, 2.5, "x"], "10": null}')`,
  // 3: minimum values
  `(3, -128, 0, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0,
    -1.17549435e-38, -2.2250738585072014e-308, -99999999.99, -99999999999999999999999999999999999.999999999999999999999999999999, -99999999999999999999,
    b'0', b'0', b'0',
    '1000-01-01', '1000-01-01 00:00:00', '1000-01-01 00:00:00.000000', '1970-01-01 05:30:01', '1970-01-01 05:30:01.000001',
    '00:00:00', '00:00:00.000', '-838:59:59.000000', 0,
    '', '', '', '', '',
    X'', X'', X'00', 'd''e', '', 'null')`,
  // 4: zero dates, the invalid ENUM value, a negative zero float, fractions
  `(4, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1,
    -0e0, 0.1, 0.5, 0.000000000000000000000000000001, 0,
    b'1', b'101010101010', b'1000000000000000000000000000000000000000000000000000000000000001',
    '0000-00-00', '0000-00-00 00:00:00', '2020-00-15 10:00:00.5', '0000-00-00 00:00:00', '0000-00-00 00:00:00.000000',
    '12:00:00', '00:00:00.001', '-00:00:00.000001', 1901,
    'x', 'tab\\there', 'ß', 'line\\nbreak', 'a',
    X'ff', X'80', X'deadbeef', 'not a label', 'r,zz,p', '[]')`,
  // 5: a non-UTC wall clock for TIMESTAMP and DATETIME (the inserting session runs at +05:30)
  `(5, 0, 0, 1, 0, 0, 0, 0, 21, 0, 0, 9007199254740993,
    3.1415927, 3.0000000000000004e-1, 12.5, 1.5, 12345678901234567890,
    b'0', b'000000000001', b'0',
    '2024-02-29', '2024-02-29 12:34:56', '2024-02-29 12:34:56.123456', '2024-02-29 12:34:56', '2024-02-29 12:34:56.123456',
    '07:08:09', '07:08:09.123', '100:00:00.5', 1999,
    'padded  ', 'x y', 'x y', 'é', 'x',
    X'0000000000ff', X'0102', X'ff00ff', 'x y', 'q''', '{"k": "v"}')`,
  // 6, 7: negative durations whose seconds are zero (zongji's own decoding borrows wrongly there)
  `(6` + ', NULL'.repeat(26) + `, '-01:00:00'` + ', NULL'.repeat(12) + ')',
  `(7` + ', NULL'.repeat(26) + `, '-10:00:00.000000'` + ', NULL'.repeat(12) + ')',
];

let server: Pick<TestServer, 'host' | 'port' | 'user' | 'password' | 'stop'>;
let client: MysqlClient;
let flavor: 'mysql' | 'mariadb';
const external = process.env.FLOE_TEST_MYSQL_URL;
const suffix = `${process.pid}_${Date.now().toString(36)}`;

beforeAll(async () => {
  if (external) {
    // Another server (e.g. MySQL 8.4): give it a non-UTC zone for the duration of the test.
    server = { ...parseMysqlUrl(external), stop: async () => undefined };
    const admin = await connectMysql(server);
    await admin.query("SET GLOBAL time_zone = '+05:30'");
    await admin.close();
  } else {
    server = await startTestServer({ serverId: 31, extraArgs: ['--default-time-zone=+05:30'] });
  }
});

afterAll(async () => {
  if (external && client) await client.query("SET GLOBAL time_zone = 'SYSTEM'").catch(() => undefined);
  await client?.close();
  await server?.stop();
});

interface Captured {
  inserts: Record<string, unknown>[];
  updates: { before: Record<string, unknown>; after: Record<string, unknown> }[];
}

/** Starts a raw zongji stream at the binlog end, runs the statements, and returns the row images. */
async function captureBinlog(database: string, statements: string[]): Promise<Captured> {
  const zongji = new ZongJi({ host: server.host, port: server.port, user: server.user, password: server.password, ...BINLOG_CONNECTION_OPTIONS });
  attachExactValueDecoding(zongji as never);
  const captured: Captured = { inserts: [], updates: [] };
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  zongji.on('binlog', (event: any) => {
    const name = event.getTypeName();
    if (name === 'WriteRows' && event.tableMap[event.tableId].tableName === 'all_types') captured.inserts.push(...event.rows);
    if (name === 'UpdateRows' && event.tableMap[event.tableId].tableName === 'all_types') captured.updates.push(...event.rows);
    if (name === 'WriteRows' && event.tableMap[event.tableId].tableName === 'done_marker') done();
  });
  const errors: Error[] = [];
  zongji.on('error', (e: Error) => errors.push(e));
  const ready = new Promise<void>((resolve) => zongji.on('ready', () => resolve()));
  zongji.start({ startAtEnd: true, serverId: 9131, includeEvents: ['tablemap', 'writerows', 'updaterows'], includeSchema: { [database]: true } });
  await ready;
  const writer = await connectMysql({ host: server.host, port: server.port, user: server.user, password: server.password, database },
    { initStatements: ["SET time_zone = '+05:30'", "SET sql_mode = ''"] });
  try {
    for (const s of statements) await writer.query(s);
    await writer.query('INSERT INTO done_marker VALUES (1)');
  } finally {
    await writer.close();
  }
  await finished;
  zongji.stop();
  expect(errors).toEqual([]);
  return captured;
}

async function snapshotRows(table: MappedTable): Promise<Row[]> {
  const convert = createSnapshotRowConverter(table);
  const rows: Row[] = [];
  for await (const raw of client.stream(chunkSql(table, { table: table.schema.id, index: 0, keyColumns: [] }, flavor) + ' ORDER BY id')) rows.push(convert(raw));
  return rows;
}

describe.each(['FULL', 'MINIMAL'])('snapshot and binlog values are identical (binlog_row_metadata=%s)', (metadata) => {
  const database = `types_${metadata.toLowerCase()}_${suffix}`;
  let table: MappedTable;
  let captured: Captured;
  let snapshot: Row[];

  beforeAll(async () => {
    client ??= await connectMysql({ host: server.host, port: server.port, user: server.user, password: server.password });
    await client.query(`SET GLOBAL binlog_row_metadata = '${metadata}'`);
    await client.query(`CREATE DATABASE ${database}`);
    await client.query(`CREATE TABLE ${database}.done_marker (id INT PRIMARY KEY)`);
    await client.query(DDL.replace('CREATE TABLE all_types', `CREATE TABLE ${database}.all_types`));
    const dialect = await detectDialect(client);
    flavor = dialect.flavor;
    table = mapTable(await captureTableSchema(client, { database, table: 'all_types' }, dialect.flavor), { timeAsMicros: [`${database}.all_types.dur`] });
    captured = await captureBinlog(database, [
      ...ROWS.map((r) => `INSERT INTO all_types (${COLUMNS}) VALUES ${r}`),
      'UPDATE all_types SET i = i + 1, vc = CONCAT(vc, "+") WHERE id = 3',
    ]);
    snapshot = await snapshotRows(table);
  });

  it('captures every row from both paths', () => {
    expect(captured.inserts).toHaveLength(ROWS.length);
    expect(captured.updates).toHaveLength(1);
    expect(snapshot).toHaveLength(ROWS.length);
  });

  it('gives identical values for every column of every row', () => {
    const fromBinlog = createBinlogRowConverter(table);
    const inserted = captured.inserts.map(fromBinlog);
    // row 3 was updated after the insert: the snapshot holds the update's after image
    const after = fromBinlog(captured.updates[0].after);
    expect(fromBinlog(captured.updates[0].before)).toEqual(inserted[2]);
    const expected = snapshot.map((r) => r);
    const actual = inserted.map((r, i) => (i === 2 ? after : r));
    for (let r = 0; r < expected.length; r++) {
      table.columns.forEach((c, i) => {
        expect({ row: r + 1, column: c.column.name, value: actual[r][i] }).toEqual({ row: r + 1, column: c.column.name, value: expected[r][i] });
        if (typeof expected[r][i] === 'number') expect(Object.is(actual[r][i], expected[r][i]), `${c.column.name} row ${r + 1} (-0)`).toBe(true);
      });
    }
  });

  it('produces the exact expected values, independent of process and server time zones', () => {
    const col = (name: string) => table.columns.findIndex((c) => c.column.name === name);
    const row = (id: number) => snapshot[id - 1];
    expect(table.columns[col('ts6')].icebergType).toBe('timestamptz');
    expect(table.columns[col('dtm6')].icebergType).toBe('timestamp');
    // inserted at +05:30: the instant is 5.5 h earlier in UTC; the DATETIME keeps its wall clock
    expect(row(5)[col('ts6')]).toBe(parseTimestamp('2024-02-29T07:04:56.123456Z'));
    expect(row(5)[col('ts')]).toBe(parseTimestamp('2024-02-29T07:04:56Z'));
    expect(row(5)[col('dtm6')]).toBe(parseTimestamp('2024-02-29T12:34:56.123456'));
    expect(row(2)[col('ts')]).toBe(parseTimestamp('2038-01-19T03:14:07Z'));
    expect(row(3)[col('ts6')]).toBe(1_000_001n);
    expect(row(2)[col('dt')]).toBe(parseDate('9999-12-31'));
    // zero dates and zero-month dates read as null
    expect([col('dt'), col('dtm'), col('dtm6'), col('ts'), col('ts6')].map((i) => row(4)[i])).toEqual([null, null, null, null, null]);
    // exact integers and decimals
    expect(row(2)[col('biu')]).toBe('18446744073709551615');
    expect(table.columns[col('biu')].icebergType).toBe('decimal(20, 0)');
    expect(row(5)[col('biu')]).toBe('9007199254740993');
    expect(row(3)[col('bi')]).toBe(-9223372036854775808n);
    expect(row(2)[col('iu')]).toBe(4294967295n);
    expect(row(2)[col('dec65')]).toBe('99999999999999999999999999999999999.999999999999999999999999999999');
    expect(table.columns[col('dec65')].icebergType).toBe('string');
    expect(row(4)[col('dec65')]).toBe('0.000000000000000000000000000001');
    expect(row(5)[col('dec1')]).toBe('12.50');
    // floats: the exact float32 (MariaDB stores −0e0 as 0, MySQL keeps the sign; both paths agree on it)
    expect(row(5)[col('f')]).toBe(Math.fround(3.1415927));
    expect(row(4)[col('f')]).toBe(flavor === 'mariadb' ? 0 : -0);
    // the smallest normal double, whose 24 characters MySQL cuts from an expression's text
    expect(row(3)[col('d')]).toBe(-2.2250738585072014e-308);
    expect(row(5)[col('d')]).toBe(0.30000000000000004);
    // booleans, bits
    expect([row(2)[col('b1')], row(3)[col('b1')], row(2)[col('bit1')], row(3)[col('bit1')]]).toEqual([true, false, true, false]);
    expect(Buffer.from(row(2)[col('bit12')] as Uint8Array).toString('hex')).toBe('0fff');
    expect(Buffer.from(row(4)[col('bit64')] as Uint8Array).toString('hex')).toBe('8000000000000001');
    // time of day vs duration in microseconds
    expect(row(2)[col('tm3')]).toBe((23n * 3600n + 59n * 60n + 59n) * 1_000_000n + 999_000n);
    expect(row(2)[col('dur')]).toBe(838n * 3600_000_000n + 59n * 60_000_000n + 59_000_000n);
    expect(row(3)[col('dur')]).toBe(-(838n * 3600_000_000n + 59n * 60_000_000n + 59_000_000n));
    expect(row(4)[col('dur')]).toBe(-1n);
    expect(row(5)[col('dur')]).toBe(100n * 3600_000_000n + 500_000n);
    expect(row(6)[col('dur')]).toBe(-3600_000_000n);
    expect(row(7)[col('dur')]).toBe(-36000_000_000n);
    // YEAR 0000 and the range ends
    expect([row(2)[col('y')], row(3)[col('y')], row(4)[col('y')]]).toEqual([2155, 0, 1901]);
    // text: 4-byte characters, binary collation, latin1, CHAR without trailing spaces
    expect(row(2)[col('vc')]).toBe('😀 4-byte ✓ 한글 ü');
    expect(row(2)[col('vcbin')]).toBe('AbC');
    expect(row(2)[col('latin')]).toBe('Ünïcödé €');
    expect(row(5)[col('c')]).toBe('padded');
    // binary: fixed width keeps trailing zero bytes
    expect(Buffer.from(row(2)[col('bn')] as Uint8Array).toString('hex')).toBe('000102000000');
    expect(Buffer.from(row(3)[col('bn')] as Uint8Array).toString('hex')).toBe('000000000000');
    expect(Buffer.from(row(2)[col('bl')] as Uint8Array)).toEqual(Buffer.alloc(0));
    // ENUM / SET labels, including commas, quotes and the invalid-value index 0
    expect([row(2)[col('e')], row(3)[col('e')], row(4)[col('e')], row(5)[col('e')]]).toEqual(['b,c', "d'e", '', 'x y']);
    expect([row(2)[col('s')], row(3)[col('s')], row(4)[col('s')], row(5)[col('s')]]).toEqual(['p,r', '', 'p,r', "q'"]);
    // JSON as the server's text; generated columns; NULLs
    // MariaDB keeps JSON as the text inserted; MySQL prints its normalised form (keys by length, then bytes)
    expect(row(2)[col('j')]).toBe(flavor === 'mariadb' ? '{"b": 1, "a": [1, 2.5, "x"], "10": null}' : '{"a": [1, 2.5, "x"], "b": 1, "10": null}');
    expect(row(5)[col('gv')]).toBe(42n);
    expect(row(3)[col('gs')]).toBe('+!');
    expect(row(1).slice(1).every((v, i) => v === null || table.columns[i + 1].column.generated !== null)).toBe(true);
  });
});

/**
 * JSON documents, one per row: on MySQL the binlog carries binary JSON (floe decodes it to MySQL's own
 * text, binlog/rows/mysql-json.ts) while the snapshot reads the server's text, so every value kind of the
 * binary format is here — literals, every integer width, doubles at the edges, strings with escapes,
 * objects whose keys MySQL reorders, a document past 64 KiB (the large object and array formats), and
 * the opaque DECIMAL and temporal values a JSON_ARRAY of SQL values stores. On MariaDB JSON is text.
 */
const JSON_DOCUMENTS = [
  `'{}'`, `'[]'`, `'null'`, `'true'`, `'false'`, `'0'`, `'-1'`, `'32767'`, `'-32768'`, `'65535'`, `'2147483647'`, `'-2147483648'`,
  `'4294967295'`, `'9223372036854775807'`, `'-9223372036854775808'`, `'18446744073709551615'`,
  `'1.5'`, `'-0.0'`, `'1.0'`, `'1e300'`, `'-2.2250738585072014e-308'`, `'0.30000000000000004'`, `'123456789012345.6'`, `'1e15'`, `'1e16'`, `'1e-14'`, `'1e-15'`,
  `'"plain"'`, `JSON_QUOTE(CONCAT('quote " backslash ', CHAR(92 USING utf8mb4), ' slash / tab', CHAR(9 USING utf8mb4), 'newline', CHAR(10 USING utf8mb4), 'nul', CHAR(0 USING utf8mb4), 'unit', CHAR(31 USING utf8mb4)))`, `'"😀 4-byte ✓ 한글 ü"'`,
  `'{"b": 1, "a": [1, 2.5, "x"], "10": null, "aa": {"z": true, "y": false}, "": "empty key"}'`,
  `'[[[[[]]]], {"deep": {"deeper": {"deepest": [1, {"k": "v"}]}}}]'`,
  `JSON_OBJECT('big', REPEAT('x', 70000), 'n', 1)`,
  `JSON_ARRAY(REPEAT('y', 70000), 2, 'z')`,
  `JSON_ARRAY(CAST(12.50 AS DECIMAL(10,2)), CAST(-0.000001 AS DECIMAL(30,6)), CAST('2024-02-29' AS DATE), CAST('2024-02-29 12:34:56.123456' AS DATETIME(6)), CAST('-12:34:56' AS TIME), CAST('12:34:56.5' AS TIME(1)))`,
  // beyond a day MySQL prints a stored JSON TIME oddly (-838:59:59 as -630:59:59): the binlog must give the same
  `JSON_ARRAY(CAST('-838:59:59' AS TIME), CAST('838:59:59' AS TIME), CAST('-100:00:01' AS TIME))`,
];

/** Row ids (1-based) of the documents the test asserts on. */
const jsonId = (part: string) => JSON_DOCUMENTS.findIndex((d) => d.includes(part)) + 1;

describe.each(['FULL', 'MINIMAL'])('JSON documents read the same text through both paths (binlog_row_metadata=%s)', (metadata) => {
  it('every document', async () => {
    const database = `json_docs_${metadata.toLowerCase()}_${suffix}`;
    client ??= await connectMysql({ host: server.host, port: server.port, user: server.user, password: server.password });
    await client.query(`SET GLOBAL binlog_row_metadata = '${metadata}'`);
    await client.query(`CREATE DATABASE ${database}`);
    await client.query(`CREATE TABLE ${database}.done_marker (id INT PRIMARY KEY)`);
    await client.query(`CREATE TABLE ${database}.all_types (id INT PRIMARY KEY, j JSON)`);
    const dialect = await detectDialect(client);
    const table = mapTable(await captureTableSchema(client, { database, table: 'all_types' }, dialect.flavor));
    const captured = await captureBinlog(database, [
      ...JSON_DOCUMENTS.map((doc, i) => `INSERT INTO all_types VALUES (${i + 1}, ${doc})`),
      // an update rewrites the whole document in the row image (binlog_row_value_options is off)
      `UPDATE all_types SET j = JSON_SET(j, '$.added', CAST(1.25 AS DECIMAL(4,2)), '$.b', 'replaced') WHERE id = ${jsonId('empty key')}`,
    ]);
    const snapshot = await snapshotRows(table);
    const fromBinlog = createBinlogRowConverter(table);
    const updated = jsonId('empty key');
    const binlog = captured.inserts.map((r) => fromBinlog(r)).map((r) => (r[0] === updated ? fromBinlog(captured.updates[0]!.after) : r));
    expect(binlog.length).toBe(JSON_DOCUMENTS.length);
    for (let i = 0; i < snapshot.length; i++) expect({ id: binlog[i]![0], j: binlog[i]![1] }).toEqual({ id: snapshot[i]![0], j: snapshot[i]![1] });
    const text = (id: number) => snapshot[id - 1]![1];
    // what each server prints (MySQL normalises: keys by length then bytes, doubles in shortest form)
    const mysql = dialect.flavor === 'mysql';
    expect(text(jsonId("'-0.0'"))).toBe('-0.0');
    expect(text(jsonId("'1.0'"))).toBe('1.0');
    expect(text(jsonId('e-308'))).toBe('-2.2250738585072014e-308');
    expect(text(updated)).toBe(
      mysql
        ? '{"": "empty key", "a": [1, 2.5, "x"], "b": "replaced", "10": null, "aa": {"y": false, "z": true}, "added": 1.25}'
        : '{"b": "replaced", "a": [1, 2.5, "x"], "10": null, "aa": {"z": true, "y": false}, "": "empty key", "added": 1.25}',
    );
    expect(text(jsonId('CAST(12.50'))).toBe(
      mysql
        ? '[12.50, -0.000001, "2024-02-29", "2024-02-29 12:34:56.123456", "-12:34:56.000000", "12:34:56.500000"]'
        : '[12.50, -0.000001, "2024-02-29", "2024-02-29 12:34:56.123456", "-12:34:56", "12:34:56.5"]',
    );
    expect((text(jsonId('JSON_OBJECT(')) as string).length).toBeGreaterThan(70000);
  });
});

describe('values the lake types cannot hold stop with the setting that fixes them', () => {
  it('a TIME beyond 24h in a time column, and tinyint(1) holding 2', async () => {
    await client.query('DROP DATABASE IF EXISTS bad_values');
    await client.query('CREATE DATABASE bad_values');
    await client.query('CREATE TABLE bad_values.t (id INT PRIMARY KEY, tm TIME, flag TINYINT(1))');
    await client.query('CREATE TABLE bad_values.done_marker (id INT PRIMARY KEY)');
    const dialect = await detectDialect(client);
    const table = mapTable(await captureTableSchema(client, { database: 'bad_values', table: 't' }, dialect.flavor));
    const zongjiRows: Record<string, unknown>[] = [];
    const zongji = new ZongJi({ host: server.host, port: server.port, user: server.user, password: server.password, ...BINLOG_CONNECTION_OPTIONS });
    attachExactValueDecoding(zongji as never);
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    zongji.on('binlog', (e: any) => {
      if (e.getTypeName() !== 'WriteRows') return;
      if (e.tableMap[e.tableId].tableName === 't') zongjiRows.push(...e.rows);
      else done();
    });
    zongji.on('error', () => undefined);
    await new Promise<void>((r) => {
      zongji.on('ready', () => r());
      zongji.start({ startAtEnd: true, serverId: 9132, includeEvents: ['tablemap', 'writerows'], includeSchema: { bad_values: true } });
    });
    await client.query("INSERT INTO bad_values.t VALUES (1, '25:00:00', 0), (2, '-01:00:00', 1), (3, '10:00:00', 2)");
    await client.query('INSERT INTO bad_values.done_marker VALUES (1)');
    await finished;
    zongji.stop();

    const fromBinlog = createBinlogRowConverter(table);
    const fromSnapshot = createSnapshotRowConverter(table);
    const { rows } = await client.queryArrays(chunkSql(table, { table: table.schema.id, index: 0, keyColumns: [] }, dialect.flavor) + ' ORDER BY id');
    for (const [i, convert] of [[0, (r: number) => fromBinlog(zongjiRows[r])], [1, (r: number) => fromSnapshot(rows[r])]] as const) {
      expect(() => convert(0), `path ${i}`).toThrow(/column bad_values\.t\.tm \(time\) holds 25:00:00, outside 00:00:00–24:00:00.*set source\.timeAs: micros \(every TIME column\) or add "bad_values\.t\.tm" to source\.timeAsMicros/);
      expect(() => convert(1), `path ${i}`).toThrow(/holds -01:00:00, outside/);
      expect(() => convert(2), `path ${i}`).toThrow(/column bad_values\.t\.flag \(tinyint\(1\)\) holds 2, which is not a boolean.*tinyInt1AsBoolean: false/);
    }
    // with the settings the same rows convert
    const relaxed = mapTable(table.schema, { timeAsMicros: ['bad_values.t.tm'], tinyInt1AsBoolean: false });
    expect(createSnapshotRowConverter(relaxed)(rows[2])).toEqual(createBinlogRowConverter(relaxed)(zongjiRows[2]));
    expect(createSnapshotRowConverter(relaxed)(rows[0])).toEqual([1, 90_000_000_000n, 0]);
  });
});

// MySQL has no UUID, INET4 or INET6 column types
describe.skipIf(Boolean(external) || serverKind() !== 'mariadb')('MariaDB UUID / INET4 / INET6', () => {
  it.each(['FULL', 'MINIMAL'])('read the same through both paths (binlog_row_metadata=%s)', async (metadata) => {
    const database = `maria_types_${metadata.toLowerCase()}_${suffix}`;
    client ??= await connectMysql({ host: server.host, port: server.port, user: server.user, password: server.password });
    await client.query(`SET GLOBAL binlog_row_metadata = '${metadata}'`);
    await client.query(`CREATE DATABASE ${database}`);
    await client.query(`CREATE TABLE ${database}.done_marker (id INT PRIMARY KEY)`);
    await client.query(`CREATE TABLE ${database}.all_types (id INT PRIMARY KEY, u UUID, i4 INET4, i6 INET6)`);
    const dialect = await detectDialect(client);
    const table = mapTable(await captureTableSchema(client, { database, table: 'all_types' }, dialect.flavor));
    const captured = await captureBinlog(database, [
      `INSERT INTO all_types VALUES
        (1, '6ccd780c-baba-1026-9564-5b8c656024db', '10.0.0.1', '2001:db8::1'),
        (2, '01234567-89ab-4def-8123-456789abcdef', '255.255.255.255', '::ffff:1.2.3.4'),
        (3, '00000000-0000-0000-0000-000000000000', '0.0.0.0', '::'),
        (4, NULL, NULL, '::1.2.3.4')`,
    ]);
    const snapshot = await snapshotRows(table);
    expect(captured.inserts.map(createBinlogRowConverter(table))).toEqual(snapshot);
    expect(snapshot[0]).toEqual([1, '6ccd780c-baba-1026-9564-5b8c656024db', '10.0.0.1', '2001:db8::1']);
    expect(snapshot[3]).toEqual([4, null, null, '::1.2.3.4']);
  });
});
