/**
 * The binlog reader with its session in a worker thread (thread: 'worker', worker-session.ts):
 * the same transactions as the reader on one thread over one range (a DDL applied mid-stream, a
 * table decoded by the zongji fallback, GTIDs and offsets that survive the thread boundary), a KILL
 * of the worker's dump thread survived without losing or repeating a transaction, and a binlog error
 * classified as on one thread (its code and errno cross the boundary).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { createTestDatabase } from '../../../support/shared-mysql.js';
import { BinlogReader, type BinlogReaderOptions } from '../../../../src/source/mysql/binlog/binlog-reader.js';
import type { MappedTablesDecoding } from '../../../../src/source/mysql/binlog/binlog-decoding.js';
import type { BinlogEvent, TransactionEvent } from '../../../../src/source/mysql/events.js';
import { compareOffsets, parseOffset } from '../../../../src/source/mysql/offset/offset.js';
import { isFloeError } from '../../../../src/util/errors.js';
import { decodingFor, recapture, replicaId, serverOffset, sourceConfig, sql } from './helpers.js';

let db: string;
let conn: mysql.Connection;

beforeAll(async () => {
  db = await createTestDatabase('worker');
  conn = await sql();
  await conn.query(`CREATE TABLE \`${db}\`.a (id BIGINT PRIMARY KEY, d DECIMAL(30,9), v VARCHAR(30), t DATETIME(6), j JSON)`);
  await conn.query(`CREATE TABLE \`${db}\`.g (id INT PRIMARY KEY, name VARCHAR(20) CHARACTER SET cp1251)`);
  await conn.query(`CREATE TABLE \`${db}\`.k (id INT PRIMARY KEY)`);
});
afterAll(async () => {
  await conn?.end();
});

function reader(decoding: MappedTablesDecoding, extra: Partial<BinlogReaderOptions> & Pick<BinlogReaderOptions, 'start'>): BinlogReader {
  return new BinlogReader({ connection: sourceConfig(), serverId: replicaId(), tables: ['a', 'g'].map((table) => ({ database: db, table })), decoding, heartbeatMs: 500, progressIntervalMs: 0, ...extra });
}

describe('binlog reader in a worker thread', () => {
  it('hands out what the reader on one thread hands out', async () => {
    const tables = ['a', 'g'].map((table) => ({ database: db, table }));
    const forWorker = await decodingFor(tables);
    const forMain = await decodingFor(tables);
    const from = await serverOffset(conn);
    for (let i = 1; i <= 30; i++) await conn.query(`INSERT INTO \`${db}\`.a VALUES (?, ?, ?, ?, ?)`, [i, `-${i}.123456789`, `ü${i}😀`, `2024-01-0${(i % 9) + 1} 12:00:00.00000${i % 10}`, JSON.stringify({ i, f: i / 3 })]);
    await conn.query(`INSERT INTO \`${db}\`.g VALUES (1, 'Привет')`);
    await conn.query(`UPDATE \`${db}\`.a SET v = 'x' WHERE id < 10`);
    await conn.query(`ALTER TABLE \`${db}\`.a ADD COLUMN n INT DEFAULT 7`);
    await conn.query(`UPDATE \`${db}\`.a SET n = id WHERE id > 25`);
    await conn.query(`DELETE FROM \`${db}\`.a WHERE id = 3`);
    const to = await serverOffset(conn);
    const read = async (decoding: MappedTablesDecoding, thread: 'worker' | 'main') => {
      const out: BinlogEvent[] = [];
      for await (const e of reader(decoding, { start: { kind: 'offset', offset: from }, stopAt: to, thread })) {
        if (e.kind === 'ddl') await recapture(decoding, { database: db, table: 'a' });
        if (e.kind !== 'progress') out.push(e);
      }
      return out;
    };
    const inWorker = await read(forWorker, 'worker');
    const onMain = await read(forMain, 'main');
    expect(inWorker.filter((e) => e.kind === 'transaction').map((t) => (t as TransactionEvent).changes.length)).toEqual([...Array(30).fill(1), 1, 9, 5, 1]);
    expect(inWorker.map((e) => e.kind)).toContain('ddl');
    expect(inWorker).toEqual(onMain);
    // the offsets are offsets again (GTID states with their methods), comparable with the server's
    expect(compareOffsets(inWorker.at(-1)!.offset!, to)).toBeLessThanOrEqual(0);
  });

  it('survives a KILL of its dump thread and neither loses nor repeats a transaction', async () => {
    const decoding = await decodingFor([{ database: db, table: 'k' }]);
    const logs: string[] = [];
    const r = reader(decoding, { start: { kind: 'offset', offset: await serverOffset(conn) }, tables: [{ database: db, table: 'k' }], thread: 'worker', reconnect: { initialDelayMs: 50 }, log: (m) => logs.push(m) });
    const N = 60;
    const got: number[] = [];
    const iterator = r[Symbol.asyncIterator]();
    const collect = (async () => {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        if (next.value.kind === 'transaction') got.push(next.value.changes[0]!.after![0] as number);
        if (got.length === N) return;
      }
    })();
    // the worker is connected once it told its dump thread id
    for (let i = 0; i < 200 && r.dumpThreadId === undefined; i++) await new Promise((res) => setTimeout(res, 25));
    let kills = 0;
    for (let i = 1; i <= N; i++) {
      await conn.query(`INSERT INTO \`${db}\`.k VALUES (?)`, [i]);
      if (i % 20 === 0) {
        const id = r.dumpThreadId;
        if (id) {
          await conn.query(`KILL ${id}`).catch(() => {});
          kills++;
        }
        // the new session (a new worker) connects and tells its id
        for (let w = 0; w < 200 && (r.dumpThreadId === undefined || r.dumpThreadId === id); w++) await new Promise((res) => setTimeout(res, 25));
      }
    }
    await collect;
    await r.close();
    expect(kills).toBe(3);
    expect(got).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    expect(logs.filter((m) => /reconnecting/.test(m)).length).toBeGreaterThanOrEqual(2);
  });

  it('reports a binlog error from the worker as the reader on one thread does', async () => {
    const decoding = await decodingFor([{ database: db, table: 'a' }]);
    const [rows] = (await conn.query('SHOW MASTER STATUS')) as unknown as [{ File: string; Position: number }[]];
    // a position inside the current file that is no event start: the server refuses the dump
    const offset = parseOffset(JSON.stringify({ file: rows[0]!.File, pos: 5, serverId: (await serverOffset(conn)).serverId }));
    let error: unknown;
    try {
      for await (const _ of reader(decoding, { start: { kind: 'offset', offset }, thread: 'worker', reconnect: { maxAttempts: 0 } })) void _;
    } catch (e) {
      error = e;
    }
    let onMain: unknown;
    try {
      for await (const _ of reader(decoding, { start: { kind: 'offset', offset }, thread: 'main', reconnect: { maxAttempts: 0 } })) void _;
    } catch (e) {
      onMain = e;
    }
    expect(isFloeError(error)).toBe(true);
    expect(String((error as Error).message)).toBe(String((onMain as Error).message));
  });
});
