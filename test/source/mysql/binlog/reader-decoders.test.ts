/**
 * The binlog reader with floe's own row decoder (the default: rows events kept as bytes,
 * zongji-raw-events.ts, decoded when the transaction is taken) against the reader with zongji
 * decoding every row, over the same binlog range: every transaction, change and value identical —
 * for a table of many types, across a DDL the consumer applies mid-stream (the rows after it decoded
 * with the new mapping, the rows before it with the old), for text in every charset both servers
 * have (iconv-lite's decoding, as zongji's), and on MariaDB for COMPRESSED columns. The text and the
 * compressed values are also checked against the server's own reading of the rows (a SELECT).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { createTestDatabase } from '../../../support/shared-mysql.js';
import { serverKind } from '../../../support/servers.js';
import { BinlogReader } from '../../../../src/source/mysql/binlog/binlog-reader.js';
import type { MappedTablesDecoding } from '../../../../src/source/mysql/binlog/binlog-decoding.js';
import type { BinlogEvent, TransactionEvent } from '../../../../src/source/mysql/events.js';
import type { BinlogOffset } from '../../../../src/source/mysql/offset/offset.js';
import { decodingFor, recapture, replicaId, serverOffset, sourceConfig, sql, zongjiOnly } from './helpers.js';

let db: string;
let conn: mysql.Connection;

beforeAll(async () => {
  db = await createTestDatabase('decoders');
  conn = await sql();
  await conn.query(`CREATE TABLE \`${db}\`.a (
    id BIGINT UNSIGNED PRIMARY KEY, i INT, d DECIMAL(20,6), f DOUBLE, v VARCHAR(40) CHARACTER SET utf8mb4,
    l VARCHAR(10) CHARACTER SET latin1, t DATETIME(6), ts TIMESTAMP(3) NULL, dt DATE, j JSON,
    e ENUM('x','y','z'), s SET('p','q','r'), b BLOB, bits BIT(12))`);
  await conn.query(`CREATE TABLE \`${db}\`.g (id INT PRIMARY KEY, ${CHARSET_TEXT.map(([name, type]) => `${name} ${type}`).join(', ')})`);
  // MariaDB's COMPRESSED columns: values under column_compression_threshold (100 bytes) are stored
  // as they are, longer ones as zlib streams (sql/field_comp.cc)
  if (serverKind() === 'mariadb') await conn.query(`CREATE TABLE \`${db}\`.z (id INT PRIMARY KEY, v VARCHAR(2000) COMPRESSED, vb VARBINARY(2000) COMPRESSED, t TEXT COMPRESSED, b BLOB COMPRESSED, tg TEXT CHARACTER SET gbk COMPRESSED)`);
});

/** Text columns in the charsets both servers have, each with text only that charset holds. */
const CHARSET_TEXT: readonly (readonly [string, string, string])[] = [
  ['cp1251', 'VARCHAR(40) CHARACTER SET cp1251', 'Привет'],
  ['gbk', 'VARCHAR(40) CHARACTER SET gbk', '中文测试'],
  ['gb2312', 'VARCHAR(40) CHARACTER SET gb2312', '简体中文'],
  ['sjis', 'VARCHAR(40) CHARACTER SET sjis', '日本語ﾃｽﾄ'],
  ['cp932', 'VARCHAR(40) CHARACTER SET cp932', '①ｶﾅ漢字'],
  ['ujis', 'VARCHAR(40) CHARACTER SET ujis', 'かな漢字'],
  ['eucjpms', 'VARCHAR(40) CHARACTER SET eucjpms', 'ひらがな'],
  ['big5', 'VARCHAR(40) CHARACTER SET big5', '繁體中文'],
  ['euckr', 'VARCHAR(40) CHARACTER SET euckr', '한국어'],
  ['ucs2', 'VARCHAR(40) CHARACTER SET ucs2', 'ü한€'],
  ['utf16', 'VARCHAR(40) CHARACTER SET utf16', '\uFEFFbom😀'],
  ['utf16le', 'VARCHAR(40) CHARACTER SET utf16le', 'le😀'],
  ['utf32', 'VARCHAR(40) CHARACTER SET utf32', 'u32😀'],
  ['koi8r', 'VARCHAR(40) CHARACTER SET koi8r', 'Мир'],
  ['koi8u', 'VARCHAR(40) CHARACTER SET koi8u', 'Київ'],
  ['cp866', 'VARCHAR(40) CHARACTER SET cp866', 'Досвидания'],
  ['latin2', 'VARCHAR(40) CHARACTER SET latin2', 'Łódź'],
  ['latin5', 'VARCHAR(40) CHARACTER SET latin5', 'İstanbul ğ'],
  ['latin7', 'VARCHAR(40) CHARACTER SET latin7', 'Ąžuolas'],
  ['cp1250', 'VARCHAR(40) CHARACTER SET cp1250', 'Čeština'],
  ['cp1256', 'VARCHAR(40) CHARACTER SET cp1256', 'مرحبا'],
  ['cp1257', 'VARCHAR(40) CHARACTER SET cp1257', 'Ąžuolas'],
  ['cp850', 'VARCHAR(40) CHARACTER SET cp850', 'Façade ß'],
  ['cp852', 'VARCHAR(40) CHARACTER SET cp852', 'Łódź'],
  ['macce', 'VARCHAR(40) CHARACTER SET macce', 'Čeština'],
  ['macroman', 'VARCHAR(40) CHARACTER SET macroman', 'Café π'],
  ['greek', 'VARCHAR(40) CHARACTER SET greek', 'Ελλάδα'],
  ['hebrew', 'VARCHAR(40) CHARACTER SET hebrew', 'שלום'],
  ['tis620', 'VARCHAR(40) CHARACTER SET tis620', 'ภาษาไทย'],
  ['ascii', 'VARCHAR(40) CHARACTER SET ascii', 'plain'],
  ['gbk_text', 'TEXT CHARACTER SET gbk', '长文本'.repeat(50)],
  ['sjis_char', 'CHAR(8) CHARACTER SET sjis', 'ｶﾅ'],
];
afterAll(async () => {
  await conn?.end();
});

