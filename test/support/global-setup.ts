/**
 * Vitest global setup: one shared binlog-enabled MariaDB for the whole run (unless
 * FLOE_TEST_MYSQL_URL names another server). Test files get its URL with `sharedMysqlUrl()` from
 * `test/support/shared-mysql.ts` and create their own databases in it.
 */
import type { TestProject } from 'vitest/node';
import { startMariaDb, type TestServer } from './mariadb.js';

let server: TestServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  const external = process.env.FLOE_TEST_MYSQL_URL;
  if (external) {
    project.provide('mysqlUrl', external);
    return;
  }
  server = await startMariaDb({ serverId: 1 });
  project.provide('mysqlUrl', server.url);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    mysqlUrl: string;
  }
}
