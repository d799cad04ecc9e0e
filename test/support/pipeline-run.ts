/**
 * `floe run` inside the test process (runPipeline, its notifications recorded), and the waits a
 * test makes on it: for a notification, for streaming, and until the lake has caught up with the
 * server's binlog position now. Every wait fails at once, with the run's reason, when the run ends
 * first — a test never sits out a timeout for a pipeline that already failed.
 */
import type { FloeConfig } from '../../src/config/schema.js';
import type { Catalog } from '../../src/iceberg/metadata/catalog.js';
import { silentLogger, type Logger } from '../../src/pipeline/observe/logger.js';
import { FanOutNotifier, RecordingSink, type Notification } from '../../src/pipeline/observe/notifications.js';
import { runPipeline, type RunResult } from '../../src/pipeline/runner.js';
import type { MysqlConnectionConfig } from '../../src/source/mysql/client.js';
import { catchUpTables } from '../e2e/support/catch-up.js';
import { sharedMysqlConfig } from './shared-mysql.js';

export interface PipelineRunning {
  readonly result: Promise<RunResult>;
  readonly sink: RecordingSink;
  /** Aborts the run's signal (a clean stop) and returns its result. */
  stop(): Promise<RunResult>;
}

export function startPipeline(config: FloeConfig, options: { mode?: 'run' | 'snapshot'; logger?: Logger } = {}): PipelineRunning {
  const controller = new AbortController();
  const sink = new RecordingSink();
  const notifications = new FanOutNotifier(config.job.id, [sink], silentLogger);
  const result = runPipeline(config, { mode: options.mode ?? 'run', signal: controller.signal, notifications, logger: options.logger ?? silentLogger });
  return {
    result,
    sink,
    stop: async () => {
      controller.abort();
      return result;
    },
  };
}

/** A check for `waitForCatchUp` and the polls below: throws once `result` has settled. */
function endedCheck(result: Promise<RunResult>): () => void {
  let ended: RunResult | undefined;
  void result.then((r) => (ended = r));
  return () => {
    if (ended) throw new Error(`the pipeline ended: ${ended.reason} ${String(ended.error)}`);
  };
}

/** Until a notification `test` accepts has been received (90 s at most). */
export async function untilNotified(run: PipelineRunning, test: (n: Notification) => boolean): Promise<void> {
  const check = endedCheck(run.result);
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (run.sink.received.some(test)) return;
    check();
    if (Date.now() > deadline) throw new Error(`no matching notification within 90 s; received: ${run.sink.received.map((n) => n.type).join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Until the run reports that it streams (its snapshot, if any, handed over). */
export async function untilStreaming(run: PipelineRunning): Promise<void> {
  await Promise.race([
    run.sink.waitFor('streaming-started'),
    run.result.then((res) => {
      throw new Error(`the pipeline ended before streaming: ${res.reason} ${String(res.error)}`);
    }),
  ]);
}

/** Until every table `db`.`tables` of job `job` has committed the server's binlog position now (60 s at most). */
export async function catchUp(
  run: Pick<PipelineRunning, 'result'>,
  lake: { catalog: Catalog; job: string; db: string; tables: readonly string[] },
  server: MysqlConnectionConfig = sharedMysqlConfig(),
): Promise<void> {
  await catchUpTables(lake, { server, check: endedCheck(run.result) });
}
