/**
 * Runs floe (bench/floe-child.ts) as a child process and measures it: wall time of `runPipeline`
 * as the child sees it, CPU time of the whole child process (every thread), peak RSS.
 *
 * - `runFloeSnapshot`: mode `snapshot`, until runPipeline returns 'snapshot-complete'.
 * - `runFloeUntil`: mode `run`; the parent checks `done()` (the lake's committed offset against the
 *   server's binlog position) after each commit the child reports and every `pollMs`, and once it
 *   holds asks the child to stop. The time is the end of the commit that made it hold (as the child
 *   timed it), not the moment the parent noticed; CPU and RSS are taken at the stop (the child then
 *   commits what it holds and exits).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ChildMessage, ChildUsage } from './floe-child.js';

export interface FloeRun extends ChildUsage {
  reason: string;
  /** Pipeline notifications with the time since runPipeline started. */
  notifications: { event: string; atMs: number }[];
  /** The end of each commit of a table, in ms since runPipeline started. */
  commits: { table: string; atMs: number }[];
}

const CHILD = fileURLToPath(new URL('./floe-child.ts', import.meta.url));

interface Running {
  child: ChildProcess;
  started: Promise<void>;
  usage: Promise<ChildUsage>;
  done: Promise<FloeRun>;
  commits: FloeRun['commits'];
  /** Resolves at the next commit the child reports. */
  nextCommit: () => Promise<void>;
}

function start(mode: 'snapshot' | 'run', config: unknown, env: Record<string, string> = {}): Running {
  const child = fork(CHILD, [mode], {
    // FLOE_BENCH_NODE_ARGS: extra Node options for floe's process, e.g. "--cpu-prof --cpu-prof-dir=prof"
    execArgv: ['--import', 'tsx', ...(process.env.FLOE_BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)],
    env: { ...process.env, ...env, FLOE_BENCH_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const notifications: FloeRun['notifications'] = [];
  const commits: FloeRun['commits'] = [];
  let commitWaiters: (() => void)[] = [];
  let onStarted!: () => void;
  let onUsage!: (u: ChildUsage) => void;
  const started = new Promise<void>((r) => (onStarted = r));
  const usage = new Promise<ChildUsage>((r) => (onUsage = r));
  const done = new Promise<FloeRun>((resolve, reject) => {
    let result: FloeRun | undefined;
    child.on('message', (m: ChildMessage) => {
      switch (m.type) {
        case 'started':
          onStarted();
          break;
        case 'notification':
          notifications.push({ event: m.event, atMs: m.atMs });
          break;
        case 'commit': {
          commits.push({ table: m.table, atMs: m.atMs });
          const waiters = commitWaiters;
          commitWaiters = [];
          for (const w of waiters) w();
          break;
        }
        case 'usage':
          onUsage(m);
          break;
        case 'done':
          result = { reason: m.reason, elapsedMs: m.elapsedMs, cpuMs: m.cpuMs, peakRssBytes: m.peakRssBytes, mainBusy: m.mainBusy, notifications, commits };
          if (m.reason === 'failed') reject(new Error(`bench: floe (${mode}) failed: ${m.error ?? 'no message'}`));
          break;
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (result) resolve(result);
      else reject(new Error(`bench: floe child (${mode}) exited with ${signal ?? code} before reporting a result`));
    });
  });
  const nextCommit = () => new Promise<void>((r) => commitWaiters.push(r));
  return { child, started, usage, done, commits, nextCommit };
}

export async function runFloeSnapshot(config: unknown): Promise<FloeRun> {
  const r = start('snapshot', config);
  const run = await r.done;
  if (run.reason !== 'snapshot-complete') throw new Error(`bench: floe snapshot ended with ${run.reason}, expected snapshot-complete`);
  return run;
}

export interface UntilOptions {
  pollMs?: number;
  /** Give up (and kill floe) when `done` has not held after this long. */
  timeoutMs: number;
}

/**
 * Runs floe in `run` mode until `done()` holds. Its time is the end of the commit that made it hold,
 * as the child timed it: `done()` is checked as soon as the child reports a commit and every
 * `pollMs` besides, and a table's commits are at least `commit.intervalMs` apart (counted from the
 * end of the one before; the bench's interval is longer than `pollMs`), so the first commit reported
 * after the start of the last check that did not hold is the one. CPU and peak RSS are taken when the
 * parent stops the child (a few milliseconds later, with nothing left to do).
 */
export async function runFloeUntil(config: unknown, done: () => Promise<boolean>, options: UntilOptions): Promise<FloeRun> {
  const r = start('run', config);
  let failure: unknown;
  r.done.catch((e) => (failure = e));
  await Promise.race([r.started, r.done]);
  const deadline = performance.now() + options.timeoutMs;
  // commits reported when the last check that did not hold began (undefined: no such check yet)
  let reportedBeforeMiss: number | undefined;
  for (;;) {
    if (failure) throw failure;
    const reported = r.commits.length;
    if (await done()) break;
    reportedBeforeMiss = reported;
    if (performance.now() > deadline) {
      r.child.kill('SIGKILL');
      throw new Error(`bench: floe did not commit the workload within ${options.timeoutMs / 1000} s`);
    }
    await waitAny(options.pollMs ?? 100, r.nextCommit());
  }
  // the commit that made it hold has landed; its report may still be on its way
  while (reportedBeforeMiss !== undefined && r.commits.length <= reportedBeforeMiss && !failure) await waitAny(1000, r.nextCommit());
  const reachedAtMs = reportedBeforeMiss === undefined ? undefined : r.commits[reportedBeforeMiss]?.atMs;
  r.child.send({ type: 'stop' });
  const usage = await r.usage;
  const final = await r.done;
  if (final.reason !== 'stopped') throw new Error(`bench: floe run ended with ${final.reason}, expected stopped`);
  return { ...final, ...usage, elapsedMs: reachedAtMs ?? usage.elapsedMs };
}

/**
 * Runs floe in `run` mode with `failpoints` armed (FLOE_FAILPOINTS, src/util/failpoints.ts) until
 * one kills it — a crash at a chosen step, as SIGKILL leaves it: no clean stop, nothing saved.
 */
export async function runFloeUntilKilled(config: unknown, failpoints: string, timeoutMs: number): Promise<void> {
  const r = start('run', config, { FLOE_FAILPOINTS: failpoints });
  const exited = new Promise<string>((resolve) => r.child.on('exit', (code, signal) => resolve(signal ?? `code ${code}`)));
  r.done.catch(() => {}); // it dies before reporting a result: that is the point
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    r.child.kill('SIGKILL');
  }, timeoutMs);
  const how = await exited;
  clearTimeout(timer);
  if (timedOut) throw new Error(`bench: floe was to be killed by failpoint ${failpoints} within ${timeoutMs / 1000} s, and was not`);
  if (how !== 'SIGKILL') throw new Error(`bench: floe was to be killed by failpoint ${failpoints}, but it exited with ${how}`);
}

/** Waits for the first of the promises or `ms`, whichever comes first (a rejection counts as settled). */
async function waitAny(ms: number, ...events: Promise<unknown>[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([...events.map((e) => e.then(() => {}, () => {})), new Promise<void>((res) => (timer = setTimeout(res, ms)))]);
  clearTimeout(timer);
}
