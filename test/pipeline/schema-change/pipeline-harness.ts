/**
 * Running the real pipeline in process against the harness server (MariaDB, or MySQL 8 in the mysql8
 * project; or a private one) and a local warehouse, for the schema-change and cascade tests: start/stop a run, wait for it to stream and to catch up with the
 * server, compare a lake table with its MySQL table (e2e helpers: the MySQL side converted by the
 * snapshot path and projected onto the lake's field names, the lake read by floe's scan).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../../src/catalog/filesystem/filesystem-catalog.js';
import { parseConfig } from '../../../src/config/load.js';
import type { FloeConfig } from '../../../src/config/schema.js';
import { silentLogger, type Logger } from '../../../src/pipeline/observe/logger.js';
import type { MysqlConnectionConfig } from '../../../src/source/mysql/client.js';
import { createTestDatabase, sharedMysqlConfig, sourceLogin } from '../../support/shared-mysql.js';
import { sql } from '../../source/mysql/binlog/helpers.js';
import { catchUp, startPipeline, untilStreaming, type PipelineRunning } from '../../support/pipeline-run.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from '../../e2e/support/lake-compare.js';

export interface Harness {
  db: string;
  /** The MySQL server the harness replicates. */
  server: MysqlConnectionConfig;
  conn: mysql.Connection;
  catalog: FileSystemCatalog;
  config: FloeConfig;
  exec(statement: string): Promise<unknown>;
  start(overrides?: Partial<Record<string, unknown>>, logger?: Logger): PipelineRunning;
  untilStreaming(r: PipelineRunning): Promise<void>;
  catchUp(r: PipelineRunning, tables: readonly string[]): Promise<void>;
  expectLakeEqualsMysql(table: string): Promise<void>;
  close(): Promise<void>;
}

/** A replica server id range (8 ids) per test file and process, away from other suites' ranges. */
function serverIdFor(prefix: string): number {
  let h = 0;
  for (const ch of prefix) h = (h * 31 + ch.charCodeAt(0)) % 997;
  return 600_000 + h * 64 + (process.pid % 8) * 8;
}

/** `server`: the MySQL server to replicate (default: the run's shared one). */
export async function openHarness(
  prefix: string,
  job: string,
  tables: readonly string[],
  schema: readonly string[],
  extra: Record<string, unknown> = {},
  server: MysqlConnectionConfig = sharedMysqlConfig(),
): Promise<Harness> {
  const db = await createTestDatabase(prefix, server);
  const conn = await sql(server);
  await conn.query(`USE \`${db}\``);
  for (const s of schema) await conn.query(s);
  const warehouse = await mkdtemp(join(tmpdir(), `floe-${prefix}-`));
  const base = {
    job: { id: job },
    source: {
      ...sourceLogin(server),
      serverId: serverIdFor(prefix),
      include: tables.map((t) => `${db}.${t}`),
      snapshot: { chunkSize: 50, parallelism: 2 },
    },
    warehouse: { location: warehouse },
    commit: { intervalMs: 200, idleCheckpoints: 1 },
    ...extra,
  };
  const config = parseConfig(base);
  const catalog = new FileSystemCatalog({ warehouse });
  const h: Harness = {
    db,
    server,
    conn,
    catalog,
    config,
    exec: (statement) => conn.query(statement),
    start(overrides = {}, logger = silentLogger) {
      return startPipeline(Object.keys(overrides).length ? parseConfig({ ...base, ...overrides }) : config, { logger });
    },
    untilStreaming,
    async catchUp(r, names) {
      await catchUp(r, { catalog, job, db, tables: names }, server);
    },
    async expectLakeEqualsMysql(table) {
      const lake = await lakeTableRows(catalog, { namespace: [db], name: table });
      const expected = await mysqlTableRows(server, db, table, lake.columns);
      const diff = multisetDifference(expected, lake.rows);
      expect({ table, ...diff, count: lake.rows.length }).toEqual({ table, missing: [], unexpected: [], count: expected.length });
    },
    async close() {
      await conn.end();
      await rm(warehouse, { recursive: true, force: true });
    },
  };
  return h;
}
