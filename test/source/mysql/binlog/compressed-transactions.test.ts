/**
 * The binlog reader over a real MySQL 8.0.31 that logs compressed transactions
 * (binlog_transaction_compression=ON: each transaction one zstd TRANSACTION_PAYLOAD_EVENT). The same
 * statements run twice, on two databases of identical tables: once in a session that logs them
 * compressed, once in a session with compression off (SET SESSION binlog_transaction_compression).
 * Every transaction read from the compressed range must equal its uncompressed twin change for
 * change and value for value — with floe's row decoder and with zongji's, on the main thread and in
 * the worker thread, with binlog_row_metadata FULL and MINIMAL (where zongji pauses the connection
 * to look up each TABLE_MAP's columns, and the reader's backpressure pauses and resumes it too), and
 * under the tightest backpressure (one buffered event). Each compressed transaction is delivered at
 * the position the server reports for its payload, and resuming from a transaction's offset
 * continues exactly after it. A payload of a compression type floe does not know stops the reader
 * once, not retried.
 *
 * MySQL only (MariaDB has no compressed transactions; its log_bin_compress compresses single events):
 * listed in test/mysql8-suites.ts MYSQL8_ONLY_SUITES. The payload bytes themselves:
 * transaction-payload.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import type { LocalServer } from '../../../../src/demo/local-server.js';
import { startMysql } from '../../../../src/demo/local-mysql.js';
import { BinlogReader } from '../../../../src/source/mysql/binlog/binlog-reader.js';
import type { BinlogEvent, TransactionEvent } from '../../../../src/source/mysql/events.js';
import { connectMysql } from '../../../../src/source/mysql/client.js';
import { detectDialect } from '../../../../src/source/mysql/dialect.js';
import { readWatermark } from '../../../../src/source/mysql/snapshot/watermark.js';
import type { BinlogOffset } from '../../../../src/source/mysql/offset/offset.js';
import { isFloeError } from '../../../../src/util/errors.js';
import { startBinlogRewriteProxy } from '../../../support/binlog-rewrite-proxy.js';
import { decodingFor, replicaId, zongjiOnly } from './helpers.js';

let server: LocalServer;
/** The private server's address (plain fields: both mysql2 and floe's client take it). */
let config: { host: string; port: number; user: string; password: string };
let admin: mysql.Connection;
let compressed: mysql.Connection;
let uncompressed: mysql.Connection;

const TABLES = ['a', 'b'];
const tablesOf = (db: string) => TABLES.map((table) => ({ database: db, table }));

async function schema(db: string): Promise<void> {
  await admin.query(`CREATE DATABASE ${db}`);
  await admin.query(`CREATE TABLE ${db}.a (
    id BIGINT UNSIGNED PRIMARY KEY, i INT, d DECIMAL(20,6), f DOUBLE, v VARCHAR(40) CHARACTER SET utf8mb4,
    t DATETIME(6), ts TIMESTAMP(3) NULL, j JSON, e ENUM('x','y','z'), s SET('p','q','r'), b BLOB, bits BIT(12))`);
  await admin.query(`CREATE TABLE ${db}.b (k1 INT, k2 VARCHAR(10), n DECIMAL(8,2), PRIMARY KEY (k1, k2))`);
}

/**
 * Four transactions on `db`: 300 inserts with every type (several rows events), a mix over both
 * tables (updates, a key change, deletes), a one-row insert, and one over both tables again.
 * `seed` shifts the values, so that two runs on the same database do not collide.
 */
async function workload(c: mysql.Connection, db: string, seed: number): Promise<void> {
  const base = seed * 1000;
  const rows = Array.from({ length: 300 }, (_, k) => {
    const n = base + k;
    return `(${18446744073709551615n - BigInt(n)}, ${n - 150}, ${n}.${String(n % 1000000).padStart(6, '0')}, ${n / 7}, 'ü-${n}-${'z'.repeat(n % 30)}',
      '2024-02-29 23:59:59.${String(n % 1000000).padStart(6, '0')}', FROM_UNIXTIME(${1_700_000_000 + n}.125), '{"n": ${n}, "a": [1, "x", null]}',
      '${'xyz'[n % 3]}', '${['p', 'q,r', ''][n % 3]}', UNHEX('${n.toString(16).padStart(4, '0')}00ff'), b'${(n % 4096).toString(2)}')`;
  });
  await c.query('BEGIN');
  await c.query(`INSERT INTO ${db}.a VALUES ${rows.join(', ')}`);
  await c.query('COMMIT');
  await c.query('BEGIN');
  await c.query(`INSERT INTO ${db}.b VALUES (${base}, 'k', 1.50), (${base}, 'l', -2.25), (${base + 1}, 'k', 0.00)`);
  await c.query(`UPDATE ${db}.a SET v = CONCAT(v, '!'), j = JSON_SET(j, '$.n', 0) WHERE id % 7 = 0 AND i >= ${base - 150}`);
  await c.query(`UPDATE ${db}.b SET k2 = 'm', n = n * 3 WHERE k1 = ${base} AND k2 = 'l'`);
  await c.query(`DELETE FROM ${db}.a WHERE id % 11 = 0 AND i >= ${base - 150}`);
  await c.query(`DELETE FROM ${db}.b WHERE k1 = ${base + 1}`);
  await c.query('COMMIT');
  await c.query(`INSERT INTO ${db}.b VALUES (${base + 2}, 'solo', 9.99)`);
  await c.query('BEGIN');
  await c.query(`UPDATE ${db}.b SET n = NULL WHERE k1 = ${base + 2}`);
  await c.query(`UPDATE ${db}.a SET e = NULL, s = 'p,q,r' WHERE i = ${base - 150}`);
  await c.query('COMMIT');
}

