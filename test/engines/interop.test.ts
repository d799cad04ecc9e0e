/**
 * The engines users query with read the tables floe writes, and see exactly what floe scan sees.
 *
 * floe replicates a MariaDB (the harness server) into a filesystem-catalog warehouse, twice: format v2
 * (changes become equality and position deletes) and format v3 (equality deletes and deletion
 * vectors). Tables: `typed` (long, decimal, double, float, timestamp, timestamptz, date, binary,
 * string), `parted` (the same, partitioned by day(happened) and bucket(8, id), with an UPDATE that
 * moves a row to another day), `fresh` (no primary key; rows inserted, updated and deleted within one
 * transaction only, so it has position deletes / DVs and no equality deletes) and, in v3, `all_types`
 * (every MySQL type floe maps). Then Spark, Trino, DuckDB, PyIceberg and Iceberg's Java generic reader each read
 * every table through `engines/read`, and their lines must equal `floe scan`'s — except where an engine
 * refuses a feature by its own documented limitation: PyIceberg 0.12 refuses equality deletes, and the
 * test asserts that exact refusal (so the day it reads them, the test says so).
 *
 * Needs `npm run engines:install`; skipped (with a message) without it, failed when
 * FLOE_ENGINES_REQUIRED=1.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog } from '../../src/catalog/filesystem-catalog.js';
import { parseConfig } from '../../src/config/load.js';
import type { FloeConfig } from '../../src/config/schema.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { planScan } from '../../src/iceberg/scan/index.js';
import { silentLogger } from '../../src/pipeline/logger.js';
import { FanOutNotifier, RecordingSink } from '../../src/pipeline/notifications.js';
import { runPipeline, type RunResult } from '../../src/pipeline/runner.js';
import { sql } from '../source/binlog/helpers.js';
import { createTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';
import { ALL_TYPES_COLUMNS, ALL_TYPES_DDL, ALL_TYPES_SESSION, ALL_TYPES_VALUES } from '../e2e/support/all-types.js';
import { serverPosition, waitForCatchUp } from '../e2e/support/catch-up.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from '../e2e/support/lake-compare.js';
import { ENGINES, ENGINES_HOME, floeScanLines, missingEngines, readWith, trino, type Engine } from './support/engines.js';

process.env.TZ ??= 'Asia/Seoul';

const missing = missingEngines();
const required = process.env.FLOE_ENGINES_REQUIRED === '1';
if (missing.length > 0 && !required) {
  console.warn(`[floe] test/engines skipped: ${missing.join(', ')} not installed in ${ENGINES_HOME}; run npm run engines:install (FLOE_ENGINES_REQUIRED=1 makes this a failure)`);
}

/** PyIceberg 0.12's refusal at scan planning (pyiceberg/table/__init__.py), verbatim. */
const PYICEBERG_EQUALITY_DELETES = 'ValueError: PyIceberg does not yet support equality deletes: https://github.com/apache/iceberg/issues/6568';
/** Iceberg's Spark type conversion (TypeToSparkType) has no Spark type for Iceberg `time`. */
const SPARK_TIME = 'Spark does not support time fields';
/**
 * Engine bugs, not limitations: the test asserts the engine still gets these tables wrong, so that
 * it fails (and this entry goes) the day the engine is fixed.
 *
 * DuckDB 1.4.4's iceberg_scan drops live rows of a partitioned table whose equality deletes are
 * written under the table's unpartitioned spec (global equality deletes — what floe writes for a
 * keyed partitioned table, since a delete by key cannot know the old row's partition; spec: "the
 * delete file's partition spec is unpartitioned" makes it apply to every partition). Older data files
 * lose every row, not only the deleted keys, and the count varies with `SET threads`. A table written
 * by Iceberg Java 1.12 alone (day + bucket partitions, one global equality delete) reads the same way,
 * while Spark, Trino and IcebergGenerics read all of these tables as floe does. DuckDB 1.5.5 (the
 * duckdb-extension-iceberg wheels) reads them correctly.
 */
const KNOWN_BUGS: { engine: Engine; applies: (t: { partitioned: boolean; equality: number }) => boolean; what: string }[] = [
  { engine: 'duckdb', applies: (t) => t.partitioned && t.equality > 0, what: 'DuckDB 1.4.4 drops rows of partitioned tables with global equality deletes' },
];

const TYPED_DDL = (name: string) => `CREATE TABLE ${name} (
  id BIGINT PRIMARY KEY, amount DECIMAL(12,2), ratio DOUBLE, f FLOAT, happened DATETIME(6) NOT NULL,
  stamped TIMESTAMP(6) NULL DEFAULT NULL, day DATE, payload VARBINARY(16), name VARCHAR(60))`;

const NAMES = ["plain", "quote '' and \\\" dq", 'tab\\there', 'line\\nbreak', '한글 ü €', '😀 astral', '', 'back\\\\slash'];

