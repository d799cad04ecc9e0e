/**
 * MySQL 8 events floe cannot decode, without a MySQL 8 server (issue 12, part A): compressed
 * transactions (TRANSACTION_PAYLOAD_EVENT, binlog_transaction_compression=ON, MySQL 8.0.20+). (Partial
 * JSON updates, PARTIAL_UPDATE_ROWS_EVENT, are decoded: test/source/binlog/partial-json*.test.ts.)
 * They carry row changes; skipping them would lose data silently, so the reader must stop with an
 * error that names the server setting to change (preflight.ts checks the same settings up front;
 * this is the net for a server whose settings change while floe streams).
 *
 * The real reader streams from the harness MariaDB through a byte-level proxy that rewrites the
 * event type code of the row events in the dump stream to the MySQL 8 code (40 in
 * libbinlogevents' Log_event_type, the same numbering as zongji's lib/code_map.js). Everything else —
 * the server, the network protocol, zongji's event parser, floe's error classification
 * (binlog-errors.ts) — is the real component. A pass-through run of the same proxy shows the rows
 * arrive when nothing is rewritten, so a refusal is caused by the event type alone.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { createTestDatabase } from '../../support/shared-mysql.js';
import { BinlogReader } from '../../../src/source/mysql/binlog/binlog-reader.js';
import { parseOffset, type BinlogOffset } from '../../../src/source/mysql/offset/offset.js';
import { isFloeError } from '../../../src/util/errors.js';
import type { BinlogDecoding } from '../../../src/source/mysql/binlog/raw-transactions.js';
import { decodingFor, replicaId, sourceConfig, sql } from './helpers.js';

const COM_BINLOG_DUMP = 0x12;
const COM_BINLOG_DUMP_GTID = 0x1e;
const WRITE_ROWS = new Set([23, 30, 166, 169]); // v1, v2, MariaDB compressed v1 / v2
const TRANSACTION_PAYLOAD_EVENT = 40;

interface Proxy {
  readonly port: number;
  rewritten: number;
  close(): Promise<void>;
}

/**
 * A TCP proxy to the harness server. After the client sends a binlog dump command (a packet with
 * sequence id 0 whose first byte is COM_BINLOG_DUMP[_GTID]), every server packet of that connection
 * is a binlog event packet: OK byte, then the event header (timestamp u32, type u8, …); events of a
 * type in `from` get type `to`. The event's CRC32 trailer is left stale: zongji does not verify it.
 */
async function startProxy(target: { host: string; port: number }, rewrite?: { from: ReadonlySet<number>; to: number }): Promise<Proxy> {
  const sockets = new Set<net.Socket>();
  const proxy: Proxy = { port: 0, rewritten: 0, close: async () => {} };
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    let dumping = false;
    let pending = Buffer.alloc(0);
    client.on('data', (chunk) => {
      // commands start a packet: 3-byte length, sequence id, command byte
      if (chunk.length >= 5 && chunk[3] === 0 && (chunk[4] === COM_BINLOG_DUMP || chunk[4] === COM_BINLOG_DUMP_GTID)) dumping = true;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!dumping || !rewrite) {
        client.write(chunk);
        return;
      }
      pending = Buffer.concat([pending, chunk]);
      let at = 0;
      while (pending.length - at >= 4) {
        const length = pending.readUIntLE(at, 3);
        if (pending.length - at < 4 + length) break;
        const payload = pending.subarray(at + 4, at + 4 + length);
        if (payload.length >= 20 && payload[0] === 0x00 && rewrite.from.has(payload[5])) {
          payload[5] = rewrite.to;
          proxy.rewritten++;
        }
        at += 4 + length;
      }
      client.write(pending.subarray(0, at));
      pending = Buffer.from(pending.subarray(at));
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(proxy, {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

let db: string;
let conn: mysql.Connection;
let decoding: BinlogDecoding;

beforeAll(async () => {
  db = await createTestDatabase('unsupported');
  conn = await sql();
  await conn.query(`CREATE TABLE \`${db}\`.t (id INT PRIMARY KEY, doc LONGTEXT)`);
  decoding = await decodingFor([{ database: db, table: 't' }]);
});
afterAll(async () => {
  await conn?.end();
});

async function here(): Promise<BinlogOffset> {
  const [rows] = (await conn.query('SHOW MASTER STATUS')) as unknown as [{ File: string; Position: number }[]];
  const [g] = (await conn.query('SELECT BINLOG_GTID_POS(?, ?) AS p, @@server_id AS id', [rows[0].File, rows[0].Position])) as unknown as [{ p: string; id: number }[]];
  return parseOffset(JSON.stringify({ file: rows[0].File, pos: Number(rows[0].Position), flavor: 'mariadb', gtids: g[0].p, serverId: Number(g[0].id) }));
}

/** Streams from `start` through `proxy`; the first transaction's changes, or the error the reader failed with. */
async function streamThrough(proxy: Proxy, start: BinlogOffset): Promise<{ ops?: string[]; error?: unknown }> {
  const reader = new BinlogReader({
    connection: { ...sourceConfig(), host: '127.0.0.1', port: proxy.port },
    serverId: replicaId(),
    start: { kind: 'offset', offset: start },
    tables: [{ database: db, table: 't' }],
    decoding,
    heartbeatMs: 500,
    progressIntervalMs: 0,
    reconnect: { maxAttempts: 0 },
  });
  const timeout = setTimeout(() => void reader.close(), 20_000);
  try {
    for await (const e of reader) if (e.kind === 'transaction') return { ops: e.changes.map((c) => c.op) };
    return {};
  } catch (error) {
    return { error };
  } finally {
    clearTimeout(timeout);
    await reader.close();
  }
}

describe('MySQL 8 events floe cannot decode stop the reader', () => {
  it('passes the rows through when nothing is rewritten (the proxy is transparent)', async () => {
    const start = await here();
    await conn.query(`INSERT INTO \`${db}\`.t VALUES (1, '{"a": 1}')`);
    const proxy = await startProxy(sourceConfig());
    try {
      expect(await streamThrough(proxy, start)).toEqual({ ops: ['insert'] });
    } finally {
      await proxy.close();
    }
  });

  it('a compressed transaction (TRANSACTION_PAYLOAD_EVENT) fails with binlog_transaction_compression=OFF, not retried', async () => {
    const start = await here();
    await conn.query(`INSERT INTO \`${db}\`.t VALUES (2, '{"a": 2}')`);
    const proxy = await startProxy(sourceConfig(), { from: WRITE_ROWS, to: TRANSACTION_PAYLOAD_EVENT });
    try {
      const { ops, error } = await streamThrough(proxy, start);
      expect(proxy.rewritten).toBeGreaterThan(0);
      expect(ops).toBeUndefined();
      expect(isFloeError(error, 'source')).toBe(true);
      expect((error as Error).message).toMatch(/expected uncompressed transactions.*set binlog_transaction_compression=OFF/s);
      expect((error as { retryable: boolean }).retryable).toBe(false);
    } finally {
      await proxy.close();
    }
  });
});
