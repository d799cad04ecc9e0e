/**
 * Vitest global setup: one shared binlog-enabled server for the whole run of a project — MariaDB for
 * `integration`, Oracle MySQL 8 for `mysql8` (test/mysql8-suites.ts) — unless FLOE_TEST_MYSQL_URL
 * names another server, or FLOE_TEST_MYSQL_CONTAINER names a MySQL image (e.g. `mysql:8.4`) to start
 * with testcontainers where a Docker engine is reachable. Test files get the server's URL with
 * `sharedMysqlUrl()` from `test/support/shared-mysql.ts` and create their own databases in it, and
 * tests that need a server of their own start one of the same kind with `startTestServer()`
 * (`test/support/servers.ts`).
 */
import type { TestProject } from 'vitest/node';
import type { LocalServer } from '../../src/demo/local-server.js';
import type { ContainerMysql } from './mysql-container.js';
import { startServerOfKind, type ServerKind } from './servers.js';

let server: LocalServer | undefined;
let container: ContainerMysql | undefined;

export async function setup(project: TestProject): Promise<void> {
  const kind: ServerKind = project.name === 'mysql8' ? 'mysql' : 'mariadb';
  const external = process.env.FLOE_TEST_MYSQL_URL;
  if (external) {
    project.provide('mysqlUrl', external);
    project.provide('serverKind', (process.env.FLOE_TEST_SERVER_KIND as ServerKind | undefined) ?? 'mysql');
    return;
  }
  const image = process.env.FLOE_TEST_MYSQL_CONTAINER;
  if (image) {
    // Loaded only when asked for: testcontainers pulls in modules that the plain MariaDB runs need not load.
    const { dockerStatus } = await import('./s3-server.js');
    const docker = await dockerStatus();
    if (!docker.available) {
      throw new Error(`FLOE_TEST_MYSQL_CONTAINER=${image} asks for a MySQL container, but there is ${docker.reason}: start a Docker engine, or unset it to use the machine's mariadbd`);
    }
    const { startMysqlContainer } = await import('./mysql-container.js');
    container = await startMysqlContainer(image);
    console.log(`[floe] shared MySQL server for the tests: ${container.description}`);
    // The worker processes inherit this: tests that treat "another server than the harness MariaDB"
    // differently (FLOE_TEST_MYSQL_URL) see the container as such.
    process.env.FLOE_TEST_MYSQL_URL = container.url;
    project.provide('mysqlUrl', container.url);
    project.provide('serverKind', 'mysql');
    return;
  }
  server = await startServerOfKind(kind, { serverId: 1 });
  project.provide('mysqlUrl', server.url);
  project.provide('serverKind', kind);
}

export async function teardown(): Promise<void> {
  await server?.stop();
  await container?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    mysqlUrl: string;
    serverKind: ServerKind;
  }
}
