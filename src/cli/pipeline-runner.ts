/**
 * The pipeline runner as the CLI calls it (src/pipeline/runner.ts implements it).
 */
import type { FloeConfig } from '../config/schema.js';
import type { Logger } from '../pipeline/logger.js';
import type { Metrics } from '../pipeline/metrics.js';
import type { Notifier } from '../pipeline/notifications.js';
import type { ProgressReporter } from '../pipeline/progress.js';
import { FloeError } from '../util/errors.js';

export interface RunnerOptions {
  mode: 'run' | 'snapshot';
  signal: AbortSignal;
  notifications: Notifier;
  metrics?: Metrics;
  progress?: ProgressReporter;
  logger: Logger;
}

export interface RunnerResult {
  reason: 'snapshot-complete' | 'stopped' | 'ddl-stop' | 'failed';
  ddl?: { statement: string; position: string };
  error?: unknown;
}

export type RunPipeline = (config: FloeConfig, options: RunnerOptions) => Promise<RunnerResult>;

const RUNNER_MODULE = '../pipeline/runner.js';

export async function loadRunner(): Promise<RunPipeline> {
  let mod: { runPipeline?: RunPipeline };
  try {
    mod = (await import(RUNNER_MODULE)) as { runPipeline?: RunPipeline };
  } catch (e) {
    throw new FloeError('cli', 'unsupported', 'pipeline runner not available', { cause: e });
  }
  if (typeof mod.runPipeline !== 'function') throw new FloeError('cli', 'unsupported', 'pipeline runner not available');
  return mod.runPipeline;
}
