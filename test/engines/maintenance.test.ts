/**
 * Another engine maintains the table while floe streams into it.
 *
 * floe replicates a MariaDB table (bucket-partitioned, primary key) into a SQL catalog on PostgreSQL
 * — the catalog floe and Spark share in production, with an atomic compare-and-swap commit for both
 * — while a random writer inserts, updates, deletes and re-keys rows, and Spark (the engines server's
 * session, JdbcCatalog) runs Iceberg's maintenance over and over: `rewrite_data_files` with a
 * delete-file threshold of 1 (so that equality deletes, position deletes and DVs are applied),
 * `rewrite_position_delete_files`, `rewrite_manifests`, `expire_snapshots` (retain_last 1) and
 * orphan removal with a one-minute window (DeleteOrphanFiles: the procedure refuses windows under
 * 24 hours). In between, floe is restarted right after Spark rewrote the table and expired every
 * other snapshot — the table's history then holds no snapshot of floe's, and floe must resume from
 * the stamps kept in the table's properties.
 *
 * floe must keep committing through Spark's commits (a conflict is retried; in format v3, a
 * checkpoint whose deletion vectors target a data file Spark rewrote is re-planned on the rewritten
 * table), never stop, and end with exactly MySQL's rows — none lost, none doubled — as floe scan,
 * Spark and Iceberg's Java reader read them. Format v2 exercises Iceberg's sequence-number rules for
 * equality deletes against a concurrent rewrite (the rewritten files keep the rewrite's starting
 * sequence number, so later deletes still apply to them).
 *
 * A separate case: floe's snapshot-progress objects (hidden `.floe/state/` under the table) survive
 * Spark's orphan removal even when they are older than its window, and floe resumes an interrupted
 * initial snapshot from them.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TableIdentifier } from '../../src/iceberg/metadata/catalog.js';
import { SqlCatalog } from '../../src/catalog/sql/sql-catalog.js';
import { parseConfig } from '../../src/config/load.js';
import type { FloeConfig } from '../../src/config/schema.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { lastCommitted } from '../../src/iceberg/checkpoint/index.js';
import { silentLogger, type Logger } from '../../src/pipeline/observe/logger.js';
import { FanOutNotifier, RecordingSink } from '../../src/pipeline/observe/notifications.js';
import { runPipeline, type RunResult } from '../../src/pipeline/runner.js';
import { decodeTableProgress } from '../../src/pipeline/state.js';
import { sql } from '../source/mysql/binlog/helpers.js';
import { createTestDatabase, sharedMysqlConfig, sourceLogin } from '../support/shared-mysql.js';
import { serverPosition, waitForCatchUp } from '../e2e/support/catch-up.js';
import { prng } from '../e2e/support/crash-schema.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from '../e2e/support/lake-compare.js';
import { createPostgresDatabase, dropPostgresDatabase, postgresStatus } from '../catalog/sql/sql-test-databases.js';
import { ENGINES_HOME, engineSuite, floeScanLines, readWith, sparkDeleteOrphanFiles, sparkSql, type CatalogSpec } from './support/engines.js';
import { RESULTS_FILE, readResults, writeResults, type MaintenanceResult } from './support/interop-results.js';

process.env.TZ ??= 'Asia/Seoul';

const { missing, required } = engineSuite('test/engines/maintenance');
/** How long the random writer runs per format version (ms). */
const DURATION_MS = Number(process.env.FLOE_MAINTENANCE_MS ?? 60_000);
const SEED = Number(process.env.FLOE_MAINTENANCE_SEED ?? Date.now() % 1_000_000);

const TABLE = 'churn';
const INITIAL_ROWS = 3000;

let conn: mysql.Connection;
let root: string;
let pgDatabase: string | undefined;
let pgUrl: string;
const results: MaintenanceResult[] = [];

/** A logger keeping floe's warnings and errors (commit retries are warned about), counting checkpoints. */
function recordingLogger(lines: string[], counts: { checkpoints: number }): Logger {
  const l: Logger = {
    debug(message, fields) {
      if (message === 'checkpoint committed') counts.checkpoints++;
      if (process.env.FLOE_MAINTENANCE_DEBUG) lines.push(`${new Date().toISOString()} debug ${message} ${fields ? JSON.stringify(fields, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)) : ''}`);
    },
    info() {},
    warn(message, fields) {
      lines.push(`warn ${message} ${fields ? JSON.stringify(fields, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v instanceof Error ? v.message : v)) : ''}`);
    },
    error(message, fields) {
      lines.push(`error ${message} ${fields ? JSON.stringify(fields, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v instanceof Error ? v.message : v)) : ''}`);
    },
    child() {
      return l;
    },
  };
  return l;
}

