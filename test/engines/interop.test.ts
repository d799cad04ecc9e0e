/**
 * The engines users query with read the tables floe writes, through every catalog they reach floe's
 * tables by, and see exactly what MySQL holds.
 *
 * floe replicates a MariaDB (the harness server) in format v2 and v3 — the tables of
 * support/interop-tables.ts, with changes streamed and DDL applied while it runs — three times at once
 * per format version: into a filesystem-catalog warehouse, into a SQL catalog on PostgreSQL, and as
 * users run it on S3: minio/floe.yaml (support/lakehouse-stack.ts) with moto standing in for MinIO
 * (path-style addressing, credentials, If-None-Match) and the test PostgreSQL for catalog-db, TIME
 * columns as long microseconds (`source.timeAs: micros`). Then each engine reads each table through
 * each catalog it supports (the matrix columns, interop-results.ts): the filesystem warehouse
 * directly (Spark's Hadoop catalog, DuckDB iceberg_scan, PyIceberg StaticTable, Iceberg Java
 * HadoopTables), the same warehouse through `floe catalog serve` (REST: Spark, Trino, DuckDB ATTACH,
 * PyIceberg), the PostgreSQL catalog (Spark JdbcCatalog, Trino jdbc, PyIceberg SqlCatalog), and the
 * S3 warehouse through its SQL catalog and through `floe catalog serve` started as the stack's
 * floe-catalog service — every engine set up from its own file in catalog/ with the endpoints
 * replaced, reading the files with its own S3 client. Every engine's lines must equal floe scan's for that table, and floe
 * scan's rows equal MySQL's — except where an engine refuses a feature by its own documented
 * limitation (the test asserts that exact refusal, so the day the engine reads it, the test says so)
 * or has a known bug (asserted to still be wrong). After a run where every cell was read as expected,
 * the results go to engines/interop-results.json, from which `npm run engines:matrix` renders
 * README's compatibility matrix.
 *
 * Needs `npm run engines:install`, PostgreSQL on 127.0.0.1:5432 (FLOE_TEST_PG_URL) and moto
 * (.ci/install-s3-server); skipped (with a message) without the engines, failed when
 * FLOE_ENGINES_REQUIRED=1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog, TableIdentifier } from '../../src/iceberg/metadata/catalog.js';
import { openCatalog } from '../../src/catalog/factory.js';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { SqlCatalog } from '../../src/catalog/sql/sql-catalog.js';
import { parseConfig } from '../../src/config/load.js';
import type { FloeConfig } from '../../src/config/schema.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { silentLogger } from '../../src/pipeline/observe/logger.js';
import { FanOutNotifier, RecordingSink } from '../../src/pipeline/observe/notifications.js';
import { runPipeline, type RunResult } from '../../src/pipeline/runner.js';
import { sql } from '../source/mysql/binlog/helpers.js';
import { createTestDatabase, sharedMysqlConfig, sourceLogin } from '../support/shared-mysql.js';
import { serverPosition, waitForCatchUp } from '../e2e/support/catch-up.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from '../e2e/support/lake-compare.js';
import { createPostgresDatabase, dropPostgresDatabase, POSTGRES_URL, postgresStatus } from '../catalog/sql/sql-test-databases.js';
import { motoStatus, startMoto } from '../support/moto-server.js';
import type { TestS3Server } from '../support/s3-server.js';
import { judgeRead, readFacts, type TableFacts } from './support/engine-expectations.js';
import { ENGINES_HOME, engineSuite, floeScanLines, readWith, trino, type CatalogSpec } from './support/engines.js';
import { COLUMNS, RESULTS_FILE, columnKey, engineVersions, readResults, writeResults, type MatrixColumn, type MatrixRow } from './support/interop-results.js';
import { CASCADE_CHILDREN, INTEROP_TABLES, ODD_NAME, TIME_AS_MICROS_COLUMN, applyChanges, createInteropTables, evolveSchema, interopOverrides } from './support/interop-tables.js';
import { createStackCatalogDatabase, serviceEnvironment, stackCatalogServeArgs, stackFloeConfig, stackFloeYaml, writeEngineConfigs, type StackEndpoints } from './support/lakehouse-stack.js';

process.env.TZ ??= 'Asia/Seoul';

const REPO_ROOT = new URL('../../', import.meta.url).pathname;
const { missing, required } = engineSuite('test/engines/interop');

interface Copy {
  name: CopyName;
  catalog: Catalog & { close?: () => Promise<void> };
  config: FloeConfig;
}

/** The three warehouses of one format version: a directory (filesystem catalog), a directory with a SQL catalog, S3 with a SQL catalog. */
type CopyName = 'fs' | 'sql' | 's3';

