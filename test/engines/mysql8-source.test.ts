/**
 * The engines read the format v3 tables floe replicates from Oracle MySQL 8.0.31, as they read those
 * it replicates from MariaDB (interop.test.ts).
 *
 * A private MySQL 8 (FLOE_MYSQL_HOME or ~/.cache/floe-ci/mysql-8.0.31; its binlog differs from
 * MariaDB's in GTIDs, events, row metadata and JSON) holds the tables of support/interop-tables.ts;
 * floe replicates them in format v3 into a filesystem-catalog warehouse, with changes streamed and
 * DDL applied while it runs, every TIME column as long microseconds (`source.timeAs: micros`, as the
 * S3 stack runs) so that Spark reads every table. Then Spark (Hadoop catalog), Trino (registered in
 * its `floe catalog serve`), DuckDB (iceberg_scan), PyIceberg (StaticTable) and Iceberg Java
 * (HadoopTables) read each table from the directory: their lines must equal floe scan's, and floe
 * scan's rows MySQL's — except where an engine refuses a feature by its documented limitation or
 * has a known bug (support/engine-expectations.ts, the same expectations the interop suite holds).
 *
 * Needs `npm run engines:install` and the MySQL 8 of `.ci/install-mysql8`; skipped (with a message)
 * without the engines, failed when FLOE_ENGINES_REQUIRED=1.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TableIdentifier } from '../../src/iceberg/metadata/catalog.js';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { parseConfig } from '../../src/config/load.js';
import type { FloeConfig } from '../../src/config/schema.js';
import type { LocalServer } from '../../src/demo/local-server.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { silentLogger } from '../../src/pipeline/observe/logger.js';
import { FanOutNotifier, RecordingSink } from '../../src/pipeline/observe/notifications.js';
import { runPipeline, type RunResult } from '../../src/pipeline/runner.js';
import { sql } from '../source/mysql/binlog/helpers.js';
import { startServerOfKind } from '../support/servers.js';
import { createTestDatabase } from '../support/shared-mysql.js';
import { serverPosition, waitForCatchUp } from '../e2e/support/catch-up.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from '../e2e/support/lake-compare.js';
import { judgeRead, readFacts, type TableFacts } from './support/engine-expectations.js';
import { ENGINES_HOME, engineSuite, floeScanLines, readWith, trino, type Engine } from './support/engines.js';
import { CASCADE_CHILDREN, INTEROP_TABLES, ODD_NAME, applyChanges, createInteropTables, evolveSchema, interopOverrides } from './support/interop-tables.js';

process.env.TZ ??= 'Asia/Seoul';

const { missing, required } = engineSuite('test/engines/mysql8-source');

/** Every engine, each reading the warehouse directory (Trino through the `floe catalog serve` of engines/trino). */
const ENGINES: Engine[] = ['spark', 'trino', 'duckdb', 'pyiceberg', 'iceberg-java'];
const FORMAT_VERSION = 3;
const TABLES = INTEROP_TABLES.map((t) => t.name);
/** The type mapping the job runs with, and with which MySQL's rows are read for the comparison. */
const TYPE_MAPPING = { timeAs: 'micros' } as const;

let server: LocalServer | undefined;
let conn: mysql.Connection | undefined;
let root: string;
let db: string;
let config: FloeConfig;
let catalog: FileSystemCatalog;
let trinoEnv: NodeJS.ProcessEnv | undefined;
const scans = new Map<string, Promise<string[]>>();
const facts = new Map<string, Promise<TableFacts>>();

function source(): { host: string; port: number; user: string; password: string } {
  const s = server!;
  return { host: s.host, port: s.port, user: s.user, password: s.password };
}

function id(table: string): TableIdentifier {
  return { namespace: [db], name: table };
}

async function exec(statement: string): Promise<void> {
  await conn!.query(statement);
}

async function transaction(statements: string[]): Promise<void> {
  await conn!.beginTransaction();
  for (const s of statements) await conn!.query(s);
  await conn!.commit();
}

