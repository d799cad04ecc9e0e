/**
 * THE crash test. `floe run` runs as a child process against the harness
 * MariaDB and a local warehouse (filesystem catalog) while a writer applies random inserts, updates
 * (key changes included) and deletes to tables with composite keys, BIGINT UNSIGNED keys, every
 * supported type, no primary key (one with many identical rows, deleted and updated one copy at a
 * time), and a parent/child pair with ON DELETE CASCADE. The process is
 * killed with SIGKILL again and again — during snapshot chunks, in the middle of commits (failpoints
 * after the data files, the manifests, the manifest list: the process kills itself there) and while
 * streaming — and started again each time. When the writer stops and a
 * last run has caught up with the server's position (read from the tables' own committed offsets),
 * every Iceberg table equals its MySQL table row for row, no checkpoint id appears twice in any
 * table's history, no v3 table holds an equality delete, and `floe verify` finds the lake equal.
 *
 * The partitioned variant does the same to a table partitioned by day() and one by bucket() (the writer
 * moves rows between partitions), and while floe streams it alters both tables (a column added with a
 * default, a column widened), so that kills also land around a schema change of partitioned tables.
 *
 * The wide fan-out variant (format v2 and v3): 3,000 rows over ~2,800 days, partitioned by day, so the
 * snapshot writes a file per row or so, with the default commit interval (10 s). 20 runs, each
 * SIGKILLed 1–6 s after it started its snapshot (or streaming): the snapshot must land its chunks between kills (a run's first
 * chunks are committed at once, and a checkpoint closes early when its open files pass
 * commit.maxOpenFiles) and finish before the last kill.
 *
 * The writer's seed is printed; set FLOE_CRASH_SEED to replay a run's writes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { ancestorsOf } from '../../src/iceberg/spec/snapshot-ids.js';
import { CHECKPOINT_ID_KEY, JOB_ID_KEY } from '../../src/iceberg/checkpoint/index.js';
import { createTestDatabase, sharedMysqlConfig, sourceLogin } from '../support/shared-mysql.js';
import { sql } from '../source/binlog/helpers.js';
import { committedOffset, serverPosition, waitForCatchUp } from './support/catch-up.js';
import { CASCADE_DELETES, CRASH_TABLES, RandomWriter, createCrashSchema, prng } from './support/crash-schema.js';
import { ManifestReads } from '../../src/iceberg/table/manifest-reads.js';
import { FANOUT_TABLE, FanoutWriter, PARTITIONED_DDL, PARTITIONED_OVERRIDES, PARTITIONED_TABLES, PartitionedRandomWriter, createFanoutSchema, createPartitionedCrashSchema } from './support/crash-partitioned.js';
import { FloeProcess } from './support/floe-process.js';
import { runFloe } from '../cli/run-floe.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';
import type { TypeMappingOptions } from '../../src/source/mysql/schema/type-mapping.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'crash-test';
/** At least this many kills; more until every kind of kill happened (at most MAX_RUNS). */
const MIN_RUNS = 20;
const MAX_RUNS = 45;
// The commit steps the filesystem catalog passes through (it has no separate metadata-file / swap step:
// creating the next metadata file IS its commit; random SIGKILLs cover the moments around it).
const COMMIT_STEPS = ['after-data-files', 'after-manifests', 'after-manifest-list'];

const connections: mysql.Connection[] = [];
const cleanup: string[] = [];

afterAll(async () => {
  for (const c of connections) await c.end();
  for (const path of cleanup) await rm(path, { recursive: true, force: true });
});

interface Setup {
  db: string;
  /** Its own connection (DDL, comparisons). */
  conn: mysql.Connection;
  /** The random writer's connection. */
  writerConn: mysql.Connection;
  warehouse: string;
  configPath: string;
}

/**
 * A database with `createSchema`'s tables, a warehouse and a floe config capturing every table;
 * `configFor` adds settings (`source` and `commit` ones merged into the test's).
 */