interface Job {
  formatVersion: 2 | 3;
  db: string;
  tables: string[];
  fs: Copy;
  sql: Copy;
  s3: Copy;
}

let conn: mysql.Connection;
let root: string;
let pgDatabase: string | undefined;
let pgUrl: string;
let restUri: string;
let restServe: ChildProcess | undefined;
let trinoEnv: NodeJS.ProcessEnv;
let moto: TestS3Server | undefined;
let s3Endpoints: StackEndpoints;
let s3PgDatabase: string | undefined;
let s3Serve: ChildProcess | undefined;
/** catalog/'s engine files pointed at the S3 stack (engines/read --configs). */
let s3Configs: string;
const jobs: Job[] = [];
const matrix = new Map<string, MatrixRow>();
const completedColumns = new Set<string>();
let coverageChecked = false;
const scans = new Map<string, Promise<string[]>>();
const facts = new Map<string, Promise<TableFacts>>();
const timings: Record<string, number[]> = {};

async function exec(statement: string): Promise<void> {
  await conn.query(statement);
}

async function transaction(statements: string[]): Promise<void> {
  await conn.beginTransaction();
  for (const s of statements) await conn.query(s);
  await conn.commit();
}

function id(job: Job, table: string): TableIdentifier {
  return { namespace: [job.db], name: table };
}

/** The copy a column reads: the S3 one, the SQL one, or the directory (filesystem and REST columns). */
function copyFor(job: Job, column: Pick<MatrixColumn, 'catalog' | 'storage'>): Copy {
  if (column.storage === 's3') return job.s3;
  return column.catalog === 'sql' ? job.sql : job.fs;
}

/** What `floe scan` needs to read the S3 warehouse: the standard AWS variables, with the stack's keys. */
function awsEnv(job: Job): NodeJS.ProcessEnv {
  const s3 = job.s3.config.warehouse.s3;
  return { AWS_ENDPOINT_URL: s3.endpoint, AWS_REGION: s3.region, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey };
}

/** The three copies of one format version replicate the same database at once. */
async function replicate(job: Job): Promise<void> {
  const runs = [job.fs, job.sql, job.s3].map((copy) => {
    const controller = new AbortController();
    const sink = new RecordingSink();
    const result: Promise<RunResult> = runPipeline(copy.config, { mode: 'run', signal: controller.signal, notifications: new FanOutNotifier(copy.config.job.id, [sink], silentLogger), logger: silentLogger });
    const state: { ended?: RunResult } = {};
    void result.then((r) => (state.ended = r));
    return { copy, controller, sink, result, state };
  });
  const catchUp = async () => {
    const target = await serverPosition({ ...sharedMysqlConfig() });
    for (const r of runs) {
      await waitForCatchUp(r.copy.catalog, job.tables.map((t) => ({ identifier: id(job, t), sourceKey: `${job.db}.${t}` })), r.copy.config.job.id, target, {
        timeoutMs: 180_000,
        check: () => {
          if (r.state.ended) throw new Error(`the pipeline ${r.copy.config.job.id} ended: ${r.state.ended.reason} ${String(r.state.ended.error)}`);
        },
      });
    }
  };
  try {
    for (const r of runs) {
      await Promise.race([
        r.sink.waitFor('streaming-started'),
        r.result.then((x) => {
          throw new Error(`the pipeline ${r.copy.config.job.id} ended before streaming: ${x.reason} ${String(x.error)}`);
        }),
      ]);
    }
    await exec(`USE \`${job.db}\``);
    await applyChanges(exec, transaction, 0, job.formatVersion);
    await catchUp();
    await evolveSchema(exec, job.formatVersion);
    await applyChanges(exec, transaction, 1, job.formatVersion);
    await catchUp();
  } finally {
    for (const r of runs) r.controller.abort();
    const ended = await Promise.all(runs.map((r) => r.result));
    for (const [i, r] of ended.entries()) if (r.reason === 'failed') throw new Error(`the pipeline ${runs[i]!.copy.config.job.id} failed: ${String(r.error)}`);
  }
}