function jobConfig(): FloeConfig {
  return parseConfig({
    job: { id: 'engines-mysql8-v3' },
    source: { ...source(), serverId: 40_000 + (process.pid % 5000), include: TABLES.map((t) => `${db}.${t}`), snapshot: { chunkSize: 50, parallelism: 2 }, ...TYPE_MAPPING },
    warehouse: { location: join(root, 'fs') },
    iceberg: { formatVersion: FORMAT_VERSION },
    tables: { overrides: interopOverrides(db) },
    commit: { intervalMs: 300, idleCheckpoints: 2 },
  });
}

/** floe runs while the changes and the DDL of interop-tables.ts stream through MySQL 8, and catches up twice. */
async function replicate(): Promise<void> {
  const controller = new AbortController();
  const sink = new RecordingSink();
  const result: Promise<RunResult> = runPipeline(config, { mode: 'run', signal: controller.signal, notifications: new FanOutNotifier(config.job.id, [sink], silentLogger), logger: silentLogger });
  const state: { ended?: RunResult } = {};
  void result.then((r) => (state.ended = r));
  const catchUp = async () => {
    const target = await serverPosition(source());
    await waitForCatchUp(catalog, TABLES.map((t) => ({ identifier: id(t), sourceKey: `${db}.${t}` })), config.job.id, target, {
      timeoutMs: 180_000,
      check: () => {
        if (state.ended) throw new Error(`the pipeline ${config.job.id} ended: ${state.ended.reason} ${String(state.ended.error)}`);
      },
    });
  };
  try {
    await Promise.race([
      sink.waitFor('streaming-started'),
      result.then((x) => {
        throw new Error(`the pipeline ${config.job.id} ended before streaming: ${x.reason} ${String(x.error)}`);
      }),
    ]);
    await applyChanges(exec, transaction, 0, FORMAT_VERSION);
    await catchUp();
    await evolveSchema(exec, FORMAT_VERSION);
    await applyChanges(exec, transaction, 1, FORMAT_VERSION);
    await catchUp();
  } finally {
    controller.abort();
    const ended = await result;
    if (ended.reason === 'failed') throw new Error(`the pipeline ${config.job.id} failed: ${String(ended.error)}`);
  }
}

/** floe scan's lines of a table (computed once). */
function expectedLines(table: string): Promise<string[]> {
  let p = scans.get(table);
  if (!p) scans.set(table, (p = catalog.loadTable(id(table)).then((t) => floeScanLines(t.metadataLocation))));
  return p;
}

function tableFacts(table: string): Promise<TableFacts> {
  let p = facts.get(table);
  if (!p) facts.set(table, (p = readFacts(catalog, id(table))));
  return p;
}