/** A server offset with its file and position (the server's current one). */
type Offset = BinlogOffset & { readonly file: string; readonly position: number };

async function offsetNow(): Promise<Offset> {
  const client = await connectMysql(config);
  try {
    const offset = await readWatermark(client, await detectDialect(client));
    if (offset.file === undefined || offset.position === undefined) throw new Error(`expected a file/position offset, found ${JSON.stringify(offset)}`);
    return offset as Offset;
  } finally {
    await client.close();
  }
}

interface ReadOptions {
  thread: 'main' | 'worker';
  rowDecoder: 'floe' | 'zongji';
  maxBufferedEvents?: number;
}

/** The transactions of `db`'s tables in [from, to). */
async function read(db: string, from: BinlogOffset | { kind: 'file'; file: string; position: number }, to: BinlogOffset, options: ReadOptions): Promise<TransactionEvent[]> {
  const decoding = await decodingFor(tablesOf(db), config);
  const reader = new BinlogReader({
    connection: config,
    serverId: replicaId(),
    start: 'kind' in from ? from : { kind: 'offset', offset: from },
    stopAt: to,
    tables: tablesOf(db),
    decoding: options.rowDecoder === 'zongji' ? zongjiOnly(decoding) : decoding,
    heartbeatMs: 500,
    progressIntervalMs: 0,
    thread: options.thread,
    maxBufferedEvents: options.maxBufferedEvents ?? 256,
  });
  const out: TransactionEvent[] = [];
  const timeout = setTimeout(() => void reader.close(), 60_000);
  try {
    for await (const e of reader as AsyncIterable<BinlogEvent>) if (e.kind === 'transaction') out.push(e);
  } finally {
    clearTimeout(timeout);
    await reader.close();
  }
  return out;
}

/** A transaction's changes with the database name left out (the twins live in two databases). */
function changesOf(t: TransactionEvent): unknown[] {
  return t.changes.map((c) => ({ ...c, table: c.table.table }));
}

interface PayloadRow {
  Pos: number;
  End_log_pos: number;
  Event_type: string;
}

async function serverEvents(file: string): Promise<PayloadRow[]> {
  const [rows] = (await admin.query(`SHOW BINLOG EVENTS IN '${file}'`)) as unknown as [PayloadRow[]];
  return rows.map((r) => ({ Pos: Number(r.Pos), End_log_pos: Number(r.End_log_pos), Event_type: r.Event_type }));
}

/** Per binlog_row_metadata: the compressed and the uncompressed range of one workload run. */
const ranges = new Map<string, { c: [Offset, Offset]; u: [Offset, Offset] }>();

beforeAll(async () => {
  server = await startMysql({ extraArgs: ['--binlog-transaction-compression=ON'] });
  config = { host: server.host, port: server.port, user: server.user, password: server.password };
  const connect = () => mysql.createConnection({ ...config, supportBigNumbers: true, bigNumberStrings: true });
  admin = await connect();
  compressed = await connect();
  uncompressed = await connect();
  await uncompressed.query('SET SESSION binlog_transaction_compression = OFF');
  await schema('zc');
  await schema('zu');
  let seed = 1;
  for (const metadata of ['FULL', 'MINIMAL']) {
    await admin.query(`SET GLOBAL binlog_row_metadata = '${metadata}'`);
    const c0 = await offsetNow();
    await workload(compressed, 'zc', seed);
    const c1 = await offsetNow();
    await workload(uncompressed, 'zu', seed);
    const u1 = await offsetNow();
    ranges.set(metadata, { c: [c0, c1], u: [c1, u1] });
    seed++;
  }
  await admin.query("SET GLOBAL binlog_row_metadata = 'FULL'");
});

afterAll(async () => {
  for (const c of [admin, compressed, uncompressed]) await c?.end();
  await server?.stop();
});

