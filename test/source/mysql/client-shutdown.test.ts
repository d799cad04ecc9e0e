/**
 * A statement running while its server shuts down fails retryably, so that the pipeline restarts and
 * finds the server again instead of stopping: MySQL answers it with ER_SERVER_SHUTDOWN (1053, "Server
 * shutdown in progress") on a connection it then closes; MariaDB drops the connection. Either way
 * the FloeError says retryable — the mid-snapshot restart of test/e2e/mysql-faults.test.ts met the
 * MySQL answer in a chunk SELECT.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMysql, mysqlErrorCode } from '../../../src/source/mysql/client.js';
import { isFloeError } from '../../../src/util/errors.js';
import type { TestServer } from '../../support/mariadb.js';
import { serverKind, startTestServer } from '../../support/servers.js';

let server: TestServer;
const COUNTING = 'WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000000000) SELECT COUNT(*) AS c FROM r';

beforeAll(async () => {
  server = await startTestServer({ serverId: 61 });
});
afterAll(async () => {
  await server?.stop();
});

describe('a statement cut off by a server shutdown', () => {
  it('fails retryably, with the server error code kept', async () => {
    // a statement that works until stopped (a killed SLEEP() returns 1 instead of failing): a recursive
    // CTE counting to 10^9, cut off 300 ms in
    const client = await connectMysql({ host: server.host, port: server.port, user: server.user, password: server.password });
    // each server stops a recursion at 1,000 rounds by default
    await client.query(serverKind() === 'mysql' ? 'SET SESSION cte_max_recursion_depth = 1000000000' : 'SET SESSION max_recursive_iterations = 1000000000');
    const running = client.query(COUNTING).then(
      () => undefined,
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 300)); // the statement is on the server
    const restarted = server.restart!();
    const error = await running;
    await restarted;
    await client.close().catch(() => undefined);
    expect(isFloeError(error, 'source'), String(error)).toBe(true);
    expect((error as { retryable: boolean }).retryable).toBe(true);
    if (serverKind() === 'mysql') {
      expect(mysqlErrorCode(error)).toBe('ER_SERVER_SHUTDOWN');
      expect((error as Error).message).toMatch(/^source\.mysql: statement failed on 127\.0\.0\.1:\d+: Server shutdown in progress \[WITH RECURSIVE r/);
    }
  });
});
