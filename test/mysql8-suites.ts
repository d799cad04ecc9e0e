/**
 * The integration tests that run twice: against MariaDB (project `integration`) and against Oracle
 * MySQL 8.0.31 (project `mysql8`, its server from `.ci/install-mysql8`; test/support/servers.ts).
 * These are the suites where the two servers differ in what floe sees: the binlog (GTIDs, events,
 * row metadata, JSON), the SQL floe issues, server restarts, failover and purges.
 */
export const MYSQL8_SUITES: readonly string[] = ['test/demo/local-server.test.ts', 'test/e2e/schema-changes-model.test.ts', 'test/e2e/ddl-restarts.test.ts'];