/** A deterministic row of `typed`/`parted`/`fresh` for id `i` (values at the edges of each type). */
function typedRow(i: number): string {
  const amount = i % 7 === 0 ? 'NULL' : ((i % 2 === 0 ? 1 : -1) * (i * 13.37)).toFixed(2);
  const ratio = ['0.1', '1e21', '-2.5e-7', '3.141592653589793', '123456789012345680000', '-0', '1', 'NULL'][i % 8];
  const f = ['0.1', '3.4028235e38', '-1.5', '16777217', 'NULL', '1e-10', '7', '0.3'][i % 8];
  const day = 1 + (i % 28);
  const happened = `'${1999 + (i % 30)}-${String(1 + (i % 12)).padStart(2, '0')}-${String(day).padStart(2, '0')} ${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:07.${String((i * 7919) % 1_000_000).padStart(6, '0')}'`;
  const stamped = i % 5 === 0 ? 'NULL' : `'20${String(10 + (i % 20)).padStart(2, '0')}-03-0${1 + (i % 9)} 0${i % 10}:30:00.${String(i).padStart(6, '0')}'`;
  const date = ["'1969-12-31'", "'1000-01-01'", "'9999-12-31'", "'2024-02-29'", 'NULL', "'1970-01-01'"][i % 6];
  const payload = i % 6 === 0 ? 'NULL' : i % 6 === 1 ? "X''" : `X'${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}00ff'`;
  const name = i % 9 === 8 ? 'NULL' : `'${NAMES[i % NAMES.length]} ${i}'`;
  return `(${i}, ${amount}, ${ratio}, ${f}, ${happened}, ${stamped}, ${date}, ${payload}, ${name})`;
}

interface Job {
  formatVersion: 2 | 3;
  db: string;
  tables: string[];
  config: FloeConfig;
}

let conn: mysql.Connection;
let warehouse: string;
let catalog: FileSystemCatalog;
let trinoEnv: NodeJS.ProcessEnv;
const jobs: Job[] = [];
const timings: Record<string, number[]> = {};

async function exec(statement: string): Promise<void> {
  await conn.query(statement);
}

async function createTables(job: Job): Promise<void> {
  await exec(`USE \`${job.db}\``);
  for (const s of ALL_TYPES_SESSION) await exec(s);
  await exec(TYPED_DDL('typed'));
  await exec(TYPED_DDL('parted'));
  // no primary key: floe appends without equality deletes, so changes within one transaction leave
  // position deletes / DVs only
  await exec(TYPED_DDL('fresh').replace('id BIGINT PRIMARY KEY', 'id BIGINT NOT NULL'));
  await exec(`INSERT INTO typed VALUES ${Array.from({ length: 120 }, (_, i) => typedRow(i)).join(', ')}`);
  await exec(`INSERT INTO parted VALUES ${Array.from({ length: 120 }, (_, i) => typedRow(i)).join(', ')}`);
  if (job.tables.includes('all_types')) {
    await exec(ALL_TYPES_DDL('all_types'));
    await exec(`INSERT INTO all_types (${ALL_TYPES_COLUMNS}) VALUES ${ALL_TYPES_VALUES.map((v, i) => `(${i + 1}, ${v})`).join(', ')}`);
  }
}

/** Changes streamed after the snapshot; `round` 0 and 1 land in different checkpoints. */
async function applyChanges(round: number): Promise<void> {
  const base = 1000 + round * 100;
  // One transaction: rows inserted, then updated and deleted in the same checkpoint → position
  // deletes (v2) / deletion vectors (v3) on the data file just written.
  for (const t of ['typed', 'parted', 'fresh']) {
    await conn.beginTransaction();
    await exec(`INSERT INTO ${t} VALUES ${Array.from({ length: 30 }, (_, i) => typedRow(base + i)).join(', ')}`);
    await exec(`UPDATE ${t} SET name = CONCAT('same-tx ', id), amount = amount * 2 WHERE id BETWEEN ${base} AND ${base + 9}`);
    await exec(`DELETE FROM ${t} WHERE id BETWEEN ${base + 20} AND ${base + 24}`);
    await conn.commit();
  }
  // Rows of earlier checkpoints: updated and deleted by key → equality deletes.
  for (const t of ['typed', 'parted']) {
    await exec(`UPDATE ${t} SET ratio = ratio / 3, stamped = '2001-02-03 04:05:06.000007', name = 'updated ${round}' WHERE id % 10 = ${round}`);
    await exec(`DELETE FROM ${t} WHERE id % 17 = ${round + 3}`);
    await exec(`UPDATE ${t} SET id = id + 100000 WHERE id = ${40 + round}`); // primary key change
  }
  // Another day and another bucket for one row.
  await exec(`UPDATE parted SET happened = '2031-07-0${1 + round} 00:00:00' WHERE id = ${50 + round}`);
  if (jobs.find((j) => j.db === dbInUse)?.tables.includes('all_types')) {
    await exec(`UPDATE all_types SET vc = 'changed ${round}', dtm6 = '2001-02-03 04:05:06.7' WHERE id = ${2 + round}`);
  }
}

