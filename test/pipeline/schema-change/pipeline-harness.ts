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
import { FanOutNotifier, RecordingSink } from '../../../src/pipeline/observe/notifications.js';
import { runPipeline, type RunResult } from '../../../src/pipeline/runner.js';
import type { MysqlConnectionConfig } from '../../../src/source/mysql/client.js';
import { createTestDatabase, sharedMysqlConfig } from '../../support/shared-mysql.js';
import { sql } from '../../source/binlog/helpers.js';
import { serverPosition, waitForCatchUp } from '../../e2e/support/catch-up.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from '../../e2e/support/lake-compare.js';

interface Running {
  result: Promise<RunResult>;
  stop: () => Promise<RunResult>;
  sink: RecordingSink;
}

export interface Harness {
  db: string;
  /** The MySQL server the harness replicates. */
  server: MysqlConnectionConfig;
  conn: mysql.Connection;
  catalog: FileSystemCatalog;
  config: FloeConfig;
  exec(statement: string): Promise<unknown>;
  start(overrides?: Partial<Record<string, unknown>>, logger?: Logger): Running;
  untilStreaming(r: Running): Promise<void>;
  catchUp(r: Running, tables: readonly string[]): Promise<void>;
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
      host: server.host,
      port: server.port,
      user: server.user,
      password: server.password,
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
      const cfg = Object.keys(overrides).length ? parseConfig({ ...base, ...overrides }) : config;
      const controller = new AbortController();
      const sink = new RecordingSink();
      const notifier = new FanOutNotifier(job, [sink], silentLogger);
      const result = runPipeline(cfg, { mode: 'run', signal: controller.signal, notifications: notifier, logger });
      return {
        result,
        sink,
        stop: async () => {
          controller.abort();
          return result;
        },
      };
    },
    async untilStreaming(r) {
      await Promise.race([
        r.sink.waitFor('streaming-started'),
        r.result.then((res) => {
          throw new Error(`the pipeline ended before streaming: ${res.reason} ${String(res.error)}`);
        }),
      ]);
    },
    async catchUp(r, names) {
      const target = await serverPosition(server);
      let ended: RunResult | undefined;
      void r.result.then((res) => (ended = res));
      await waitForCatchUp(
        catalog,
        names.map((t) => ({ identifier: { namespace: [db], name: t }, sourceKey: `${db}.${t}` })),
        job,
        target,
        {
          timeoutMs: 60_000,
          check: () => {
            if (ended) throw new Error(`the pipeline ended: ${ended.reason} ${String(ended.error)}`);
          },
        },
      );
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