async function setUp(
  prefix: string,
  createSchema: (c: mysql.Connection) => Promise<void>,
  configFor: (db: string) => { source?: Record<string, unknown>; commit?: Record<string, unknown>; [key: string]: unknown },
  serverIdOffset: number,
): Promise<Setup> {
  const db = await createTestDatabase(prefix);
  const conn = await sql();
  connections.push(conn);
  await conn.query(`USE \`${db}\``);
  await createSchema(conn);
  const writerConn = await sql();
  connections.push(writerConn);
  await writerConn.query(`USE \`${db}\``);
  const warehouse = await mkdtemp(join(tmpdir(), `floe-e2e-${prefix}-`));
  const server = sharedMysqlConfig();
  const configPath = join(warehouse, '..', `${warehouse.split('/').pop()}.json`);
  cleanup.push(warehouse, configPath);
  const { source, commit, ...extra } = configFor(db);
  await writeFile(
    configPath,
    JSON.stringify({
      job: { id: JOB },
      ...extra,
      source: {
        ...sourceLogin(server),
        serverId: 30_000 + (process.pid % 5000) * 8 + serverIdOffset,
        include: [`${db}.*`],
        snapshot: { chunkSize: 150, parallelism: 2 },
        ...source,
      },
      warehouse: { location: warehouse },
      commit: { intervalMs: 300, idleCheckpoints: 3, ...commit },
    }),
  );
  return { db, conn, writerConn, warehouse, configPath };
}

type Phase = 'starting' | 'snapshot' | 'streaming';

interface RunRecord {
  run: number;
  how: 'sigkill' | 'failpoint';
  failpoint?: string;
  phase: Phase;
  ms: number;
}