/** Reads [from, to) with one decoder; the DDL is applied to the mapping as the pipeline does. */
async function read(decoding: MappedTablesDecoding, from: BinlogOffset, to: BinlogOffset, rowDecoder: 'floe' | 'zongji'): Promise<{ transactions: TransactionEvent[]; compiled: string[] }> {
  const compiled: string[] = [];
  const compiledFor = decoding.compiledFor.bind(decoding);
  decoding.compiledFor = (...args) => {
    const c = compiledFor(...args);
    compiled.push(`${args[0].table}:${c ? 'floe' : 'skip'}`);
    return c;
  };
  const reader = new BinlogReader({ connection: sourceConfig(), serverId: replicaId(), start: { kind: 'offset', offset: from }, stopAt: to, tables: TABLES(), decoding: rowDecoder === 'zongji' ? zongjiOnly(decoding) : decoding, heartbeatMs: 500 });
  const transactions: TransactionEvent[] = [];
  for await (const e of reader as AsyncIterable<BinlogEvent>) {
    if (e.kind === 'ddl') await recapture(decoding, { database: db, table: 'a' });
    if (e.kind === 'transaction') transactions.push(e);
  }
  return { transactions, compiled: [...new Set(compiled)].sort() };
}

const TABLES = () => ['a', 'g', ...(serverKind() === 'mariadb' ? ['z'] : [])].map((table) => ({ database: db, table }));

/** The rows of a table after `transactions` (applied by primary key, its first column). */
function replayed(transactions: readonly TransactionEvent[], table: string): unknown[][] {
  const rows = new Map<unknown, unknown[]>();
  for (const t of transactions) {
    for (const c of t.changes) {
      if (c.table.table !== table) continue;
      if (c.before) rows.delete(c.before[0]);
      if (c.after) rows.set(c.after[0], [...c.after]);
    }
  }
  return [...rows.values()].sort((x, y) => Number(x[0]) - Number(y[0]));
}

/** The rows as the server reads them (text converted by the server to the connection's utf8mb4). */
async function selected(table: string): Promise<unknown[][]> {
  const [rows] = await conn.query({ sql: `SELECT * FROM \`${db}\`.\`${table}\` ORDER BY id`, rowsAsArray: true });
  return rows as unknown[][];
}

