/**
 * The integration tests that run twice: against MariaDB (project `integration`) and against Oracle
 * MySQL 8.0.31 (project `mysql8`, its server from `.ci/install-mysql8`; test/support/servers.ts).
 * These are the suites where the two servers differ in what floe sees: the binlog (GTIDs, events,
 * row metadata, JSON), the SQL floe issues, server restarts, failover and purges.
 */
export const MYSQL8_SUITES: readonly string[] = ['test/demo/local-server.test.ts', 'test/source/binlog/dump-flow.test.ts'];

/**
 * Tests of what only MySQL 8 has (compressed transactions): the `mysql8` project runs them, the
 * `integration` project (MariaDB) leaves them out.
 */
export const MYSQL8_ONLY_SUITES: readonly string[] = ['test/source/binlog/compressed-transactions.test.ts', 'test/e2e/compressed-transactions.test.ts'];
