/**
 * The tests that need nothing but Node: no MariaDB, PostgreSQL or S3 server, no child process
 * (`npm run test:unit`). Everything else under test/ is an integration test
 * (`npm run test:integration`); `npm test` runs both. test/support/test-split.test.ts checks that
 * nothing listed here reaches a server or a process, so a file is added here only when it can run
 * anywhere.
 */
export const UNIT_TESTS: readonly string[] = [
  'test/iceberg/avro/**/*.test.ts',
  'test/iceberg/parquet/**/*.test.ts',
  'test/iceberg/puffin/**/*.test.ts',
  'test/iceberg/scan/**/*.test.ts',
  'test/iceberg/spec/**/*.test.ts',
  'test/source/offset/**/*.test.ts',
  'test/util/**/*.test.ts',
  'test/catalog/rest/rest-protocol.test.ts',
  'test/cli/grafana-dashboard.test.ts',
  'test/cli/logger.test.ts',
  'test/cli/metrics.test.ts',
  'test/cli/notifications.test.ts',
  'test/cli/progress.test.ts',
  'test/config/config.test.ts',
  'test/iceberg/table/commit.test.ts',
  'test/iceberg/table/evolution.test.ts',
  'test/iceberg/table/merge.test.ts',
  'test/iceberg/table/retry.test.ts',
  'test/iceberg/writer/replay.test.ts',
  'test/iceberg/writer/row-key.test.ts',
  'test/iceberg/writer/table-change-writer.test.ts',
  'test/iceberg/writer/table-key.test.ts',
  'test/iceberg/writer/upsert-model.test.ts',
  'test/io/s3-retry.test.ts',
  'test/pipeline/cascade/handover.test.ts',
  'test/pipeline/cascade/writer-matching-delete.test.ts',
  'test/pipeline/checkpoint.test.ts',
  'test/pipeline/ddl-handler.test.ts',
  'test/pipeline/purged-binlog-check.test.ts',
  'test/pipeline/schema-change/plan.test.ts',
  'test/pipeline/source-schema-record.test.ts',
  'test/pipeline/state.test.ts',
  'test/pipeline/transforms.test.ts',
  'test/source/binlog/decoding-skip.test.ts',
  'test/source/binlog/row-decoder-events.test.ts',
  'test/source/ddl/ddl-parser.test.ts',
  'test/support/test-split.test.ts',
  'test/source/types/mysql-json.test.ts',
  'test/source/types/mysql8-vectors.test.ts',
  'test/source/types/value-fast-paths.test.ts',
];