describe('binlog reader: floe decoder vs zongji', () => {
  it('hands out identical transactions, across a DDL, for text in every charset, and for COMPRESSED columns', async () => {
    // the mappings valid at the start, captured before the ALTER below
    const forFloe = await decodingFor(TABLES());
    const forZongji = await decodingFor(TABLES());
    const from = await serverOffset(conn);
    const row = (id: number) =>
      `(${id}, ${id % 3 === 0 ? 'NULL' : -id * 1000}, '${id}.000123', ${id / 7}, 'ü한😀${id}', 'çà${id}', '2024-02-29 23:59:59.${String(id).padStart(6, '0')}', ${id % 2 ? "'2001-09-09 01:46:40.123'" : 'NULL'}, '1000-01-01', '{"k":[${id},null,"x"]}', 'y', 'p,r', X'00ff${id.toString(16).padStart(2, '0')}', b'101010101010')`;
    await conn.query(`INSERT INTO \`${db}\`.a VALUES ${[1, 2, 3, 4, 5].map(row).join(',')}`);
    const texts = CHARSET_TEXT.map(([, , text]) => text);
    await conn.query(`INSERT INTO \`${db}\`.g VALUES (1, ${texts.map(() => '?').join(', ')}), (2, ${texts.map(() => 'NULL').join(', ')})`, texts);
    await conn.query(`UPDATE \`${db}\`.a SET v = CONCAT(v, '!'), d = -d, j = JSON_OBJECT('u', id) WHERE id <= 3`);
    await conn.query(`UPDATE \`${db}\`.g SET cp1251 = 'Мир', utf16 = CONCAT(utf16, '!'), gbk = '' WHERE id = 1`);
    if (serverKind() === 'mariadb') {
      const long = 'compressible text, 한글 '.repeat(40);
      await conn.query(`INSERT INTO \`${db}\`.z VALUES (1, ?, ?, ?, ?, ?), (2, 'a', X'00ff', 'short', X'01', '中'), (3, '', '', '', '', ''), (4, NULL, NULL, NULL, NULL, NULL)`, [long, Buffer.from(long), long, Buffer.from(long.repeat(3)), '长文本'.repeat(60)]);
      await conn.query(`UPDATE \`${db}\`.z SET v = CONCAT(v, '!'), t = REPEAT('x', 500) WHERE id IN (1, 2)`);
      await conn.query(`DELETE FROM \`${db}\`.z WHERE id = 3`);
    }
    await conn.query(`ALTER TABLE \`${db}\`.a ADD COLUMN extra VARCHAR(5) DEFAULT 'new'`);
    await conn.query(`INSERT INTO \`${db}\`.a (id, v) VALUES (6, 'after')`);
    await conn.query(`UPDATE \`${db}\`.a SET extra = 'set' WHERE id = 1`);
    await conn.query(`DELETE FROM \`${db}\`.a WHERE id IN (2, 6)`);
    await conn.query(`DELETE FROM \`${db}\`.g WHERE id = 2`);
    const to = await serverOffset(conn);

    const floe = await read(forFloe, from, to, 'floe');
    const zongji = await read(forZongji, from, to, 'zongji');

    const mariadb = serverKind() === 'mariadb';
    expect(floe.compiled).toEqual(['a:floe', 'g:floe', ...(mariadb ? ['z:floe'] : [])]);
    expect(zongji.compiled).toEqual([]);
    expect(floe.transactions.map((t) => t.changes.length)).toEqual([5, 2, 3, 1, ...(mariadb ? [4, 2, 1] : []), 1, 1, 2, 1]);
    expect(floe.transactions).toEqual(zongji.transactions);
    // the row after the DDL carries the new column; the text decoded as the server reads it
    const after = floe.transactions[mariadb ? 7 : 4]!.changes[0]!.after!;
    expect(after[after.length - 1]).toBe('new');
    expect(floe.transactions[1]!.changes[0]!.after).toEqual([1, ...texts]);
    expect(replayed(floe.transactions, 'g')).toEqual(await selected('g'));
    if (mariadb) expect(replayed(floe.transactions, 'z')).toEqual(await selected('z'));
  });
});
