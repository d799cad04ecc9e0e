/**
 * SIGINT / SIGTERM handling for long-running commands: the first signal aborts the pipeline's
 * AbortSignal — the runner commits its current checkpoint and returns, and the command exits 0 — and
 * a second one forces the exit with code 130 (the checkpoint in progress is abandoned; the next start
 * resumes from the last committed one, so nothing is lost, only repeated).
 */
import type { Logger } from '../pipeline/observe/logger.js';
import { ExitCode } from './exit-codes.js';

export interface StopSignals {
  readonly signal: AbortSignal;
  /** Removes the handlers (the command is over). */
  dispose(): void;
}

export function handleStopSignals(logger: Logger, onForcedExit: () => void = () => {}): StopSignals {
  const controller = new AbortController();
  let count = 0;
  const handler = (name: NodeJS.Signals): void => {
    count++;
    if (count === 1) {
      logger.warn(`${name} received: stopping after the current checkpoint is committed (send it again to exit at once)`, { signal: name });
      controller.abort(new Error(`${name} received`));
      return;
    }
    logger.error(`${name} received again: exiting now; the checkpoint in progress is abandoned and will be redone on the next start`, { signal: name });
    onForcedExit();
    process.exit(ExitCode.interrupted);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
