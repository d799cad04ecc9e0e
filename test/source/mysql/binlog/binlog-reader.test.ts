import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import { createTestDatabase } from '../../../support/shared-mysql.js';
import { BinlogReader, type StartPosition } from '../../../../src/source/mysql/binlog/binlog-reader.js';
import type { BinlogEvent, TransactionEvent } from '../../../../src/source/mysql/events.js';
import { compareOffsets, parseOffset, serializeOffset, type BinlogOffset } from '../../../../src/source/mysql/offset/offset.js';
import { isFloeError } from '../../../../src/util/errors.js';
import { drainRawBinlog } from '../../../../bench/binlog-raw.js';
import { decodingFor, recapture, replicaId, serverOffset, sourceConfig, sql } from './helpers.js';
import { serverKind, startTestServer } from '../../../support/servers.js';
import type { BinlogDecoding } from '../../../../src/source/mysql/binlog/raw-transactions.js';

let db: string;
let conn: mysql.Connection;

beforeAll(async () => {
  db = await createTestDatabase('binlog');
  conn = await sql();
  await conn.query(`CREATE TABLE \`${db}\`.t (id INT PRIMARY KEY, v VARCHAR(20))`);
  await conn.query(`CREATE TABLE \`${db}\`.other (id INT PRIMARY KEY)`);
  await conn.query(`CREATE TABLE \`${db}\`.seq (id INT PRIMARY KEY, v VARCHAR(20))`);
  await conn.query(`CREATE TABLE \`${db}\`.k (id INT PRIMARY KEY)`);
  decoding = await decodingFor(['t', 'seq', 'k'].map((table) => ({ database: db, table })));
});
afterAll(async () => {
  await conn?.end();
});

let decoding: BinlogDecoding;
function reader(start: StartPosition, extra: Partial<ConstructorParameters<typeof BinlogReader>[0]> = {}): BinlogReader {
  return new BinlogReader({
    connection: sourceConfig(),
    serverId: replicaId(),
    start,
    tables: [{ database: db, table: 't' }],
    decoding,
    heartbeatMs: 500,
    progressIntervalMs: 0,
    ...extra,
  });
}

async function watermark(): Promise<BinlogOffset> {
  return serverOffset(conn);
}

/** Collects transactions until `count` of them arrived (progress events ignored; DDL re-captures). */
async function take(r: BinlogReader, count: number, also: BinlogEvent[] = []): Promise<TransactionEvent[]> {
  const out: TransactionEvent[] = [];
  if (count === 0) return out;
  for await (const e of r) {
    also.push(e);
    // what the pipeline does: apply the DDL to the table mapping before taking the next event
    if (e.kind === 'ddl') await recapture(decoding as never, { database: db, table: 't' });
    if (e.kind === 'transaction') out.push(e);
    if (out.length >= count) break;
  }
  return out;
}

const external = Boolean(process.env.FLOE_TEST_MYSQL_URL);

