/**
 * `npm run bench:soak` — floe under a steady update load for a long run of commits: does anything
 * grow without bound? A private MariaDB table of R rows (default 10,000; bench/dataset.ts's orders
 * table) takes single-row UPDATEs at a steady rate while `floe run` (bench/floe-child.ts, a child
 * process) streams them with a short commit interval and maintenance on (snapshot expiry, manifest
 * rewriting, v2 compaction), until floe has made C streaming commits (default 2,000). Every K commits
 * (default 100) the benchmark samples, beside the running floe:
 *
 *   - the size of the current metadata.json, the files (and bytes) under the table's location,
 *   - live delete files by kind (equality, position, DV) and manifests of the current snapshot
 *     (src/iceberg/maintenance/table-health.ts), snapshots retained,
 *   - commit duration p50 / p99 of the commits since the last sample (floe's own timing, the same
 *     the floe_commit_duration_seconds histogram observes),
 *   - the time to scan the whole table with floe's reader (src/iceberg/scan),
 *   - floe's RSS (/proc/<pid>/status of the child) and its open file descriptors (/proc/<pid>/fd).
 *
 * In format v3 (the default) floe's upserts write deletion vectors: a sample that finds an equality
 * delete file fails the run (exit 1). At the end the lake is compared with MySQL row by row.
 * Printed as a table; written as JSON, SVG and PNG (bench/soak-chart.ts) to --out (default
 * bench/results/).
 *
 * Flags (all optional):
 *   --commits C               streaming commits to run (default 2000)
 *   --minutes M               run for M minutes of streaming instead of a number of commits (a long
 *                             run: `--minutes 60 --updates-per-second 500 --commit-interval-ms 1000`)
 *   --writers W               MySQL connections making the updates (default: one per 200 updates/s)
 *   --rows R                  rows in the table (default 10000)
 *   --sample-every K          sample every K commits (default 100)
 *   --updates-per-second U    steady UPDATE rate (default 40)
 *   --commit-interval-ms T    floe's commit.intervalMs (default 250)
 *   --maintenance-interval-ms M   floe's maintenance.intervalMs (default 30000)
 *   --expire-older-than-ms E  maintenance.expireSnapshots.olderThanMs (default 60000; retainLast 10)
 *   --format-version 2|3      the Iceberg tables' format (default 3)
 *   --out DIR                 where the JSON and the chart go (default bench/results)
 *   --keep                    keep the warehouse and MariaDB's data directory
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import type { LocalServer } from '../src/demo/local-server.js';
import { startMariaDb } from '../src/demo/local-mariadb.js';
import type { MysqlConnectionConfig } from '../src/source/mysql/client.js';
import { loadTable, prng, TABLE } from './dataset.js';
import type { ChildMessage } from './floe-child.js';
import { verifyLake, type LakeTable } from './lake.js';
import { openFdsOf, quantile, rssOf, sampleLake } from './lake-sample.js';
import { describeMachine, machineLine } from './report.js';
import { chartSvg, writeChart, type Panel } from './soak-chart.js';

const JOB_ID = 'soak';
const DATABASE = 'floe_soak';
const CHILD = fileURLToPath(new URL('./floe-child.ts', import.meta.url));

export interface SoakOptions {
  commits: number;
  /** Streaming minutes to run; when set, the run ends by time and `commits` is not a target. */
  minutes?: number;
  /** Connections making the updates (each waits for its statement before the next). */
  writers?: number;
  rows: number;
  sampleEvery: number;
  updatesPerSecond: number;
  commitIntervalMs: number;
  maintenanceIntervalMs: number;
  expireOlderThanMs: number;
  formatVersion: 2 | 3;
  out: string;
  keep: boolean;
}

const USAGE =
  'usage: npm run bench:soak -- [--commits C | --minutes M] [--writers W] [--rows R] [--sample-every K] [--updates-per-second U] [--commit-interval-ms T] [--maintenance-interval-ms M] [--expire-older-than-ms E] [--format-version 2|3] [--out DIR] [--keep]';

