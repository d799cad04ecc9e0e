/**
 * Discovery, schema capture, literal defaults and the type mapping against the harness server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMysql, type MysqlClient } from '../../../../src/source/mysql/client.js';
import { detectDialect, type ServerDialect } from '../../../../src/source/mysql/dialect.js';
import { discoverTables, compilePattern, tableMatcher } from '../../../../src/source/mysql/schema/discovery.js';
import { captureTableSchema, captureTableSchemas, parseLabels, type TableSchema } from '../../../../src/source/mysql/schema/table-schema.js';
import { mapTable, mapColumn } from '../../../../src/source/mysql/schema/type-mapping.js';
import { literalDefaultValue } from '../../../../src/source/mysql/schema/default-values.js';
import { parseColumnDefault } from '../../../../src/source/mysql/schema/defaults.js';
import { isRequired } from '../../../../src/source/mysql/snapshot/snapshot-values.js';
import { parseDate, parseTimestamp } from '../../../../src/model/values.js';
import { sharedMysqlConfig, createTestDatabase } from '../../../support/shared-mysql.js';

let client: MysqlClient;
let dialect: ServerDialect;
let db: string;
let other: string;

beforeAll(async () => {
  db = await createTestDatabase('schema');
  other = await createTestDatabase('schema_other');
  client = await connectMysql(sharedMysqlConfig());
  dialect = await detectDialect(client);
});

afterAll(async () => {
  await client?.query(`DROP DATABASE IF EXISTS \`${db}\``);
  await client?.query(`DROP DATABASE IF EXISTS \`${other}\``);
  await client?.close();
});

describe('discovery', () => {
  it('lists base tables matching include/exclude patterns, never views or system schemas', async () => {
    for (const t of ['orders', 'order_items', 'audit_log', 'customers']) await client.query(`CREATE TABLE \`${db}\`.${t} (id INT PRIMARY KEY)`);
    await client.query(`CREATE VIEW \`${db}\`.orders_view AS SELECT id FROM \`${db}\`.orders`);
    await client.query(`CREATE TABLE \`${other}\`.orders (id INT PRIMARY KEY)`);
    const names = async (include: string[], exclude: string[] = []) =>
      (await discoverTables(client, { include, exclude })).filter((t) => t.database === db || t.database === other).map((t) => `${t.database === db ? 'db' : 'other'}.${t.table}`);
    expect(await names([`${db}.*`])).toEqual(['db.audit_log', 'db.customers', 'db.order_items', 'db.orders']);
    expect(await names([`${db}.order*`])).toEqual(['db.order_items', 'db.orders']);
    expect(await names([`*.orders`])).toEqual(['db.orders', 'other.orders']);
    expect(await names([`${db}.*`], [`*.audit_*`])).toEqual(['db.customers', 'db.order_items', 'db.orders']);
    expect(await names([`/^${db}\\.(orders|customers)$/`])).toEqual(['db.customers', 'db.orders']);
    expect(await names([`${db}.order?items`])).toEqual(['db.order_items']);
    const all = await discoverTables(client, {});
    expect(all.some((t) => ['mysql', 'information_schema', 'performance_schema', 'sys'].includes(t.database))).toBe(false);
    expect(all.some((t) => t.table === 'orders_view')).toBe(false);
  });

  it('compiles glob and regex patterns and rejects a pattern without a database part', () => {
    expect(compilePattern('shop.*')('shop.orders')).toBe(true);
    expect(compilePattern('shop.*')('shopx.orders')).toBe(false);
    expect(compilePattern('shop.*')('shop.a.b')).toBe(false);
    expect(compilePattern('/^SHOP\\./i')('shop.x')).toBe(true);
    expect(compilePattern('a+b.c')('a+b.c')).toBe(true);
    expect(() => compilePattern('orders')).toThrow(/expected 'database.table'/);
    expect(tableMatcher({ include: ['mysql.*'] })({ database: 'mysql', table: 'user' })).toBe(false);
  });
});

describe('schema capture', () => {
  let schema: TableSchema;

  beforeAll(async () => {
    await client.query(`CREATE TABLE \`${db}\`.wide (
      b VARCHAR(20) NOT NULL COMMENT 'second key part',
      a BIGINT UNSIGNED NOT NULL,
      price DECIMAL(12,3) NOT NULL DEFAULT 1.5,
      name VARCHAR(30) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT 'it''s',
      note TEXT,
      flag TINYINT(1) NOT NULL DEFAULT 1,
      bits BIT(3) DEFAULT b'101',
      born DATE DEFAULT '2020-01-02',
      seen TIMESTAMP NULL DEFAULT CURRENT_TIMESTAMP,
      uid VARCHAR(36) DEFAULT (uuid()),
      maybe VARCHAR(5) DEFAULT NULL,
      word VARCHAR(5) DEFAULT 'NULL',
      kind ENUM('x','y,z','q''r') NOT NULL DEFAULT 'y,z',
      tags SET('p','q') DEFAULT 'p,q',
      doc JSON,
      twice BIGINT AS (a * 2) VIRTUAL,
      shout VARCHAR(40) AS (UPPER(b)) STORED,
      PRIMARY KEY (a, b),
      UNIQUE KEY u_name (name),
      KEY k_born (born)
    ) COMMENT 'a wide table'`);
    schema = await captureTableSchema(client, { database: db, table: 'wide' }, dialect.flavor);
  });

  it('captures columns in ordinal order with types, nullability, charsets and comments', () => {
    expect(schema.columns.map((c) => c.name)).toEqual(['b', 'a', 'price', 'name', 'note', 'flag', 'bits', 'born', 'seen', 'uid', 'maybe', 'word', 'kind', 'tags', 'doc', 'twice', 'shout']);
    expect(schema.columns.map((c) => c.ordinal)).toEqual(schema.columns.map((_, i) => i + 1));
    const c = (n: string) => schema.columns.find((x) => x.name === n)!;
    expect(c('a')).toMatchObject({ dataType: 'bigint', unsigned: true, nullable: false });
    expect(c('price')).toMatchObject({ dataType: 'decimal', precision: 12, scale: 3 });
    expect(c('name')).toMatchObject({ charset: 'utf8mb4', collation: 'utf8mb4_bin', nullable: true });
    expect(c('b').comment).toBe('second key part');
    expect(c('kind').labels).toEqual(['x', 'y,z', "q'r"]);
    expect(c('doc').json).toBe(true);
    expect(c('twice').generated).toBe('virtual');
    expect(c('shout').generated).toBe('stored');
    expect(c('seen').generated).toBeNull();
    expect(schema.comment).toBe('a wide table');
  });

  it('captures a composite primary key in index order and the other indexes', () => {
    expect(schema.primaryKey).toEqual(['a', 'b']);
    expect(schema.indexes.map((i) => [i.name, i.unique, i.columns.map((c) => c.name)])).toEqual([
      ['u_name', true, ['name']],
      ['k_born', false, ['born']],
    ]);
  });

  it('parses literal defaults into the value model and marks expressions as not literal', () => {
    const mapped = mapTable(schema);
    const d = (n: string) => literalDefaultValue(mapped.columns.find((c) => c.column.name === n)!);
    expect(d('price')).toEqual({ literal: true, value: '1.500' });
    expect(d('name')).toEqual({ literal: true, value: "it's" });
    expect(d('flag')).toEqual({ literal: true, value: true });
    expect(d('bits')).toEqual({ literal: true, value: Buffer.from([5]) });
    expect(d('born')).toEqual({ literal: true, value: parseDate('2020-01-02') });
    expect(d('maybe')).toEqual({ literal: true, value: null });
    expect(d('word')).toEqual({ literal: true, value: 'NULL' });
    expect(d('kind')).toEqual({ literal: true, value: 'y,z' });
    expect(d('tags')).toEqual({ literal: true, value: 'p,q' });
    expect(d('seen')).toMatchObject({ literal: false });
    expect((d('seen') as { reason: string }).reason).toMatch(/current_timestamp/i);
    expect((d('uid') as { reason: string }).reason).toMatch(/uuid\(\)/i);
    expect(d('a')).toEqual({ literal: false, reason: 'the column has no default' });
    expect(d('note')).toEqual({ literal: true, value: null });
    expect(d('twice')).toMatchObject({ literal: false });
  });

  it('reads a literal TIMESTAMP default as the UTC instant whatever zone created it', async () => {
    await client.query(`SET time_zone = '+09:00'`);
    await client.query(`CREATE TABLE \`${db}\`.tsd (id INT PRIMARY KEY, at TIMESTAMP NULL DEFAULT '2020-01-01 09:00:00', wall DATETIME(3) DEFAULT '2020-01-01 09:00:00.250')`);
    await client.query(`SET time_zone = '+00:00'`);
    const t = mapTable(await captureTableSchema(client, { database: db, table: 'tsd' }, dialect.flavor));
    expect(literalDefaultValue(t.columns[1])).toEqual({ literal: true, value: parseTimestamp('2020-01-01T00:00:00Z') });
    expect(literalDefaultValue(t.columns[2])).toEqual({ literal: true, value: parseTimestamp('2020-01-01T09:00:00.250') });
  });

  it('captures several tables at once and leaves out missing ones', async () => {
    const map = await captureTableSchemas(client, [{ database: db, table: 'wide' }, { database: db, table: 'orders' }, { database: db, table: 'nope' }, { database: db, table: 'orders_view' }], dialect.flavor);
    expect([...map.keys()].sort()).toEqual([`${db}.orders`, `${db}.wide`]);
    await expect(captureTableSchema(client, { database: db, table: 'nope' }, dialect.flavor)).rejects.toThrow(/not found: expected a base table/);
  });
});

describe('default parsing per flavour', () => {
  const col = { dataType: 'varchar', nullable: true };
  it('reads MariaDB quoting', () => {
    expect(parseColumnDefault("'a\\\\b'", '', 'mariadb', col)).toEqual({ kind: 'literal', literal: 'a\\b' });
    expect(parseColumnDefault("'x\\ny'", '', 'mariadb', col)).toEqual({ kind: 'literal', literal: 'x\ny' });
    expect(parseColumnDefault("''", '', 'mariadb', col)).toEqual({ kind: 'literal', literal: '' });
    expect(parseColumnDefault('NULL', '', 'mariadb', col)).toEqual({ kind: 'null' });
    expect(parseColumnDefault(null, '', 'mariadb', { dataType: 'int', nullable: false })).toEqual({ kind: 'none' });
    expect(parseColumnDefault('-1.500', '', 'mariadb', { dataType: 'decimal', nullable: true })).toEqual({ kind: 'literal', literal: '-1.500' });
    expect(parseColumnDefault('current_timestamp()', 'on update current_timestamp()', 'mariadb', { dataType: 'datetime', nullable: true })).toEqual({ kind: 'expression', expression: 'current_timestamp()' });
    expect(parseColumnDefault('(1 + 2)', '', 'mariadb', { dataType: 'int', nullable: true })).toMatchObject({ kind: 'expression' });
  });

  it('reads MySQL 5.7 / 8.x forms', () => {
    expect(parseColumnDefault('abc', '', 'mysql', col)).toEqual({ kind: 'literal', literal: 'abc' });
    expect(parseColumnDefault("it's", '', 'mysql', col)).toEqual({ kind: 'literal', literal: "it's" });
    expect(parseColumnDefault('uuid()', 'DEFAULT_GENERATED', 'mysql', col)).toEqual({ kind: 'expression', expression: 'uuid()' });
    expect(parseColumnDefault('CURRENT_TIMESTAMP', 'DEFAULT_GENERATED on update CURRENT_TIMESTAMP', 'mysql', { dataType: 'timestamp', nullable: false })).toMatchObject({ kind: 'expression' });
    expect(parseColumnDefault('CURRENT_TIMESTAMP(3)', '', 'mysql', { dataType: 'datetime', nullable: true })).toMatchObject({ kind: 'expression' });
    expect(parseColumnDefault('CURRENT_TIMESTAMP', '', 'mysql', col)).toEqual({ kind: 'literal', literal: 'CURRENT_TIMESTAMP' });
    expect(parseColumnDefault("b'101'", '', 'mysql', { dataType: 'bit', nullable: true })).toEqual({ kind: 'literal', literal: Buffer.from([5]) });
    expect(parseColumnDefault('0x616263', '', 'mysql', { dataType: 'varbinary', nullable: true })).toEqual({ kind: 'literal', literal: Buffer.from('abc') });
    expect(parseColumnDefault(null, '', 'mysql', col)).toEqual({ kind: 'null' });
  });

  it('parses ENUM/SET labels with commas, doubled quotes and escapes', () => {
    expect(parseLabels("enum('a','b,c','d''e','x\\\\y')")).toEqual(['a', 'b,c', "d'e", 'x\\y']);
    expect(parseLabels("set('')")).toEqual(['']);
  });
});

describe('type mapping', () => {
  it('maps every MySQL type as docs/design.md §6 says', async () => {
    await client.query(`CREATE TABLE \`${db}\`.types (
      id INT PRIMARY KEY, ti TINYINT, tiu TINYINT UNSIGNED, b1 TINYINT(1), si SMALLINT UNSIGNED, mi MEDIUMINT, iu INT UNSIGNED,
      bi BIGINT, biu BIGINT UNSIGNED, f FLOAT, d DOUBLE, dec1 DECIMAL(10,2), dec38 DECIMAL(38,10), dec65 DECIMAL(65,30),
      c CHAR(3), vc VARCHAR(10), t LONGTEXT, e ENUM('a'), s SET('a'), j JSON, bn BINARY(4), vb VARBINARY(4), bl MEDIUMBLOB,
      bit1 BIT(1), bit9 BIT(9), dt DATE, dtm DATETIME(3), ts TIMESTAMP(6) NULL, tm TIME, y YEAR)`);
    const schema = await captureTableSchema(client, { database: db, table: 'types' }, dialect.flavor);
    const mapped = mapTable(schema, { timeAsMicros: [] });
    expect(Object.fromEntries(mapped.columns.map((c) => [c.column.name, c.icebergType]))).toEqual({
      id: 'int', ti: 'int', tiu: 'int', b1: 'boolean', si: 'int', mi: 'int', iu: 'long',
      bi: 'long', biu: 'decimal(20, 0)', f: 'float', d: 'double', dec1: 'decimal(10, 2)', dec38: 'decimal(38, 10)', dec65: 'string',
      c: 'string', vc: 'string', t: 'string', e: 'string', s: 'string', j: 'string', bn: 'binary', vb: 'binary', bl: 'binary',
      bit1: 'boolean', bit9: 'binary', dt: 'date', dtm: 'timestamp', ts: 'timestamptz', tm: 'time', y: 'int',
    });
    const relaxed = mapTable(schema, { tinyInt1AsBoolean: false, timeAsMicros: (_t, c) => c === 'tm' });
    expect(relaxed.columns.find((c) => c.column.name === 'b1')!.icebergType).toBe('int');
    expect(relaxed.columns.find((c) => c.column.name === 'tm')!.icebergType).toBe('long');
    // source.timeAs: micros maps every TIME column to long microseconds; the per-column list maps its
    // columns so whatever timeAs says
    await client.query(`CREATE TABLE \`${db}\`.times (id INT PRIMARY KEY, a TIME, b TIME(6), c TIME NOT NULL)`);
    const times = await captureTableSchema(client, { database: db, table: 'times' }, dialect.flavor);
    const kinds = (m: ReturnType<typeof mapTable>) => m.columns.slice(1).map((c) => `${c.column.name}:${c.icebergType}/${c.kind}`);
    expect(kinds(mapTable(times, { timeAs: 'micros' }))).toEqual(['a:long/time-micros', 'b:long/time-micros', 'c:long/time-micros']);
    expect(kinds(mapTable(times, { timeAs: 'time', timeAsMicros: [`${db}.times.b`] }))).toEqual(['a:time/time', 'b:long/time-micros', 'c:time/time']);
    expect(kinds(mapTable(times, { timeAs: 'micros', timeAsMicros: [`${db}.times.b`] }))).toEqual(['a:long/time-micros', 'b:long/time-micros', 'c:long/time-micros']);
    expect(kinds(mapTable(times))).toEqual(['a:time/time', 'b:time/time', 'c:time/time']);
    expect(isRequired(mapped.columns[0])).toBe(true);
    expect(isRequired(mapped.columns.find((c) => c.column.name === 'dt')!)).toBe(false);
  });

  it('stops on spatial types with a message saying what to do', () => {
    expect(() => mapColumn({ database: 'd', table: 't' }, {
      name: 'g', ordinal: 1, dataType: 'point', columnType: 'point', unsigned: false, precision: null, scale: null, datetimePrecision: null,
      maxLength: null, charset: null, collation: null, nullable: true, generated: null, generationExpression: null, comment: '',
      default: { kind: 'null' }, labels: null, json: false, invisible: false, autoIncrement: false,
    })).toThrow(/column d\.t\.g has the spatial type point: floe does not map spatial types to Iceberg; exclude the table \(source\.exclude\)/);
  });

  it('stops on text in a charset nothing decodes from the binlog, and maps every other one', () => {
    const text = (charset: string) => ({
      name: 'c', ordinal: 1, dataType: 'varchar', columnType: 'varchar(10)', unsigned: false, precision: null, scale: null, datetimePrecision: null,
      maxLength: 10, charset, collation: null, nullable: true, generated: null, generationExpression: null, comment: '',
      default: { kind: 'null' as const }, labels: null, json: false, invisible: false, autoIncrement: false,
    });
    for (const charset of ['dec8', 'geostd8', 'hp8', 'keybcs2', 'swe7']) {
      expect(() => mapColumn({ database: 'd', table: 't' }, text(charset))).toThrow(new RegExp(`column d\\.t\\.c \\(varchar\\(10\\)\\) has the character set ${charset}, which floe cannot decode from the binlog .*convert the column to utf8mb4`));
    }
    for (const charset of ['utf8mb4', 'latin1', 'gbk', 'sjis', 'utf16', 'utf32', 'ucs2', 'macce', 'eucjpms', 'armscii8']) {
      expect(mapColumn({ database: 'd', table: 't' }, text(charset)).kind).toBe('string');
    }
  });
});
