/**
 * One pipeline run as the commands `run`, `snapshot` and `demo` do it: notifier (log + webhook),
 * metrics endpoint when `metrics.port` is set, progress bars on a terminal, the runner call, the stop
 * notification from the runner's result, and the exit code.
 */
import type { FloeConfig } from '../config/schema.js';
import type { Logger } from '../pipeline/logger.js';
import { PrometheusMetrics } from '../pipeline/metrics.js';
import { startMetricsServer, type MetricsServer } from '../pipeline/metrics-server.js';
import type { NotificationSink, Notifier } from '../pipeline/notifications.js';
import { createNotifier } from '../pipeline/notifications-setup.js';
import { TerminalProgress, type ProgressReporter } from '../pipeline/progress.js';
import { errorMessage, FloeError, isFloeError } from '../util/errors.js';
import type { TerminalRouter } from './command-context.js';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';
import { runPipeline, type RunResult } from '../pipeline/runner.js';
import type { ParquetEncoderFactory } from '../iceberg/parquet/encoder.js';
import { sharedWorkerEncoderPool } from '../iceberg/parquet/worker-encoder.js';

/**
 * Parquet files are encoded in worker threads, so that reading MySQL and building Arrow batches on
 * the main thread overlaps with parquet-wasm's encoding. FLOE_PARQUET_THREADS sets how many (default:
 * the available cores, at most 4); 0 encodes on the main thread.
 */
function parquetEncoder(): ParquetEncoderFactory | undefined {
  const text = process.env.FLOE_PARQUET_THREADS;
  if (text === undefined || text === '') return sharedWorkerEncoderPool().factory;
  const threads = Number(text);
  if (!Number.isInteger(threads) || threads < 0) throw new FloeError('cli', 'config', `FLOE_PARQUET_THREADS: expected a whole number of threads (0 = encode on the main thread), found ${JSON.stringify(text)}`);
  return threads === 0 ? undefined : sharedWorkerEncoderPool({ threads }).factory;
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
    try {
      result = await runPipeline(config, {
        mode: options.mode,
        signal: options.signal,
        notifications: notifier,
        metrics,
        progress: progress as ProgressReporter | undefined,
        logger,
        parquetEncoder: parquetEncoder(),
      });
    } catch (e) {
      result = { reason: 'failed', error: e };
    } finally {
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