export function parseSoakOptions(argv: readonly string[]): SoakOptions {
  const o: SoakOptions = {
    commits: 2000,
    rows: 10_000,
    sampleEvery: 100,
    updatesPerSecond: 40,
    commitIntervalMs: 250,
    maintenanceIntervalMs: 30_000,
    expireOlderThanMs: 60_000,
    formatVersion: 3,
    out: fileURLToPath(new URL('./results', import.meta.url)),
    keep: false,
  };
  const num = (flag: string, v: string | undefined, min: number): number => {
    const n = Number((v ?? '').replace(/[_,]/g, ''));
    if (v === undefined || !Number.isSafeInteger(n) || n < min) throw new Error(`bench:soak: ${flag} expects a whole number of at least ${min}, found ${JSON.stringify(v)}\n${USAGE}`);
    return n;
  };
  const minutes = (flag: string, v: string | undefined): number => {
    const n = Number(v ?? '');
    if (v === undefined || !Number.isFinite(n) || n <= 0) throw new Error(`bench:soak: ${flag} expects a number of minutes above 0 (0.5 is 30 s), found ${JSON.stringify(v)}\n${USAGE}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i];
    switch (a) {
      case '--commits': o.commits = num(a, next(), 1); break;
      case '--minutes': o.minutes = minutes(a, next()); break;
      case '--writers': o.writers = num(a, next(), 1); break;
      case '--rows': o.rows = num(a, next(), 10); break;
      case '--sample-every': o.sampleEvery = num(a, next(), 1); break;
      case '--updates-per-second': o.updatesPerSecond = num(a, next(), 1); break;
      case '--commit-interval-ms': o.commitIntervalMs = num(a, next(), 1); break;
      case '--maintenance-interval-ms': o.maintenanceIntervalMs = num(a, next(), 1000); break;
      case '--expire-older-than-ms': o.expireOlderThanMs = num(a, next(), 0); break;
      case '--format-version': {
        const v = num(a, next(), 2);
        if (v !== 2 && v !== 3) throw new Error(`bench:soak: --format-version expects 2 or 3, found ${v}\n${USAGE}`);
        o.formatVersion = v;
        break;
      }
      case '--out': o.out = next() ?? ''; break;
      case '--keep': o.keep = true; break;
      default: throw new Error(`bench:soak: unknown flag ${JSON.stringify(a)}\n${USAGE}`);
    }
  }
  return o;
}

export interface SoakSample {
  commits: number;
  elapsedSeconds: number;
  metadataBytes: number;
  filesUnderTable: number;
  bytesUnderTable: number;
  dataFiles: number;
  deleteFiles: { equality: number; position: number; deletionVectors: number };
  manifests: number;
  snapshots: number;
  commitP50Ms: number;
  commitP99Ms: number;
  scanMs: number;
  scannedRows: number;
  rssBytes: number;
  /** floe's open file descriptors (sockets, files, pipes); 0 once it has exited. */
  openFds: number;
}

function log(message: string): void {
  process.stderr.write(`bench:soak: ${message}\n`);
}

/** One sample of the table beside the running floe (bench/lake-sample.ts), with a full scan. */
async function sample(t: LakeTable, commits: number, startedMs: number, window: number[], pid: number | undefined): Promise<SoakSample> {
  const lake = await sampleLake(t, true, (message) => log(`sample at ${commits} commits failed (${message}); again`));
  const sorted = [...window].sort((a, b) => a - b);
  return {
    commits,
    elapsedSeconds: (Date.now() - startedMs) / 1000,
    ...lake,
    commitP50Ms: quantile(sorted, 0.5) * 1000,
    commitP99Ms: quantile(sorted, 0.99) * 1000,
    rssBytes: await rssOf(pid),
    openFds: await openFdsOf(pid),
  };
}

function floeConfig(o: SoakOptions, c: MysqlConnectionConfig, warehouse: string): Record<string, unknown> {
  return {
    job: { id: JOB_ID },
    source: { host: c.host, port: c.port, user: c.user, password: c.password, serverId: 4_000_200, include: [`${DATABASE}.${TABLE}`] },
    warehouse: { location: warehouse },
    catalog: { type: 'filesystem', name: 'floe' },
    iceberg: { formatVersion: o.formatVersion },
    commit: { intervalMs: o.commitIntervalMs },
    maintenance: { enabled: true, intervalMs: o.maintenanceIntervalMs, expireSnapshots: { olderThanMs: o.expireOlderThanMs, retainLast: 10 } },
  };
}

/**
 * Steady single-row UPDATEs of random rows at `perSecond` in all, spread over `writers` connections
 * (one connection does a few hundred round trips a second at most), until `stop()`; returns how many
 * were made.
 */
function steadyUpdates(c: MysqlConnectionConfig, rows: number, perSecond: number, writers: number): { stop: () => Promise<number> } {
  let stopping = false;
  let made = 0;
  const each = perSecond / writers;
  const writer = async (w: number) => {
    const conn = await mysql.createConnection({ host: c.host, port: c.port, user: c.user, password: c.password, database: DATABASE });
    const rand = prng(4242 + w);
    const t0 = performance.now();
    let mine = 0;
    try {
      while (!stopping) {
        const id = 1 + Math.floor(rand() * rows);
        await conn.query(`UPDATE ${TABLE} SET quantity = (quantity + 1) % 30000, note = ?, updated_at = CURRENT_TIMESTAMP(6) WHERE id = ?`, [`soak update ${w}.${mine}`, id]);
        mine++;
        made++;
        // keep to the schedule: this writer's k-th update is due at k / each seconds
        const wait = t0 + (mine * 1000) / each - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    } finally {
      await conn.end();
    }
  };
  const done = Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
  return {
    stop: async () => {
      stopping = true;
      await done;
      return made;
    },
  };
}

export interface SoakResult {
  options: SoakOptions;
  machine: string;
  samples: SoakSample[];
  updates: number;
  verified: { lakeRows: number; mysqlRows: number; mismatches: number; firstMismatch?: string };
  equalityDeleteFilesSeen: number;
  /** Maintenance rounds floe ran, and the durations of the first commit after each (ms) beside all commits'. */
  maintenance: { rounds: number; commitAfterP50Ms: number; commitAfterMaxMs: number; allCommitsP50Ms: number; allCommitsP99Ms: number; allCommitsMaxMs: number };
  chart: { svg: string; png?: string; note?: string };
  json: string;
}

export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const root = await mkdtemp(join(tmpdir(), 'floe-soak-'));
  const warehouse = join(root, 'warehouse');
  let server: LocalServer | undefined;
  let child: ChildProcess | undefined;
  try {
    log('starting a private MariaDB (binlog ROW, FULL row image)');
    server = await startMariaDb({ extraArgs: ['--innodb-buffer-pool-size=256M', '--max-allowed-packet=64M', '--local-infile=1'], home: o.keep ? join(root, 'mariadb') : undefined });
    const connection: MysqlConnectionConfig = { host: server.host, port: server.port, user: server.user, password: server.password };
    const versionConn = await mysql.createConnection({ host: connection.host, port: connection.port, user: connection.user, password: connection.password });
    const [versionRows] = await versionConn.query('SELECT VERSION() AS v');
    await versionConn.end();
    const v = (versionRows as { v: string }[])[0];
    const machine = machineLine(describeMachine(`MariaDB ${v.v}`));
    log(`machine: ${machine}`);
    log(`loading ${o.rows} rows`);
    await loadTable(connection, DATABASE, o.rows, 1);

    const lake: LakeTable = { warehouse, namespace: DATABASE, table: TABLE, jobId: JOB_ID };
    child = fork(CHILD, ['run'], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, FLOE_BENCH_CONFIG: JSON.stringify(floeConfig(o, connection, warehouse)) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const pid = child.pid;
    const target = o.minutes === undefined ? `${o.commits} commits` : `${o.minutes} minutes`;
    let ended = false;
    const reached = () => ended;
    let streaming = false;
    let commits = 0;
    let window: number[] = [];
    const samples: SoakSample[] = [];
    let sampling: Promise<void> | undefined;
    let failure: Error | undefined;
    let finish!: () => void;
    const reachedTarget = new Promise<void>((r) => (finish = r));
    const finished = () => {
      if (!failure) ended = true;
      finish();
    };
    let startedMs = Date.now();
    let exited = false;
    let eqSeen = 0;
    let rounds = 0;
    let afterRound = false;
    const afterMaintenance: number[] = [];
    const allCommits: number[] = [];
    const takeSample = (): void => {
      const at = commits;
      const w = window;
      window = [];
      sampling = (sampling ?? Promise.resolve()).then(async () => {
        const s = await sample(lake, at, startedMs, w, pid);
        samples.push(s);
        if (o.formatVersion >= 3 && s.deleteFiles.equality > 0) eqSeen = Math.max(eqSeen, s.deleteFiles.equality);
        log(`${at} commits (${s.elapsedSeconds.toFixed(0)} s): metadata ${Math.round(s.metadataBytes / 1024)} KiB, ${s.filesUnderTable} files, ${s.manifests} manifests, DVs ${s.deleteFiles.deletionVectors}, eq ${s.deleteFiles.equality}, commit p50 ${s.commitP50Ms.toFixed(0)} ms p99 ${s.commitP99Ms.toFixed(0)} ms, scan ${s.scanMs.toFixed(0)} ms, RSS ${Math.round(s.rssBytes / 2 ** 20)} MiB, ${s.openFds} fds`);
      }).catch((e: unknown) => {
        failure ??= e as Error;
        finished();
      });
    };
    child.on('message', (m: ChildMessage) => {
      if (m.type === 'notification' && m.event === 'streaming-started' && !streaming) {
        streaming = true;
        startedMs = Date.now();
        log('floe is streaming: steady updates start');
      } else if (m.type === 'commit' && streaming) {
        commits++;
        window.push(m.seconds);
        allCommits.push(m.seconds * 1000);
        if (afterRound) afterMaintenance.push(m.seconds * 1000);
        afterRound = false;
        if (commits % o.sampleEvery === 0 || commits === 1) takeSample();
        if (o.minutes === undefined ? commits >= o.commits : Date.now() - startedMs >= o.minutes * 60_000) finished();
      } else if (m.type === 'maintained' && streaming) {
        rounds++;
        afterRound = true;
      } else if (m.type === 'done' && m.reason === 'failed') {
        failure ??= new Error(`bench:soak: floe failed: ${m.error ?? 'no message'}`);
        finished();
      }
    });
    const exit = new Promise<void>((r) =>
      child!.on('exit', (code, signal) => {
        exited = true;
        if (!reached()) failure ??= new Error(`bench:soak: floe exited (${signal ?? code}) after ${commits} commits, before the run's end (${target})`);
        finished();
        r();
      }),
    );
    // Ctrl-C / SIGTERM: stop like a failure, so that floe and MariaDB are stopped and the data removed
    const interrupted = (signal: string) => {
      failure ??= new Error(`bench:soak: ${signal} after ${commits} commits`);
      finished();
    };
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
    // the load starts at once: the commits before streaming begins (the snapshot) are not counted
    const load = steadyUpdates(connection, o.rows, o.updatesPerSecond, o.writers ?? Math.max(1, Math.ceil(o.updatesPerSecond / 200)));
    await reachedTarget;
    const updates = await load.stop();
    await sampling;
    if (failure) throw failure;
    // floe catches up with the last updates, then stops; the last sample and the check follow
    await new Promise((r) => setTimeout(r, Math.max(2000, o.commitIntervalMs * 4)));
    if (!exited) child.send({ type: 'stop' });
    await exit;
    if (failure) throw failure;
    const last = await sample(lake, commits, startedMs, window, undefined);
    // floe has exited: its last RSS and descriptors are the previous sample's
    last.rssBytes = samples.at(-1)?.rssBytes ?? 0;
    last.openFds = samples.at(-1)?.openFds ?? 0;
    samples.push(last);
    if (o.formatVersion >= 3 && last.deleteFiles.equality > 0) eqSeen = Math.max(eqSeen, last.deleteFiles.equality);
    log('comparing the lake with MySQL');
    const verified = await verifyLake(lake, connection, DATABASE);

    await mkdir(o.out, { recursive: true });
    const base = join(o.out, o.minutes === undefined ? `soak-v${o.formatVersion}-${o.commits}` : `soak-v${o.formatVersion}-${o.minutes}min-${o.updatesPerSecond}ups`);
    const json = `${base}.json`;
    const chart = await writeChart(base, soakChart(o, machine, samples));
    const sortedAfter = [...afterMaintenance].sort((a, b) => a - b);
    const sortedAll = [...allCommits].sort((a, b) => a - b);
    const maintenance = {
      rounds,
      commitAfterP50Ms: quantile(sortedAfter, 0.5),
      commitAfterMaxMs: sortedAfter.at(-1) ?? 0,
      allCommitsP50Ms: quantile(sortedAll, 0.5),
      allCommitsP99Ms: quantile(sortedAll, 0.99),
      allCommitsMaxMs: sortedAll.at(-1) ?? 0,
    };
    const result: SoakResult = { options: o, machine, samples, updates, verified, equalityDeleteFilesSeen: eqSeen, maintenance, chart, json };
    await writeFile(json, JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await server?.stop().catch(() => {});
    if (o.keep) log(`kept: ${root}`);
    else await rm(root, { recursive: true, force: true });
  }
}

