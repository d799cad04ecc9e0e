/**
 * The crash test with maintenance running every few commits (a crash mid-compaction must lose and
 * duplicate nothing either): `floe run` as a child process
 * replicates a format-v2 table (upserts write equality deletes) and a format-v3 table (deletion
 * vectors; its compaction carries row lineage) — compaction runs on both — while a writer applies random inserts, updates (key changes included) and
 * deletes, with maintenance at its most aggressive — every second (`maintenance.intervalMs` at its
 * minimum), compaction whenever a delete file is live, expiry of all but the last two snapshots older
 * than a second, orphan removal every second with a two-second window
 * (`maintenance.removeOrphans.allowShortWindow`: floe is the only writer here). floe is killed 20+
 * times: SIGKILLs at random moments, and failpoints that make the process kill itself inside
 * compaction (after the rewritten files, the replace commit's manifests and manifest list, before and
 * after the catalog swap), inside expiry (committed but nothing deleted; some files deleted) and
 * inside orphan removal (some deleted).
 *
 * After EVERY run, every file the current metadata and every retained snapshot reaches exists
 * (test/support/lake-integrity.ts: manifest lists, manifests, live data and delete files, Puffin DVs,
 * the state objects the stamps name) — maintenance never deletes anything referenced (docs/design.md
 * §4b), whatever moment it dies at. At the end a last run catches up and the lake equals MySQL.
 *
 * The writer's seed is printed; set FLOE_CRASH_SEED to replay a run's writes.
 */
import { existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { removeOrphanFiles } from '../../src/iceberg/maintenance/remove-orphan-files.js';
import { referencedStateObjects } from '../../src/pipeline/state-references.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { ancestorsOf } from '../../src/iceberg/spec/snapshot-ids.js';
import { prng } from '../../src/util/prng.js';
import { sharedMysqlConfig } from '../support/shared-mysql.js';
import { reachableFiles, unreachableFiles } from '../support/lake-integrity.js';
import { serverPosition, waitForCatchUp, watchedTables, whileRunning } from './support/catch-up.js';
import { setUp, sleep, tearDownCrashRuns } from './support/crash-run.js';
import { FloeProcess, type LogRecord } from './support/floe-process.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';
import { RandomTransactionWriter } from '../support/random-writer.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'crash-maint';
const TABLES = ['orders_v2', 'orders_v3'] as const;
const ROWS = 1200;
const MIN_RUNS = 20;
const MAX_RUNS = 34;
/** Failpoints inside maintenance, by step; the process kills itself there (`exit`). */
const STEPS = {
  compaction: ['compaction-after-rewrite-files', 'compaction-after-manifests', 'compaction-after-manifest-list', 'compaction-before-catalog-swap', 'compaction-after-catalog-swap'],
  expiry: ['expire-after-commit', 'expire-mid-delete'],
  orphans: ['orphans-mid-delete'],
} as const;
type Step = keyof typeof STEPS;
/** Failpoint kills that must have happened inside each step. */
const QUOTA: Record<Step, number> = { compaction: 3, expiry: 2, orphans: 1 };
/** How long a failpoint run may take to reach its failpoint before it is SIGKILLed instead. */
const FAILPOINT_WAIT_MS = 8000;

afterAll(tearDownCrashRuns);

const localPath = (uri: string) => (uri.startsWith('file:') ? fileURLToPath(uri) : uri);

async function createSchema(conn: mysql.Connection): Promise<void> {
  for (const t of TABLES) {
    await conn.query(`CREATE TABLE ${t} (id INT PRIMARY KEY, customer VARCHAR(20) NOT NULL, amount DECIMAL(12,2) NOT NULL, note VARCHAR(40), at DATETIME(6) NULL)`);
    const values = Array.from({ length: ROWS }, (_, i) => `(${i + 1}, 'c${i % 37}', ${(i * 37) % 100000 / 100}, ${i % 4 === 0 ? 'NULL' : `'n${i}'`}, '2025-01-0${1 + (i % 9)} 0${i % 10}:00:00.${String(i).padStart(6, '0')}')`);
    for (let i = 0; i < values.length; i += 500) await conn.query(`INSERT INTO ${t} VALUES ${values.slice(i, i + 500).join(', ')}`);
  }
}

/** Random small transactions over both tables until stopped; MySQL is the truth. */
class Writer extends RandomTransactionWriter {
  private next = ROWS + 1;

  constructor(conn: mysql.Connection, random: () => number) {
    super(conn, random, 10);
  }

  protected statement(): string {
    const t = TABLES[this.int(TABLES.length)];
    const id = 1 + this.int(this.next);
    const op = this.int(10);
    if (op < 3) return `INSERT INTO ${t} VALUES (${this.next++}, 'c${this.int(37)}', ${this.int(1_000_000) / 100}, 'new', NULL)`;
    if (op < 7) return `UPDATE ${t} SET amount = amount + ${this.int(10000) / 100}, note = ${this.int(4) === 0 ? 'NULL' : `'u${this.int(1000)}'`}, at = '2025-02-0${1 + this.int(9)} 01:02:03.${this.int(999999)}' WHERE id = ${id}`;
    if (op < 8) return `UPDATE ${t} SET id = ${this.next++} WHERE id = ${id}`; // key change
    return `DELETE FROM ${t} WHERE id = ${id}`;
  }
}

interface RunRecord {
  run: number;
  /** The failpoint armed (undefined: a SIGKILL at a random moment). */
  failpoint?: string;
  /** Whether the process killed itself at its failpoint (else the test SIGKILLed it). */
  fired: boolean;
  ms: number;
}

const stepOf = (failpoint: string | undefined): Step | undefined => (Object.keys(STEPS) as Step[]).find((s) => failpoint !== undefined && (STEPS[s] as readonly string[]).some((n) => failpoint.startsWith(`${n}:`)));

/** What the runs' maintenance did, from their log lines (the runner logs each table's report). */
function maintenanceDone(logs: readonly LogRecord[]): { compactions: number; expired: number; orphans: number } {
  const out = { compactions: 0, expired: 0, orphans: 0 };
  for (const r of logs) {
    if (typeof r.msg !== 'string' || !r.msg.startsWith('maintenance:')) continue;
    const compaction = r.compaction as { rewrittenDataFiles?: number } | undefined;
    if ((compaction?.rewrittenDataFiles ?? 0) > 0) out.compactions++;
    out.expired += Number(r.expiredSnapshots ?? 0);
    out.orphans += Number(r.orphanFiles ?? 0);
  }
  return out;
}

describe('crash and restart with maintenance', () => {
  it(`nothing referenced is ever deleted and the lake equals MySQL after ${MIN_RUNS}+ kills, failpoints inside compaction, expiry and orphan removal`, async () => {
    const testStart = Date.now();
    const { db, writerConn, warehouse, configPath } = await setUp(
      'e2e_crash_maint',
      createSchema,
      (db) => ({
        job: { id: JOB },
        source: { snapshot: { chunkSize: 200, parallelism: 2 } },
        iceberg: { formatVersion: 3 },
        tables: { overrides: { [`${db}.orders_v2`]: { formatVersion: 2 } } },
        // idle tables record the offset at every checkpoint: the last run is seen to catch up at the
        // first heartbeat after the writer stopped, not several heartbeats later
        commit: { idleCheckpoints: 1 },
        maintenance: {
          enabled: true,
          intervalMs: 1000,
          expireSnapshots: { olderThanMs: 1000, retainLast: 2 },
          compaction: { enabled: true, minDeleteFiles: 1 },
          removeOrphans: { olderThanMs: 2000, intervalMs: 1000, allowShortWindow: true },
        },
      }),
      6,
    );
    const catalog = new FileSystemCatalog({ warehouse });
    const identifiers = TABLES.map((t) => ({ namespace: [db], name: t }));

    /** Live content files the integrity checks covered, by table and kind. */
    const checkedKinds: Record<string, number> = {};
    /** The invariant, after every run: nothing the metadata reaches is missing. */
    const checkIntegrity = async (run: number | string) => {
      for (const id of identifiers) {
        if (!(await catalog.tableExists(id))) continue;
        const table = await loadCatalogTable(catalog, id);
        const r = await reachableFiles(table);
        expect(r.missing, `after run ${run}: files ${id.name}'s metadata reaches are missing`).toEqual([]);
        for (const [kind, n] of Object.entries(r.checked)) checkedKinds[`${id.name} ${kind}`] = (checkedKinds[`${id.name} ${kind}`] ?? 0) + n;
        // one line of history: expiry and compaction never fork main
        expect(ancestorsOf(table.metadata, table.metadata.currentSnapshotId).length, `after run ${run}: ${id.name}'s snapshots`).toBe(table.metadata.snapshots.length);
      }
    };

    /**
     * Leftovers of a commit that never landed (as a killed writer leaves them), a minute old, in each
     * table that exists: an orphans failpoint run then has something to delete whatever the kills
     * before it left. All must be gone at the end — orphan removal finishes what a crash interrupted.
     */
    const planted: string[] = [];
    const plantOrphans = async (run: number) => {
      for (const id of identifiers) {
        if (!(await catalog.tableExists(id))) continue;
        const dir = join(localPath((await loadCatalogTable(catalog, id)).metadata.location), 'data');
        await mkdir(dir, { recursive: true });
        for (const i of [0, 1]) {
          const f = join(dir, `planted-${run}-${i}.parquet`);
          await writeFile(f, 'a data file of a commit that never landed');
          const t = (Date.now() - 60_000) / 1000;
          await utimes(f, t, t);
          planted.push(f);
        }
      }
    };

    const seed = Number(process.env.FLOE_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`crash test seed: FLOE_CRASH_SEED=${seed}`);
    const random = prng(seed);
    const writer = new Writer(writerConn, prng(seed ^ 0x3a17));
    const runs: RunRecord[] = [];
    const logs: LogRecord[] = [];
    const fired = (step: Step) => runs.filter((r) => r.fired && stepOf(r.failpoint) === step).length;
    const met = () => runs.length >= MIN_RUNS && (Object.keys(QUOTA) as Step[]).every((s) => fired(s) >= QUOTA[s]);
    const started = Date.now();
    writer.start();
    try {
      // Run 0 dies early in the snapshot; then every other run arms a maintenance failpoint — the
      // steps in turn, each skipping a random number of hits, and the step furthest below its quota
      // once the rotation is done — and the others die by SIGKILL at a random moment of streaming.
      const rotation = [...STEPS.compaction, ...STEPS.expiry, ...STEPS.orphans];
      let next = 0;
      for (let run = 0; !met() && run < MAX_RUNS; run++) {
        let failpoint: string | undefined;
        if (run > 0 && run % 2 === 1) {
          let name: string;
          if (next < rotation.length) name = rotation[next++];
          else {
            const lagging = (Object.keys(QUOTA) as Step[]).sort((a, b) => fired(a) / QUOTA[a] - fired(b) / QUOTA[b])[0];
            name = STEPS[lagging][Math.floor(random() * STEPS[lagging].length)];
          }
          // the first hit, so that a run dies there before the test gives up on it — except among an
          // expiry's deletions (one hit per file, many per expiry): after 0-3 of them
          failpoint = `${name}:${name === 'expire-mid-delete' ? Math.floor(random() * 4) : 0}:exit`;
        }
        if (stepOf(failpoint) === 'orphans') await plantOrphans(run);
        const began = Date.now();
        const p = new FloeProcess(configPath, { env: failpoint ? { FLOE_FAILPOINTS: failpoint } : {} });
        if (failpoint) {
          await Promise.race([p.exited, sleep(FAILPOINT_WAIT_MS)]);
        } else {
          const up = await p.waitFor((r) => r.notification === 'snapshot-started' || r.notification === 'streaming-started');
          if (!up) throw new Error(`run ${run}: floe exited before starting:\n${p.tail()}`);
          await sleep(up.notification === 'snapshot-started' ? 200 + random() * 600 : 300 + random() * 1500);
        }
        const killedByTest = !p.hasExited;
        p.kill('SIGKILL');
        const exit = await p.exited;
        logs.push(...p.logs);
        if (exit.signal !== 'SIGKILL') throw new Error(`run ${run} (${failpoint ?? 'sigkill'}) ended by itself with code ${exit.code}:\n${p.tail()}`);
        runs.push({ run, failpoint, fired: failpoint !== undefined && !killedByTest, ms: Date.now() - began });
        await checkIntegrity(run);
      }
    } finally {
      await writer.stop();
    }
    console.log(`writer: ${writer.transactions} transactions; ${runs.length} runs in ${Date.now() - started} ms: ${runs.map((r) => `${r.run}:${r.failpoint ? `${r.failpoint}${r.fired ? '' : '(missed)'}` : 'sigkill'}/${r.ms}ms`).join(' ')}`);

    // A last run catches up with everything the writer did (maintaining as it goes), then stops cleanly.
    const target = await serverPosition({ ...sharedMysqlConfig() });
    const catchUpStart = Date.now();
    const last = new FloeProcess(configPath);
    try {
      await waitForCatchUp(catalog, watchedTables(db, TABLES), JOB, target, { timeoutMs: 90_000, check: whileRunning(last, 'the last run') });
      console.log(`caught up in ${Date.now() - catchUpStart} ms`);
      // and its orphan removal (every second) takes what the interrupted ones left of the planted files
      for (const deadline = Date.now() + 15_000; planted.some((f) => existsSync(f)) && Date.now() < deadline && !last.hasExited; ) await sleep(250);
    } finally {
      last.kill('SIGTERM');
    }
    const exit = await last.exited;
    logs.push(...last.logs);
    console.log(`caught up and stopped in ${Date.now() - catchUpStart} ms (setup took ${started - testStart} ms)`);
    expect(exit, last.tail()).toEqual({ code: 0, signal: null });
    await checkIntegrity('last');

    for (const t of TABLES) {
      const lake = await lakeTableRows(catalog, { namespace: [db], name: t });
      const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, db, t, lake.columns);
      const diff = multisetDifference(expected, lake.rows);
      expect({ table: t, ...diff, rows: lake.rows.length }).toEqual({ table: t, missing: [], unexpected: [], rows: expected.length });
    }
    expect(planted.length).toBeGreaterThan(0);
    expect(planted.filter((f) => existsSync(f)), 'planted orphans left behind').toEqual([]);
    const v2 = await loadCatalogTable(catalog, identifiers[0]);
    const v3 = await loadCatalogTable(catalog, identifiers[1]);
    expect([v2.metadata.formatVersion, v3.metadata.formatVersion]).toEqual([2, 3]);
    // Expiry kept the history short. What is still unreferenced is younger than the orphan window or
    // was left since the last orphan pass; one more pass, with every file past its window, leaves
    // nothing unreferenced — whatever the crashes left, orphan removal finishes — and takes nothing
    // the tables need: they still equal MySQL.
    console.log(`snapshots: v2 ${v2.metadata.snapshots.length}, v3 ${v3.metadata.snapshots.length}; unreferenced files now: v2 ${(await unreachableFiles(v2)).length}, v3 ${(await unreachableFiles(v3)).length}`);
    for (const t of [v2, v3]) {
      await removeOrphanFiles(t, { olderThanMs: 1000, nowMs: Date.now() + 3_600_000, referencedObjects: referencedStateObjects });
      expect(await unreachableFiles(t), `${t.identifier.name} after a last orphan pass`).toEqual([]);
    }
    await checkIntegrity('last orphan pass');
    for (const t of TABLES) {
      const lake = await lakeTableRows(catalog, { namespace: [db], name: t });
      expect(multisetDifference(await mysqlTableRows({ ...sharedMysqlConfig() }, db, t, lake.columns), lake.rows), t).toEqual({ missing: [], unexpected: [] });
    }

    // The kills landed where they were meant to, and maintenance really ran.
    const done = maintenanceDone(logs);
    console.log(`maintenance: ${done.compactions} compactions, ${done.expired} snapshots expired, ${done.orphans} orphan files removed; failpoint kills: compaction ${fired('compaction')}, expiry ${fired('expiry')}, orphans ${fired('orphans')}`);
    // the checks covered every kind of file: v2's equality deletes, v3's Puffin deletion vectors
    console.log(`content files checked: ${JSON.stringify(checkedKinds)}`);
    for (const kind of ['orders_v2 data', 'orders_v2 equality-deletes', 'orders_v3 data', 'orders_v3 deletion-vectors']) expect(checkedKinds[kind] ?? 0, kind).toBeGreaterThan(0);
    expect(met(), `every kind of kill happened often enough: ${JSON.stringify(runs)}`).toBe(true);
    expect(done.compactions).toBeGreaterThan(0);
    expect(done.expired).toBeGreaterThan(0);
    expect(done.orphans).toBeGreaterThan(0);
    expect(writer.transactions).toBeGreaterThan(300);
    expect(writer.failures.length, writer.failures.slice(0, 3).join('\n')).toBeLessThan(Math.max(5, writer.transactions / 100));
  }, 300_000);
});
