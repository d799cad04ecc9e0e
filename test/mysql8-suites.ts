/**
 * The integration tests that run twice: against MariaDB (project `integration`) and against Oracle
 * MySQL 8.0.31 (project `mysql8`, its server from `.ci/install-mysql8`; test/support/servers.ts).
 * These are the suites where the two servers differ in what floe sees: the binlog (GTIDs, events,
 * row metadata, JSON), the SQL floe issues, server restarts, failover and purges.
 */
export const MYSQL8_SUITES: readonly string[] = [
  'test/demo/local-server.test.ts',
  'test/source/types/round-trip.test.ts',
  'test/source/types/float-precision.test.ts',
  'test/source/binlog/binlog-reader.test.ts',
  'test/source/snapshot/keyless-snapshot.test.ts',
  'test/source/preflight/client-shutdown.test.ts',
  'test/e2e/pipeline-basic.test.ts',
  'test/e2e/crash-restart.test.ts',
  'test/pipeline/schema-change/ddl-while-stopped.test.ts',
  'test/pipeline/cascade/cascade-pipeline.test.ts',
  'test/e2e/mysql-faults.test.ts',
  'test/e2e/mysql-silence-and-purge.test.ts',
  'test/demo/demo.test.ts',
];