function soakChart(o: SoakOptions, machine: string, samples: readonly SoakSample[]): string {
  const pts = (f: (s: SoakSample) => number) => samples.map((s) => [s.commits, f(s)] as const);
  const panels: Panel[] = [
    { title: 'metadata.json', unit: 'KiB', series: [{ name: 'current metadata.json', color: '#1f77b4', points: pts((s) => s.metadataBytes / 1024) }] },
    {
      title: 'Files under the table',
      unit: 'files',
      series: [
        { name: 'all files', color: '#1f77b4', points: pts((s) => s.filesUnderTable) },
        { name: 'live data files', color: '#2ca02c', points: pts((s) => s.dataFiles) },
      ],
    },
    {
      title: 'Live delete files and manifests',
      unit: 'count',
      series: [
        { name: 'DVs', color: '#9467bd', points: pts((s) => s.deleteFiles.deletionVectors) },
        { name: 'position', color: '#8c564b', points: pts((s) => s.deleteFiles.position) },
        { name: 'equality', color: '#d62728', points: pts((s) => s.deleteFiles.equality) },
        { name: 'manifests', color: '#ff7f0e', points: pts((s) => s.manifests) },
      ],
    },
    {
      title: 'Commit duration',
      unit: 'ms',
      series: [
        { name: 'p50', color: '#1f77b4', points: pts((s) => s.commitP50Ms) },
        { name: 'p99', color: '#d62728', points: pts((s) => s.commitP99Ms) },
      ],
    },
    { title: `Full scan (${o.rows.toLocaleString('en-US')} rows, floe's reader)`, unit: 'ms', series: [{ name: 'scan', color: '#2ca02c', points: pts((s) => s.scanMs) }] },
    { title: 'floe RSS', unit: 'MiB', series: [{ name: 'RSS', color: '#7f7f7f', points: pts((s) => s.rssBytes / 2 ** 20) }] },
    { title: 'floe open file descriptors', unit: 'fds', series: [{ name: 'fds', color: '#17becf', points: pts((s) => s.openFds) }] },
  ];
  const length = o.minutes === undefined ? `${o.commits.toLocaleString('en-US')} commits` : `${o.minutes} minutes`;
  return chartSvg(
    `floe soak: ${length}, format v${o.formatVersion}, ${o.updatesPerSecond} updates/s on ${o.rows.toLocaleString('en-US')} rows`,
    [`commit interval ${o.commitIntervalMs} ms, maintenance every ${o.maintenanceIntervalMs / 1000} s (expiry > ${o.expireOlderThanMs / 1000} s, retain 10, manifest rewrite > 100 small)`, machine.replace(/ \(\d+ GiB free\)/, '')],
    panels,
  );
}