describe.skipIf(missing.length > 0 && !required)('the engines read the v3 tables floe replicates from MySQL 8.0.31', () => {
  beforeAll(async () => {
    if (missing.length > 0) throw new Error(`FLOE_ENGINES_REQUIRED=1 but ${missing.join(', ')} not installed in ${ENGINES_HOME}: run npm run engines:install`);
    root = await mkdtemp(join(tmpdir(), 'floe-engines-mysql8-'));
    await mkdir(join(root, 'fs'));
    server = await startServerOfKind('mysql');
    db = await createTestDatabase('engines_mysql8_v3', source());
    conn = await sql(source());
    await exec(`USE \`${db}\``);
    await createInteropTables(exec);
    config = jobConfig();
    catalog = new FileSystemCatalog({ warehouse: join(root, 'fs') });
    // Trino starts (20-60 s) while floe replicates; every Trino read reuses it.
    trinoEnv = { FLOE_TRINO_RUN: join(root, '.trino-run') };
    const trinoStarted = trino('start', trinoEnv, join(root, 'fs'));
    const [replicated, started] = await Promise.allSettled([replicate(), trinoStarted]);
    for (const r of [replicated, started]) if (r.status === 'rejected') throw r.reason;
  });

  afterAll(async () => {
    if (trinoEnv) await trino('stop', trinoEnv).catch(() => undefined);
    await conn?.end();
    await server?.stop();
    if (root && process.env.FLOE_ENGINES_KEEP === '1') console.log(`[floe] kept ${root} (FLOE_ENGINES_KEEP=1)`);
    else if (root) await rm(root, { recursive: true, force: true });
  });

  it('floe wrote v3 tables of what the suite claims to cover, and the lake equals MySQL 8', async () => {
    // keyed tables: deletion vectors only (floe's key index), never an equality delete
    for (const t of ['typed', 'parted', 'hourly', 'evolved', ODD_NAME, 'all_types', 'cascade_parent']) {
      const k = await tableFacts(t);
      expect(k.equality === 0 && k.position === 0 && k.dv > 0, `${t}: ${JSON.stringify(k)}`).toBe(true);
    }
    expect(await tableFacts('fresh'), 'fresh').toMatchObject({ equality: 0, position: 0 });
    expect((await tableFacts('fresh')).dv, 'fresh').toBeGreaterThan(0);
    // keyless: one copy removed by a deletion vector (the row index), never a whole-row equality delete
    expect(await tableFacts('keyless'), 'keyless').toMatchObject({ equality: 0 });
    expect((await tableFacts('keyless')).dv, 'keyless').toBeGreaterThan(0);
    // InnoDB logs no row of a cascade's children: floe deleted them itself
    for (const t of CASCADE_CHILDREN) {
      const k = await tableFacts(t);
      expect(k.equality + k.position + k.dv, `${t}: ${JSON.stringify(k)}`).toBeGreaterThan(0);
    }
    expect((await tableFacts('hourly')).spec).toBe('partitioned by hour(happened), truncate(4, name), truncate(10, id), day');
    // every TIME column as long microseconds: no Iceberg time for Spark to refuse
    expect((await tableFacts('all_types')).hasTime).toBe(false);
    // schema evolution by MySQL 8 DDL: renamed (same field id), dropped, added with initial-defaults
    const evolved = await loadCatalogTable(catalog, id('evolved'));
    const schema = evolved.metadata.schemas.find((s) => s.schemaId === evolved.metadata.currentSchemaId)!;
    const first = evolved.metadata.schemas[0]!;
    expect(schema.fields.find((x) => x.name === 'new_name')?.id).toBe(first.fields.find((x) => x.name === 'old_name')?.id);
    expect(schema.fields.map((x) => x.name)).not.toContain('gone');
    const added = schema.fields.filter((x) => !first.fields.some((y) => y.id === x.id));
    expect(added.map((x) => x.name)).toEqual(['n_default', 's_default', 'd_default', 'dec_default']);
    expect(added.every((x) => x.initialDefault !== undefined && x.initialDefault !== null), JSON.stringify(added)).toBe(true);
    // the lake equals MySQL, so floe scan's lines are the truth the engines are held to
    for (const t of TABLES) {
      const lake = await lakeTableRows(catalog, id(t));
      const expected = await mysqlTableRows(source(), db, t, lake.columns, { typeMapping: TYPE_MAPPING });
      expect({ table: t, ...multisetDifference(expected, lake.rows) }).toEqual({ table: t, missing: [], unexpected: [] });
    }
  });

  for (const engine of ENGINES) {
    it(`${engine} reads every table from the warehouse directory as floe scan does`, async () => {
      const problems: string[] = [];
      for (const t of TABLES) {
        const expected = await expectedLines(t);
        const read = await readWith(engine, join(root, 'fs', db, t), engine === 'trino' ? trinoEnv : {});
        const verdict = judgeRead(engine, await tableFacts(t), read, expected, `mysql8 v3 ${t}`);
        if (verdict.problem !== undefined) problems.push(verdict.problem);
      }
      expect(problems).toEqual([]);
    });
  }
});

describe.runIf(missing.length > 0 && required)('the engines (FLOE_ENGINES_REQUIRED=1)', () => {
  it('are installed', () => {
    expect.fail(`${missing.join(', ')} not installed in ${ENGINES_HOME}: run npm run engines:install`);
  });
});
