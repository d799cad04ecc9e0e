/**
 * THE crash test. `floe run` runs as a child process against the harness
 * MariaDB and a local warehouse (filesystem catalog) while a writer applies random inserts, updates
 * (key changes included) and deletes to tables with composite keys, BIGINT UNSIGNED keys, every
 * supported type, no primary key, and a parent/child pair with ON DELETE CASCADE. The process is
 * killed with SIGKILL again and again — during snapshot chunks, in the middle of commits (failpoints
 * after the data files, the manifests, the manifest list: the process kills itself there) and while
 * streaming — and started again each time. When the writer stops and a
 * last run has caught up with the server's position (read from the tables' own committed offsets),
 * every Iceberg table equals its MySQL table row for row, and no checkpoint id appears twice in any
 * table's history.
 *
 * The writer's seed is printed; set FLOE_CRASH_SEED to replay a run's writes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem-catalog.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { ancestorsOf } from '../../src/iceberg/snapshot-ids.js';
import { CHECKPOINT_ID_KEY, JOB_ID_KEY } from '../../src/iceberg/writer/index.js';
import { createTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';
import { sql } from '../source/binlog/helpers.js';
import { serverPosition, waitForCatchUp } from './support/catch-up.js';
import { CASCADE_DELETES, CRASH_TABLES, RandomWriter, createCrashSchema, prng } from './support/crash-schema.js';
import { FloeProcess } from './support/floe-process.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'crash-test';
/** At least this many kills; more until every kind of kill happened (at most MAX_RUNS). */
const MIN_RUNS = 20;
const MAX_RUNS = 45;
// The commit steps the filesystem catalog passes through (it has no separate metadata-file / swap step:
// creating the next metadata file IS its commit; random SIGKILLs cover the moments around it).
const COMMIT_STEPS = ['after-data-files', 'after-manifests', 'after-manifest-list'];

let db: string;
let conn: mysql.Connection;
let writerConn: mysql.Connection;
let warehouse: string;
let configPath: string;

beforeAll(async () => {
  db = await createTestDatabase('e2e_crash');
  conn = await sql();
  await conn.query(`USE \`${db}\``);
  await createCrashSchema(conn);
  writerConn = await sql();
  await writerConn.query(`USE \`${db}\``);
  warehouse = await mkdtemp(join(tmpdir(), 'floe-e2e-crash-'));
  const server = sharedMysqlConfig();
  configPath = join(warehouse, '..', `${warehouse.split('/').pop()}.json`);
  await writeFile(
    configPath,
    JSON.stringify({
      job: { id: JOB },
      source: {
        host: server.host,
        port: server.port,
        user: server.user,
        password: server.password,
        serverId: 30_000 + (process.pid % 5000) * 8,
        include: [`${db}.*`],
        snapshot: { chunkSize: 150, parallelism: 2 },
        timeAsMicros: [`${db}.all_types.dur`],
      },
      warehouse: { location: warehouse },
      commit: { intervalMs: 300, idleCheckpoints: 3 },
    }),
  );
});

afterAll(async () => {
  await conn?.end();
  await writerConn?.end();
  if (warehouse) {
    await rm(warehouse, { recursive: true, force: true });
    await rm(configPath, { force: true });
  }
});

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