describe('binlog reader', () => {
  it('delivers whole transactions of captured tables with before/after images, GTID, offsets, and DDL', async () => {
    const start = await watermark();
    await conn.query(`INSERT INTO \`${db}\`.other VALUES (1)`); // not captured: no transaction
    await conn.beginTransaction();
    await conn.query(`INSERT INTO \`${db}\`.t VALUES (1, 'a'), (2, 'b')`);
    await conn.query(`UPDATE \`${db}\`.t SET v = 'c' WHERE id = 1`);
    await conn.query(`DELETE FROM \`${db}\`.t WHERE id = 2`);
    await conn.query(`INSERT INTO \`${db}\`.other VALUES (2)`);
    await conn.commit();
    await conn.query(`ALTER TABLE \`${db}\`.t ADD COLUMN w INT NULL`);
    await conn.query(`INSERT INTO \`${db}\`.t VALUES (3, 'x', 7)`);
    const r = reader({ kind: 'offset', offset: start });
    const all: BinlogEvent[] = [];
    const txns = await take(r, 2, all);
    await r.close();
    const [t1, t2] = txns;
    expect(t1.changes.map((c) => [c.op, c.before ?? null, c.after ?? null])).toEqual([
      ['insert', null, [1, 'a']],
      ['insert', null, [2, 'b']],
      ['update', [1, 'a'], [1, 'c']],
      ['delete', [2, 'b'], null],
    ]);
    expect(t1.changes.every((c) => c.table.database === db && c.table.table === 't')).toBe(true);
    expect(t1.changes.map((c) => c.position.eventIndex)).toEqual([0, 1, 2, 3]);
    expect(t1.changes.every((c) => c.position.commitPosition === t1.offset.position && c.position.file === t1.offset.file)).toBe(true);
    // MariaDB GTIDs are domain-server-sequence, MySQL's source UUID:transaction number
    expect(t1.gtid).toMatch(serverKind() === 'mariadb' ? /^\d+-\d+-\d+$/ : /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:\d+$/);
    expect(t1.timestampMs).toBeGreaterThan(Date.UTC(2020, 0, 1));
    const ddl = all.find((e) => e.kind === 'ddl');
    expect(ddl && ddl.kind === 'ddl' && ddl.statement).toMatch(/ALTER TABLE .*ADD COLUMN w/);
    expect(t2.changes).toHaveLength(1);
    expect(t2.changes[0].after).toEqual([3, 'x', 7]);
    // order: t1 < ddl < t2, all after the start
    expect(compareOffsets(start, t1.offset)).toBeLessThan(0);
    if (ddl?.kind === 'ddl') {
      expect(compareOffsets(t1.offset, ddl.offset)).toBeLessThan(0);
      expect(compareOffsets(ddl.offset, t2.offset)).toBeLessThan(0);
    }
    // the resume offset after t1 carries the GTID state including t1
    expect(t1.offset.gtids).toBeDefined();
  });

  it('resumes from file/position, GTID-only, serialized and earliest offsets without loss or duplicates', async () => {
    const start = await watermark();
    const N = 30;
    for (let i = 1; i <= N; i++) {
      if (i % 3 === 0) {
        await conn.beginTransaction();
        await conn.query(`INSERT INTO \`${db}\`.seq VALUES (?, 'x')`, [i]);
        await conn.query(`UPDATE \`${db}\`.seq SET v = 'y' WHERE id = ?`, [i]);
        await conn.commit();
      } else await conn.query(`INSERT INTO \`${db}\`.seq VALUES (?, 'x')`, [i]);
      if (i === 10) await conn.query('FLUSH BINARY LOGS'); // a rotation inside the range
    }
    const tables = [{ database: db, table: 'seq' }];
    const firstIds = (ts: TransactionEvent[]) => ts.map((t) => t.changes[0].after![0]);
    const all = await take(reader({ kind: 'offset', offset: start }, { tables }), N);
    expect(firstIds(all)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    for (const k of [4, 11, 20]) {
      const after = all[k - 1].offset;
      const variants: BinlogOffset[] = [
        { file: after.file, position: after.position, serverId: after.serverId }, // file/position only
        { gtids: after.gtids }, // GTIDs only (as after a failover)
        parseOffset(serializeOffset(after)), // what a checkpoint persists
      ];
      for (const v of variants) {
        const got = await take(reader({ kind: 'offset', offset: v }, { tables }), N - k);
        expect(firstIds(got)).toEqual(Array.from({ length: N - k }, (_, i) => k + i + 1));
      }
    }
    // earliest: everything since the oldest binlog, so at least our N transactions, in order
    const fromEarliest = reader({ kind: 'earliest' }, { tables });
    const early = await take(fromEarliest, N);
    expect(firstIds(early)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
  });

  it('starts at latest: only later transactions', async () => {
    await conn.query(`INSERT INTO \`${db}\`.t (id, v) VALUES (100, 'old')`);
    const r = reader({ kind: 'latest' });
    const it = r[Symbol.asyncIterator]();
    // let the reader resolve 'latest' before writing
    const first = it.next();
    await new Promise((res) => setTimeout(res, 500));
    await conn.query(`INSERT INTO \`${db}\`.t (id, v) VALUES (101, 'new')`);
    let e = await first;
    while (!e.done && e.value.kind !== 'transaction') e = await it.next();
    await r.close();
    expect(e.value.kind === 'transaction' && e.value.changes[0].after).toEqual([101, 'new', null]);
  });

  it('survives a KILL of its dump thread and neither loses nor repeats a transaction', async () => {
    const start = await watermark();
    const logs: string[] = [];
    const r = reader({ kind: 'offset', offset: start }, { tables: [{ database: db, table: 'k' }], reconnect: { initialDelayMs: 50 }, log: (m) => logs.push(m) });
    const N = 60;
    const writer = (async () => {
      for (let i = 1; i <= N; i++) {
        await conn.query(`INSERT INTO \`${db}\`.k VALUES (?)`, [i]);
        if (i % 20 === 0) {
          // kill the dump thread(s) of this reader: the server-side id equals the client thread id
          const id = r.dumpThreadId;
          if (id) await conn.query(`KILL ${id}`).catch(() => {});
          await new Promise((res) => setTimeout(res, 100));
        }
      }
    })();
    const got = await take(r, N);
    await writer;
    await r.close();
    expect(got.map((t) => t.changes[0].after![0])).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    expect(logs.filter((m) => /reconnecting/.test(m)).length).toBeGreaterThanOrEqual(1);
  });

  it('stops at a stop offset (the backfill window)', async () => {
    const low = await watermark();
    await conn.query(`INSERT INTO \`${db}\`.t (id, v) VALUES (200, 'in')`);
    await conn.query(`INSERT INTO \`${db}\`.t (id, v) VALUES (201, 'in')`);
    const high = await watermark();
    await conn.query(`INSERT INTO \`${db}\`.t (id, v) VALUES (202, 'out')`);
    const events: BinlogEvent[] = [];
    for await (const e of reader({ kind: 'offset', offset: low }, { stopAt: high })) events.push(e);
    const txns = events.filter((e): e is TransactionEvent => e.kind === 'transaction');
    expect(txns.map((t) => t.changes[0].after![0])).toEqual([200, 201]);
    // an empty window ends at once
    const none: BinlogEvent[] = [];
    for await (const e of reader({ kind: 'offset', offset: high }, { stopAt: high })) none.push(e);
    expect(none).toEqual([]);
  });

  it('reports a purged binlog with a clear error', async () => {
    // a private server: purging the shared one would pull binlogs from under other test files
    const server = await startTestServer({ serverId: 77 });
    const c = await mysql.createConnection({ host: server.host, port: server.port, user: server.user, password: server.password });
    try {
      await c.query('CREATE DATABASE p');
      await c.query('CREATE TABLE p.t (id INT PRIMARY KEY)');
      const old = await serverOffset(c);
      await c.query('INSERT INTO p.t VALUES (1)'); // a transaction after `old` in the file to be purged
      await c.query('FLUSH BINARY LOGS');
      await c.query('INSERT INTO p.t VALUES (2)');
      const now = { File: (await serverOffset(c)).file! };
      // MariaDB keeps a file until its binlog checkpoint (InnoDB durability) is written: retry
      for (let i = 0; i < 100; i++) {
        await c.query('FLUSH ENGINE LOGS');
        await c.query(`PURGE BINARY LOGS TO '${now.File}'`);
        const [files] = (await c.query('SHOW BINARY LOGS')) as unknown as [{ Log_name: string }[]];
        if (!files.some((f) => f.Log_name === old.file)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const privateDecoding = await decodingFor([{ database: 'p', table: 't' }], { host: server.host, port: server.port, user: server.user, password: server.password });
      const privateReader = (offset: BinlogOffset) =>
        new BinlogReader({
          connection: { host: server.host, port: server.port, user: server.user, password: server.password },
          serverId: replicaId(),
          start: { kind: 'offset', offset },
          tables: [{ database: 'p', table: 't' }],
          decoding: privateDecoding,
        });
      const failure = async (offset: BinlogOffset) => {
        try {
          for await (const e of privateReader(offset)) if (e.kind === 'transaction') return undefined;
        } catch (e) {
          return e;
        }
        return undefined;
      };
      const byFile = await failure(old);
      expect(isFloeError(byFile, 'source')).toBe(true);
      expect((byFile as Error).message).toMatch(/purged.*re-snapshot/s);
      expect((byFile as { retryable: boolean }).retryable).toBe(false);
      // the same by GTID: the server itself answers with error 1236
      const byGtid = await failure({ gtids: old.gtids });
      expect((byGtid as Error)?.message).toMatch(/1236|purged/);
      expect((byGtid as Error)?.message).toMatch(/re-snapshot/);
    } finally {
      await c.end();
      await server.stop();
    }
  });

  it('refuses a file/position offset of another server', async () => {
    const w = await watermark();
    let error: unknown;
    try {
      for await (const _ of reader({ kind: 'offset', offset: { file: w.file, position: w.position, serverId: 4242 } })) break;
    } catch (e) {
      error = e;
    }
    expect((error as Error)?.message).toMatch(/expected the binlog of server id 4242.*found server id/s);
  });
});

describe('raw decode mode', () => {
  it('counts what zongji decodes between two offsets, without converting', async () => {
    await conn.query(`CREATE TABLE \`${db}\`.raw (id INT PRIMARY KEY, v VARCHAR(20))`);
    const from = await watermark();
    for (let i = 0; i < 10; i++) await conn.query(`INSERT INTO \`${db}\`.raw VALUES (?, 'r'), (?, 'r')`, [2 * i, 2 * i + 1]);
    await conn.query(`UPDATE \`${db}\`.raw SET v = 'u'`);
    const to = await watermark();
    const stats = await drainRawBinlog({ connection: sourceConfig(), serverId: replicaId(), from, to, databases: [db] });
    expect(stats.rows).toBe(20 + 20);
    expect(stats.rowEvents).toBe(11);
    expect(stats.events).toBeGreaterThan(11);
  });
});

describe('foreign keys', () => {
  it('ON DELETE CASCADE: the parent delete is delivered; the server does not log the cascaded child deletes', async () => {
    // MariaDB KB "Replication and Foreign Keys": cascading deletes or updates are an internal
    // mechanism and are not written to the binary log (MySQL with InnoDB-native FKs alike; only
    // MySQL 9.x SQL-layer FK handling logs child row events). This test records that behaviour.
    await conn.query(`CREATE TABLE \`${db}\`.parent (id INT PRIMARY KEY)`);
    await conn.query(`CREATE TABLE \`${db}\`.child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES \`${db}\`.parent (id) ON DELETE CASCADE)`);
    await conn.query(`INSERT INTO \`${db}\`.parent VALUES (1), (2)`);
    await conn.query(`INSERT INTO \`${db}\`.child VALUES (10, 1), (11, 1), (12, 2)`);
    const tables = ['parent', 'child'].map((table) => ({ database: db, table }));
    const fkDecoding = await decodingFor(tables);
    const start = await watermark();
    await conn.query(`DELETE FROM \`${db}\`.parent WHERE id = 1`);
    await conn.query(`INSERT INTO \`${db}\`.parent VALUES (3)`); // a marker after it
    const r = new BinlogReader({ connection: sourceConfig(), serverId: replicaId(), start: { kind: 'offset', offset: start }, tables, decoding: fkDecoding });
    const txns = await take(r, 2);
    const [del] = txns;
    expect(del.changes.filter((c) => c.table.table === 'parent').map((c) => [c.op, c.before])).toEqual([['delete', [1]]]);
    const childDeletes = del.changes.filter((c) => c.table.table === 'child');
    const [rows] = (await conn.query(`SELECT id FROM \`${db}\`.child ORDER BY id`)) as unknown as [{ id: number }[]];
    expect(rows.map((x) => x.id)).toEqual([12]); // the server did cascade
    if (!external) expect(childDeletes).toEqual([]); // …but neither MariaDB nor MySQL 8.0 logged it
  });
});
