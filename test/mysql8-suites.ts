/**
 * The integration tests that run twice: against MariaDB (project `integration`) and against Oracle
 * MySQL 8.0.31 (project `mysql8`, its server from `.ci/install-mysql8`; test/support/servers.ts).
 * These are the suites where the two servers differ in what floe sees: the binlog (GTIDs, events,
 * row metadata, JSON), the SQL floe issues, server restarts, failover and purges.
 */
export const MYSQL8_SUITES: readonly string[] = [
  'test/demo/local-server.test.ts',
  'test/demo/demo.test.ts',
  'test/source/mysql/schema/round-trip.test.ts',
  'test/source/mysql/schema/float-precision.test.ts',
  'test/source/mysql/binlog/binlog-reader.test.ts',
  'test/source/mysql/binlog/reader-decoders.test.ts',
  'test/source/mysql/binlog/zongji/dump-flow.test.ts',
  'test/source/mysql/binlog/zongji/binlog-session.test.ts',
  'test/source/mysql/snapshot/keyless-snapshot.test.ts',
  'test/source/mysql/snapshot/table-change-guard.test.ts',
  'test/source/mysql/snapshot/key-compare-collations.test.ts',
  'test/source/mysql/client-shutdown.test.ts',
  'test/e2e/pipeline-basic.test.ts',
  'test/e2e/crash-restart.test.ts',
  'test/e2e/keyless-duplicates.test.ts',
  'test/e2e/mysql-faults.test.ts',
  'test/e2e/mysql-silence-and-purge.test.ts',
  'test/e2e/mysql8-schema-features.test.ts',
  'test/pipeline/schema-change/ddl-while-stopped.test.ts',
  'test/e2e/schema-changes-model.test.ts',
  'test/e2e/ddl-restarts.test.ts',
  'test/pipeline/cascade/cascade-pipeline.test.ts',
  'test/e2e/cascade-crash-order.test.ts',
  'test/e2e/verify-key-cascades.test.ts',
  'test/pipeline/verify/verify-run.test.ts',
  'test/pipeline/verify/canonical-row.test.ts',
  'test/e2e/verify.test.ts',
  'test/e2e/verify-streaming.test.ts',
];

/**
 * Integration tests of what only Oracle MySQL 8 has here: TLS to the source (the certificates
 * `mysqld --initialize` generates, require_secure_transport; Debian's MariaDB runs without TLS) and
 * compressed transactions. The mysql8 project runs them; the MariaDB project leaves them out.
 */
export const MYSQL8_ONLY_SUITES: readonly string[] = [
  'test/source/mysql/tls/tls.test.ts',
  'test/cli/check-tls.test.ts',
  'test/e2e/pipeline-tls.test.ts',
  'test/source/mysql/binlog/compressed-transactions.test.ts',
  'test/e2e/compressed-transactions.test.ts',
];
