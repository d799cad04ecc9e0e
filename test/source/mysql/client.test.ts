/**
 * The session seam: floe's session settings are in force, reads stream with back-pressure and can be
 * abandoned, failures name the statement and the server error code, and the driver can be injected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mysql from 'mysql2';
import { connectMysql, mysqlErrorCode, type DriverConnection, type MysqlClient } from '../../../src/source/mysql/client.js';
import { isFloeError } from '../../../src/util/errors.js';
import { sharedMysqlConfig, createTestDatabase } from '../../support/shared-mysql.js';

let client: MysqlClient;
let db: string;

beforeAll(async () => {
  db = await createTestDatabase('client');
  client = await connectMysql({ ...sharedMysqlConfig(), database: db });
});
afterAll(async () => {
  await client?.query(`DROP DATABASE IF EXISTS \`${db}\``);
  await client?.close();
});

describe('MySQL session', () => {
  it('runs with UTC, a fixed sql_mode and text values', async () => {
    const [row] = await client.query('SELECT @@session.time_zone AS tz, @@session.sql_mode AS mode, CAST(18446744073709551615 AS UNSIGNED) AS big, CAST(1.50 AS DECIMAL(5,2)) AS d, CAST(\'2024-01-02 03:04:05.678\' AS DATETIME(3)) AS dt');
    expect(row).toEqual({ tz: '+00:00', mode: 'NO_ENGINE_SUBSTITUTION', big: '18446744073709551615', d: '1.50', dt: '2024-01-02 03:04:05.678' });
    const { rows, fields } = await client.queryArrays('SELECT 1 AS a, NULL AS b');
    expect(rows).toEqual([[1, null]]);
    expect(fields.map((f) => f.name)).toEqual(['a', 'b']);
    expect(typeof client.threadId).toBe('number');
  });

  it('streams rows, and a loop left early leaves the session usable', async () => {
    await client.query('CREATE TABLE many (id INT PRIMARY KEY)');
    await client.query(`INSERT INTO many SELECT seq FROM seq_1_to_5000`).catch(async () => {
      // not MariaDB: build the rows another way
      for (let i = 0; i < 5000; i += 500) await client.query(`INSERT INTO many VALUES ${Array.from({ length: 500 }, (_, j) => `(${i + j + 1})`).join(',')}`);
    });
    let n = 0;
    for await (const row of client.stream('SELECT id FROM many ORDER BY id', { highWaterMark: 16 })) {
      expect(row).toEqual([++n]);
    }
    expect(n).toBe(5000);
    let seen = 0;
    for await (const _ of client.stream('SELECT id FROM many ORDER BY id', { highWaterMark: 16 })) {
      if (++seen === 10) break;
    }
    expect(await client.query('SELECT COUNT(*) AS c FROM many')).toEqual([{ c: '5000' }]); // BIGINT arrives as exact text
  });

  it('names the failed statement and keeps the server error code', async () => {
    const err = await client.query('SELECT * FROM no_such_table').catch((e: unknown) => e);
    expect(isFloeError(err, 'source')).toBe(true);
    expect((err as Error).message).toMatch(/^source\.mysql: statement failed on .*doesn't exist \[SELECT \* FROM no_such_table\]$/);
    expect(mysqlErrorCode(err)).toBe('ER_NO_SUCH_TABLE');
  });

  it('a connection that never opened is one line: where, the socket code or the server error, what to check; no statement', async () => {
    const refused = await connectMysql({ host: '127.0.0.1', port: 1, user: 'nobody', password: 'pw-never-shown', tls: { mode: 'disabled' } }).catch((e: unknown) => e);
    expect((refused as Error).message).toBe('source.mysql: cannot connect to nobody@127.0.0.1:1: connection refused (ECONNREFUSED): no server listens there; check source.host and source.port, and that the server runs');
    // the server may be back later: a restart of the pipeline may find it
    expect(isFloeError(refused, 'source') && refused.retryable).toBe(true);
    expect(mysqlErrorCode(refused)).toBe('ECONNREFUSED');

    const shared = sharedMysqlConfig();
    const denied = await connectMysql({ ...shared, user: 'no_such_user_here', password: 'pw-never-shown' }).catch((e: unknown) => e);
    expect((denied as Error).message).toMatch(
      new RegExp(`^source\\.mysql: cannot connect to no_such_user_here@${shared.host.replace(/\./g, '\\.')}:${shared.port}: server error ER_ACCESS_DENIED_ERROR \\(1045\\): Access denied for user 'no_such_user_here'@'[^']+' \\(using password: YES\\); check source\\.user and source\\.password`),
    );
    expect(isFloeError(denied, 'source') && denied.retryable).toBe(false);
    for (const e of [refused, denied]) {
      expect((e as Error).message).not.toMatch(/statement failed|\[SET /);
      expect((e as Error).message).not.toContain('pw-never-shown');
      expect((e as Error).message.match(/source\.mysql:/g)).toHaveLength(1);
    }
  });

  it('takes an injected driver', async () => {
    const statements: string[] = [];
    const driver = (options: Record<string, unknown>): DriverConnection => {
      const real = mysql.createConnection(options as mysql.ConnectionOptions);
      const originalQuery = real.query.bind(real);
      (real as unknown as { query: unknown }).query = (opts: { sql: string }, cb?: unknown) => {
        statements.push(opts.sql);
        return (originalQuery as (o: unknown, c?: unknown) => unknown)(opts, cb);
      };
      return real as unknown as DriverConnection;
    };
    const c = await connectMysql(sharedMysqlConfig(), { driver, initStatements: ["SET SESSION group_concat_max_len = 4096"] });
    await c.query('SELECT 1');
    await c.close();
    expect(statements).toEqual(["SET time_zone = '+00:00'", "SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'", 'SET SESSION net_write_timeout = 3600', 'SET SESSION group_concat_max_len = 4096', 'SELECT 1']);
  });
});
