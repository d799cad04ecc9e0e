/**
 * The crash test's run loop, shared by test/e2e/crash-restart.test.ts and the engines suite's read of
 * a crash-test lake (test/engines/crash-lake.test.ts): a database with its tables, a warehouse and a
 * `floe run` config (setUp); floe killed again and again while a writer writes, then a last run that
 * catches up and stops, and every table compared with MySQL (crashAndCompare).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../../src/catalog/filesystem/filesystem-catalog.js';
import { loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { ancestorsOf } from '../../../src/iceberg/spec/snapshot-ids.js';
import { CHECKPOINT_ID_KEY, JOB_ID_KEY } from '../../../src/iceberg/checkpoint/index.js';
import { addedDeleteFiles } from '../../support/lake-integrity.js';
import type { TypeMappingOptions } from '../../../src/source/mysql/schema/type-mapping.js';
import { createTestDatabase, sharedMysqlConfig, sourceLogin } from '../../support/shared-mysql.js';
import { sql } from '../../source/mysql/binlog/helpers.js';
import { runFloe } from '../../cli/run-floe.js';
import { serverPosition, waitForCatchUp, watchedTables, whileRunning } from './catch-up.js';
import { prng } from './crash-schema.js';
import { FloeProcess } from './floe-process.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './lake-compare.js';

export const JOB = 'crash-test';
// The commit steps the filesystem catalog passes through (it has no separate metadata-file / swap step:
// creating the next metadata file IS its commit; random SIGKILLs cover the moments around it).
const COMMIT_STEPS = ['after-data-files', 'after-manifests', 'after-manifest-list'];

const connections: mysql.Connection[] = [];
/** Paths tearDownCrashRuns removes (a test adds its own). */
export const cleanup: string[] = [];

/** Ends the connections and removes what every setUp made (a test file's afterAll). */
export async function tearDownCrashRuns(): Promise<void> {
  for (const c of connections.splice(0)) await c.end();
  for (const path of cleanup.splice(0)) await rm(path, { recursive: true, force: true });
}


export interface Setup {
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
export async function setUp(
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

export type Phase = 'starting' | 'snapshot' | 'streaming';

export interface RunRecord {
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

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Writer {
  start(): void;
  stop(): Promise<void>;
  readonly transactions: number;
  readonly failures: string[];
}

export interface Quota {
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
export async function crashAndCompare(
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
    await waitForCatchUp(catalog, watchedTables(s.db, tables), JOB, target, { timeoutMs: 120_000, check: whileRunning(last, 'the last run') });
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
      const { equality } = await addedDeleteFiles(table);
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

export function seeded(): { seed: number; random: () => number } {
  const seed = Number(process.env.FLOE_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`crash test seed: FLOE_CRASH_SEED=${seed}`);
  return { seed, random: prng(seed) };
}
