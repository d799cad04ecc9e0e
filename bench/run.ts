/**
 * `npm run bench` — floe's throughput on this machine against the two raw ceilings it cannot beat
 *. Steps:
 *
 *   1. start a private MariaDB (binlog ROW / FULL row image; or use --mysql-url), load N rows
 *   2. ceiling A: the table's full read through mysql2 (streamed, floe's value-shaping options)
 *   3. floe snapshot: `runPipeline` mode 'snapshot' into a local warehouse (filesystem catalog),
 *      in a child process (CPU and peak RSS are floe's alone)
 *   (3b. the same snapshot into tables partitioned by each `--partition` spec, default day(created_at)
 *      and bucket(16, id), each in its own warehouse: rate beside the unpartitioned one, data files
 *      and commits — a partitioned checkpoint writes one file per partition it touches)
 *   4. apply M random updates/deletes (bench/workload.ts)
 *   5. ceiling B: zongji's decode of that binlog range with no sink (`drainRawBinlog`), three times —
 *      twice before floe's CDC runs, once after — the median counting (the VM's speed drifts)
 *   (5b. the row decoders on that range's captured events, in-process: floe's own vs zongji's,
 *      bench/row-decoder.ts; measured last, after the peers, their rows shown here)
 *   6. floe streaming: `runPipeline` mode 'run' from the committed state, until the table's committed
 *      offset reaches the binlog position after the workload — with the key index the snapshot run
 *      persisted (index-store.ts), as `floe snapshot` then `floe run` go; then after a crash: from
 *      the same state, killed at its first commit before the index followed it and started again,
 *      timed over the changes left (the persisted index caught up from the lake); then without
 *      floe's state directory (a new machine: the index built from the lake)
 *   (7. with --verify: the lake's rows equal MySQL's, after the snapshot and after streaming)
 *   7b. `floe verify` of the table after streaming (bench/verify-step.ts, child process): rows/s
 *      beside the snapshot's, bytes read from the lake, its CPU and the server's (the server's during
 *      the snapshot too, when the server runs on this machine)
 *   (3c, 6b. the peers, bench/peers/peers.ts: Debezium's embedded engine snapshots the table right
 *      after floe's snapshots, while it is as loaded, and streams the binlog range floe's CDC
 *      consumed after floe's CDC phase; built before anything is measured; --no-peers skips them)
 *   8. the key index of DV upserts (bench/key-index.ts): bytes per key in memory and on disk,
 *      lookups/s one by one and sorted, changes/s applied and keys/s loaded, with --key-index-keys
 *      keys (default 1,000,000), in a child process (bench/key-index-child.ts), before the server starts;
 *      then the disk index, floe's SQLite store (sqlite-key-index.ts, bench/key-index-stores.ts):
 *      bytes per key on disk, lookups/s, build rate and checkpoint batches with as many keys (the
 *      comparison with lmdb and LevelDB: `npm run bench:key-index-stores`, docs/key-index-store.md);
 *      then the value indexes of bench/value-index.ts (a keyless table's row index, a cascade
 *      child's FK index) with as many rows: bytes per row, build, lookups and DVs applied per second
 *
 * Options: bench/options.ts. The figures are printed as a table (and written as JSON with --json).
 */