let dbInUse = '';

async function replicate(job: Job): Promise<void> {
  dbInUse = job.db;
  const controller = new AbortController();
  const sink = new RecordingSink();
  const result: Promise<RunResult> = runPipeline(job.config, { mode: 'run', signal: controller.signal, notifications: new FanOutNotifier(job.config.job.id, [sink], silentLogger), logger: silentLogger });
  let ended: RunResult | undefined;
  void result.then((r) => (ended = r));
  const catchUp = async () => {
    const target = await serverPosition({ ...sharedMysqlConfig() });
    await waitForCatchUp(catalog, job.tables.map((t) => ({ identifier: { namespace: [job.db], name: t }, sourceKey: `${job.db}.${t}` })), job.config.job.id, target, {
      timeoutMs: 120_000,
      check: () => {
        if (ended) throw new Error(`the pipeline ended: ${ended.reason} ${String(ended.error)}`);
      },
    });
  };
  try {
    await Promise.race([
      sink.waitFor('streaming-started'),
      result.then((r) => {
        throw new Error(`the pipeline ended before streaming: ${r.reason} ${String(r.error)}`);
      }),
    ]);
    await exec(`USE \`${job.db}\``);
    for (const round of [0, 1]) {
      await applyChanges(round);
      await catchUp();
    }
  } finally {
    controller.abort();
    await result;
  }
}

function tableDir(job: Job, table: string): string {
  return join(warehouse, job.db, table);
}

async function deleteKinds(job: Job, table: string): Promise<{ equality: number; position: number; dv: number }> {
  const t = await loadCatalogTable(catalog, { namespace: [job.db], name: table });
  const plan = await planScan(t.io, t.metadata);
  const files = (pick: (d: (typeof plan.tasks)[number]['deletes']) => { file: { filePath: string } }[]) => new Set(plan.tasks.flatMap((task) => pick(task.deletes).map((r) => r.file.filePath))).size;
  return {
    equality: files((d) => d.equality),
    position: files((d) => d.position),
    dv: files((d) => (d.dv ? [d.dv] : [])),
  };
}

async function hasTimeColumn(job: Job, table: string): Promise<boolean> {
  const t = await loadCatalogTable(catalog, { namespace: [job.db], name: table });
  const schema = t.metadata.schemas.find((x) => x.schemaId === t.metadata.currentSchemaId)!;
  return schema.fields.some((f) => f.type.kind === 'time');
}