describe('compressed transactions from MySQL 8', () => {
  it('are logged compressed in one session and uncompressed in the other (what the comparison rests on)', async () => {
    const { c, u } = ranges.get('FULL')!;
    const events = await serverEvents(c[0].file);
    const within = (r: PayloadRow, [from, to]: [Offset, Offset]) => r.Pos >= from.position && r.End_log_pos <= to.position && r.Pos < r.End_log_pos;
    expect(events.filter((r) => within(r, c) && r.Event_type === 'Transaction_payload').length).toBe(4);
    expect(events.filter((r) => within(r, c) && /rows|Table_map/i.test(r.Event_type)).length).toBe(0);
    expect(events.filter((r) => within(r, u) && r.Event_type === 'Transaction_payload').length).toBe(0);
    expect(events.filter((r) => within(r, u) && r.Event_type === 'Write_rows').length).toBeGreaterThan(2);
  });

  for (const metadata of ['FULL', 'MINIMAL']) {
    for (const options of [
      { thread: 'main', rowDecoder: 'floe' },
      { thread: 'worker', rowDecoder: 'floe' },
      { thread: 'main', rowDecoder: 'zongji' },
      { thread: 'worker', rowDecoder: 'floe', maxBufferedEvents: 1 },
      { thread: 'main', rowDecoder: 'zongji', maxBufferedEvents: 1 },
    ] satisfies ReadOptions[]) {
      it(`equal their uncompressed twins change for change (binlog_row_metadata=${metadata}, ${JSON.stringify(options)})`, async () => {
        const { c, u } = ranges.get(metadata)!;
        const got = await read('zc', c[0], c[1], options);
        const twins = await read('zu', u[0], u[1], { thread: 'main', rowDecoder: 'floe' });
        expect(twins.length).toBe(4);
        expect(twins[0]!.changes.length).toBe(300);
        expect(twins[1]!.changes.length).toBeGreaterThan(40);
        expect(got.map(changesOf)).toEqual(twins.map(changesOf));
      });
    }
  }

  it("are delivered at their payload's end position, with their GTIDs, and resume exactly after one", async () => {
    const { c } = ranges.get('FULL')!;
    const events = await serverEvents(c[0].file);
    const payloads = events.filter((r) => r.Event_type === 'Transaction_payload' && r.Pos >= c[0].position && r.End_log_pos <= c[1].position);
    const all = await read('zc', c[0], c[1], { thread: 'worker', rowDecoder: 'floe' });
    expect(all.map((t) => t.position.commitPosition)).toEqual(payloads.map((p) => p.End_log_pos));
    expect(all.map((t) => t.offset.position)).toEqual(payloads.map((p) => p.End_log_pos));
    expect(payloads.length).toBe(4);
    expect(new Set(all.map((t) => t.gtid)).size).toBe(4);
    // after the first: from its offset (file/position and GTID state), and from its file/position alone
    const fromOffset = await read('zc', all[0]!.offset, c[1], { thread: 'main', rowDecoder: 'floe' });
    expect(fromOffset.map((t) => t.gtid)).toEqual(all.slice(1).map((t) => t.gtid));
    const fromPosition = await read('zc', { kind: 'file', file: all[1]!.position.file, position: all[1]!.position.commitPosition }, c[1], { thread: 'worker', rowDecoder: 'floe' });
    expect(fromPosition.map((t) => t.gtid)).toEqual(all.slice(2).map((t) => t.gtid));
    expect(fromPosition.map(changesOf)).toEqual(all.slice(2).map(changesOf));
  });

  it('of a compression type floe does not know stop the reader once, with the type and what to do, not retried', async () => {
    const { c } = ranges.get('FULL')!;
    // the payload's first header field is its compression type (codecs/binary.cpp `encode`):
    // type 2, length 1, value 0 (ZSTD) at bytes 19..21 of the event; 7 is no type MySQL defines
    const proxy = await startBinlogRewriteProxy(config, (event) => {
      if (event[4] !== 40 || event[19] !== 2 || event[20] !== 1) return false;
      event[21] = 7;
      return true;
    });
    const reader = new BinlogReader({
      // plain transport: the proxy rewrites the events' bytes, which TLS would hide from it
      connection: { ...config, host: '127.0.0.1', port: proxy.port, tls: { mode: 'disabled' } },
      serverId: replicaId(),
      start: { kind: 'offset', offset: c[0] },
      tables: tablesOf('zc'),
      decoding: await decodingFor(tablesOf('zc'), config),
      heartbeatMs: 500,
      progressIntervalMs: 0,
      reconnect: { maxAttempts: 3, initialDelayMs: 10 },
    });
    let error: unknown;
    const delivered: BinlogEvent[] = [];
    try {
      for await (const e of reader) if (e.kind === 'transaction') delivered.push(e);
    } catch (e) {
      error = e;
    } finally {
      await reader.close();
      await proxy.close();
    }
    expect(delivered).toEqual([]);
    expect(isFloeError(error, 'unsupported')).toBe(true);
    expect((error as { retryable: boolean }).retryable).toBe(false);
    expect((error as Error).message).toMatch(
      new RegExp(`^source\\.mysql\\.binlog: expected the compressed transaction \\(TRANSACTION_PAYLOAD_EVENT ending at ${c[0].file.replace('.', '\\.')}:\\d+\\) to use compression type 0 \\(ZSTD\\) or 255 \\(NONE\\), found type 7`),
    );
    expect((error as Error).message).toContain('set binlog_transaction_compression=OFF');
    expect(proxy.rewritten).toBeGreaterThan(0);
    // one replication session: the reader did not reconnect to try again
    expect(proxy.dumps).toBe(1);
  });
});
