/**
 * One binlog session under binlog_row_metadata=MINIMAL (MySQL 8's default), where zongji pauses the
 * connection while it reads a new TABLE_MAP's columns from information_schema: floe's own
 * backpressure pause/resume in that moment must not let the rows after the TABLE_MAP through before
 * their table is known — zongji would skip them as rows of an unknown table, silently. A session
 * that keeps a table's rows raw leaves its TABLE_MAPs' column metadata to floe: zongji neither
 * parses it nor looks the columns up.
 *
 * The read-timeout watchdog: an event loop held by a synchronous step longer than the timeout (verify
 * hashing a large chunk) is not a silent server — the heartbeats wait unread in the socket.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyBinlogEvent } from '@vlasky/zongji';
import type { LocalServer } from '../../../../../src/demo/local-server.js';
import { BinlogSession } from '../../../../../src/source/mysql/binlog/zongji/binlog-session.js';
import { BINLOG_CONNECTION_OPTIONS } from '../../../../../src/source/mysql/binlog/zongji/binlog-values.js';
import { startTestServer } from '../../../../support/servers.js';
import { sql } from '../helpers.js';

let server: LocalServer;

beforeAll(async () => {
  server = await startTestServer({ serverId: 43, extraArgs: ['--binlog-row-metadata=MINIMAL'] });
});

afterAll(async () => {
  await server?.stop();
});

async function position(): Promise<{ file: string; position: number }> {
  const conn = await sql(server);
  try {
    const [rows] = (await conn.query('SHOW MASTER STATUS')) as unknown as [{ File: string; Position: number }[]];
    return { file: rows[0]!.File, position: Number(rows[0]!.Position) };
  } finally {
    await conn.end();
  }
}

describe('binlog session flow control', () => {
  it.each([true, false])('keeps the rows after a TABLE_MAP whose columns zongji is still fetching when backpressure resumes (raw rows: %s)', async (raw) => {
    const conn = await sql(server);
    const db = `session_${raw ? 'raw' : 'zongji'}_${process.pid}`;
    await conn.query(`CREATE DATABASE ${db}`);
    await conn.query(`CREATE TABLE ${db}.t (id INT PRIMARY KEY, v VARCHAR(10))`);
    const start = await position();
    await conn.query(`INSERT INTO ${db}.t VALUES (1, 'a'), (2, 'b')`);
    await conn.query(`INSERT INTO ${db}.t VALUES (3, 'c')`);
    await conn.query(`CREATE TABLE ${db}.done (id INT PRIMARY KEY)`);
    await conn.query(`INSERT INTO ${db}.done VALUES (1)`);
    await conn.end();

    const rowsEvents: string[] = [];
    let fetches = 0;
    let finishedMarker = false;
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    const errors: unknown[] = [];
    const session: BinlogSession = new BinlogSession({
      connection: { host: server.host, port: server.port, user: server.user, password: server.password, ...BINLOG_CONNECTION_OPTIONS },
      serverId: 7100 + (raw ? 1 : 2),
      start,
      includeSchema: { [db]: ['t', 'done'] },
      heartbeatMs: 1000,
      ...(raw ? { rawRows: () => true } : {}),
      onEvent: (e: AnyBinlogEvent) => {
        const ev = e as AnyBinlogEvent & { tableId?: number; tableMap?: Record<number, { tableName: string }> };
        if (e.getEventName() !== 'writerows') return;
        const table = ev.tableMap?.[ev.tableId!]?.tableName;
        if (table === 'done') {
          finishedMarker = true;
          finished();
        }
        else rowsEvents.push(String(table));
      },
      onError: (e) => {
        errors.push(e);
        finished();
      },
    });
    // failure injection at the step that matters: backpressure pauses and resumes the connection
    // just as zongji has paused it to fetch a TABLE_MAP's columns
    const zongji = (session as unknown as { zongji: { _fetchTableInfo(event: unknown, next: () => void): void } }).zongji;
    const fetch = zongji._fetchTableInfo;
    zongji._fetchTableInfo = function (this: unknown, event: unknown, next: () => void) {
      fetches++;
      session.pause();
      session.resume();
      return fetch.call(this, event, next);
    };
    session.start();
    try {
      // the marker's rows are behind a fetched TABLE_MAP too: lost with them, the wait ends by time
      await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 20_000))]);
    } finally {
      await session.stop();
    }
    expect(errors).toEqual([]);
    expect(fetches).toBeGreaterThan(0);
    // two transactions on t: a TABLE_MAP and a rows event each
    expect(rowsEvents).toEqual(['t', 't']);
    expect(finishedMarker, 'the rows of the marker table arrived').toBe(true);
  });

  it.each([true, false])('parses the column metadata of a TABLE_MAP once, floe or zongji, and looks up no columns for a table read raw (raw rows: %s)', async (raw) => {
    const conn = await sql(server);
    const db = `tablemap_${raw ? 'raw' : 'zongji'}_${process.pid}`;
    await conn.query(`CREATE DATABASE ${db}`);
    await conn.query(`CREATE TABLE ${db}.t (id INT PRIMARY KEY, v VARCHAR(10), e ENUM('x','y'))`);
    const start = await position();
    await conn.query(`INSERT INTO ${db}.t VALUES (1, 'a', 'y')`);
    await conn.query(`INSERT INTO ${db}.t VALUES (2, 'b', 'x')`);
    await conn.end();

    type TableMapSeen = { columnsMetadata?: unknown[]; columnNames?: string[]; floeTableMap?: Buffer; tableMap: Record<number, { columnSchemas: { COLUMN_NAME: string }[] }>; tableId: number };
    const seen: { metadata: number; names: string[]; bytes: boolean }[] = [];
    let rows = 0;
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    const session: BinlogSession = new BinlogSession({
      connection: { host: server.host, port: server.port, user: server.user, password: server.password, ...BINLOG_CONNECTION_OPTIONS },
      serverId: 7110 + (raw ? 1 : 2),
      start,
      includeSchema: { [db]: ['t'] },
      heartbeatMs: 1000,
      ...(raw ? { rawRows: () => true } : {}),
      onEvent: (e: AnyBinlogEvent) => {
        if (e.getEventName() === 'tablemap') {
          const m = e as unknown as TableMapSeen;
          seen.push({ metadata: m.columnsMetadata?.length ?? -1, names: m.tableMap[m.tableId]!.columnSchemas.map((c) => c.COLUMN_NAME), bytes: m.floeTableMap !== undefined });
        }
        if (e.getEventName() === 'writerows' && ++rows === 2) finished();
      },
      onError: () => finished(),
    });
    session.start();
    try {
      await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 20_000))]);
    } finally {
      await session.stop();
    }
    expect(rows).toBe(2);
    // read raw: floe has the event's bytes, zongji read no column metadata and asked information_schema
    // nothing (one nameless column per logged column); otherwise zongji's own reading of both
    const expected = raw ? { metadata: 0, names: ['@1', '@2', '@3'], bytes: true } : { metadata: 3, names: ['id', 'v', 'e'], bytes: false };
    expect(seen).toEqual([expected, expected]);
  });

  it('an event loop held longer than the read timeout is not taken for a silent server', async () => {
    const errors: unknown[] = [];
    let events = 0;
    const session = new BinlogSession({
      connection: { host: server.host, port: server.port, user: server.user, password: server.password, ...BINLOG_CONNECTION_OPTIONS },
      serverId: 7103,
      start: await position(),
      includeSchema: { none: [] },
      heartbeatMs: 200,
      onEvent: () => {
        events++;
      },
      onError: (e) => errors.push(e),
    });
    session.start();
    try {
      // the dump runs: the server's heartbeats arrive
      const until = Date.now() + 10_000;
      while (events < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(events).toBeGreaterThanOrEqual(3);
      // three holds of 1.2 s (six heartbeats, twice the 600 ms timeout), with the loop free between
      // them; each in the loop's check phase (after its poll for I/O, as an I/O callback's work is),
      // so that the next turn runs its timers before it reads the socket again
      for (let hold = 0; hold < 3; hold++) {
        await new Promise<void>((r) =>
          setImmediate(() => {
            const end = Date.now() + 1200;
            while (Date.now() < end) {
              // a synchronous step: nothing else runs
            }
            r();
          }),
        );
        await new Promise((r) => setTimeout(r, 300));
      }
      expect(errors.map(String)).toEqual([]);
      // and a server that does go silent is still noticed: the session fails once its socket is held
      (session as unknown as { binlogConnection(): { pause(): void } | undefined }).binlogConnection()?.pause();
      const silent = Date.now() + 5_000;
      while (errors.length === 0 && Date.now() < silent) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await session.stop();
    }
    expect(errors.map(String)).toHaveLength(1);
    expect(String(errors[0])).toMatch(/binlog read timeout: no event or heartbeat for \d+ ms/);
  });
});