describe.skipIf(missing.length > 0 && !required)('the engines read what floe writes', () => {
  beforeAll(async () => {
    if (missing.length > 0) throw new Error(`FLOE_ENGINES_REQUIRED=1 but ${missing.join(', ')} not installed in ${ENGINES_HOME}: run npm run engines:install`);
    warehouse = await mkdtemp(join(tmpdir(), 'floe-engines-'));
    catalog = new FileSystemCatalog({ warehouse });
    conn = await sql();
    const server = sharedMysqlConfig();
    for (const formatVersion of [2, 3] as const) {
      const db = await createTestDatabase(`engines_v${formatVersion}`);
      const tables = formatVersion === 3 ? ['typed', 'parted', 'fresh', 'all_types'] : ['typed', 'parted', 'fresh'];
      const config = parseConfig({
        job: { id: `engines-v${formatVersion}` },
        source: {
          host: server.host,
          port: server.port,
          user: server.user,
          password: server.password,
          serverId: 30_000 + (process.pid % 5000) * 8 + formatVersion,
          include: tables.map((t) => `${db}.${t}`),
          snapshot: { chunkSize: 50, parallelism: 2 },
          timeAsMicros: [`${db}.all_types.dur`],
        },
        warehouse: { location: warehouse },
        iceberg: { formatVersion },
        tables: { overrides: { [`${db}.parted`]: { partitionBy: ['day(happened)', 'bucket(8, id)'] }, [`${db}.fresh`]: { partitionBy: ['bucket(4, id)'] } } },
        commit: { intervalMs: 300, idleCheckpoints: 2 },
      });
      jobs.push({ formatVersion, db, tables, config });
    }
    for (const job of jobs) await createTables(job);
    for (const job of jobs) await replicate(job);
    // One Trino for every read (its start-up is the slow part), in a run directory of its own.
    trinoEnv = { FLOE_TRINO_RUN: join(warehouse, '.trino-run') };
    await trino('start', trinoEnv, warehouse);
  });

  afterAll(async () => {
    if (trinoEnv) await trino('stop', trinoEnv).catch(() => undefined);
    await conn?.end();
    if (warehouse && process.env.FLOE_ENGINES_KEEP === '1') console.log(`[floe] kept the warehouse ${warehouse} (FLOE_ENGINES_KEEP=1)`);
    else if (warehouse) await rm(warehouse, { recursive: true, force: true });
    const summary = Object.entries(timings).map(([e, s]) => `${e} ${s.map((x) => x.toFixed(1)).join('/')} s`);
    if (summary.length > 0) console.log(`[floe] engine read times per table: ${summary.join('; ')}`);
  });

  it('floe wrote what the suite claims to cover: equality + position deletes (v2), equality deletes + DVs (v3), and a table without equality deletes', async () => {
    const v2 = jobs.find((j) => j.formatVersion === 2)!;
    const v3 = jobs.find((j) => j.formatVersion === 3)!;
    for (const t of ['typed', 'parted']) {
      expect(await deleteKinds(v2, t), `v2 ${t}`).toMatchObject({ equality: expect.any(Number), position: expect.any(Number), dv: 0 });
      const k2 = await deleteKinds(v2, t);
      expect(k2.equality > 0 && k2.position > 0, `v2 ${t}: ${JSON.stringify(k2)}`).toBe(true);
      const k3 = await deleteKinds(v3, t);
      expect(k3.equality > 0 && k3.dv > 0 && k3.position === 0, `v3 ${t}: ${JSON.stringify(k3)}`).toBe(true);
    }
    expect(await deleteKinds(v2, 'fresh')).toMatchObject({ equality: 0, dv: 0 });
    expect((await deleteKinds(v2, 'fresh')).position).toBeGreaterThan(0);
    expect(await deleteKinds(v3, 'fresh')).toMatchObject({ equality: 0, position: 0 });
    expect((await deleteKinds(v3, 'fresh')).dv).toBeGreaterThan(0);
    // and the lake equals MySQL, so floe scan's lines are the truth the engines are held to
    for (const job of jobs) {
      for (const t of job.tables) {
        const lake = await lakeTableRows(catalog, { namespace: [job.db], name: t });
        const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, job.db, t, lake.columns, { typeMapping: { timeAsMicros: [`${job.db}.all_types.dur`] } });
        expect({ table: `${job.db}.${t}`, ...multisetDifference(expected, lake.rows) }).toEqual({ table: `${job.db}.${t}`, missing: [], unexpected: [] });
      }
    }
  });

  for (const engine of ENGINES) {
    it(`${engine} reads every table as floe scan does`, async () => {
      const problems: string[] = [];
      for (const job of jobs) {
        for (const t of job.tables) {
          const dir = tableDir(job, t);
          const expected = await floeScanLines(dir);
          const read = await readWith(engine as Engine, dir, engine === 'trino' ? trinoEnv : {});
          (timings[engine] ??= []).push(read.seconds);
          const label = `v${job.formatVersion} ${t}`;
          const kinds = await deleteKinds(job, t);
          const hasEqualityDeletes = kinds.equality > 0;
          const bug = KNOWN_BUGS.find((b) => b.engine === engine && b.applies({ partitioned: t === 'parted' || t === 'fresh', equality: kinds.equality }));
          if (bug !== undefined) {
            if (read.code !== 0) problems.push(`${label}: known bug (${bug.what}) expected a wrong read, got exit ${read.code}: ${read.stderr.slice(-500)}`);
            else if (read.lines.length === expected.length && multisetDifference(expected, read.lines, 1).missing.length === 0) problems.push(`${label}: reads correctly now: ${bug.what} is fixed, remove it from KNOWN_BUGS`);
            continue;
          }
          const limitation =
            engine === 'pyiceberg' && hasEqualityDeletes ? PYICEBERG_EQUALITY_DELETES : engine === 'spark' && (await hasTimeColumn(job, t)) ? SPARK_TIME : undefined;
          if (limitation !== undefined) {
            if (read.refusal !== limitation) problems.push(`${label}: expected ${engine}'s documented refusal "${limitation}", got exit ${read.code}: ${read.refusal ?? read.stderr.slice(-500)}`);
            continue;
          }
          if (read.code !== 0) {
            problems.push(`${label}: exit ${read.code}: ${read.refusal ?? read.stderr.slice(-1500)}`);
            continue;
          }
          const diff = multisetDifference(expected, read.lines, 3);
          if (diff.missing.length > 0 || diff.unexpected.length > 0 || read.lines.length !== expected.length) {
            problems.push(`${label}: ${read.lines.length} lines vs floe scan's ${expected.length}; floe only: ${diff.missing.join(' | ')}; ${engine} only: ${diff.unexpected.join(' | ')}`);
          }
        }
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
