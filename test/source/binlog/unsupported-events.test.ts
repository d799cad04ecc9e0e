/**
 * MySQL 8 events floe cannot decode, without a MySQL 8 server: partial JSON updates
 * (PARTIAL_UPDATE_ROWS_EVENT, binlog_row_value_options=PARTIAL_JSON, 8.0.3+) carry row changes as
 * diffs against a before image floe does not keep; skipping them would lose data silently, so the
 * reader must stop with an error that names the server setting to change (preflight.ts checks the
 * same setting up front; this is the net for a server whose settings change while floe streams).
 * (Compressed transactions, TRANSACTION_PAYLOAD_EVENT, are read: compressed-transactions.test.ts.)
 *
 * The real reader streams from the harness MariaDB through a byte-level proxy
 * (test/support/binlog-rewrite-proxy.ts) that rewrites the event type code of the update rows events
 * in the dump stream to the MySQL 8 code (39 in libbinlogevents' Log_event_type, the same numbering
 * as zongji's lib/code_map.js). Everything else — the server, the network protocol, zongji's event
 * parser, floe's error classification (binlog-errors.ts) — is the real component. A pass-through run
 * of the same proxy shows the rows arrive when nothing is rewritten, so a refusal is caused by the
 * event type alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { createTestDatabase } from '../../support/shared-mysql.js';
import { startBinlogRewriteProxy, type BinlogRewriteProxy } from '../../support/binlog-rewrite-proxy.js';
import { BinlogReader } from '../../../src/source/mysql/binlog/binlog-reader.js';
import { parseOffset, type BinlogOffset } from '../../../src/source/mysql/offset/offset.js';
import { isFloeError } from '../../../src/util/errors.js';
import type { BinlogDecoding } from '../../../src/source/mysql/binlog/raw-transactions.js';
import { decodingFor, replicaId, sourceConfig, sql } from './helpers.js';

const UPDATE_ROWS = new Set([24, 31, 167, 170]); // v1, v2, MariaDB compressed v1 / v2
const PARTIAL_UPDATE_ROWS_EVENT = 39;

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
async function streamThrough(proxy: BinlogRewriteProxy, start: BinlogOffset): Promise<{ ops?: string[]; error?: unknown }> {
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
    const proxy = await startBinlogRewriteProxy(sourceConfig());
    try {
      expect(await streamThrough(proxy, start)).toEqual({ ops: ['insert'] });
    } finally {
      await proxy.close();
    }
  });

  it("a partial JSON update (PARTIAL_UPDATE_ROWS_EVENT) fails with binlog_row_value_options='', not retried", async () => {
    const start = await here();
    await conn.query(`UPDATE \`${db}\`.t SET doc = '{"a": 3}' WHERE id = 1`);
    const proxy = await startBinlogRewriteProxy(sourceConfig(), (event) => {
      if (!UPDATE_ROWS.has(event[4]!)) return false;
      event[4] = PARTIAL_UPDATE_ROWS_EVENT;
      return true;
    });
    try {
      const { ops, error } = await streamThrough(proxy, start);
      expect(proxy.rewritten).toBeGreaterThan(0);
      expect(ops).toBeUndefined();
      expect(isFloeError(error, 'source')).toBe(true);
      expect((error as Error).message).toMatch(/expected full row images, found partial JSON updates: set binlog_row_value_options=''/);
      expect((error as { retryable: boolean }).retryable).toBe(false);
    } finally {
      await proxy.close();
    }
  });
});