/** One floe run, in this process; `stop()` ends it like SIGTERM does. */
class Floe {
  private controller = new AbortController();
  readonly sink = new RecordingSink();
  readonly result: Promise<RunResult>;
  ended: RunResult | undefined;

  constructor(config: FloeConfig, log: string[], counts: { checkpoints: number } = { checkpoints: 0 }) {
    this.result = runPipeline(config, { mode: 'run', signal: this.controller.signal, notifications: new FanOutNotifier(config.job.id, [this.sink], silentLogger), logger: recordingLogger(log, counts) });
    void this.result.then((r) => (this.ended = r));
  }

  async stop(): Promise<RunResult> {
    this.controller.abort();
    return this.result;
  }
}

/** Random inserts, updates, deletes and primary-key changes in small transactions until stopped. */
class Writer {
  private stopped = false;
  private paused = false;
  private loop: Promise<void> | undefined;
  transactions = 0;
  private next = INITIAL_ROWS;

  constructor(
    private readonly conn: mysql.Connection,
    private readonly random: () => number,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  pause(p: boolean): void {
    this.paused = p;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private pick(): number {
    return Math.floor(this.random() * this.next);
  }

  private async run(): Promise<void> {
    let burst = Date.now();
    while (!this.stopped) {
      // bursts of changes with quiet gaps between them: Spark's rewrites commit in the gaps, and
      // collide with floe's commits in the bursts
      if (this.paused || (Date.now() - burst) % 3500 > 2000) {
        await sleep(100);
        continue;
      }
      const statements: string[] = [];
      const n = 1 + Math.floor(this.random() * 4);
      for (let i = 0; i < n; i++) {
        const r = this.random();
        if (r < 0.3) {
          const id = this.next++;
          statements.push(`INSERT INTO ${TABLE} VALUES (${id}, ${id % 97}, 'new ${id}', ${id * 7}, '2024-05-0${1 + (id % 9)} 10:00:00.${String(id % 1_000_000).padStart(6, '0')}')`);
        } else if (r < 0.7) {
          statements.push(`UPDATE ${TABLE} SET k = k + 1, v = CONCAT('u', ${this.transactions}, ' ', id), n = n * 3 + 1 WHERE id = ${this.pick()}`);
        } else if (r < 0.9) {
          statements.push(`DELETE FROM ${TABLE} WHERE id = ${this.pick()}`);
        } else {
          statements.push(`UPDATE ${TABLE} SET id = ${this.next++} WHERE id = ${this.pick()}`);
        }
      }
      await this.conn.beginTransaction();
      for (const s of statements) await this.conn.query(s);
      await this.conn.commit();
      this.transactions++;
      if (process.env.FLOE_MAINTENANCE_DEBUG && this.transactions % 20 === 0) console.log(`${new Date().toISOString()} writer ${this.transactions}`);
      await sleep(15 + Math.floor(this.random() * 30));
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function sparkTime(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

const MAINTENANCE = {
  rewrite_data_files: `CALL {catalog}.system.rewrite_data_files(table => '{table}', options => map('min-input-files', '1', 'delete-file-threshold', '1', 'partial-progress.enabled', 'true', 'partial-progress.max-commits', '4'))`,
  rewrite_position_delete_files: `CALL {catalog}.system.rewrite_position_delete_files(table => '{table}', options => map('rewrite-all', 'true'))`,
  rewrite_manifests: `CALL {catalog}.system.rewrite_manifests(table => '{table}')`,
  expire_snapshots: (now: number) => `CALL {catalog}.system.expire_snapshots(table => '{table}', older_than => TIMESTAMP '${sparkTime(now)}', retain_last => 1)`,
};

interface Tally {
  ok: Record<string, number>;
  /** Operations that changed the table (files rewritten, snapshots expired, orphans deleted). */
  effective: Record<string, number>;
  errors: string[];
}

/** Did a procedure's result row report work done? (first columns count files/snapshots). */
function changedSomething(rows: (string | null)[][] | undefined): boolean {
  return (rows ?? []).some((r) => r.some((v) => v !== null && /^\d+$/.test(v) && v !== '0'));
}

async function maintenanceRound(catalog: CatalogSpec, table: string, tally: Tally, orphanWindowMs: number): Promise<void> {
  const statements = [MAINTENANCE.rewrite_data_files, MAINTENANCE.rewrite_position_delete_files, MAINTENANCE.rewrite_manifests, MAINTENANCE.expire_snapshots(Date.now())];
  const names = ['rewrite_data_files', 'rewrite_position_delete_files', 'rewrite_manifests', 'expire_snapshots'];
  const out = await sparkSql(catalog, table, statements);
  out.forEach((r, i) => {
    const name = names[i]!;
    if (r.error) tally.errors.push(`${name}: ${r.error}`);
    else {
      tally.ok[name] = (tally.ok[name] ?? 0) + 1;
      if (changedSomething(r.rows)) tally.effective[name] = (tally.effective[name] ?? 0) + 1;
    }
  });
  try {
    const deleted = await sparkDeleteOrphanFiles(catalog, table, Date.now() - orphanWindowMs);
    tally.ok.remove_orphan_files = (tally.ok.remove_orphan_files ?? 0) + 1;
    if (deleted.length > 0) tally.effective.remove_orphan_files = (tally.effective.remove_orphan_files ?? 0) + 1;
  } catch (e) {
    tally.errors.push(`remove_orphan_files: ${String(e)}`);
  }
}

function jobConfig(formatVersion: 2 | 3, db: string, jobId: string, table: string, options: { serverIdOffset: number; chunkSize: number; parallelism: number; partitionBy?: string[] }): FloeConfig {
  const server = sharedMysqlConfig();
  return parseConfig({
    job: { id: jobId },
    source: {
      ...sourceLogin(server),
      serverId: 40_000 + (process.pid % 5000) * 8 + options.serverIdOffset,
      include: [`${db}.${table}`],
      snapshot: { chunkSize: options.chunkSize, parallelism: options.parallelism },
    },
    warehouse: { location: join(root, 'warehouse') },
    catalog: { type: 'sql', url: pgUrl, name: 'floe' },
    iceberg: { formatVersion },
    tables: { overrides: options.partitionBy ? { [`${db}.${table}`]: { partitionBy: options.partitionBy } } : {} },
    // only changes commit: an idle floe leaves Spark's snapshot at the head (the restart case)
    commit: { intervalMs: 300, idleCheckpoints: 1_000_000, idleMaxMs: 3_600_000 },
    // Spark maintains the table here, not floe
    maintenance: { enabled: false },
  });
}

/** Spark's maintenance rounds, one after another, until stopped. */
class Maintainer {
  private on = false;
  private loop: Promise<void> | undefined;
  /** floe's last committed checkpoint id, seen after each round. */
  readonly checkpoints: bigint[] = [];

  constructor(
    private readonly spark: CatalogSpec,
    private readonly table: string,
    private readonly tally: Tally,
    private readonly watch: () => Promise<bigint | undefined>,
  ) {}

  start(): void {
    this.on = true;
    this.loop = (async () => {
      while (this.on) {
        await maintenanceRound(this.spark, this.table, this.tally, 60_000);
        if (process.env.FLOE_MAINTENANCE_DEBUG) console.log(`${new Date().toISOString()} maintenance round done`);
        const c = await this.watch();
        if (c !== undefined) this.checkpoints.push(c);
        await sleep(500);
      }
    })();
  }

  async stop(): Promise<void> {
    this.on = false;
    await this.loop;
  }
}

async function createChurn(db: string): Promise<void> {
  await conn.query(`USE \`${db}\``);
  await conn.query(`CREATE TABLE ${TABLE} (id BIGINT PRIMARY KEY, k INT NOT NULL, v VARCHAR(40), n BIGINT, at DATETIME(6))`);
  for (let i = 0; i < INITIAL_ROWS; i += 1000) {
    await conn.query(`INSERT INTO ${TABLE} VALUES ${Array.from({ length: Math.min(1000, INITIAL_ROWS - i) }, (_, j) => `(${i + j}, ${(i + j) % 97}, 'v ${i + j}', ${(i + j) * 7}, '2024-0${1 + ((i + j) % 9)}-01 00:00:00.${String(i + j).padStart(6, '0')}')`).join(', ')}`);
  }
}

async function catchUp(catalog: SqlCatalog, identifier: TableIdentifier, jobId: string, floe: Floe): Promise<void> {
  const target = await serverPosition({ ...sharedMysqlConfig() });
  await waitForCatchUp(catalog, [{ identifier, sourceKey: `${identifier.namespace[0]}.${identifier.name}` }], jobId, target, {
    timeoutMs: 180_000,
    check: () => {
      if (floe.ended) throw new Error(`floe ended: ${floe.ended.reason} ${String(floe.ended.error)}`);
    },
  });
}

async function expectEqualsMysql(catalog: SqlCatalog, db: string, identifier: TableIdentifier, label: string): Promise<void> {
  const lake = await lakeTableRows(catalog, identifier);
  const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, db, identifier.name, lake.columns);
  expect({ table: label, ...multisetDifference(expected, lake.rows, 5) }).toEqual({ table: label, missing: [], unexpected: [] });
}

describe.skipIf(missing.length > 0 && !required)('Spark maintains the table while floe streams into it', () => {
  beforeAll(async () => {
    if (missing.length > 0) throw new Error(`FLOE_ENGINES_REQUIRED=1 but ${missing.join(', ')} not installed in ${ENGINES_HOME}: run npm run engines:install`);
    const pgStatus = await postgresStatus();
    if (!pgStatus.available) throw new Error(`the maintenance test needs PostgreSQL for the SQL catalog: ${pgStatus.reason}`);
    root = await mkdtemp(join(tmpdir(), 'floe-maint-'));
    ({ name: pgDatabase, url: pgUrl } = await createPostgresDatabase('floe_maint'));
    conn = await sql();
    console.log(`[floe] maintenance test seed ${SEED} (FLOE_MAINTENANCE_SEED), ${DURATION_MS} ms per format version`);
  });

  afterAll(async () => {
    await conn?.end();
    if (pgDatabase) await dropPostgresDatabase(pgDatabase).catch((e: unknown) => console.warn(`[floe] could not drop ${pgDatabase}: ${String(e)}`));
    if (root && process.env.FLOE_ENGINES_KEEP === '1') console.log(`[floe] kept ${root} (FLOE_ENGINES_KEEP=1)`);
    else if (root) await rm(root, { recursive: true, force: true });
    if (results.length === 2 && existsSync(RESULTS_FILE)) {
      await writeResults({ ...readResults(), maintenance: results });
    }
  });

  for (const formatVersion of [2, 3] as const) {
    it(`format v${formatVersion}: floe keeps committing, resumes after Spark expired its snapshots, and the table equals MySQL`, async () => {
      const db = await createTestDatabase(`maint_v${formatVersion}`);
      await createChurn(db);
      const jobId = `maint-v${formatVersion}`;
      const config = jobConfig(formatVersion, db, jobId, TABLE, { serverIdOffset: formatVersion, chunkSize: 200, parallelism: 2, partitionBy: ['bucket(4, id)'] });
      const catalog = new SqlCatalog({ url: pgUrl, name: 'floe', warehouse: join(root, 'warehouse') });
      const identifier = { namespace: [db], name: TABLE };
      const spark: CatalogSpec = { type: 'sql', url: pgUrl, name: 'floe' };
      const sparkTable = `${db}.${TABLE}`;
      const log: string[] = [];
      const tally: Tally = { ok: {}, effective: {}, errors: [] };
      const writer = new Writer(conn, prng(SEED + formatVersion));
      const maintainer = new Maintainer(spark, sparkTable, tally, async () => lastCommitted((await loadCatalogTable(catalog, identifier)).metadata, jobId)?.checkpointId);
      let restarts = 0;
      const counts = { checkpoints: 0 };
      let floe = new Floe(config, log, counts);
      const streaming = async (what: string) => {
        await Promise.race([
          floe.sink.waitFor('streaming-started'),
          floe.result.then((r) => {
            throw new Error(`${what}: ${r.reason} ${String(r.error)}\n${log.slice(-10).join('\n')}`);
          }),
        ]);
      };
      try {
        await streaming('floe ended before streaming');
        writer.start();
        maintainer.start();
        // three stretches of concurrent writing and maintenance, with the restart case between them
        for (let stretch = 0; stretch < 3; stretch++) {
          const until = Date.now() + DURATION_MS / 3;
          while (Date.now() < until) {
            if (floe.ended) throw new Error(`floe stopped while Spark maintained the table: ${floe.ended.reason} ${String(floe.ended.error)}\n${log.slice(-10).join('\n')}`);
            await sleep(250);
          }
          if (stretch === 2) break;
          // The restart case: floe caught up and idle, Spark rewrites the whole table and expires
          // every other snapshot, then floe starts again.
          writer.pause(true);
          await maintainer.stop();
          await catchUp(catalog, identifier, jobId, floe);
          const stopped = await floe.stop();
          expect(stopped.reason, String(stopped.error)).not.toBe('failed');
          const out = await sparkSql(spark, sparkTable, [MAINTENANCE.rewrite_data_files.replace("'min-input-files', '1'", "'rewrite-all', 'true'")]);
          out.push(...(await sparkSql(spark, sparkTable, [MAINTENANCE.expire_snapshots(Date.now() + 1000)])));
          expect(out.map((r) => r.error ?? 'ok')).toEqual(['ok', 'ok']);
          const t = await loadCatalogTable(catalog, identifier);
          // no snapshot of floe's is left: only the stamps in the table's properties say where it stands
          expect(t.metadata.snapshots.length, JSON.stringify({ out, snapshots: t.metadata.snapshots.map((x) => ({ id: String(x.snapshotId), ts: new Date(Number(x.timestampMs)).toISOString(), op: x.summary.operation })) })).toBe(1);
          expect(t.metadata.snapshots[0]!.summary['floe.job-id']).toBeUndefined();
          expect(lastCommitted(t.metadata, jobId), 'the stamps floe resumes from').toBeDefined();
          floe = new Floe(config, log, counts);
          restarts++;
          await streaming('floe did not resume after Spark expired its snapshots');
          writer.pause(false);
          maintainer.start();
        }
        await writer.stop();
        await maintainer.stop();
        await catchUp(catalog, identifier, jobId, floe);
        // one more round with floe idle: everything applied, the head Spark's
        await maintenanceRound(spark, sparkTable, tally, 60_000);
        const stopped = await floe.stop();
        expect(stopped.reason, `${String(stopped.error)}\n${log.slice(-10).join('\n')}`).not.toBe('failed');
      } finally {
        await writer.stop();
        await maintainer.stop();
        await floe.stop();
      }
      const checkpoints = maintainer.checkpoints;
      // The table equals MySQL: for floe's reader, Spark and Iceberg's Java reader.
      await expectEqualsMysql(catalog, db, identifier, `v${formatVersion} ${TABLE}`);
      const metadata = (await catalog.loadTable(identifier)).metadataLocation;
      const expected = await floeScanLines(metadata);
      const readers: string[] = ['floe scan'];
      for (const [engine, how, target] of [
        ['spark', spark, sparkTable],
        ['iceberg-java', { type: 'filesystem' } as CatalogSpec, metadata.replace(/^file:\/\//, '')],
      ] as const) {
        const read = await readWith(engine, target, {}, how);
        expect({ engine, code: read.code, stderr: read.code === 0 ? '' : read.stderr.slice(-1000) }).toEqual({ engine, code: 0, stderr: '' });
        expect({ engine, ...multisetDifference(expected, read.lines, 5) }).toEqual({ engine, missing: [], unexpected: [] });
        readers.push(engine);
      }
      await catalog.close();
      // checkpoints whose deletion vectors floe located again after Spark rewrote their target files
      const relocations = log.filter((l) => l.includes("locating the checkpoint's deletes again")).length;
      const summary = { formatVersion, seed: SEED, relocations, transactions: writer.transactions, restarts, ok: tally.ok, effective: tally.effective, sparkErrors: tally.errors.length, floeCheckpoints: counts.checkpoints, seenCheckpointIds: checkpoints.map(String).join(','), floeWarnings: log.length };
      console.log(`[floe] maintenance v${formatVersion}: ${JSON.stringify(summary)}`);
      if (process.env.FLOE_MAINTENANCE_DEBUG) console.log(log.join('\n'));
      if (tally.errors.length > 0) {
        const kinds = new Map<string, number>();
        for (const e of tally.errors) {
          const k = e.replace(/(Exception|Error): .*/, '$1');
          kinds.set(k, (kinds.get(k) ?? 0) + 1);
        }
        console.log(`[floe] Spark's failed operations (v${formatVersion}; their conflicts with floe's commits): ${[...kinds].map(([k, n]) => `${n}× ${k}`).join('; ')}`);
      }
      const warnings = log.filter((l) => l.startsWith('warn') || l.startsWith('error'));
      if (warnings.length > 0) console.log(`[floe] floe's warnings (v${formatVersion}), first 3: ${warnings.slice(0, 3).map((l) => l.slice(0, 400)).join(' | ')}`);
      // Spark really maintained the table while floe streamed
      for (const op of ['rewrite_data_files', 'rewrite_position_delete_files', 'rewrite_manifests', 'expire_snapshots', 'remove_orphan_files']) expect(tally.ok[op] ?? 0, `${op} never succeeded: ${tally.errors.slice(0, 3).join(' | ')}`).toBeGreaterThan(0);
      expect(tally.effective.rewrite_data_files ?? 0, 'rewrite_data_files never rewrote a file').toBeGreaterThan(0);
      expect(restarts).toBe(2);
      results.push({ formatVersion, operations: Object.keys(tally.ok).sort(), restarts, readers });
      if (formatVersion === 3) console.log(`[floe] v3: ${relocations} checkpoint(s) re-planned their deletion vectors after a concurrent rewrite`);
    });
  }

  it("floe's snapshot progress survives Spark's orphan removal, and an interrupted snapshot resumes from it", async () => {
    const db = await createTestDatabase('maint_state');
    await conn.query(`USE \`${db}\``);
    await conn.query(`CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(40))`);
    for (let i = 0; i < 20_000; i += 2000) await conn.query(`INSERT INTO big VALUES ${Array.from({ length: 2000 }, (_, j) => `(${i + j}, 'v ${i + j}')`).join(', ')}`);
    const jobId = 'maint-state';
    // 1,000 chunks of 20, one at a time: a few seconds of snapshot, several checkpoints of it (200
    // chunks of 100 were once all read before the first poll saw a checkpoint, on a loaded CI machine)
    const config = jobConfig(3, db, jobId, 'big', { serverIdOffset: 5, chunkSize: 20, parallelism: 1 });
    const catalog = new SqlCatalog({ url: pgUrl, name: 'floe', warehouse: join(root, 'warehouse') });
    const identifier = { namespace: [db], name: 'big' };
    const log: string[] = [];
    let floe = new Floe(config, log);
    // stop floe in the middle of its snapshot, once a checkpoint recorded finished chunks
    let stateDir: string | undefined;
    try {
      for (let i = 0; ; i++) {
        if (floe.ended) throw new Error(`floe ended: ${floe.ended.reason} ${String(floe.ended.error)}`);
        if (await catalog.tableExists(identifier)) {
          const t = await loadCatalogTable(catalog, identifier);
          const last = lastCommitted(t.metadata, jobId);
          const progress = last ? await decodeTableProgress(last.sourceOffset, t.io, `${db}.big`, `${db}.big`) : undefined;
          if (progress?.phase === 'snapshot' && (progress.snapshot?.finished.size ?? 0) > 0) {
            stateDir = join(t.metadata.location.replace(/^file:\/\//, ''), '.floe', 'state');
            break;
          }
          if (progress !== undefined && progress.phase !== 'snapshot') throw new Error(`floe finished its snapshot (phase ${progress.phase}) before a checkpoint in the middle of it was seen: make the snapshot slower`);
        }
        if (i > 600) throw new Error('floe never committed a snapshot checkpoint');
        await sleep(50);
      }
    } finally {
      await floe.stop();
    }
    const t = await loadCatalogTable(catalog, identifier);
    const progress = await decodeTableProgress(lastCommitted(t.metadata, jobId)!.sourceOffset, t.io, `${db}.big`, `${db}.big`);
    expect(progress.phase).toBe('snapshot');
    const objects = await readdir(stateDir!);
    expect(objects.length).toBeGreaterThan(0);
    // older than any orphan window: only being hidden keeps them from Spark's orphan removal
    const old = new Date(Date.now() - 7 * 86_400_000);
    for (const f of objects) await utimes(join(stateDir!, f), old, old);
    const deleted = await sparkDeleteOrphanFiles({ type: 'sql', url: pgUrl, name: 'floe' }, `${db}.big`, Date.now() - 60_000);
    expect(deleted.filter((p) => p.includes('/.floe/'))).toEqual([]);
    expect((await readdir(stateDir!)).sort()).toEqual([...objects].sort());
    // floe resumes the snapshot from them and finishes it
    floe = new Floe(config, log);
    try {
      await Promise.race([
        floe.sink.waitFor('streaming-started'),
        floe.result.then((r) => {
          throw new Error(`floe did not resume its snapshot: ${r.reason} ${String(r.error)}`);
        }),
      ]);
      await catchUp(catalog, identifier, jobId, floe);
    } finally {
      await floe.stop();
    }
    await expectEqualsMysql(catalog, db, identifier, 'big');
    await catalog.close();
  });
});

describe.runIf(missing.length > 0 && required)('the maintenance test (FLOE_ENGINES_REQUIRED=1)', () => {
  it('has the engines installed', () => {
    expect.fail(`${missing.join(', ')} not installed in ${ENGINES_HOME}: run npm run engines:install`);
  });
});
