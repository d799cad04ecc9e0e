/**
 * Which server a test file runs against, and private servers of that kind. The suite runs twice over
 * the files in test/mysql8-suites.ts: in the `integration` project against MariaDB, in the `mysql8`
 * project against Oracle MySQL 8 (global-setup.ts provides the kind with the shared server's URL).
 * A test that needs a server of its own (other options, a restart, a replica) starts it with
 * {@link startTestServer}, which gives it the same kind as the shared one.
 */
import { inject } from 'vitest';
import type { LocalServer, StartLocalServerOptions } from '../../src/demo/local-server.js';
import { startMariaDb } from '../../src/demo/local-mariadb.js';
import { startMysql } from '../../src/demo/local-mysql.js';

export type ServerKind = 'mariadb' | 'mysql';

/** The kind of the run's shared server (and of the servers {@link startTestServer} starts). */
export function serverKind(): ServerKind {
  return inject('serverKind');
}

/** Starts a private server of the run's kind. */
export function startTestServer(options: StartLocalServerOptions = {}): Promise<LocalServer> {
  return startServerOfKind(serverKind(), options);
}

export function startServerOfKind(kind: ServerKind, options: StartLocalServerOptions = {}): Promise<LocalServer> {
  return kind === 'mysql' ? startMysql(options) : startMariaDb(options);
}