async function metadataLocation(copy: Copy, identifier: TableIdentifier): Promise<string> {
  return (await copy.catalog.loadTable(identifier)).metadataLocation;
}

/** floe scan's lines of one copy of a table (computed once). */
function expectedLines(job: Job, copy: Copy, table: string): Promise<string[]> {
  const key = `${job.formatVersion}/${copy.name}/${table}`;
  let p = scans.get(key);
  if (!p) scans.set(key, (p = metadataLocation(copy, id(job, table)).then((m) => floeScanLines(m, copy.name === 's3' ? awsEnv(job) : {}))));
  return p;
}

function tableFacts(job: Job, copy: Copy, table: string): Promise<TableFacts> {
  const key = `${job.formatVersion}/${copy.name}/${table}`;
  let p = facts.get(key);
  if (!p) facts.set(key, (p = readFacts(copy.catalog, id(job, table))));
  return p;
}

function deleteFeatures(f: TableFacts): string[] {
  const out: string[] = [];
  if (f.equality > 0) out.push('equality deletes');
  if (f.position > 0) out.push('position deletes');
  if (f.dv > 0) out.push('deletion vectors');
  if (out.length === 0) out.push('no deletes');
  return out;
}

function catalogSpec(column: MatrixColumn): CatalogSpec {
  if (column.storage === 's3') return { type: column.catalog === 'sql' ? 'sql' : 'rest', configs: s3Configs };
  if (column.catalog === 'filesystem') return { type: 'filesystem' };
  if (column.catalog === 'rest') return { type: 'rest', uri: restUri };
  return { type: 'sql', url: pgUrl, name: 'floe' };
}

function target(job: Job, column: MatrixColumn, table: string): string {
  return column.catalog === 'filesystem' ? join(root, 'fs', job.db, table) : `${job.db}.${table}`;
}

/** The engines' environment for a column: Trino's run directory, and for the stack's Trino files the values of their ${ENV:…}. */
function readEnv(column: MatrixColumn): NodeJS.ProcessEnv {
  if (column.engine !== 'trino') return {};
  return column.storage === 's3' ? { ...serviceEnvironment('trino'), ...trinoEnv } : trinoEnv;
}

/** The stack's floe-catalog service: `floe catalog serve` with its flags (token, credential vending) over the S3 warehouse. */
async function startStackCatalogServe(): Promise<string> {
  const config = join(root, 'stack-floe.yaml');
  await writeFile(config, stackFloeYaml(s3Endpoints));
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'floe.mjs'), ...stackCatalogServeArgs(config)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...serviceEnvironment('floe-catalog'), NO_COLOR: '1' } });
  s3Serve = child;
  return listeningUrl(child, 'the stack\'s floe catalog serve');
}

