/**
 * One pipeline run as the commands `run`, `snapshot` and `demo` do it: notifier (log + webhook),
 * metrics endpoint when `metrics.port` is set, progress bars on a terminal, the runner call, the stop
 * notification from the runner's result, and the exit code.
 */
import type { FloeConfig } from '../config/schema.js';
import type { Logger } from '../pipeline/observe/logger.js';
import { PrometheusMetrics } from '../pipeline/observe/metrics.js';
import { startMetricsServer, type MetricsServer } from '../pipeline/observe/metrics-server.js';
import type { NotificationSink, Notifier } from '../pipeline/observe/notifications.js';
import { createNotifier } from '../pipeline/observe/notifications-setup.js';
import { TerminalProgress, type ProgressReporter } from '../pipeline/observe/progress.js';
import { errorMessage, FloeError, isFloeError } from '../util/errors.js';
import type { TerminalRouter } from './command-context.js';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';
import { runPipeline, type RunResult } from '../pipeline/runner.js';
import type { ParquetEncoderFactory } from '../iceberg/parquet/encoder.js';
import { sharedWorkerEncoderPool } from '../iceberg/parquet/worker-encoder.js';
import { workerKeyColumnReader } from '../iceberg/keyindex/worker-key-column.js';
import { ScheduledVerification } from './scheduled-verify.js';

/**
 * Parquet files are encoded in worker threads, so that reading MySQL and building Arrow batches on
 * the main thread overlaps with parquet-wasm's encoding. FLOE_PARQUET_THREADS sets how many (default:
 * the available cores, at most 4); 0 encodes on the main thread.
 */
function parquetEncoder(): ParquetEncoderFactory | undefined {
  const text = process.env.FLOE_PARQUET_THREADS;
  const threads = text === undefined || text === '' ? undefined : Number(text);
  if (threads !== undefined && (!Number.isInteger(threads) || threads < 0)) throw new FloeError('cli', 'config', `FLOE_PARQUET_THREADS: expected a whole number of threads (0 = encode on the main thread), found ${JSON.stringify(text)}`);
  if (threads === 0) return undefined;
  const pool = sharedWorkerEncoderPool(threads === undefined ? undefined : { threads });
  // the threads load their modules while the run connects and prepares its tables
  pool.prewarm();
  return pool.factory;
}

export interface SessionOptions {
  mode: 'run' | 'snapshot';
  signal: AbortSignal;
  logger: Logger;
  /** Show progress bars (only when `terminal` is a TTY). */
  progress: boolean;
  terminal: TerminalRouter;
  /** More notification sinks (the demo records notifications to follow the phases). */
  extraSinks?: NotificationSink[];
  /** The configuration file: `floe run`'s scheduled verification (verify.intervalMs) runs `floe verify` on it. */
  configPath?: string;
}

export interface SessionOutcome {
  result: RunResult;
  exitCode: ExitCodeValue;
}

export async function runPipelineSession(config: FloeConfig, options: SessionOptions): Promise<SessionOutcome> {
  const { logger } = options;
  const notifier: Notifier = createNotifier(config, logger, { extraSinks: options.extraSinks });
  let metricsServer: MetricsServer | undefined;
  let metrics: PrometheusMetrics | undefined;
  let progress: TerminalProgress | undefined;
  try {
    if (config.metrics.port !== undefined) {
      metrics = new PrometheusMetrics();
      metricsServer = await startMetricsServer(metrics.registry, { port: config.metrics.port });
      logger.info(`metrics on http://0.0.0.0:${metricsServer.port}/metrics`, { metricsPort: metricsServer.port });
    }
    if (options.progress && options.terminal.isTTY) {
      const bars = new TerminalProgress(process.stderr);
      progress = bars;
      options.terminal.routeTo((text) => bars.writeLine(text));
    }
    let result: RunResult;
    const verification = options.mode === 'run' && options.configPath ? new ScheduledVerification(config, options.configPath, logger, notifier, metrics) : undefined;
    if (config.verify.intervalMs !== undefined && !verification) logger.warn('verify.intervalMs is set, but floe was not started with a configuration file for the verification to read; no verification is scheduled');
    verification?.start();
    try {
      result = await runWithRestarts(config, options, { notifier, metrics, progress });
    } finally {
      verification?.stop();
      progress?.stop();
      options.terminal.routeTo(undefined);
    }
    const exitCode = reportOutcome(result, notifier, logger);
    return { result, exitCode };
  } finally {
    await notifier.close(10_000);
    await metricsServer?.close();
  }
}

