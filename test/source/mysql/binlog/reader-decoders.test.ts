/**
 * The binlog reader with floe's own row decoder (the default: rows events kept as bytes,
 * zongji-raw-events.ts, decoded when the transaction is taken) against the reader with zongji
 * decoding every row, over the same binlog range: every transaction, change and value identical —
 * for a table of many types, across a DDL the consumer applies mid-stream (the rows after it decoded
 * with the new mapping, the rows before it with the old), and for a table whose charset floe's
 * decoder does not read (cp1251: zongji's decoding of the same bytes, the fallback).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { createTestDatabase } from '../../../support/shared-mysql.js';
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
  await conn.query(`CREATE TABLE \`${db}\`.g (id INT PRIMARY KEY, name VARCHAR(20) CHARACTER SET cp1251)`);
});
afterAll(async () => {
  await conn?.end();
});

/** Reads [from, to) with one decoder; the DDL is applied to the mapping as the pipeline does. */
async function read(decoding: MappedTablesDecoding, from: BinlogOffset, to: BinlogOffset, rowDecoder: 'floe' | 'zongji'): Promise<{ transactions: TransactionEvent[]; compiled: string[] }> {
  const compiled: string[] = [];
  const compiledFor = decoding.compiledFor.bind(decoding);
  decoding.compiledFor = (...args) => {
    const c = compiledFor(...args);
    compiled.push(`${args[0].table}:${c === 'zongji' ? 'zongji' : c ? 'floe' : 'skip'}`);
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

const TABLES = () => ['a', 'g'].map((table) => ({ database: db, table }));

describe('binlog reader: floe decoder vs zongji', () => {
  it('hands out identical transactions, across a DDL and for a table floe decodes with zongji', async () => {
    // the mappings valid at the start, captured before the ALTER below
    const forFloe = await decodingFor(TABLES());
    const forZongji = await decodingFor(TABLES());
    const from = await serverOffset(conn);
    const row = (id: number) =>
      `(${id}, ${id % 3 === 0 ? 'NULL' : -id * 1000}, '${id}.000123', ${id / 7}, 'ü한😀${id}', 'çà${id}', '2024-02-29 23:59:59.${String(id).padStart(6, '0')}', ${id % 2 ? "'2001-09-09 01:46:40.123'" : 'NULL'}, '1000-01-01', '{"k":[${id},null,"x"]}', 'y', 'p,r', X'00ff${id.toString(16).padStart(2, '0')}', b'101010101010')`;
    await conn.query(`INSERT INTO \`${db}\`.a VALUES ${[1, 2, 3, 4, 5].map(row).join(',')}`);
    await conn.query(`INSERT INTO \`${db}\`.g VALUES (1, 'Привет'), (2, NULL)`);
    await conn.query(`UPDATE \`${db}\`.a SET v = CONCAT(v, '!'), d = -d, j = JSON_OBJECT('u', id) WHERE id <= 3`);
    await conn.query(`UPDATE \`${db}\`.g SET name = 'Мир' WHERE id = 1`);
    await conn.query(`ALTER TABLE \`${db}\`.a ADD COLUMN extra VARCHAR(5) DEFAULT 'new'`);
    await conn.query(`INSERT INTO \`${db}\`.a (id, v) VALUES (6, 'after')`);
    await conn.query(`UPDATE \`${db}\`.a SET extra = 'set' WHERE id = 1`);
    await conn.query(`DELETE FROM \`${db}\`.a WHERE id IN (2, 6)`);
    await conn.query(`DELETE FROM \`${db}\`.g WHERE id = 2`);
    const to = await serverOffset(conn);

    const floe = await read(forFloe, from, to, 'floe');
    const zongji = await read(forZongji, from, to, 'zongji');

    expect(floe.compiled).toEqual(['a:floe', 'g:zongji']);
    expect(zongji.compiled).toEqual([]);
    expect(floe.transactions.map((t) => t.changes.length)).toEqual([5, 2, 3, 1, 1, 1, 2, 1]);
    expect(floe.transactions).toEqual(zongji.transactions);
    // the row after the DDL carries the new column; the cp1251 text decoded
    const after = floe.transactions[4]!.changes[0]!.after!;
    expect(after[after.length - 1]).toBe('new');
    expect(floe.transactions[1]!.changes[0]!.after).toEqual([1, 'Привет']);
  });
});
