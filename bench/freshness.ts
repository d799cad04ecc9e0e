/**
 * `npm run bench:freshness` — how fresh the lake is under a steady load, and what that costs it. A
 * private MariaDB table of R rows (default 100,000; bench/dataset.ts's orders table) takes a steady
 * C row changes a second (default 1,000) of mixed DML — inserts, updates and deletes in
 * transactions of N changes, from W connections (bench/freshness-load.ts) — for S seconds (default
 * 600), while `floe run` (bench/floe-child.ts, a child process) streams them with
 * `commit.intervalMs` T and maintenance on (the soak's settings: a round every 30 s, expiry beyond
 * 60 s and the last 10 snapshots, compaction, manifest rewriting).
 *
 * Every change's source→lake latency: its MySQL commit time (the load's clock when COMMIT returned)
 * to the moment a poll of the catalog every P ms (default 20) found a table version holding it
 * (bench/catalog-watch.ts: the job's committed GTID position), p50/p90/p99/max, split into the time
 * to floe's commit, the commit and the poll (bench/freshness-latency.ts). Every few seconds
 * (default 5) the lake's shape beside the running floe (bench/lake-sample.ts), and at the end
 * whether it stayed within the soak's bounds (bench/freshness-bounds.ts) and whether the lake equals
 * MySQL row by row. Printed, and written as JSON to --out (default bench/results/).
 *
 * Flags (all optional):
 *   --seconds S                  streaming seconds under load (default 600)
 *   --changes-per-second C       row changes a second, in all (default 1000)
 *   --changes-per-transaction N  row changes per transaction (default 10)
 *   --writers W                  connections making them (default: one per 100 transactions/s)
 *   --rows R                     rows in the table at the start (default 100000)
 *   --commit-interval-ms T       floe's commit.intervalMs (default 200)
 *   --maintenance-interval-ms M  floe's maintenance.intervalMs (default 30000)
 *   --expire-older-than-ms E     maintenance.expireSnapshots.olderThanMs (default 60000; retainLast 10)
 *   --poll-ms P                  how often the catalog is polled (default 20, at most 50)
 *   --sample-seconds K           how often the lake is sampled (default 5)
 *   --name NAME                  the JSON's name (default freshness-<C>cps-<T>ms[-<S>s])
 *   --out DIR                    where the JSON goes (default bench/results)
 *   --keep                       keep the warehouse and MariaDB's data directory
 *
 * `--bounds-of FILE…` judges the lake's bounds of result files again from the samples and timings
 * they hold (when the judgement changed after they ran), and writes them back.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import type { LocalServer } from '../src/demo/local-server.js';
import { startMariaDb } from '../src/demo/local-mariadb.js';
import type { MysqlConnectionConfig } from '../src/source/mysql/client.js';
import type { WatchConfig, WatchMessage } from './catalog-watch.js';
import { loadTable, TABLE } from './dataset.js';
import type { ChildMessage, ChildUsage } from './floe-child.js';
import { lakeBounds, type FreshnessSample, type LakeBounds } from './freshness-bounds.js';
import { latencyReport, weightedQuantiles, type FloeCommit, type LatencyReport, type Quantiles, type Visibility } from './freshness-latency.js';
import type { LoadConfig, LoadMessage } from './freshness-load.js';
import { formatFreshness } from './freshness-table.js';
import { verifyLake, type LakeTable, type VerifyResult } from './lake.js';
import { openFdsOf, rssOf, sampleLake } from './lake-sample.js';
import { describeMachine, machineLine, type Machine } from './report.js';

const JOB_ID = 'freshness';
const DATABASE = 'floe_freshness';
/** maintenance.expireSnapshots.retainLast, as the soak runs it, and maintenance.manifests.minCount's default. */
const RETAIN_LAST = 10;
const MANIFEST_MIN_COUNT = 100;
const LEGACY_SAMPLE_MS = 2000;
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

export interface FreshnessOptions {
  seconds: number;
  changesPerSecond: number;
  changesPerTransaction: number;
  writers?: number;
  rows: number;
  commitIntervalMs: number;
  maintenanceIntervalMs: number;
  expireOlderThanMs: number;
  pollMs: number;
  sampleSeconds: number;
  name?: string;
  out: string;
  keep: boolean;
}

const USAGE =
  'usage: npm run bench:freshness -- [--seconds S] [--changes-per-second C] [--changes-per-transaction N] [--writers W] [--rows R] [--commit-interval-ms T] [--maintenance-interval-ms M] [--expire-older-than-ms E] [--poll-ms P] [--sample-seconds K] [--name NAME] [--out DIR] [--keep]';

