/**
 * floe as the benchmark measures it: one child process running `runPipeline` (src/pipeline/runner.ts)
 * with the configuration the parent passes in FLOE_BENCH_CONFIG (JSON, validated by floe's own config
 * schema), in the mode given as the first argument (`snapshot` | `run`). A child process, so that its
 * CPU time (all threads: main, Parquet encoder workers, libuv) and peak RSS are floe's alone.
 *
 * Messages to the parent (IPC):
 *   {type:'started', floe}                        just before runPipeline is called; floe: 'build' or 'sources' (bench/floe-build.ts)
 *   {type:'notification', event, atMs}            each pipeline notification (phase switches)
 *   {type:'usage', elapsedMs, cpuMs, peakRssBytes, mainBusy} when the parent asks to stop (before the final commit)
 *   {type:'commit', table, seconds, atMs, endMs}  each commit of a table: its duration, and when it ended (ms since runPipeline started; endMs: Date.now())
 *   {type:'maintained', table, endMs, expiryMs}   each maintenance round of a table (its health measured; endMs: Date.now() then; expiryMs: the time its expiry's cutoff counts back from)
 *   {type:'done', reason, error?, elapsedMs, cpuMs, peakRssBytes, mainBusy}
 * From the parent: {type:'stop'} aborts the run (it commits its checkpoint and returns 'stopped').
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as ConfigSchema from '../src/config/schema.js';
import type * as Logger from '../src/pipeline/observe/logger.js';
import type * as Notifications from '../src/pipeline/observe/notifications.js';
import type { Notification } from '../src/pipeline/observe/notifications.js';
import type * as Runner from '../src/pipeline/runner.js';
import type * as WorkerEncoder from '../src/iceberg/parquet/worker-encoder.js';
import type * as WorkerKeyColumn from '../src/iceberg/keyindex/worker-key-column.js';
import type * as Errors from '../src/util/errors.js';
import type { Metrics } from '../src/pipeline/observe/metrics.js';
import { floeModules } from './floe-build.js';

// floe's modules from its build when that is current (bench/floe-build.ts), else from the sources;
// all from the same tree, so that module state (the shared encoder pool) is one
const modules = floeModules();
const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(modules.dir, path)).href)) as T;
const { configSchema } = await load<typeof ConfigSchema>('config/schema.js');
const { createLogger } = await load<typeof Logger>('pipeline/observe/logger.js');
const { FanOutNotifier, LogSink } = await load<typeof Notifications>('pipeline/observe/notifications.js');
const { runPipeline } = await load<typeof Runner>('pipeline/runner.js');
const { sharedWorkerEncoderPool } = await load<typeof WorkerEncoder>('iceberg/parquet/worker-encoder.js');
const { workerKeyColumnReader } = await load<typeof WorkerKeyColumn>('iceberg/keyindex/worker-key-column.js');
const { errorMessage } = await load<typeof Errors>('util/errors.js');

/**
 * The runner's metrics hook, reduced to what the benchmarks use: every commit's duration and the
 * moment it ended (bench/floe-process.ts times CDC to it; bench/soak.ts charts the durations).
 */
function commitReporter(sinceStartMs: () => number): Metrics {
  return {
    rowsWritten: () => {},
    binlogEvents: () => {},
    readerLag: () => {},
    tableLag: () => {},
    commitDuration: (table, seconds) => send({ type: 'commit', table, seconds, atMs: sinceStartMs(), endMs: Date.now() }),
    filesWritten: () => {},
    tableHealth: (table, health) => send({ type: 'maintained', table, endMs: Date.now(), ...(health.lastExpiry ? { expiryMs: Date.parse(health.lastExpiry) } : {}) }),
  };
}

export interface ChildUsage {
  elapsedMs: number;
  cpuMs: number;
  peakRssBytes: number;
  /**
   * The main thread's event-loop utilization over the run (0–1, `performance.eventLoopUtilization`):
   * the share of the time it was running code rather than waiting — near 1, the main thread is the
   * bottleneck and nothing overlapped with its waits can make the run faster.
   */
  mainBusy: number;
}

export type ChildMessage =
  | { type: 'started'; floe: 'build' | 'sources' }
  | { type: 'notification'; event: string; atMs: number }
  | ({ type: 'usage' } & ChildUsage)
  | { type: 'commit'; table: string; seconds: number; atMs: number; endMs: number }
  | { type: 'maintained'; table: string; endMs: number; expiryMs?: number }
  | ({ type: 'done'; reason: string; error?: string } & ChildUsage);