function phaseOf(p: FloeProcess): Phase {
  const n = p.notifications();
  if (n.includes('streaming-started')) return 'streaming';
  if (n.includes('snapshot-started')) return 'snapshot';
  return 'starting';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Writer {
  start(): void;
  stop(): Promise<void>;
  readonly transactions: number;
  readonly failures: string[];
}

interface Quota {
  minRuns: number;
  maxRuns: number;
  snapshotKills: number;
  failpoints: number;
  streamingKills: number;
}

/**
 * Kills floe again and again while `writer` writes (the schedule in the module header), then lets a
 * last run catch up with the server and stop cleanly, and compares every table with MySQL.
 * `duringRun` runs once a run has started (with the phase it started in), before its kill.
 */
async function crashAndCompare(
  s: Setup,
  tables: readonly string[],
  writer: Writer,
  random: () => number,
  quota: Quota,
  options: { typeMapping?: TypeMappingOptions; duringRun?: (run: number, phase: Phase) => Promise<void>; commitSteps?: readonly string[]; noEqualityDeletes?: readonly string[]; verify?: boolean } = {},
): Promise<RunRecord[]> {
  const steps = options.commitSteps ?? COMMIT_STEPS;
  writer.start();
  const runs: RunRecord[] = [];
  const met = () =>
    runs.length >= quota.minRuns &&
    runs.filter((r) => r.phase === 'snapshot').length >= quota.snapshotKills &&
    runs.filter((r) => r.how === 'failpoint').length >= quota.failpoints &&
    runs.filter((r) => r.phase === 'streaming' && r.how === 'sigkill').length >= quota.streamingKills;
  try {
    // Until every kind of kill happened often enough (how many runs the snapshot spans depends
    // on the machine's speed, so the schedule adapts instead of assuming one).
    for (let run = 0; !met() && run < quota.maxRuns; run++) {
      // Every third run dies inside a commit (the process kills itself at a commit step); the
      // others get a SIGKILL at a random moment up to a few seconds after the snapshot or the
      // streaming started.
      // The first two runs are killed early in the snapshot (it is resumable, so it must be hit
      // before it completes); the third dies at its first data-file commit step, still snapshotting.
      // Their delays are short against the snapshot's work (at least a second of it here): run 0
      // dies before its first commit interval (300 ms) ends, so run 1 snapshots from the start again
      // and dies around its first commit — with a random delay for both of up to 750 ms, a run 0
      // that committed most of a fast snapshot let run 1 finish it (CI on Node 24: "every kind of
      // kill happened often enough" failed with one snapshot-phase kill).
      const failpoint =
        run === 2 ? 'after-data-files:0:exit' : run > 2 && run % 3 === 0 ? `${steps[(run / 3) % steps.length]}:${Math.floor(random() * 8)}:exit` : undefined;
      const began = Date.now();
      const p = new FloeProcess(s.configPath, { env: failpoint ? { FLOE_FAILPOINTS: failpoint } : {} });
      let killed = false;
      if (failpoint) {
        await Promise.race([p.exited, sleep(40_000)]);
      } else {
        const started = await p.waitFor((r) => r.notification === 'snapshot-started' || r.notification === 'streaming-started');
        if (!started) throw new Error(`run ${run}: floe exited before starting:\n${p.tail()}`);
        await options.duringRun?.(run, started.notification === 'snapshot-started' ? 'snapshot' : 'streaming');
        const early = run === 0 ? 50 + random() * 150 : run === 1 ? 350 + random() * 200 : undefined;
        await sleep(started.notification === 'snapshot-started' ? (early ?? 300 + random() * 2700) : 300 + random() * 2500);
      }
      const phase = phaseOf(p);
      if (!p.hasExited) {
        killed = true;
        p.kill('SIGKILL');
      }
      const exit = await p.exited;
      if (exit.signal !== 'SIGKILL') throw new Error(`run ${run} (${failpoint ?? 'sigkill'}) ended by itself with code ${exit.code}:\n${p.tail()}`);
      runs.push({ run, how: killed ? 'sigkill' : 'failpoint', failpoint, phase, ms: Date.now() - began });
      // Once the snapshot is over, snapshot-phase kills cannot be added any more: stop at the minimum.
      if (runs.length >= quota.minRuns && phase === 'streaming' && runs.filter((r) => r.phase === 'snapshot').length < quota.snapshotKills) break;
    }
  } finally {
    await writer.stop();
  }
  console.log(`writer: ${writer.transactions} transactions; runs: ${runs.map((r) => `${r.run}:${r.how}${r.failpoint ? `(${r.failpoint})` : ''}@${r.phase}/${r.ms}ms`).join(' ')}`);

  // A last run catches up with everything the writer did, then stops cleanly.
  const target = await serverPosition({ ...sharedMysqlConfig() });
  const catalog = new FileSystemCatalog({ warehouse: s.warehouse });
  const catchUpStart = Date.now();
  const last = new FloeProcess(s.configPath);
  try {
    await waitForCatchUp(
      catalog,
      tables.map((t) => ({ identifier: { namespace: [s.db], name: t }, sourceKey: `${s.db}.${t}` })),
      JOB,
      target,
      {
        timeoutMs: 120_000,
        check: () => {
          if (last.hasExited) throw new Error(`the last run exited:\n${last.tail()}`);
        },
      },
    );
  } finally {
    last.kill('SIGTERM');
  }
  const exit = await last.exited;
  console.log(`caught up and stopped in ${Date.now() - catchUpStart} ms`);
  expect(exit, last.tail()).toEqual({ code: 0, signal: null });

  for (const t of tables) {
    const lake = await lakeTableRows(catalog, { namespace: [s.db], name: t });
    const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, s.db, t, lake.columns, { typeMapping: options.typeMapping });
    const diff = multisetDifference(expected, lake.rows);
    expect({ table: t, ...diff, rows: lake.rows.length }).toEqual({ table: t, missing: [], unexpected: [], rows: expected.length });

    const table = await loadCatalogTable(catalog, { namespace: [s.db], name: t });
    const ids = table.metadata.snapshots.filter((snap) => snap.summary[JOB_ID_KEY] === JOB).map((snap) => snap.summary[CHECKPOINT_ID_KEY]);
    expect(new Set(ids).size, `checkpoint ids of ${t}: ${ids.join(',')}`).toBe(ids.length);
    // and every snapshot is on the main branch's single line of history
    expect(ancestorsOf(table.metadata, table.metadata.currentSnapshotId).length).toBe(table.metadata.snapshots.length);
    if (options.noEqualityDeletes?.includes(t)) {
      // format v3: deletion vectors only — keyed tables through their key index, keyless ones through
      // their row index, cascade children through their FK index (read from every snapshot's manifests)
      const reads = new ManifestReads(table.io);
      let equality = 0;
      for (const snap of table.metadata.snapshots) equality += (await reads.changesOf(snap)).addedDeleteFiles.filter((f) => f.content === 'equality-deletes').length;
      expect({ table: t, formatVersion: table.metadata.formatVersion, equality }).toEqual({ table: t, formatVersion: 3, equality: 0 });
    }
  }

  if (options.verify) {
    // floe's own proof agrees: every chunk's checksum equal on both sides (exit 0)
    const verified = await runFloe(['verify', '-c', s.configPath], { timeoutMs: 300_000 });
    expect({ code: verified.code, output: verified.code === 0 ? '' : `${verified.stdout}\n${verified.stderr}`.slice(-3000) }).toEqual({ code: 0, output: '' });
  }

  // The kills landed where they were meant to.
  expect(met(), 'every kind of kill happened often enough').toBe(true);
  expect(writer.transactions).toBeGreaterThan(500);
  expect(writer.failures.length, writer.failures.slice(0, 3).join('\n')).toBeLessThan(Math.max(5, writer.transactions / 100));
  return runs;
}

