/**
 * Test harness: private MariaDB servers with the binlog set up the way floe needs it. The server
 * spawning itself lives in `src/demo/local-mariadb.ts` (`floe demo` uses the same code); this module
 * keeps the names the tests use.
 *
 * `FLOE_TEST_MYSQL_URL` (e.g. mysql://root:pw@127.0.0.1:3307) points the shared-server tests at any
 * other server (MySQL 8.x) instead; `FLOE_TEST_MYSQL_CONTAINER=mysql:8.4` starts one with
 * testcontainers (global-setup.ts, mysql-container.ts). Tests that must reconfigure the server (pre-flight) always start
 * their own with `startMariaDb({ extraArgs })`.
 */
import { freePort, type LocalServer } from '../../src/demo/local-server.js';
import { startMariaDb } from '../../src/demo/local-mariadb.js';

export { freePort, startMariaDb };
export type TestServer = LocalServer;

/** Parses mysql://user:password@host:port into connection fields. */
export function parseMysqlUrl(url: string): { host: string; port: number; user: string; password: string } {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: u.port ? Number(u.port) : 3306,
    user: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password || ''),
  };
}