import { execFile, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { cp, mkdtemp, rm, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalServer } from '../src/demo/local-server.js';
import { startMariaDb } from '../src/demo/local-mariadb.js';
import { connectMysql, type MysqlConnectionConfig } from '../src/source/mysql/client.js';
import { detectDialect } from '../src/source/mysql/dialect.js';
import { formatOffset, type BinlogOffset } from '../src/source/mysql/offset/offset.js';
import { readServerIdentity, readWatermark } from '../src/source/mysql/snapshot/watermark.js';
import { rawBinlogDecode, rawTableRead } from './ceilings.js';
import { loadTable, TABLE } from './dataset.js';
import { runFloeSnapshot, runFloeUntil, runFloeUntilKilled, type FloeRun } from './floe-process.js';
import { committedOffset, lakeShape, reached, verifyLake, type LakeTable } from './lake.js';
import { parseBenchOptions, type BenchOptions } from './options.js';
import { floeModules } from './floe-build.js';
import { describeMachine, formatTable, machineLine, rate, type Machine, type Row } from './report.js';
import { applyWorkload } from './workload.js';
import { runFloeVerify, serverCpuSeconds } from './verify-step.js';
import { decoderBench, formatDecoderFigures, type DecoderFigures } from './row-decoder.js';
import { formatKeyIndex, layoutName, type KeyIndexFigures } from './key-index.js';
import type { KeyIndexChildMessage } from './key-index-child.js';
import { formatStoreLine, type StoreFigures } from './key-index-stores.js';
import { formatValueIndex, type ValueIndexFigures } from './value-index.js';
import { Peers, peersSummary, type PeerContext, type PeerPhase, type PeersResult } from './peers/peers.js';

const JOB_ID = 'bench';

export interface PartitionedSnapshot {
  partitionBy: string;
  rowsPerSecond: number;
  /** Its rate over the unpartitioned snapshot's. */
  ratioToUnpartitioned: number;
  rowsPerCpuSecond: number;
  peakRssBytes: number;
  /** Live data files and floe commits (snapshots) in the table afterwards. */
  dataFiles: number;
  commits: number;
  partitions: number;
}

export interface BenchResult {
  options: Omit<BenchOptions, 'jsonFile'>;
  machine: Machine;
  /** Which floe ran: its build (dist/) or its sources through tsx (bench/floe-build.ts). */
  floe: 'build' | 'sources';
  rows: Row[];
  /** `mainBusy`: the share of the run floe's main thread was running code (bench/floe-child.ts). */
  snapshot: { rowsPerSecond: number; ratioToCeiling: number; rowsPerCpuSecond: number; peakRssBytes: number; mainBusy: number };
  partitioned: PartitionedSnapshot[];
  /** Streaming after the snapshot run's clean stop: floe takes the key index that stop saved. */
  cdc: { eventsPerSecond: number; ratioToCeiling: number; eventsPerCpuSecond: number; peakRssBytes: number; mainBusy: number };
  /**
   * After a crash: floe killed at its first commit, after the commit landed and before its key index
   * followed it, then started again — over the changes left (results before this layout: the same
   * lake without the saved key index, the index built from the lake at start).
   */
  cdcAfterCrash: { eventsPerSecond: number; ratioToCeiling: number; eventsPerCpuSecond: number; peakRssBytes: number; mainBusy: number };
  /** The same lake without floe's state directory (a new machine): the key index built from the lake at start. */
  cdcWithoutState?: { eventsPerSecond: number; ratioToCeiling: number; eventsPerCpuSecond: number; peakRssBytes: number; mainBusy: number };
  decoder: DecoderFigures;
  verified?: { afterSnapshot: boolean; afterStreaming: boolean };
  /** `floe verify` of the table after streaming; server CPU seconds undefined when the server is not on this machine. */
  verify?: { rowsPerSecond: number; ratioToSnapshot: number; lakeBytesRead: number; cpuSeconds: number; serverCpuSeconds?: number; snapshotServerCpuSeconds?: number };
  /** The key-index micro-benchmark (empty with --key-index-keys 0). */
  keyIndex: KeyIndexFigures[];
  /** The disk key index, floe's SQLite store, with as many keys (empty with --key-index-keys 0). */
  diskKeyIndex: StoreFigures[];
  /** The value indexes (a keyless table's row index, a cascade child's FK index) with as many rows (empty with --key-index-keys 0; absent in results before them). */
  valueIndex?: ValueIndexFigures[];
  /** Debezium (and Flink CDC where it builds) on the same table and binlog range, or why not. */
  peers: PeersResult;
}

function log(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

function parseUrl(url: string): MysqlConnectionConfig {
  const u = new URL(url);
  return { host: u.hostname, port: u.port ? Number(u.port) : 3306, user: decodeURIComponent(u.username || 'root'), password: decodeURIComponent(u.password || '') };
}

/** floe's configuration for the benchmark: floe's defaults, except the commit interval while streaming. */
function floeConfig(o: BenchOptions, c: MysqlConnectionConfig, warehouse: string, phase: 'snapshot' | 'streaming', partitionBy?: string): Record<string, unknown> {
  const DATABASE = o.database;
  return {
    job: { id: JOB_ID },
    source: {
      host: c.host,
      port: c.port,
      user: c.user,
      password: c.password,
      serverId: 4_000_100,
      include: [`${DATABASE}.${TABLE}`],
      snapshot: { mode: 'initial', ...(o.parallelism ? { parallelism: o.parallelism } : {}) },
      // FLOE_BENCH_BINLOG_THREAD: floe's source.binlogThread ('worker', its default, or 'main'), for A/B runs
      ...(process.env.FLOE_BENCH_BINLOG_THREAD ? { binlogThread: process.env.FLOE_BENCH_BINLOG_THREAD } : {}),
    },
    warehouse: { location: warehouse },
    // floe's local state beside the warehouse (the key index a clean stop saves, saved-index-file.ts),
    // not ./.floe/state of the directory the bench runs in
    stateDir: `${warehouse}.state`,
    catalog: { type: 'filesystem', name: 'floe' },
    ...(partitionBy ? { tables: { overrides: { [`${DATABASE}.${TABLE}`]: { partitionBy: [partitionBy] } } } } : {}),
    ...(phase === 'streaming' ? { commit: { intervalMs: o.commitIntervalMs } } : {}),
  };
}

async function serverPosition(c: MysqlConnectionConfig): Promise<{ offset: BinlogOffset; version: string; flavor: 'mysql' | 'mariadb' }> {
  const client = await connectMysql(c);
  try {
    const dialect = await detectDialect(client);
    const identity = await readServerIdentity(client, dialect.flavor);
    const [v] = await client.query<{ v: string }>('SELECT VERSION() AS v');
    return { offset: await readWatermark(client, dialect, identity), version: `${dialect.flavor === 'mariadb' ? 'MariaDB' : 'MySQL'} ${String(v.v)}`, flavor: dialect.flavor };
  } finally {
    await client.close();
  }
}

/** The key-index micro-benchmarks in a child process (bench/key-index-child.ts). */
async function keyIndexBenchApart(keys: number, seed: number): Promise<{ keyIndex: KeyIndexFigures[]; diskKeyIndex: StoreFigures[]; valueIndex: ValueIndexFigures[] }> {
  const child = fork(fileURLToPath(new URL('./key-index-child.ts', import.meta.url)), [String(keys), String(seed)], { execArgv: ['--import', 'tsx'], serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const answer = new Promise<KeyIndexChildMessage | undefined>((resolve) => {
    child.once('message', (m: KeyIndexChildMessage) => resolve(m));
    child.once('exit', () => resolve(undefined));
  });
  const m = await answer;
  await new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
  if (!m) throw new Error(`bench: the key-index benchmark process exited (${child.signalCode ?? child.exitCode}) without its figures`);
  if ('error' in m) throw new Error(`bench: the key-index benchmark failed: ${m.error}`);
  return m;
}

/**
 * The bench's own work out of the way before floe's CDC runs: its copies of the lake (put back
 * between runs: hundreds of MB) written out (`sync`; where it is missing, nothing), and its heap
 * collected and left to settle, so that no collection or release on V8's background threads falls
 * into the measured run, on the same two cores.
 */
async function settleBench(): Promise<void> {
  await new Promise<void>((resolve) => execFile('sync', () => resolve()));
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  await new Promise((r) => setTimeout(r, 500));
}

/** b − a, when both are known. */
function minus(b: number | undefined, a: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : b - a;
}

function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

function seconds(ms: number): number {
  return ms / 1000;
}

function floeRow(step: string, run: FloeRun, count: number, unit: string, ceilingRate: number | undefined): Row {
  const r: Row = { step, seconds: seconds(run.elapsedMs), count, unit, cpuSeconds: run.cpuMs / 1000, peakRssBytes: run.peakRssBytes };
  const own = rate(r);
  if (own !== undefined && ceilingRate) r.ratio = own / ceilingRate;
  return r;
}

/**
 * Bytes of disk a run takes per row, about: the private MariaDB's table (about 250 bytes a row of the
 * orders table, its binlog off for the load), floe's lake (about 50 bytes a row as Parquet) — the
 * warehouse, the copy of it as the snapshot left it, and one warehouse per partitioned snapshot — and
 * the persisted key index (8 bytes a key, twice: the state directory and its copy).
 */
function diskBytesPerRow(o: BenchOptions): number {
  return 250 + (2 + o.partitions.length) * 50 + 2 * 8;
}

/** Fails before anything runs when the disk holding `dir` cannot take a run of `o.rows` rows (`--rows 50000000 --no-partitioned`: about 18 GB). */
async function checkDiskRoom(dir: string, o: BenchOptions): Promise<void> {
  const fs = await statfs(dir);
  const free = fs.bavail * fs.bsize;
  const wanted = o.rows * diskBytesPerRow(o);
  if (free < wanted) {
    throw new Error(`bench: ${o.rows.toLocaleString('en-US')} rows want about ${(wanted / 1e9).toFixed(1)} GB of disk under ${dir} (the MariaDB table, the lake and its copies, the key index), found ${(free / 1e9).toFixed(1)} GB free; free some, pass fewer --rows, or --no-partitioned`);
  }
}

export async function runBench(o: BenchOptions): Promise<BenchResult> {
  const DATABASE = o.database;
  let server: LocalServer | undefined;
  const warehouseRoot = await mkdtemp(join(tmpdir(), 'floe-bench-'));
  const warehouse = join(warehouseRoot, 'warehouse');
  try {
    await checkDiskRoom(warehouseRoot, o);
    // first, in a process of their own (bench/key-index-child.ts): nothing of theirs stays beside floe's runs
    let keyIndex: KeyIndexFigures[] = [];
    let diskKeyIndex: StoreFigures[] = [];
    let valueIndex: ValueIndexFigures[] = [];
    if (o.keyIndexKeys > 0) {
      log(`key index: ${o.keyIndexKeys} keys, heap per key and lookups/s; disk key index (SQLite): bytes per key on disk and lookups/s (child process)`);
      ({ keyIndex, diskKeyIndex, valueIndex } = await keyIndexBenchApart(o.keyIndexKeys, o.seed));
    }
    const peers = new Peers(log);
    await peers.prepare(o.peers);
    let connection: MysqlConnectionConfig;
    if (o.mysqlUrl) connection = parseUrl(o.mysqlUrl);
    else {
      log('starting a private MariaDB (binlog ROW, FULL row image)');
      server = await startMariaDb({
        extraArgs: ['--innodb-buffer-pool-size=1G', '--max-allowed-packet=64M', '--local-infile=1', '--binlog-cache-size=4M'],
        home: o.keep ? join(warehouseRoot, 'mariadb') : undefined,
      });
      connection = { host: server.host, port: server.port, user: server.user, password: server.password };
    }
    const { version, flavor } = await serverPosition(connection);
    const peerContext: PeerContext = { connection, database: DATABASE, flavor, timeoutMs: Math.max(120_000, o.rows, o.changes * 2) };
    const machine = describeMachine(version);
    log(`machine: ${machineLine(machine)}`);
    const floe = floeModules().what;
    log(floe === 'build' ? 'floe: its build (dist/), as the floe command runs it' : 'floe: its TypeScript sources through tsx (dist/ is older than src/; npm run build to measure the build)');
    const lakeTable: LakeTable = { warehouse, namespace: DATABASE, table: TABLE, jobId: JOB_ID };
    const rows: Row[] = [];
    for (const k of keyIndex) {
      const int = (n: number): string => Math.round(n).toLocaleString('en-US');
      rows.push({
        step: `key index lookups, ${layoutName(k)}`,
        seconds: k.lookups / k.lookupsPerSecond,
        count: k.lookups,
        unit: 'lookups',
        note: `${k.heapBytesPerKey.toFixed(1)} bytes/key in memory, ${k.diskBytesPerKey.toFixed(1)} on disk, with ${k.keys.toLocaleString('en-US')} keys; ${int(k.sortedLookupsPerSecond)} lookups/s sorted, ${int(k.applyChangesPerSecond)} changes/s applied, loaded at ${int(k.loadKeysPerSecond)} keys/s; a child process`,
      });
    }
    for (const d of diskKeyIndex) {
      rows.push({
        step: `disk key index lookups, ${d.key} key`,
        seconds: d.lookups / d.lookupsPerSecond,
        count: d.lookups,
        unit: 'lookups',
        note: `SQLite: ${d.bytesPerKey.toFixed(1)} bytes/key on disk (${d.disk.files} files, WAL included) with ${d.keys.toLocaleString('en-US')} keys; built at ${Math.round(d.buildKeysPerSecond).toLocaleString('en-US')} keys/s; a child process`,
      });
    }
    for (const v of valueIndex) {
      rows.push({
        step: `${v.index === 'row' ? 'row index' : 'FK index'} lookups`,
        seconds: v.lookups / v.lookupsPerSecond,
        count: v.lookups,
        unit: 'lookups',
        note: `${v.kind}: ${v.heapBytesPerRow.toFixed(1)} bytes/row in memory with ${v.rows.toLocaleString('en-US')} rows; built at ${Math.round(v.buildRowsPerSecond).toLocaleString('en-US')} rows/s, DVs applied at ${Math.round(v.deadRowsPerSecond).toLocaleString('en-US')} rows/s; a child process`,
      });
    }

    log(`loading ${o.rows} rows into ${DATABASE}.${TABLE}`);
    const load = await loadTable(connection, DATABASE, o.rows, o.seed);
    rows.push({ step: 'load (not measured)', seconds: seconds(load.elapsedMs), count: load.rows, unit: 'rows', note: `${load.method}; ${load.unlogged ? 'binlog off for the load' : 'load logged to the binlog'}` });

    log('ceiling A: full table read through mysql2');
    const ceilingA = await rawTableRead(connection, DATABASE);
    if (ceilingA.count !== o.rows) throw new Error(`bench: the raw read returned ${ceilingA.count} rows, expected ${o.rows}`);
    const rowA: Row = { step: 'ceiling A: mysql2 streamed read', seconds: seconds(ceilingA.elapsedMs), count: ceilingA.count, unit: 'rows', cpuSeconds: ceilingA.cpuMs / 1000, note: 'bench process' };
    rows.push(rowA);

    log('floe snapshot (runPipeline mode snapshot, child process)');
    const snapServerCpu0 = await serverCpuSeconds(connection);
    const snap = await runFloeSnapshot(floeConfig(o, connection, warehouse, 'snapshot'));
    const snapServerCpu = minus(await serverCpuSeconds(connection), snapServerCpu0);
    const snapRow = floeRow('floe snapshot', snap, o.rows, 'rows', rate(rowA));
    snapRow.note = `default commit interval (10 s); main thread busy ${percent(snap.mainBusy)}${snapServerCpu === undefined ? '' : `; server CPU ${snapServerCpu.toFixed(1)} s`}`;
    rows.push(snapRow);
    let verified: BenchResult['verified'];
    if (o.verify) {
      const v = await verifyLake(lakeTable, connection, DATABASE);
      if (v.mismatches > 0) throw new Error(`bench: after the snapshot the lake differs from MySQL in ${v.mismatches} rows (lake ${v.lakeRows}, MySQL ${v.mysqlRows}); first: ${v.firstMismatch}`);
      verified = { afterSnapshot: true, afterStreaming: false };
      log(`verified: the lake holds the ${v.lakeRows} rows of MySQL`);
    }

    const partitioned: PartitionedSnapshot[] = [];
    for (const [i, partitionBy] of o.partitions.entries()) {
      log(`floe snapshot into a table partitioned by ${partitionBy} (child process)`);
      const caseWarehouse = join(warehouseRoot, `warehouse-partitioned-${i + 1}`);
      const run = await runFloeSnapshot(floeConfig(o, connection, caseWarehouse, 'snapshot', partitionBy));
      const row = floeRow(`floe snapshot, partitioned by ${partitionBy}`, run, o.rows, 'rows', rate(rowA));
      const shape = await lakeShape({ ...lakeTable, warehouse: caseWarehouse });
      const ratio = rate(row)! / rate(snapRow)!;
      row.note = `${ratio.toFixed(2)} of the unpartitioned rate; ${shape.dataFiles} data files in ${shape.partitions} partitions, ${shape.commits} commits`;
      rows.push(row);
      partitioned.push({ partitionBy, rowsPerSecond: rate(row)!, ratioToUnpartitioned: ratio, rowsPerCpuSecond: o.rows / (run.cpuMs / 1000), peakRssBytes: run.peakRssBytes, ...shape });
      if (o.verify) {
        const v = await verifyLake({ ...lakeTable, warehouse: caseWarehouse }, connection, DATABASE);
        if (v.mismatches > 0) throw new Error(`bench: the table partitioned by ${partitionBy} differs from MySQL in ${v.mismatches} rows (lake ${v.lakeRows}, MySQL ${v.mysqlRows}); first: ${v.firstMismatch}`);
        log(`verified: the table partitioned by ${partitionBy} holds the ${v.lakeRows} rows of MySQL`);
      }
    }

    rows.push(...(await peers.snapshots(peerContext, o.rows, rate(snapRow)!, rate(rowA)!)));

    const from = (await serverPosition(connection)).offset;
    log(`applying ${o.changes} random updates/deletes`);
    const work = await applyWorkload(connection, DATABASE, o.rows, o.changes, o.seed);
    const to = (await serverPosition(connection)).offset;
    rows.push({
      step: 'changes applied (not measured)',
      seconds: seconds(work.elapsedMs),
      count: work.updates + work.deletes,
      unit: 'changes',
      note: `${work.updates} updates, ${work.deletes} deletes, ${work.transactions} transactions; binlog ${formatOffset(from)} → ${formatOffset(to)}`,
    });

    // Ceiling B three times — twice now, once after floe's CDC runs — and the median counts: one
    // decode of two seconds moved with the VM by a third and more between runs (158k–268k changes/s
    // in one session), and floe's ratio with it.
    log('ceiling B: zongji decode of the workload binlog, no sink (3 times: twice now, once after floe streams)');
    const decodesB: Awaited<ReturnType<typeof rawBinlogDecode>>[] = [];
    const decodeB = async (): Promise<void> => {
      const b = await rawBinlogDecode(connection, DATABASE, from, to);
      if (b.count !== o.changes) throw new Error(`bench: zongji decoded ${b.count} row changes, expected ${o.changes}`);
      decodesB.push(b);
    };
    await decodeB();
    await decodeB();
    const rowB: Row = { step: 'ceiling B: zongji decode, no sink', seconds: 0, count: o.changes, unit: 'changes' };
    const settleB = (): void => {
      const sorted = [...decodesB].sort((x, y) => x.elapsedMs - y.elapsedMs);
      const median = sorted[Math.floor(sorted.length / 2)]!;
      const rates = decodesB.map((b) => Math.round(b.count / (b.elapsedMs / 1000)).toLocaleString('en-US'));
      Object.assign(rowB, { seconds: seconds(median.elapsedMs), cpuSeconds: median.cpuMs / 1000, note: `median of ${decodesB.length} decodes (${rates.join(', ')} changes/s${decodesB.length > 2 ? '; the last after floe streamed' : ''}); ${median.events} binlog events; bench process` });
    };
    settleB();
    rows.push(rowB);

    // the row decoders' rows go here; they are measured last (below)
    const decoderRowsAt = rows.length;

    // the lake and floe's state directory as the snapshot left them, for the CDC runs after the first
    // (a filesystem warehouse holds absolute paths: it is put back in place, not used from elsewhere)
    const stateDir = `${warehouse}.state`;
    const asSnapshotted = `${warehouse}.as-snapshotted`;
    await cp(warehouse, asSnapshotted, { recursive: true });
    await cp(stateDir, `${stateDir}.as-snapshotted`, { recursive: true }).catch(() => {}); // none below saveMinRows
    const putBack = async (withState: boolean): Promise<void> => {
      await rm(warehouse, { recursive: true, force: true });
      await rm(stateDir, { recursive: true, force: true });
      await cp(asSnapshotted, warehouse, { recursive: true });
      if (withState) await cp(`${stateDir}.as-snapshotted`, stateDir, { recursive: true }).catch(() => {});
      await settleBench();
    };
    await settleBench();
    const cdcRun = async (step: string, note: string, changes = o.changes): Promise<{ row: Row; run: FloeRun }> => {
      const cdc = await runFloeUntil(floeConfig(o, connection, warehouse, 'streaming'), () => reached(lakeTable, to), { timeoutMs: Math.max(120_000, o.changes * 2) });
      const started = cdc.notifications.find((n) => n.event === 'streaming-started');
      const row = floeRow(step, cdc, changes, 'changes', rate(rowB));
      // the commits up to the one that reached the target: where the time went between them
      const commits = cdc.commits.filter((c) => c.atMs <= cdc.elapsedMs + 1).map((c) => (c.atMs / 1000).toFixed(2));
      row.note = `${note}; commit interval ${o.commitIntervalMs} ms${started ? `; streaming started at ${(started.atMs / 1000).toFixed(1)} s` : ''}; commits ended at ${commits.join(', ')} s; main thread busy ${percent(cdc.mainBusy)}`;
      if (o.verify) {
        const v = await verifyLake(lakeTable, connection, DATABASE);
        if (v.mismatches > 0) throw new Error(`bench: after streaming the lake differs from MySQL in ${v.mismatches} rows (lake ${v.lakeRows}, MySQL ${v.mysqlRows}); first: ${v.firstMismatch}`);
        verified = { afterSnapshot: true, afterStreaming: true };
        log(`verified: the lake holds the ${v.lakeRows} rows of MySQL`);
      }
      return { row, run: cdc };
    };
    log(`floe streaming (runPipeline mode run, child process) until the workload is committed${o.cdcRuns > 1 ? `, ${o.cdcRuns} times` : ''}`);
    const cleanRuns: { row: Row; run: FloeRun }[] = [];
    for (let i = 0; i < o.cdcRuns; i++) {
      if (i > 0) await putBack(true);
      cleanRuns.push(await cdcRun('floe CDC, start to committed', 'after the clean stop of the snapshot run (its key index saved)'));
    }
    // the median run (by time) is the row; with several, the note gives every run's rate
    const { row: cdcRow, run: cdc } = [...cleanRuns].sort((x, y) => x.run.elapsedMs - y.run.elapsedMs)[Math.floor(cleanRuns.length / 2)]!;
    if (cleanRuns.length > 1) cdcRow.note = `median of ${cleanRuns.length} runs (${cleanRuns.map((c) => Math.round(rate(c.row)!).toLocaleString('en-US')).join(', ')} changes/s); ${cdcRow.note}`;
    rows.push(cdcRow);
    // After a crash: floe killed (SIGKILL, failpoint key-index-before-apply) at its first commit,
    // after the commit landed and before its key index followed it — the worst moment for the index,
    // whose persisted state is then a commit behind the lake — and started again, timed over the
    // changes that commit left to do (counted by decoding the binlog from the committed offset)
    log(`floe streaming killed at its first commit, after the commit landed and before its key index followed it (a crash); started again${o.cdcRuns > 1 ? `; ${o.cdcRuns} times` : ''}`);
    // its first checkpoint at about half the changes at most (the interval's, or this bound's, checked
    // per transaction), so that a workload read in one go still leaves the restart about half
    const killed = floeConfig(o, connection, warehouse, 'streaming') as { commit: Record<string, unknown> };
    killed.commit = { ...killed.commit, maxBufferedChanges: Math.max(1, Math.floor(o.changes / 2)) };
    // as many crashes as clean runs, the median by rate the row: where the kill lands moves with the
    // machine (the changes left differ), and one restart of two seconds moves with the VM as a clean run does
    const crashes: { row: Row; run: FloeRun; remaining: number }[] = [];
    for (let i = 0; i < o.cdcRuns; i++) {
      await putBack(true);
      await runFloeUntilKilled(killed, 'key-index-before-apply:0:exit', Math.max(120_000, o.changes * 2));
      const crashedAt = await committedOffset(lakeTable);
      if (!crashedAt) throw new Error('bench: after the crash the table holds no streaming offset; expected the first commit to have landed');
      const remaining = (await rawBinlogDecode(connection, DATABASE, crashedAt, to)).count;
      if (remaining <= 0 || remaining >= o.changes) throw new Error(`bench: the first commit before the crash left ${remaining} of ${o.changes} changes; expected some, not all`);
      await settleBench();
      const done = await cdcRun('floe CDC after a crash, start to committed', `killed at its first commit (${(o.changes - remaining).toLocaleString('en-US')} changes in it) before the key index followed it; the persisted index caught up from the lake; ${remaining.toLocaleString('en-US')} changes left`, remaining);
      crashes.push({ ...done, remaining });
    }
    const { row: crashRow, run: crashRun, remaining } = [...crashes].sort((x, y) => rate(x.row)! - rate(y.row)!)[Math.floor(crashes.length / 2)]!;
    if (crashes.length > 1) crashRow.note = `median of ${crashes.length} crashes (${crashes.map((c) => Math.round(rate(c.row)!).toLocaleString('en-US')).join(', ')} changes/s); ${crashRow.note}`;
    rows.push(crashRow);
    log("floe streaming again from the same lake, without floe's state directory (a new machine: the key index built from the lake)");
    await putBack(false);
    const { row: lostRow, run: lostRun } = await cdcRun('floe CDC without its state directory, start to committed', 'key index built from the lake at start');
    rows.push(lostRow);
    log('floe verify of the table (child process)');
    const verifyServerCpu0 = await serverCpuSeconds(connection);
    const checked = await runFloeVerify(floeConfig(o, connection, warehouse, 'streaming'));
    const verifyServerCpu = minus(await serverCpuSeconds(connection), verifyServerCpu0);
    const verifyRow: Row = { step: 'floe verify', seconds: checked.elapsedMs / 1000, count: checked.rows, unit: 'rows', cpuSeconds: checked.cpuMs / 1000, peakRssBytes: checked.peakRssBytes };
    verifyRow.ratio = rate(verifyRow)! / rate(snapRow)!;
    verifyRow.note = `vs the snapshot's rate; ${(checked.lakeBytesRead / 2 ** 20).toFixed(1)} MiB read from the lake (${checked.lakeFilesRead} files); ${checked.rowByRow} chunk(s) row by row${verifyServerCpu === undefined ? '' : `; server CPU ${verifyServerCpu.toFixed(1)} s (snapshot ${snapServerCpu?.toFixed(1) ?? '?'} s)`}`;
    rows.push(verifyRow);
    await decodeB();
    settleB();
    for (const r of [cdcRow, crashRow, lostRow]) r.ratio = rate(r)! / rate(rowB)!;

    rows.push(...(await peers.streaming(peerContext, from, o.changes, rate(cdcRow)!, rate(rowB)!)));

    // Last: the row decoders allocate hundreds of MB in this process (the captured events, five
    // rounds of each decoder), and whatever ran right after them ran slower — floe's first CDC run
    // took 4.8–6.1 CPU-seconds there against 3.7–3.9 in the runs after it (2026-12-04), as floe's
    // snapshot after the key-index micro-benchmarks did (bench/key-index-child.ts).
    log("row decoder: floe's decoder vs zongji on the captured workload events (in-process)");
    const decoder = await decoderBench(connection, DATABASE, from, to);
    const decoderRow = (step: string, perSecond: number, note: string, ratio?: number): Row => ({ step, seconds: decoder.changes / perSecond, count: decoder.changes, unit: 'changes', ratio, note });
    rows.splice(
      decoderRowsAt,
      0,
      decoderRow('row decoder: zongji', decoder.zongjiPerSecond, `${decoder.rowsEvents} captured rows events; median of 5 rounds, per CPU-second of the bench process`),
      decoderRow('row decoder: zongji + binlog-values', decoder.zongjiConvertedPerSecond, "floe's streaming path before its own decoder (and its fallback)"),
      decoderRow("row decoder: floe's", decoder.floePerSecond, `vs zongji (target ≥ 3); ${decoder.ratioToConverted.toFixed(2)}× zongji + binlog-values`, decoder.ratio),
    );

    const { jsonFile: _jsonFile, ...shown } = o;
    return {
      options: shown,
      machine,
      floe,
      rows,
      snapshot: { rowsPerSecond: rate(snapRow)!, ratioToCeiling: snapRow.ratio ?? 0, rowsPerCpuSecond: o.rows / (snap.cpuMs / 1000), peakRssBytes: snap.peakRssBytes, mainBusy: snap.mainBusy },
      partitioned,
      cdc: { eventsPerSecond: rate(cdcRow)!, ratioToCeiling: cdcRow.ratio ?? 0, eventsPerCpuSecond: o.changes / (cdc.cpuMs / 1000), peakRssBytes: cdc.peakRssBytes, mainBusy: cdc.mainBusy },
      cdcAfterCrash: { eventsPerSecond: rate(crashRow)!, ratioToCeiling: crashRow.ratio ?? 0, eventsPerCpuSecond: remaining / (crashRun.cpuMs / 1000), peakRssBytes: crashRun.peakRssBytes, mainBusy: crashRun.mainBusy },
      cdcWithoutState: { eventsPerSecond: rate(lostRow)!, ratioToCeiling: lostRow.ratio ?? 0, eventsPerCpuSecond: o.changes / (lostRun.cpuMs / 1000), peakRssBytes: lostRun.peakRssBytes, mainBusy: lostRun.mainBusy },
      decoder,
      verified,
      verify: { rowsPerSecond: rate(verifyRow)!, ratioToSnapshot: verifyRow.ratio, lakeBytesRead: checked.lakeBytesRead, cpuSeconds: checked.cpuMs / 1000, ...(verifyServerCpu === undefined ? {} : { serverCpuSeconds: verifyServerCpu }), ...(snapServerCpu === undefined ? {} : { snapshotServerCpuSeconds: snapServerCpu }) },
      keyIndex,
      diskKeyIndex,
      valueIndex,
      peers: peers.result,
    };
  } finally {
    if (o.keep) log(`kept: warehouse ${warehouse}${server ? `, MariaDB data under ${join(warehouseRoot, 'mariadb')}` : ''}`);
    await server?.stop().catch(() => {});
    if (!o.keep) await rm(warehouseRoot, { recursive: true, force: true });
  }
}

/** ", 2.31× Debezium" beside a ceiling ratio, when the peer was measured. */
function vsPeer(phase: PeerPhase | undefined): string {
  return phase ? `, ${phase.floeRatio.toFixed(2)}× Debezium` : '';
}

async function main(): Promise<void> {
  let o: BenchOptions;
  try {
    o = parseBenchOptions(process.argv.slice(2), process.env);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const result = await runBench(o);
  const out = [
    '',
    `floe benchmark: ${o.rows.toLocaleString('en-US')} rows, ${o.changes.toLocaleString('en-US')} changes`,
    `machine: ${machineLine(result.machine)}`,
    `floe: ${result.floe === 'build' ? 'the build (dist/)' : 'the sources through tsx'}`,
    '',
    formatTable(result.rows),
    '',
    `snapshot ${Math.round(result.snapshot.rowsPerSecond).toLocaleString('en-US')} rows/s (${result.snapshot.ratioToCeiling.toFixed(2)} of ceiling A${vsPeer(result.peers.debezium?.snapshot)}), ` +
      `CDC ${Math.round(result.cdc.eventsPerSecond).toLocaleString('en-US')} changes/s (${result.cdc.ratioToCeiling.toFixed(2)} of ceiling B${vsPeer(result.peers.debezium?.streaming)}), ` +
      `after a crash ${Math.round(result.cdcAfterCrash.eventsPerSecond).toLocaleString('en-US')} changes/s (${result.cdcAfterCrash.ratioToCeiling.toFixed(2)}), ` +
      `${result.cdcWithoutState ? `without its state directory ${Math.round(result.cdcWithoutState.eventsPerSecond).toLocaleString('en-US')} changes/s, ` : ''}` +
      `peak RSS ${Math.round(Math.max(result.snapshot.peakRssBytes, result.cdc.peakRssBytes, result.cdcAfterCrash.peakRssBytes, result.cdcWithoutState?.peakRssBytes ?? 0) / 2 ** 20)} MiB`,
    `verify ${Math.round(result.verify!.rowsPerSecond).toLocaleString('en-US')} rows/s (${result.verify!.ratioToSnapshot.toFixed(2)} of the snapshot's rate), ${(result.verify!.lakeBytesRead / 2 ** 20).toFixed(1)} MiB read from the lake, ${result.verify!.cpuSeconds.toFixed(1)} CPU-s` +
      (result.verify!.serverCpuSeconds === undefined ? '' : `; server CPU ${result.verify!.serverCpuSeconds.toFixed(1)} s (snapshot ${result.verify!.snapshotServerCpuSeconds?.toFixed(1) ?? '?'} s)`),
    formatDecoderFigures(result.decoder),
    ...(result.keyIndex.length > 0 ? [formatKeyIndex(result.keyIndex)] : []),
    ...result.diskKeyIndex.map((d) => formatStoreLine(d, 'disk key index (SQLite)')),
    ...(result.valueIndex && result.valueIndex.length > 0 ? [formatValueIndex(result.valueIndex)] : []),
    ...[peersSummary(result.peers)].filter((l): l is string => l !== undefined),
    ...result.partitioned.map(
      (p) => `partitioned by ${p.partitionBy}: ${Math.round(p.rowsPerSecond).toLocaleString('en-US')} rows/s (${p.ratioToUnpartitioned.toFixed(2)} of unpartitioned), ${p.dataFiles.toLocaleString('en-US')} data files, ${p.commits} commits, peak RSS ${Math.round(p.peakRssBytes / 2 ** 20)} MiB`,
    ),
    '',
  ];
  process.stdout.write(out.join('\n'));
  if (o.jsonFile) await writeFile(o.jsonFile, JSON.stringify(result, null, 2) + '\n');
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main().catch((e) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  });
}
