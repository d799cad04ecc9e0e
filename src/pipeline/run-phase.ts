/**
 * A phase event of the source stream in a run: the snapshot starts; a catch-up pass over the binlog
 * (a table still in its snapshot changed while floe was stopped) begins and ends; the hand-over from
 * the snapshot to the binlog; streaming. Each is committed where the run's guarantees need it, and
 * `floe snapshot` (mode 'snapshot') ends at the hand-over.
 */
import type { PhaseEvent } from '../source/mysql/index.js';
import { serializeOffset } from '../source/mysql/index.js';
import type { Checkpointer } from './checkpoint.js';
import type { Logger } from './observe/logger.js';
import type { RunResult } from './run-end.js';
import type { RunNotifications } from './run-notifications.js';
import { snapshotComplete } from './state.js';

/** What of the run a phase event acts on. */
export interface PhaseRun {
  readonly mode: 'run' | 'snapshot';
  readonly checkpointer: Checkpointer;
  readonly logger: Logger;
  readonly notes: RunNotifications;
  commit(reason: string, options?: { flushIdle?: boolean }): Promise<void>;
  closeSource(): Promise<void>;
}

export async function takePhase(e: PhaseEvent, run: PhaseRun): Promise<RunResult | undefined> {
  const { checkpointer, notes } = run;
  if (e.phase === 'snapshot') {
    notes.snapshotStarted();
    return undefined;
  }
  if (e.phase === 'catch-up') {
    run.logger.warn('a table still in its snapshot changed in MySQL while floe was stopped: reading the binlog up to now first (its DDL is applied there), then the remaining chunks', { until: e.offset ? serializeOffset(e.offset) : undefined });
    checkpointer.catchingUp = true;
    return undefined;
  }
  if (e.phase === 'caught-up') {
    // everything of the finished chunks' keys up to e.offset is routed: commit them standing there
    if (e.offset) checkpointer.advance(e.offset);
    await run.commit('caught up before the remaining chunks', { flushIdle: true });
    checkpointer.catchingUp = false;
    return undefined;
  }
  if (e.phase === 'handover') {
    // Every chunk is done: the snapshot tables switch to streaming; their offset is the point the
    // binlog is read from (every chunk's rows are at or past it; the hand-over filter drops what
    // a chunk already holds).
    if (e.offset) checkpointer.advance(e.offset);
    for (const t of checkpointer.tables.values()) {
      const p = t.working;
      if (p?.phase === 'snapshot' && p.snapshot && snapshotComplete(p.snapshot)) t.working = { ...p, phase: 'streaming' };
    }
    await run.commit('hand-over');
    notes.snapshotFinished();
    if (run.mode === 'snapshot') return finishSnapshotMode(run);
    notes.streamingStarted(e.offset);
    return undefined;
  }
  // 'streaming': directly (nothing to snapshot), or once the hand-over filter is passed
  if (run.mode === 'snapshot') {
    await run.commit('snapshot complete', { flushIdle: true });
    return finishSnapshotMode(run);
  }
  notes.streamingStarted(e.offset ?? checkpointer.sourcePosition);
  return undefined;
}

async function finishSnapshotMode(run: PhaseRun): Promise<RunResult> {
  await run.closeSource();
  return { reason: 'snapshot-complete' };
}