describe('crash and restart', () => {
  it(`the lake equals MySQL after ${MIN_RUNS}+ SIGKILLs during snapshot, commits and streaming`, async () => {
    const seed = Number(process.env.FLOE_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`crash test seed: FLOE_CRASH_SEED=${seed}`);
    const random = prng(seed);
    const writer = new RandomWriter(writerConn, prng(seed ^ 0x5eed));
    writer.start();
    const runs: RunRecord[] = [];
    const quota = () =>
      runs.length >= MIN_RUNS &&
      runs.filter((r) => r.phase === 'snapshot').length >= 2 &&
      runs.filter((r) => r.how === 'failpoint').length >= 3 &&
      runs.filter((r) => r.phase === 'streaming' && r.how === 'sigkill').length >= 5;
    try {
      // Until every kind of kill happened often enough (how many runs the snapshot spans depends
      // on the machine's speed, so the schedule adapts instead of assuming one).
      for (let run = 0; !quota() && run < MAX_RUNS; run++) {
        // Every third run dies inside a commit (the process kills itself at a commit step); the
        // others get a SIGKILL at a random moment up to a few seconds after the snapshot or the
        // streaming started.
        // The first two runs are killed early in the snapshot (it is resumable, so it must be hit
        // before it completes); the third dies at its first data-file commit step, still snapshotting.
        const failpoint =
          run === 2 ? 'after-data-files:0:exit' : run > 2 && run % 3 === 0 ? `${COMMIT_STEPS[(run / 3) % COMMIT_STEPS.length]}:${Math.floor(random() * 8)}:exit` : undefined;
        const began = Date.now();
        const p = new FloeProcess(configPath, { env: failpoint ? { FLOE_FAILPOINTS: failpoint } : {} });
        let killed = false;
        if (failpoint) {
          await Promise.race([p.exited, sleep(40_000)]);
        } else {
          const started = await p.waitFor((r) => r.notification === 'snapshot-started' || r.notification === 'streaming-started');
          if (!started) throw new Error(`run ${run}: floe exited before starting:\n${p.tail()}`);
          const early = run < 2;
          await sleep(started.notification === 'snapshot-started' ? (early ? 150 + random() * 600 : 300 + random() * 2700) : 300 + random() * 2500);
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
        if (runs.length >= MIN_RUNS && phase === 'streaming' && runs.filter((r) => r.phase === 'snapshot').length < 2) break;
      }
    } finally {
      await writer.stop();
    }
    console.log(`writer: ${writer.transactions} transactions (${writer.parentDeletes} parent deletes); runs: ${runs.map((r) => `${r.run}:${r.how}${r.failpoint ? `(${r.failpoint})` : ''}@${r.phase}/${r.ms}ms`).join(' ')}`);

    // A last run catches up with everything the writer did, then stops cleanly.
    const target = await serverPosition({ ...sharedMysqlConfig() });
    const catalog = new FileSystemCatalog({ warehouse });
    const catchUpStart = Date.now();
    const last = new FloeProcess(configPath);
    try {
      await waitForCatchUp(
        catalog,
        CRASH_TABLES.map((t) => ({ identifier: { namespace: [db], name: t }, sourceKey: `${db}.${t}` })),
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

    for (const t of CRASH_TABLES) {
      const lake = await lakeTableRows(catalog, { namespace: [db], name: t });
      const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, db, t, lake.columns, { typeMapping: { timeAsMicros: [`${db}.all_types.dur`] } });
      const diff = multisetDifference(expected, lake.rows);
      expect({ table: t, ...diff, rows: lake.rows.length }).toEqual({ table: t, missing: [], unexpected: [], rows: expected.length });

      const table = await loadCatalogTable(catalog, { namespace: [db], name: t });
      const ids = table.metadata.snapshots.filter((s) => s.summary[JOB_ID_KEY] === JOB).map((s) => s.summary[CHECKPOINT_ID_KEY]);
      expect(new Set(ids).size, `checkpoint ids of ${t}: ${ids.join(',')}`).toBe(ids.length);
      // and every snapshot is on the main branch's single line of history
      expect(ancestorsOf(table.metadata, table.metadata.currentSnapshotId).length).toBe(table.metadata.snapshots.length);
    }

    // The kills landed where they were meant to.
    expect(quota(), 'every kind of kill happened often enough').toBe(true);
    expect(writer.transactions).toBeGreaterThan(500);
    expect(writer.failures.length, writer.failures.slice(0, 3).join('\n')).toBeLessThan(Math.max(5, writer.transactions / 100));
    if (CASCADE_DELETES) expect(writer.parentDeletes).toBeGreaterThan(0);
  }, 900_000);
});
