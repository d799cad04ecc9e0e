/**
 * The dump connection's two pausers (dump-flow.ts), on a real server with binlog_row_metadata=MINIMAL,
 * where zongji pauses the connection to look up a TABLE_MAP's columns before it parses the rows: a
 * backpressure pause and resume of the session during that look-up must not let the rows through
 * early — zongji skips a rows event whose table it does not know yet, so they would be lost without
 * an error. The test makes that moment happen on purpose: it holds the session paused at the
 * transaction's GTID until the transaction's packets are buffered, resumes (the held packets are
 * parsed up to the TABLE_MAP, whose look-up starts), and pauses and resumes the session at once.
 * Every row must arrive. On MySQL 8 the same again for a compressed transaction, whose inner events
 * are fed by zongji-payload-events.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import type { AnyBinlogEvent } from '@vlasky/zongji';
import type { LocalServer } from '../../../../../src/demo/local-server.js';
import { BinlogSession } from '../../../../../src/source/mysql/binlog/zongji/binlog-session.js';
import { connectMysql } from '../../../../../src/source/mysql/client.js';
import { detectDialect } from '../../../../../src/source/mysql/dialect.js';
import { readWatermark } from '../../../../../src/source/mysql/snapshot/watermark.js';
import { startTestServer } from '../../../../support/servers.js';
import { replicaId } from '../helpers.js';

let server: LocalServer;
/** The private server's address (plain fields: both mysql2 and floe's client take it). */
let config: { host: string; port: number; user: string; password: string };
let conn: mysql.Connection;
let flavor: 'mysql' | 'mariadb';

beforeAll(async () => {
  server = await startTestServer({ extraArgs: ['--binlog-row-metadata=MINIMAL'] });
  config = { host: server.host, port: server.port, user: server.user, password: server.password };
  conn = await mysql.createConnection(config);
  await conn.query('CREATE DATABASE flow');
  await conn.query('CREATE TABLE flow.t (id INT PRIMARY KEY, v VARCHAR(10))');
  const client = await connectMysql(config);
  flavor = (await detectDialect(client)).flavor;
  await client.close();
});

afterAll(async () => {
  await conn?.end();
  await server?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Logs one 3-row transaction, then streams it with a pause and resume during the TABLE_MAP look-up. */
async function streamWithResumeDuringLookUp(firstId: number): Promise<{ seen: string[]; rows: number; pausedByLookUp: boolean; logged: string[] }> {
  const client = await connectMysql(config);
  const start = await readWatermark(client, await detectDialect(client));
  await client.close();
  await conn.query('BEGIN');
  await conn.query(`INSERT INTO flow.t VALUES (${firstId}, 'a'), (${firstId + 1}, 'b'), (${firstId + 2}, 'c')`);
  await conn.query('COMMIT');

  const seen: string[] = [];
  let rows = 0;
  let atGtid: () => void = () => {};
  const gtid = new Promise<void>((resolve) => (atGtid = resolve));
  let committed: () => void = () => {};
  const xid = new Promise<void>((resolve) => (committed = resolve));
  let failed: unknown;
  const session: BinlogSession = new BinlogSession({
    connection: config,
    serverId: replicaId(),
    start: { file: start.file!, position: start.position! },
    includeSchema: { flow: ['t'] },
    heartbeatMs: 1000,
    onEvent: (e: AnyBinlogEvent) => {
      const name = e.getEventName();
      seen.push(name);
      if (name === 'writerows') rows += (e as unknown as { rows: unknown[] }).rows.length;
      if ((name === 'gtid' || name === 'mariadbgtid') && !seen.slice(0, -1).some((n) => n === name)) {
        session.pause();
        atGtid();
      }
      if (name === 'xid') committed();
    },
    onError: (e) => {
      failed = e;
      committed();
    },
  });
  session.start();
  try {
    await gtid;
    // the rest of the transaction reaches the client and is held by the paused connection
    await sleep(300);
    session.resume();
    // mysql2's own pause flag, read only to know that the moment happened: parsing the held packets
    // stopped at the TABLE_MAP, whose columns zongji is now looking up with the connection paused
    const dump = (session as unknown as { zongji: { connection: { _paused: boolean } } }).zongji.connection;
    const pausedByLookUp = dump._paused && !seen.includes('tablemap');
    session.pause();
    session.resume();
    await Promise.race([xid, sleep(10_000)]);
    if (failed) throw failed;
    const [logged] = (await conn.query(`SHOW BINLOG EVENTS IN '${start.file}' FROM ${start.position}`)) as unknown as [{ Event_type: string }[]];
    return { seen, rows, pausedByLookUp, logged: logged.map((r) => r.Event_type) };
  } finally {
    await session.stop();
  }
}

describe('a backpressure resume during a TABLE_MAP look-up', () => {
  it('lets no rows through before the look-up answers: every row arrives', async () => {
    const { seen, rows, pausedByLookUp } = await streamWithResumeDuringLookUp(1);
    expect(pausedByLookUp).toBe(true);
    expect(seen.slice(seen.indexOf('tablemap'))).toEqual(['tablemap', 'writerows', 'xid']);
    expect(rows).toBe(3);
  });

  it('also inside a compressed transaction (MySQL 8)', async (context) => {
    if (flavor !== 'mysql') context.skip('MariaDB has no compressed transactions (TRANSACTION_PAYLOAD_EVENT is MySQL 8.0.20+)');
    await conn.query('SET SESSION binlog_transaction_compression = ON');
    try {
      const { seen, rows, pausedByLookUp, logged } = await streamWithResumeDuringLookUp(11);
      expect(logged).toContain('Transaction_payload');
      expect(pausedByLookUp).toBe(true);
      expect(seen.slice(seen.indexOf('tablemap'))).toEqual(['tablemap', 'writerows', 'xid']);
      expect(rows).toBe(3);
    } finally {
      await conn.query('SET SESSION binlog_transaction_compression = OFF');
    }
  });
});