/**
 * Runs the pipeline, and again after a connection-level failure of the MySQL source (the server
 * restarted or failed over, the network dropped a connection): a new run resumes from the lake's
 * stamps exactly as a new process would, so nothing is lost or doubled (docs/design.md, "state in
 * the lake"). The binlog reader already reconnects by itself; this covers everything else — snapshot
 * chunk reads, control connections, a reader that gave up. Only errors the source marks retryable
 * restart; anything else (bad credentials, a purged binlog, a DDL stop) ends the run as before.
 */
async function runWithRestarts(
  config: FloeConfig,
  options: SessionOptions,
  deps: { notifier: Notifier; metrics: PrometheusMetrics | undefined; progress: TerminalProgress | undefined },
): Promise<RunResult> {
  const policy = config.source?.restart ?? { maxAttempts: 10, initialDelayMs: 1000, maxDelayMs: 30_000 };
  let attempts = 0;
  for (;;) {
    const startedAt = Date.now();
    let result: RunResult;
    try {
      result = await runPipeline(config, {
        mode: options.mode,
        signal: options.signal,
        notifications: deps.notifier,
        metrics: deps.metrics,
        progress: deps.progress as ProgressReporter | undefined,
        logger: options.logger,
        parquetEncoder: parquetEncoder(),
        keyColumnReader: workerKeyColumnReader,
      });
    } catch (e) {
      result = { reason: 'failed', error: e };
    }
    if (result.reason !== 'failed' || !isFloeError(result.error, 'source') || !result.error.retryable || options.signal.aborted) return result;
    // a run that went on for a while recovered: the count starts again with the next failure
    if (Date.now() - startedAt > RECOVERED_AFTER_MS) attempts = 0;
    if (attempts >= policy.maxAttempts) {
      if (policy.maxAttempts === 0) return result;
      // the source's own error, named once, with how long floe kept trying
      const e = result.error;
      return { reason: 'failed', error: new FloeError(e.subsystem, 'source', `${e.detail}; gave up after ${attempts} restart(s) of the pipeline in a row (source.restart.maxAttempts)`, { cause: e }) };
    }
    attempts++;
    const delay = Math.min(policy.initialDelayMs * 2 ** (attempts - 1), policy.maxDelayMs);
    options.logger.warn(`${result.error.message}; restarting the pipeline from the lake in ${delay} ms (restart ${attempts}/${policy.maxAttempts})`, { restart: attempts, delayMs: delay });
    if (!(await sleepUnlessAborted(delay, options.signal))) return { reason: 'stopped' };
  }
}

/** A run that lasted this long before failing counts as recovered (its restarts are forgotten). */
const RECOVERED_AFTER_MS = 5 * 60_000;

/** false when `signal` aborted during the wait. */
function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function reportOutcome(result: RunResult, notifier: Notifier, logger: Logger): ExitCodeValue {
  switch (result.reason) {
    case 'snapshot-complete':
      notifier.notify({ type: 'stopped', reason: 'snapshot-complete' });
      return ExitCode.ok;
    case 'stopped':
      notifier.notify({ type: 'stopped', reason: 'signal' });
      return ExitCode.ok;
    case 'ddl-stop': {
      const ddl = result.ddl ?? { statement: '(unknown statement)', position: '(unknown position)' };
      notifier.notify({ type: 'ddl-stop', statement: ddl.statement, position: ddl.position });
      return ExitCode.ddlStop;
    }
    case 'failed': {
      notifier.notify({ type: 'failed', error: errorMessage(result.error) });
      if (result.error instanceof Error) logger.error('pipeline failed', { err: result.error });
      return isFloeError(result.error, 'config') ? ExitCode.usage : ExitCode.failure;
    }
  }
}