export function parseFreshnessOptions(argv: readonly string[]): FreshnessOptions {
  const o: FreshnessOptions = {
    seconds: 600,
    changesPerSecond: 1000,
    changesPerTransaction: 10,
    rows: 100_000,
    commitIntervalMs: 200,
    maintenanceIntervalMs: 30_000,
    expireOlderThanMs: 60_000,
    pollMs: 20,
    sampleSeconds: 5,
    out: here('./results'),
    keep: false,
  };
  const num = (flag: string, v: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const n = Number((v ?? '').replace(/[_,]/g, ''));
    if (v === undefined || !Number.isSafeInteger(n) || n < min || n > max) throw new Error(`bench:freshness: ${flag} expects a whole number from ${min} to ${max}, found ${JSON.stringify(v)}\n${USAGE}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i];
    switch (a) {
      case '--seconds': o.seconds = num(a, next(), 1); break;
      case '--changes-per-second': o.changesPerSecond = num(a, next(), 1); break;
      case '--changes-per-transaction': o.changesPerTransaction = num(a, next(), 1, 1000); break;
      case '--writers': o.writers = num(a, next(), 1, 200); break;
      case '--rows': o.rows = num(a, next(), 100); break;
      case '--commit-interval-ms': o.commitIntervalMs = num(a, next(), 100); break;
      case '--maintenance-interval-ms': o.maintenanceIntervalMs = num(a, next(), 1000); break;
      case '--expire-older-than-ms': o.expireOlderThanMs = num(a, next(), 0); break;
      case '--poll-ms': o.pollMs = num(a, next(), 1, 50); break;
      case '--sample-seconds': o.sampleSeconds = num(a, next(), 1); break;
      case '--name': o.name = next() ?? ''; break;
      case '--out': o.out = next() ?? ''; break;
      case '--keep': o.keep = true; break;
      default: throw new Error(`bench:freshness: unknown flag ${JSON.stringify(a)}\n${USAGE}`);
    }
  }
  return o;
}

export interface FreshnessResult {
  options: FreshnessOptions & { writers: number };
  machine: Machine;
  /** What the load made, and the rate it held over the streaming time. */
  load: { inserts: number; updates: number; deletes: number; transactions: number; changesPerSecond: number; maxBehindMs: number; streamingSeconds: number };
  latency: LatencyReport;
  /** floe's checkpoint commits while the load ran: how many, how often, how long. */
  commits: { count: number; perSecond: number; durationMs: Quantiles; gapMs: Quantiles };
  /**
   * Maintenance rounds, each its last step: from the end of the commit before that step to the
   * round's end (ms). A round runs in steps after several checkpoints (src/pipeline/run-maintenance.ts).
   */
  maintenance: { rounds: number; durationMs: Quantiles };
  bounds: LakeBounds;
  samples: FreshnessSample[];
  floe: ChildUsage;
  /** The raw timings behind the figures (epoch ms): each version a poll found, each commit of floe's, each maintenance round's end. */
  /** maintenanceExpiries: per round, the time its expiry's cutoff counted back from (null: not reported). */
  trace: { visible: Visibility[]; commits: FloeCommit[]; maintenanceEnds: number[]; maintenanceExpiries?: (number | null)[] };
  verified: VerifyResult;
  json: string;
}

function log(message: string): void {
  process.stderr.write(`bench:freshness: ${message}\n`);
}

function quantilesOf(values: readonly number[]): Quantiles {
  return weightedQuantiles(values, values.map(() => 1));
}

function floeConfig(o: FreshnessOptions, c: MysqlConnectionConfig, root: string): Record<string, unknown> {
  return {
    job: { id: JOB_ID },
    source: { host: c.host, port: c.port, user: c.user, password: c.password, serverId: 4_000_300, include: [`${DATABASE}.${TABLE}`] },
    warehouse: { location: join(root, 'warehouse') },
    stateDir: join(root, 'state'),
    catalog: { type: 'filesystem', name: 'floe' },
    commit: { intervalMs: o.commitIntervalMs },
    maintenance: { enabled: true, intervalMs: o.maintenanceIntervalMs, expireSnapshots: { olderThanMs: o.expireOlderThanMs, retainLast: RETAIN_LAST }, manifests: { minCount: MANIFEST_MIN_COUNT } },
  };
}

/** The lake's bounds over a run (bench/freshness-bounds.ts), from its samples and floe's timings. */
function boundsOf(o: FreshnessOptions, samples: FreshnessSample[], roundEnds: number[], commits: FloeCommit[], startedMs: number, streamingSeconds: number, expiries?: readonly (number | null)[]): LakeBounds {
  const settings = { maintenanceIntervalMs: o.maintenanceIntervalMs, expireOlderThanMs: o.expireOlderThanMs, retainLast: RETAIN_LAST, manifestMinCount: MANIFEST_MIN_COUNT, streamingSeconds };
  const kept = roundEnds.map((end, i) => ({ end, expiry: expiries?.[i] ?? undefined })).filter((r) => r.end >= startedMs);
  return lakeBounds(samples, kept.map((r) => r.end), commits.map((c) => c.endMs).sort((a, b) => a - b), settings, kept.map((r) => r.expiry));
}

/**
 * `--bounds-of FILE`: the bounds of a result file judged again from the samples and timings it
 * holds, written back — for results measured before the judgement changed.
 */
async function reboundResult(file: string): Promise<FreshnessResult> {
  const r = JSON.parse(await readFile(file, 'utf8')) as FreshnessResult;
  const first = r.samples[0];
  if (!first?.atMs) throw new Error(`bench:freshness: ${file} has no sample times (atMs); expected a result of this benchmark with its samples`);
  // results written before samples had a duration took their time at the sample's end: taken as
  // 2 s earlier (a sample reads a few files), so that none is judged against a round it may predate
  for (const s of r.samples) {
    if (s.sampleMs !== undefined) continue;
    s.atMs -= LEGACY_SAMPLE_MS;
    s.sampleMs = LEGACY_SAMPLE_MS;
  }
  r.bounds = boundsOf(r.options, r.samples, r.trace.maintenanceEnds, r.trace.commits, first.atMs - first.elapsedSeconds * 1000, r.load.streamingSeconds, r.trace.maintenanceExpiries);
  await writeFile(file, JSON.stringify(r, null, 2) + '\n');
  return r;
}

function forkChild(file: string, args: string[], env: Record<string, string>, nodeArgs: string[] = []): ChildProcess {
  return fork(here(file), args, { execArgv: ['--import', 'tsx', ...nodeArgs], env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r())));
}

export async function runFreshness(o: FreshnessOptions): Promise<FreshnessResult> {
  const root = await mkdtemp(join(tmpdir(), 'floe-freshness-'));
  const writers = o.writers ?? Math.max(1, Math.ceil(o.changesPerSecond / o.changesPerTransaction / 100));
  const children: ChildProcess[] = [];
  let server: LocalServer | undefined;
  let failure: Error | undefined;
  let fail!: (e: Error) => void;
  const failed = new Promise<never>((_, reject) => (fail = (e) => reject((failure ??= e))));
  failed.catch(() => {});
  const orFail = <T>(p: Promise<T>): Promise<T> => Promise.race([p, failed]);
  const interrupted = (signal: string) => fail(new Error(`bench:freshness: ${signal}`));
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    log('starting a private MariaDB (binlog ROW, FULL row image)');
    server = await startMariaDb({ extraArgs: ['--innodb-buffer-pool-size=256M', '--max-allowed-packet=64M', '--local-infile=1'], home: o.keep ? join(root, 'mariadb') : undefined });
    const connection: MysqlConnectionConfig = { host: server.host, port: server.port, user: server.user, password: server.password };
    const versionConn = await mysql.createConnection({ ...connection });
    const [versionRows] = await versionConn.query('SELECT VERSION() AS v');
    await versionConn.end();
    const machine = describeMachine(`MariaDB ${(versionRows as { v: string }[])[0]!.v}`);
    log(`machine: ${machineLine(machine)}`);
    log(`loading ${o.rows} rows`);
    await loadTable(connection, DATABASE, o.rows, 1);
    const lake: LakeTable = { warehouse: join(root, 'warehouse'), namespace: DATABASE, table: TABLE, jobId: JOB_ID };

    // floe, streaming once the table's snapshot is committed
    // FLOE_BENCH_NODE_ARGS: Node options for floe's process, e.g. "--cpu-prof --cpu-prof-dir=prof" (as npm run bench)
    const floe = forkChild('./floe-child.ts', ['run'], { FLOE_BENCH_CONFIG: JSON.stringify(floeConfig(o, connection, root)) }, (process.env.FLOE_BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean));
    children.push(floe);
    const commits: FloeCommit[] = [];
    const roundEnds: number[] = [];
    const roundExpiries: (number | null)[] = [];
    let streaming!: () => void;
    const streamingStarted = new Promise<void>((r) => (streaming = r));
    let usage: ChildUsage | undefined;
    let floeDone: string | undefined;
    floe.on('message', (m: ChildMessage) => {
      if (m.type === 'notification' && m.event === 'streaming-started') streaming();
      else if (m.type === 'commit') commits.push({ endMs: m.endMs, seconds: m.seconds });
      else if (m.type === 'maintained') {
        roundEnds.push(m.endMs);
        roundExpiries.push(m.expiryMs ?? null);
      }
      else if (m.type === 'usage') usage = m;
      else if (m.type === 'done') {
        floeDone = m.reason;
        if (m.reason === 'failed') fail(new Error(`bench:freshness: floe failed: ${m.error ?? 'no message'}`));
      }
    });
    floe.on('exit', (code, signal) => {
      if (floeDone !== 'stopped') fail(new Error(`bench:freshness: floe exited (${signal ?? code}) before the run's end`));
    });
    await orFail(streamingStarted);
    const commitsBefore = commits.length;
    log('floe is streaming: the catalog watch and the load start');

    const watchConfig: WatchConfig = { warehouse: lake.warehouse, namespace: lake.namespace, table: lake.table, jobId: JOB_ID, pollMs: o.pollMs };
    const watch = forkChild('./catalog-watch.ts', [], { FLOE_CATALOG_WATCH: JSON.stringify(watchConfig) });
    children.push(watch);
    const visible: Visibility[] = [];
    watch.on('message', (m: WatchMessage) => {
      if (m.type === 'visible') visible.push({ seq: m.seq, atMs: m.atMs, swappedMs: m.swappedMs });
      else fail(new Error(`bench:freshness: the catalog watch failed: ${m.error}`));
    });

    const loadConfig: LoadConfig = { ...connection, database: DATABASE, rows: o.rows, changesPerSecond: o.changesPerSecond, changesPerTransaction: o.changesPerTransaction, writers, seed: 7 };
    const load = forkChild('./freshness-load.ts', [], { FLOE_FRESHNESS_LOAD: JSON.stringify(loadConfig) });
    children.push(load);
    const txs = { seq: [] as number[], atMs: [] as number[], changes: [] as number[] };
    let ready!: () => void;
    const loadReady = new Promise<void>((r) => (ready = r));
    let loadDone!: (m: Extract<LoadMessage, { type: 'done' }>) => void;
    const loadFinished = new Promise<Extract<LoadMessage, { type: 'done' }>>((r) => (loadDone = r));
    load.on('message', (m: LoadMessage) => {
      if (m.type === 'ready') ready();
      else if (m.type === 'committed') {
        for (let i = 0; i < m.seq.length; i++) {
          txs.seq.push(m.seq[i]!);
          txs.atMs.push(m.atMs[i]!);
          txs.changes.push(m.changes[i]!);
        }
      } else if (m.type === 'done') {
        if (m.error) fail(new Error(`bench:freshness: the load failed: ${m.error}`));
        loadDone(m);
      }
    });
    await orFail(loadReady);
    load.send({ type: 'start' });
    const startedMs = Date.now();
    log(`${o.changesPerSecond} changes/s in transactions of ${o.changesPerTransaction} from ${writers} connections for ${o.seconds} s; floe commits every ${o.commitIntervalMs} ms`);

    const samples: FreshnessSample[] = [];
    const takeSample = async (pid: number | undefined): Promise<FreshnessSample> => {
      const atMs = Date.now();
      const shape = await sampleLake(lake, false, (message) => log(`a sample failed (${message}); again`));
      return { atMs, sampleMs: Date.now() - atMs, elapsedSeconds: (atMs - startedMs) / 1000, commits: commits.length - commitsBefore, ...shape, rssBytes: await rssOf(pid), openFds: await openFdsOf(pid), loadAverage: Math.round(loadavg()[0]! * 100) / 100 };
    };
    const endAt = startedMs + o.seconds * 1000;
    while (Date.now() < endAt) {
      await orFail(new Promise((r) => setTimeout(r, Math.min(o.sampleSeconds * 1000, endAt - Date.now()))));
      const s = await orFail(takeSample(floe.pid));
      samples.push(s);
      const seen = visible.at(-1)?.seq ?? 0;
      const behind = txs.seq.reduce((n, seq, i) => (seq > seen ? n + txs.changes[i]! : n), 0);
      log(`${s.elapsedSeconds.toFixed(0)} s: ${txs.seq.length} transactions, ${s.commits} commits, ${behind} changes not yet in the lake; metadata ${Math.round(s.metadataBytes / 1024)} KiB, ${s.dataFiles} data files, ${s.deleteFiles.deletionVectors} DVs, ${s.manifests} manifests, ${s.snapshots} snapshots, floe RSS ${Math.round(s.rssBytes / 2 ** 20)} MiB, load ${s.loadAverage}`);
    }
    load.send({ type: 'stop' });
    const made = await orFail(loadFinished);
    const streamingSeconds = (Date.now() - startedMs) / 1000;
    const commitsUnderLoad = commits.length - commitsBefore;
    // floe commits the last transactions, then stops; the lake is compared with MySQL after
    const last = txs.seq.reduce((a, b) => Math.max(a, b), 0);
    const drainBy = Date.now() + Math.max(60_000, o.commitIntervalMs * 10);
    while ((visible.at(-1)?.seq ?? 0) < last) {
      if (Date.now() > drainBy) throw new Error(`bench:freshness: the lake did not reach the load's last transaction (GTID sequence ${last}) within ${Math.round((drainBy - startedMs) / 1000 - streamingSeconds)} s of the load's end; it holds ${visible.at(-1)?.seq ?? 'none'}`);
      await orFail(new Promise((r) => setTimeout(r, 50)));
    }
    watch.send({ type: 'stop' });
    floe.send({ type: 'stop' });
    await orFail(exited(floe));
    await exited(watch);
    samples.push({ ...(await takeSample(undefined)), rssBytes: samples.at(-1)?.rssBytes ?? 0, openFds: samples.at(-1)?.openFds ?? 0 });
    log('comparing the lake with MySQL');
    const verified = await verifyLake(lake, connection, DATABASE);

    const underLoad = commits.slice(commitsBefore);
    const gaps = underLoad.slice(1).map((c, i) => c.endMs - underLoad[i]!.endMs);
    // a round's last step starts when the checkpoint before it ends (src/pipeline/run-maintenance.ts)
    const roundsMs = roundEnds
      .filter((end) => end >= startedMs)
      .map((end) => {
        const before = commits.filter((c) => c.endMs <= end).at(-1);
        return before ? end - before.endMs : 0;
      });
    const result: FreshnessResult = {
      options: { ...o, writers },
      machine,
      load: { inserts: made.inserts, updates: made.updates, deletes: made.deletes, transactions: made.transactions, changesPerSecond: (made.inserts + made.updates + made.deletes) / streamingSeconds, maxBehindMs: made.maxBehindMs, streamingSeconds },
      latency: latencyReport(txs, visible, commits),
      commits: { count: commitsUnderLoad, perSecond: commitsUnderLoad / streamingSeconds, durationMs: quantilesOf(underLoad.map((c) => c.seconds * 1000)), gapMs: quantilesOf(gaps) },
      maintenance: { rounds: roundsMs.length, durationMs: quantilesOf(roundsMs) },
      bounds: boundsOf(o, samples, roundEnds, commits, startedMs, streamingSeconds, roundExpiries),
      samples,
      floe: usage ?? { elapsedMs: 0, cpuMs: 0, peakRssBytes: 0, mainBusy: 0 },
      trace: { visible, commits, maintenanceEnds: roundEnds, maintenanceExpiries: roundExpiries },
      verified,
      json: '',
    };
    await mkdir(o.out, { recursive: true });
    result.json = join(o.out, `${o.name ?? `freshness-${o.changesPerSecond}cps-${o.commitIntervalMs}ms${o.seconds === 600 ? '' : `-${o.seconds}s`}`}.json`);
    await writeFile(result.json, JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await server?.stop().catch(() => {});
    if (o.keep) log(`kept: ${root}`);
    else await rm(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === '--bounds-of') {
    for (const file of process.argv.slice(3)) process.stdout.write(`\n${formatFreshness(await reboundResult(file))}\nJSON: ${file}\n`);
    return;
  }
  let o: FreshnessOptions;
  try {
    o = parseFreshnessOptions(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const r = await runFreshness(o);
  process.stdout.write(`\n${formatFreshness(r)}\nJSON: ${relative(process.cwd(), r.json)}\n`);
  if (r.verified.mismatches > 0 || r.latency.unseen > 0 || r.bounds.equalityDeletes > 0) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main().catch((e) => {
    process.stderr.write(`bench:freshness failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  });
}