/** The URL a `floe catalog serve` child prints on its first line. */
function listeningUrl(child: ChildProcess, what: string): Promise<string> {
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${what} exited with ${code}: ${out}`)));
  });
}

/** `floe catalog serve` (the CLI) over the filesystem warehouse; resolves with its URL. */
async function startRestServe(warehouse: string): Promise<string> {
  const config = join(root, 'serve.yaml');
  await writeFile(config, `warehouse:\n  location: ${JSON.stringify(warehouse)}\n`);
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'floe.mjs'), '-c', config, 'catalog', 'serve', '--port', '0', '--prefix', 'lake'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  restServe = child;
  return listeningUrl(child, 'floe catalog serve');
}

function jobSource(formatVersion: 2 | 3, db: string, tables: string[], copy: CopyName): Record<string, unknown> {
  const server = sharedMysqlConfig();
  return {
    ...sourceLogin(server),
    serverId: 30_000 + (process.pid % 5000) * 8 + formatVersion * 3 + ['fs', 'sql', 's3'].indexOf(copy),
    include: tables.map((t) => `${db}.${t}`),
    snapshot: { chunkSize: 50, parallelism: 2 },
    // on S3 every TIME column is long microseconds, so that Spark reads all_types there
    ...(copy === 's3' ? { timeAs: 'micros' } : { timeAsMicros: [`${db}.${TIME_AS_MICROS_COLUMN}`] }),
  };
}

function tableOverrides(db: string): Record<string, unknown> {
  return { overrides: interopOverrides(db) };
}

const COMMIT = { intervalMs: 300, idleCheckpoints: 2 };

function jobConfig(formatVersion: 2 | 3, db: string, tables: string[], copy: 'fs' | 'sql'): FloeConfig {
  return parseConfig({
    job: { id: `engines-v${formatVersion}-${copy}` },
    source: jobSource(formatVersion, db, tables, copy),
    warehouse: { location: join(root, copy) },
    ...(copy === 'sql' ? { catalog: { type: 'sql', url: pgUrl, name: 'floe' } } : {}),
    iceberg: { formatVersion },
    tables: tableOverrides(db),
    commit: COMMIT,
  });
}

/** The type mapping a copy's tables were written with (for reading MySQL's rows as the lake must hold them). */
function typeMapping(job: Job, copy: Copy): { timeAs?: 'micros'; timeAsMicros?: string[] } {
  return copy.name === 's3' ? { timeAs: 'micros' } : { timeAsMicros: [`${job.db}.${TIME_AS_MICROS_COLUMN}`] };
}

describe.skipIf(missing.length > 0 && !required)('the engines read what floe writes, through every catalog', () => {
  beforeAll(async () => {
    if (missing.length > 0) throw new Error(`FLOE_ENGINES_REQUIRED=1 but ${missing.join(', ')} not installed in ${ENGINES_HOME}: run npm run engines:install`);
    const pgStatus = await postgresStatus();
    if (!pgStatus.available) throw new Error(`the interop suite needs PostgreSQL for the SQL catalog: ${pgStatus.reason}`);
    const s3Status = motoStatus();
    if (!s3Status.available) throw new Error(`the interop suite needs moto for its S3 warehouse: ${s3Status.reason}`);
    root = await mkdtemp(join(tmpdir(), 'floe-engines-'));
    ({ name: pgDatabase, url: pgUrl } = await createPostgresDatabase('floe_engines'));
    // the S3 stack: moto for MinIO (its bucket `warehouse`, as minio-init makes it), a catalog database
    // for catalog-db, reached as the stack's own user
    moto = await startMoto('warehouse');
    s3PgDatabase = `${pgDatabase}_s3`;
    await createStackCatalogDatabase(POSTGRES_URL, s3PgDatabase);
    const pg = new URL(POSTGRES_URL);
    s3Endpoints = { s3: moto.config.endpoint!, postgres: { host: pg.hostname, port: Number(pg.port || 5432), database: s3PgDatabase } };
    conn = await sql();
    for (const formatVersion of [2, 3] as const) {
      const db = await createTestDatabase(`engines_v${formatVersion}`);
      const tables = INTEROP_TABLES.map((t) => t.name);
      const fsConfig = jobConfig(formatVersion, db, tables, 'fs');
      const sqlConfig = jobConfig(formatVersion, db, tables, 'sql');
      const s3Config = stackFloeConfig(s3Endpoints, { job: `engines-v${formatVersion}-s3`, formatVersion, source: jobSource(formatVersion, db, tables, 's3'), tables: tableOverrides(db), commit: COMMIT });
      jobs.push({
        formatVersion,
        db,
        tables,
        fs: { name: 'fs', config: fsConfig, catalog: new FileSystemCatalog({ warehouse: join(root, 'fs') }) },
        sql: { name: 'sql', config: sqlConfig, catalog: new SqlCatalog({ url: pgUrl, name: 'floe', warehouse: join(root, 'sql') }) },
        s3: { name: 's3', config: s3Config, catalog: await openCatalog(s3Config) },
      });
    }
    for (const job of jobs) {
      await exec(`USE \`${job.db}\``);
      await createInteropTables(exec);
    }
    for (const job of jobs) await replicate(job);
    restUri = `${await startRestServe(join(root, 'fs'))}`;
    s3Endpoints.catalog = await startStackCatalogServe();
    s3Configs = await writeEngineConfigs(join(root, 'configs'), s3Endpoints);
    // One Trino for every read (its start-up is the slow part), in a run directory of its own.
    trinoEnv = { FLOE_TRINO_RUN: join(root, '.trino-run') };
    await trino('start', trinoEnv, join(root, 'fs'));
  });

  afterAll(async () => {
    if (trinoEnv) await trino('stop', trinoEnv).catch(() => undefined);
    restServe?.kill('SIGTERM');
    s3Serve?.kill('SIGTERM');
    await conn?.end();
    for (const job of jobs) for (const copy of [job.sql, job.s3]) await copy.catalog.close?.();
    await moto?.stop();
    for (const db of [pgDatabase, s3PgDatabase]) if (db) await dropPostgresDatabase(db).catch((e: unknown) => console.warn(`[floe] could not drop ${db}: ${String(e)}`));
    if (root && process.env.FLOE_ENGINES_KEEP === '1') console.log(`[floe] kept ${root} (FLOE_ENGINES_KEEP=1)`);
    else if (root) await rm(root, { recursive: true, force: true });
    const summary = Object.entries(timings).map(([e, s]) => `${e} ${(s.reduce((a, b) => a + b, 0) / s.length).toFixed(1)} s`);
    if (summary.length > 0) console.log(`[floe] mean engine read time per table: ${summary.join('; ')}`);
    // The lake checked, every cell read, none failed: the matrix in README may be rendered from these results.
    if (coverageChecked && completedColumns.size === COLUMNS.length) {
      const previous = existsSync(RESULTS_FILE) ? readResults() : undefined;
      await writeResults({ versions: engineVersions(), columns: COLUMNS, rows: [...matrix.values()], ...(previous?.maintenance ? { maintenance: previous.maintenance } : {}) });
      console.log(`[floe] interop results written to ${RESULTS_FILE} (npm run engines:matrix renders them into README)`);
    }
  });

  it('floe wrote what the suite claims to cover, and the lake equals MySQL', async () => {
    for (const job of jobs) {
      const v = job.formatVersion;
      for (const copy of [job.fs, job.sql, job.s3]) {
        const f = async (t: string) => tableFacts(job, copy, t);
        const label = (t: string) => `v${v} ${copy.name} ${t}`;
        for (const t of ['typed', 'parted', 'hourly', 'evolved', ODD_NAME, 'all_types', 'cascade_parent']) {
          const k = await f(t);
          // v2: equality deletes for committed rows, position deletes within a checkpoint; v3 keyed
          // tables: deletion vectors only (floe's key index), never an equality delete
          if (v === 2) expect(k.equality > 0 && k.dv === 0, `${label(t)}: ${JSON.stringify(k)}`).toBe(true);
          else expect(k.equality === 0 && k.position === 0 && k.dv > 0, `${label(t)}: ${JSON.stringify(k)}`).toBe(true);
        }
        // (hourly's partitions are so fine that a row changed in its own transaction is alone in its
        // file, which floe drops instead of position-deleting it)
        for (const t of ['typed', 'parted']) if (v === 2) expect((await f(t)).position, label(t)).toBeGreaterThan(0);
        expect(await f('fresh'), label('fresh')).toMatchObject({ equality: 0, ...(v === 2 ? { dv: 0 } : { position: 0 }) });
        expect((await f('fresh'))[v === 2 ? 'position' : 'dv'], label('fresh')).toBeGreaterThan(0);
        // keyless: whole-row equality deletes in v2; in v3 one copy removed by a deletion vector (the row index)
        if (v === 2) expect((await f('keyless')).equality, label('keyless')).toBeGreaterThan(0);
        else expect(await f('keyless'), label('keyless')).toMatchObject({ equality: 0 });
        if (v === 3) expect((await f('keyless')).dv, label('keyless')).toBeGreaterThan(0);
        // cascade children lost rows without a binlog row of their own: some delete reached them
        // (which kind — equality deletes on the foreign key, or deletion vectors — the matrix shows)
        for (const t of CASCADE_CHILDREN) {
          const k = await f(t);
          expect(k.equality + k.position + k.dv, `${label(t)}: ${JSON.stringify(k)}`).toBeGreaterThan(0);
        }
        expect((await f('hourly')).spec, label('hourly')).toBe('partitioned by hour(happened), truncate(4, name), truncate(10, id), day');
        // the Parquet codecs of the tables' write.parquet.compression-codec and write.delete.parquet.compression-codec
        expect((await f('typed')).codecs, label('typed')).toEqual({ data: ['ZSTD'], deletes: v === 2 ? ['ZSTD'] : [] });
        expect((await f('hourly')).codecs, label('hourly')).toEqual({ data: ['SNAPPY'], deletes: v === 2 ? ['SNAPPY'] : [] });
        expect((await f('fresh')).codecs, label('fresh')).toEqual({ data: ['UNCOMPRESSED'], deletes: v === 2 ? ['UNCOMPRESSED'] : [] });
        expect((await f('keyless')).codecs, label('keyless')).toEqual({ data: ['GZIP'], deletes: v === 2 ? ['SNAPPY'] : [] });
        // TIME as Iceberg time (one column as long µs) in the directories; every TIME column as long µs on S3
        expect((await f('all_types')).hasTime, label('all_types')).toBe(copy.name !== 's3');
        // schema evolution: renamed (same field id), dropped, added — with initial-defaults in v3
        const evolved = await loadCatalogTable(copy.catalog, id(job, 'evolved'));
        const schema = evolved.metadata.schemas.find((s) => s.schemaId === evolved.metadata.currentSchemaId)!;
        const first = evolved.metadata.schemas[0]!;
        expect(schema.fields.find((x) => x.name === 'new_name')?.id, label('evolved')).toBe(first.fields.find((x) => x.name === 'old_name')?.id);
        expect(schema.fields.map((x) => x.name), label('evolved')).not.toContain('gone');
        const added = schema.fields.filter((x) => !first.fields.some((y) => y.id === x.id));
        expect(added.map((x) => x.name), label('evolved')).toEqual(v === 3 ? ['n_default', 's_default', 'd_default', 'dec_default'] : ['added']);
        if (v === 3) expect(added.every((x) => x.initialDefault !== undefined && x.initialDefault !== null), `${label('evolved')}: ${JSON.stringify(added)}`).toBe(true);
        // the lake equals MySQL, so floe scan's lines are the truth the engines are held to
        for (const t of job.tables) {
          const lake = await lakeTableRows(copy.catalog, id(job, t));
          const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, job.db, t, lake.columns, { typeMapping: typeMapping(job, copy) });
          expect({ table: label(t), ...multisetDifference(expected, lake.rows) }).toEqual({ table: label(t), missing: [], unexpected: [] });
        }
      }
      // the S3 copy is the directories' tables, TIME aside: same rows, same deletes
      for (const t of job.tables.filter((x) => x !== 'all_types')) {
        expect({ table: `v${v} ${t}`, lines: await expectedLines(job, job.s3, t) }).toEqual({ table: `v${v} ${t}`, lines: await expectedLines(job, job.sql, t) });
      }
    }
    coverageChecked = true;
  });

  for (const column of COLUMNS) {
    const { engine } = column;
    const key = columnKey(column);
    it(`${engine} reads every table through the ${column.catalog} catalog${column.storage === 's3' ? ' on S3' : ''} (${column.via}) as floe scan does`, async () => {
      const problems: string[] = [];
      for (const job of jobs) {
        for (const t of job.tables) {
          const copy = copyFor(job, column);
          const expected = await expectedLines(job, copy, t);
          const read = await readWith(engine, target(job, column, t), readEnv(column), catalogSpec(column));
          (timings[engine] ??= []).push(read.seconds);
          const label = `v${job.formatVersion} ${t}`;
          const k = await tableFacts(job, copy, t);
          // a row's features are read from the directory copy; the S3 copy differs only in TIME (above)
          const row = matrix.get(`${job.formatVersion}/${t}`) ?? { formatVersion: job.formatVersion, table: t, features: [], cells: {} };
          if (row.features.length === 0 && copy !== job.s3) row.features = [k.spec, ...deleteFeatures(k), ...INTEROP_TABLES.find((x) => x.name === t)!.features(job.formatVersion)];
          matrix.set(`${job.formatVersion}/${t}`, row);
          const verdict = judgeRead(engine, k, read, expected, label);
          if (verdict.problem !== undefined) problems.push(verdict.problem);
          else row.cells[key] = verdict.cell;
        }
      }
      expect(problems).toEqual([]);
      completedColumns.add(key);
    });
  }
});

describe.runIf(missing.length > 0 && required)('the engines (FLOE_ENGINES_REQUIRED=1)', () => {
  it('are installed', () => {
    expect.fail(`${missing.join(', ')} not installed in ${ENGINES_HOME}: run npm run engines:install`);
  });
});