function seeded(): { seed: number; random: () => number } {
  const seed = Number(process.env.FLOE_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`crash test seed: FLOE_CRASH_SEED=${seed}`);
  return { seed, random: prng(seed) };
}

describe('crash and restart', () => {
  it(`the lake equals MySQL after ${MIN_RUNS}+ SIGKILLs during snapshot, commits and streaming`, async () => {
    const s = await setUp('e2e_crash', createCrashSchema, (db) => ({ source: { timeAsMicros: [`${db}.all_types.dur`] } }), 0);
    const timeAsMicros = [`${s.db}.all_types.dur`];
    const { seed, random } = seeded();
    const writer = new RandomWriter(s.writerConn, prng(seed ^ 0x5eed));
    await crashAndCompare(s, CRASH_TABLES, writer, random, { minRuns: MIN_RUNS, maxRuns: MAX_RUNS, snapshotKills: 2, failpoints: 3, streamingKills: 5 }, { typeMapping: { timeAsMicros }, noEqualityDeletes: CRASH_TABLES, verify: true });
    console.log(`writer: ${writer.parentDeletes} parent deletes`);
    if (CASCADE_DELETES) expect(writer.parentDeletes).toBeGreaterThan(0);
  }, 900_000);

  it('a disk key index (memoryMaxRows 0, under stateDir): the lake equals MySQL after SIGKILLs, some between the Iceberg commit and the index update', async () => {
    const s = await setUp('e2e_crash_disk', createCrashSchema, (db) => ({ source: { timeAsMicros: [`${db}.all_types.dur`] }, iceberg: { keyIndex: { memoryMaxRows: 0 } }, stateDir: join(tmpdir(), `floe-e2e-state-${db}`) }), 2);
    cleanup.push(join(tmpdir(), `floe-e2e-state-${s.db}`));
    const timeAsMicros = [`${s.db}.all_types.dur`];
    const { seed, random } = seeded();
    const writer = new RandomWriter(s.writerConn, prng(seed ^ 0xd15c));
    await crashAndCompare(s, CRASH_TABLES, writer, random, { minRuns: 10, maxRuns: 25, snapshotKills: 1, failpoints: 3, streamingKills: 4 }, { typeMapping: { timeAsMicros }, commitSteps: ['key-index-before-apply', 'after-manifest-list', 'key-index-before-apply'], noEqualityDeletes: CRASH_TABLES });
    // the indexes went to disk and are stamped: the state directory holds one per keyed table
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(join(tmpdir(), `floe-e2e-state-${s.db}`, JOB)).filter((f) => f.endsWith('.keyindex.sqlite')).length).toBeGreaterThan(0);
  }, 900_000);

  it('partitioned tables (day, bucket): the lake equals MySQL after SIGKILLs during snapshot, commits and streaming, and a DDL while streaming', async () => {
    const s = await setUp('e2e_crash_part', createPartitionedCrashSchema, (db) => ({ tables: { overrides: PARTITIONED_OVERRIDES(db) } }), 4);
    const { seed, random } = seeded();
    const writer = new PartitionedRandomWriter(s.writerConn, prng(seed ^ 0x9a57));
    let ddlRun: number | undefined;
    const runs = await crashAndCompare(s, PARTITIONED_TABLES, writer, random, { minRuns: 14, maxRuns: 35, snapshotKills: 2, failpoints: 3, streamingKills: 4 }, {
      duringRun: async (run, phase) => {
        // once, while a run streams (after a few kills): the DDL, with floe running; it is killed later
        if (ddlRun !== undefined || phase !== 'streaming' || run < 5) return;
        for (const statement of PARTITIONED_DDL) await s.conn.query(statement);
        writer.afterDdl = true;
        ddlRun = run;
        console.log(`run ${run}: ${PARTITIONED_DDL.join('; ')}`);
      },
    });
    expect(ddlRun, `no run streamed after run 5: ${runs.map((r) => `${r.run}@${r.phase}`).join(' ')}`).toBeDefined();
    // the DDL reached the lake: the added column (old rows read its default) and the widened one
    const catalog = new FileSystemCatalog({ warehouse: s.warehouse });
    const orders = await loadCatalogTable(catalog, { namespace: [s.db], name: 'orders_day' });
    const ordersSchema = orders.metadata.schemas.find((x) => x.schemaId === orders.metadata.currentSchemaId)!;
    expect(ordersSchema.fields.map((f) => f.name)).toContain('channel');
    const items = await loadCatalogTable(catalog, { namespace: [s.db], name: 'items_bucket' });
    const itemsSchema = items.metadata.schemas.find((x) => x.schemaId === items.metadata.currentSchemaId)!;
    expect(itemsSchema.fields.find((f) => f.name === 'qty')?.type).toEqual({ kind: 'long' });
    for (const t of [orders, items]) expect(t.metadata.partitionSpecs.find((p) => p.specId === t.metadata.defaultSpecId)!.fields).toHaveLength(1);
  }, 900_000);

  it.each([2, 3] as const)('a snapshot over ~2,800 day partitions (v%i): 20 runs SIGKILLed 1–6 s into their work land its chunks, and it finishes before the last kill', async (formatVersion) => {
    // floe's default commit interval (10 s): longer than any run
    const s = await setUp(`e2e_crash_fanout_v${formatVersion}`, createFanoutSchema, (db) => ({ tables: { overrides: { [`${db}.${FANOUT_TABLE}`]: { partitionBy: ['day(created_at)'], formatVersion } } }, commit: { intervalMs: 10_000 } }), 5 + formatVersion);
    const { seed, random } = seeded();
    const writer = new FanoutWriter(s.writerConn, prng(seed ^ 0xfa9));
    const catalog = new FileSystemCatalog({ warehouse: s.warehouse });
    const identifier = { namespace: [s.db], name: FANOUT_TABLE };
    const RUNS = 20;
    let finishedBy: number | undefined;
    const runs: string[] = [];
    writer.start();
    try {
      for (let run = 0; run < RUNS; run++) {
        const p = new FloeProcess(s.configPath, { logLevel: 'debug' });
        // counted from the start of its work, as the other crash tests count (a loaded machine can take
        // seconds to start a process)
        const started = await p.waitFor((r) => r.notification === 'snapshot-started' || r.notification === 'streaming-started');
        if (!started) throw new Error(`run ${run} exited before starting:\n${p.tail()}`);
        const ms = 1000 + random() * 5000;
        await sleep(ms);
        if (p.hasExited) throw new Error(`run ${run} ended by itself:\n${p.tail()}`);
        p.kill('SIGKILL');
        await p.exited;
        const commits = p.logs.filter((r) => r.msg === 'checkpoint committed').length;
        runs.push(`${run}@${Math.round(ms)}ms:${commits}`);
        // streaming in the lake: every chunk committed, the hand-over too
        if (finishedBy === undefined && (await committedOffset(catalog, identifier, JOB)) !== undefined) finishedBy = run;
      }
    } finally {
      await writer.stop();
    }
    console.log(`v${formatVersion}: runs ${runs.join(' ')}; snapshot finished by run ${finishedBy}; writer ${writer.transactions} changes`);
    expect(finishedBy, 'the snapshot finished before the last kill').toBeDefined();
    expect(finishedBy!).toBeLessThan(RUNS - 1);

    const target = await serverPosition({ ...sharedMysqlConfig() });
    const last = new FloeProcess(s.configPath);
    try {
      await waitForCatchUp(catalog, [{ identifier, sourceKey: `${s.db}.${FANOUT_TABLE}` }], JOB, target, {
        timeoutMs: 120_000,
        check: () => {
          if (last.hasExited) throw new Error(`the last run exited:\n${last.tail()}`);
        },
      });
    } finally {
      last.kill('SIGTERM');
    }
    expect(await last.exited, last.tail()).toEqual({ code: 0, signal: null });
    const lake = await lakeTableRows(catalog, identifier);
    const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, s.db, FANOUT_TABLE, lake.columns);
    expect({ ...multisetDifference(expected, lake.rows), rows: lake.rows.length }).toEqual({ missing: [], unexpected: [], rows: expected.length });
    const table = await loadCatalogTable(catalog, identifier);
    expect(table.metadata.formatVersion).toBe(formatVersion);
    const ids = table.metadata.snapshots.filter((snap) => snap.summary[JOB_ID_KEY] === JOB).map((snap) => snap.summary[CHECKPOINT_ID_KEY]);
    expect(new Set(ids).size, `checkpoint ids: ${ids.join(',')}`).toBe(ids.length);
    expect(writer.failures, writer.failures.slice(0, 3).join('\n')).toHaveLength(0);
  }, 900_000);
});