export function formatSoakTable(samples: readonly SoakSample[]): string {
  const header = ['commits', 'elapsed', 'metadata.json', 'files', 'data files', 'DVs', 'pos del', 'eq del', 'manifests', 'snapshots', 'commit p50', 'commit p99', 'scan', 'rows', 'RSS', 'fds'];
  const lines = samples.map((s) => [
    String(s.commits),
    `${s.elapsedSeconds.toFixed(0)} s`,
    `${(s.metadataBytes / 1024).toFixed(1)} KiB`,
    String(s.filesUnderTable),
    String(s.dataFiles),
    String(s.deleteFiles.deletionVectors),
    String(s.deleteFiles.position),
    String(s.deleteFiles.equality),
    String(s.manifests),
    String(s.snapshots),
    `${s.commitP50Ms.toFixed(0)} ms`,
    `${s.commitP99Ms.toFixed(0)} ms`,
    `${s.scanMs.toFixed(0)} ms`,
    String(s.scannedRows),
    `${Math.round(s.rssBytes / 2 ** 20)} MiB`,
    String(s.openFds),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i])).join('  ');
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}

async function main(): Promise<void> {
  let o: SoakOptions;
  try {
    o = parseSoakOptions(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const r = await runSoak(o);
  const rel = (p: string) => relative(process.cwd(), p);
  const eqLine =
    o.formatVersion >= 3
      ? r.equalityDeleteFilesSeen === 0
        ? 'equality delete files: 0 in every sample (deletion-vector upserts)'
        : `equality delete files: ${r.equalityDeleteFilesSeen} seen in a v3 table — floe's DV upserts must write none`
      : 'equality delete files: expected in v2 (upserts write them; compaction drops them)';
  process.stdout.write(
    [
      '',
      `floe soak: ${o.minutes === undefined ? `${o.commits} commits` : `${o.minutes} min, ${r.samples.at(-1)?.commits ?? 0} commits`}, ${r.updates} updates, format v${o.formatVersion}`,
      `machine: ${r.machine}`,
      '',
      formatSoakTable(r.samples),
      '',
      eqLine,
      `commits: p50 ${r.maintenance.allCommitsP50Ms.toFixed(0)} ms, p99 ${r.maintenance.allCommitsP99Ms.toFixed(0)} ms, max ${r.maintenance.allCommitsMaxMs.toFixed(0)} ms; ${r.maintenance.rounds} maintenance rounds, the commit after one: p50 ${r.maintenance.commitAfterP50Ms.toFixed(0)} ms, max ${r.maintenance.commitAfterMaxMs.toFixed(0)} ms`,
      `lake vs MySQL: ${r.verified.mismatches === 0 ? `equal (${r.verified.lakeRows} rows)` : `${r.verified.mismatches} mismatches; first: ${r.verified.firstMismatch}`}`,
      `chart: ${r.chart.png ? rel(r.chart.png) : rel(r.chart.svg)}${r.chart.note ? ` (${r.chart.note})` : ''}; JSON: ${rel(r.json)}`,
      '',
    ].join('\n'),
  );
  if (r.verified.mismatches > 0 || (o.formatVersion >= 3 && r.equalityDeleteFilesSeen > 0)) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main().catch((e) => {
    process.stderr.write(`bench:soak failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  });
}