/** Peak resident set size of this process (VmHWM; getrusage's maxrss where /proc is missing). */
function peakRssBytes(): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS * 1024;
}

/** FLOE_BENCH_THREADS=1: CPU seconds per thread of this process (Linux /proc), to see where the time goes. */
function threadTimes(): string {
  const byName = new Map<string, number>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
      const key = tid === String(process.pid) ? 'main' : name;
      byName.set(key, (byName.get(key) ?? 0) + ticks / 100);
    }
  } catch {
    return 'threads: /proc not available\n';
  }
  return `threads: ${[...byName].sort((a, b) => b[1] - a[1]).map(([n, s]) => `${n} ${s.toFixed(1)} s`).join(', ')}\n`;
}

function send(m: ChildMessage): void {
  process.send?.(m);
}

async function main(): Promise<void> {
  const mode = process.argv[2];
  if (mode !== 'snapshot' && mode !== 'run') throw new Error(`floe-child: mode must be snapshot or run, found ${mode}`);
  const config = configSchema.parse(JSON.parse(process.env.FLOE_BENCH_CONFIG ?? '{}'));
  const logger = createLogger({ level: (process.env.FLOE_BENCH_LOG_LEVEL as 'warn' | undefined) ?? 'warn', format: 'json' });
  const controller = new AbortController();
  let t0 = 0;
  let cpu0: NodeJS.CpuUsage = process.cpuUsage();
  let elu0 = performance.eventLoopUtilization();
  const usage = (): ChildUsage => {
    const d = process.cpuUsage(cpu0);
    return { elapsedMs: performance.now() - t0, cpuMs: (d.user + d.system) / 1000, peakRssBytes: peakRssBytes(), mainBusy: performance.eventLoopUtilization(elu0).utilization };
  };
  process.on('message', (m: { type?: string }) => {
    if (m?.type === 'stop' && !controller.signal.aborted) {
      send({ type: 'usage', ...usage() });
      controller.abort();
    }
  });
  const notifications = new FanOutNotifier(config.job.id, [new LogSink(logger), { deliver: (n: Notification) => send({ type: 'notification', event: n.type, atMs: performance.now() - t0 }) }], logger);
  // FLOE_BENCH_MEMLOG=1: the process's memory every 2 s on stderr (where a peak RSS comes from)
  if (process.env.FLOE_BENCH_MEMLOG) {
    const mib = (n: number) => Math.round(n / 2 ** 20);
    setInterval(() => {
      const m = process.memoryUsage();
      process.stderr.write(`memory: rss ${mib(m.rss)} MiB, heap ${mib(m.heapUsed)}/${mib(m.heapTotal)} MiB, external ${mib(m.external)} MiB, array buffers ${mib(m.arrayBuffers)} MiB\n`);
    }, 2000).unref();
  }
  send({ type: 'started', floe: modules.what });
  t0 = performance.now();
  cpu0 = process.cpuUsage();
  elu0 = performance.eventLoopUtilization();
  // FLOE_BENCH_ENCODER: 'workers' (default, as the CLI runs) or 'main' (parquet-wasm on the main thread)
  const threads = process.env.FLOE_BENCH_ENCODER_THREADS ? Number(process.env.FLOE_BENCH_ENCODER_THREADS) : undefined;
  const pool = process.env.FLOE_BENCH_ENCODER === 'main' ? undefined : sharedWorkerEncoderPool({ threads });
  // as the floe command does (cli/pipeline-session.ts): the threads load while the run connects,
  // instead of each starting when a checkpoint first needs it
  pool?.prewarm();
  const parquetEncoder = pool?.factory;
  // FLOE_BENCH_KEY_TABLE: 'worker' (default, as the CLI runs) or 'main' (key indexes built on the main thread, the changes waiting)
  const keyColumnReader = process.env.FLOE_BENCH_KEY_TABLE === 'main' ? undefined : workerKeyColumnReader;
  const metrics = commitReporter(() => performance.now() - t0);
  const result = await runPipeline(config, { mode, signal: controller.signal, notifications, logger, parquetEncoder, keyColumnReader, metrics });
  const final = usage();
  if (process.env.FLOE_BENCH_THREADS) process.stderr.write(threadTimes());
  await notifications.close(1000);
  send({ type: 'done', reason: result.reason, error: result.error === undefined ? undefined : errorMessage(result.error), ...final });
  process.disconnect?.();
}

main().catch((e) => {
  send({ type: 'done', reason: 'failed', error: errorMessage(e), elapsedMs: 0, cpuMs: 0, peakRssBytes: peakRssBytes(), mainBusy: 0 });
  process.exitCode = 1;
  process.disconnect?.();
});
