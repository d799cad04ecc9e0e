/**
 * When a checkpoint is due by the clock: the checkpoint interval, counted from the START of the
 * checkpoint before, so that `commit.intervalMs` is the time between two commits, as a user reads it.
 * Counted from the end instead, every cycle would be an interval plus a commit: at 200 ms with commits of 140 ms,
 * 2.8 commits a second instead of 5, and every change would wait that much longer. Changes go on being
 * routed while a checkpoint commits (checkpoint.ts), so a commit longer than the interval is followed
 * by the next at once, holding what came during it: under load the commits grow with their cost
 * instead of piling up. And the early checkpoint when the stream
 * catches up (`commit.whenCaughtUp`): after at least an interval of binlog changes that came without
 * a pause, the source's first quiet spell (no event for CAUGHT_UP_QUIET_MS) is checkpointed at once —
 * a backlog drained (a restart after downtime, a bulk update) is in the lake as soon as floe has read
 * it, not up to an interval later. At most one such checkpoint per interval of changes, and never in
 * the snapshot phase (its chunks come in bursts; a pause between them is not the end of anything).
 * A run that starts streaming drains what the binlog gathered while floe was down: its first stretch
 * is a backlog however short, and its first quiet spell is checkpointed at once — after a crash, the
 * changes since the last commit are in the lake as soon as they are read again, not an interval after
 * the start (10 s by default).
 *
 * The checkpoint coordinator (checkpoint.ts) owns the counts of what is buffered; this clock only
 * says how long a wait may last and why a silence made a checkpoint due.
 */
import type { SourceEvent } from '../source/mysql/index.js';

/** What the runner tells `sourceEvent`: a binlog event, or one of the snapshot phase (rows, plan, chunk progress, phase switch). */
export type SourceEventKind = 'binlog' | 'snapshot';

/**
 * What a source event is to the cadence: binlog events make a stretch of changes; the snapshot
 * phase's never do. What a run that starts streaming begins with — the plan of a table with no
 * chunks left, the switch to streaming (no snapshot to hand over from) — is neither: it comes before
 * the binlog is read, and taken for a snapshot event it would end every restart's start backlog
 * before its first change: the backlog after a crash would wait for the interval (10 s by default)
 * instead of being committed as soon as it is read.
 */
export function cadenceEventOf(e: SourceEvent): SourceEventKind | undefined {
  if (e.kind === 'transaction' || e.kind === 'ddl') return 'binlog';
  if (e.kind === 'progress') return e.chunksTotal === undefined ? 'binlog' : 'snapshot';
  if (e.kind === 'snapshot-plan' && e.chunks.length === 0) return undefined;
  if (e.kind === 'phase' && e.phase === 'streaming' && e.offset === undefined) return undefined;
  return 'snapshot';
}

/**
 * No event for this long ends a stretch of changes (commit.whenCaughtUp). Within a backlog the next
 * transaction is already waiting (the binlog worker reads ahead of the pipeline), so the thread
 * sitting idle this long for it means the server has nothing more to send. The runner counts the
 * thread's idle time, not the wall time of the wait (idle-wait.ts): callbacks that ran meanwhile —
 * a key index loading, a commit's steps — are not the source's silence.
 */
export const CAUGHT_UP_QUIET_MS = 25;

export class CheckpointCadence {
  /** When the last checkpoint started: the interval counts from there. */
  private lastCheckpointMs: number;
  /** When the current stretch of binlog changes without a quiet spell began (undefined: none now). */
  private activeSince: number | undefined;
  /** No quiet spell and no snapshot event yet: the stretch under way is the backlog of the start. */
  private startBacklog = true;

  constructor(
    private readonly options: { readonly intervalMs: number; readonly whenCaughtUp: boolean },
    private readonly now: () => number,
  ) {
    this.lastCheckpointMs = now();
  }

  /** A checkpoint started at `atMs` (on this clock): the next interval counts from there. */
  checkpointStarted(atMs: number): void {
    this.lastCheckpointMs = atMs;
  }

  /** Whether an interval passed since the last checkpoint started. */
  get intervalPassed(): boolean {
    return this.now() - this.lastCheckpointMs >= this.options.intervalMs;
  }

  /** With changes buffered: the milliseconds until a checkpoint is due (0: due already). */
  msUntilDue(): number {
    const left = Math.max(0, this.lastCheckpointMs + this.options.intervalMs - this.now());
    // after a backlog: a wait this long for the next event means the stream caught up
    return this.backlogged() ? Math.min(left, CAUGHT_UP_QUIET_MS) : left;
  }

  /** See Checkpointer.sourceEvent. */
  sourceEvent(event: SourceEventKind, quietMs: number): void {
    // the wait for the first change of the run is the source's start (connecting, the server
    // finding the offset in its binlog): no quiet spell after changes, so not the backlog's end
    if (event === 'snapshot' || (quietMs >= CAUGHT_UP_QUIET_MS && this.activeSince !== undefined)) this.startBacklog = false;
    if (event === 'snapshot') this.activeSince = undefined;
    else if (this.activeSince === undefined || quietMs >= CAUGHT_UP_QUIET_MS) this.activeSince = this.now();
  }

  /** See Checkpointer.dueAfterSilence. */
  dueAfterSilence(quietMs: number): string | undefined {
    const backlogged = this.backlogged();
    if (backlogged && quietMs < CAUGHT_UP_QUIET_MS && !this.intervalPassed) return undefined; // a busy thread, not a quiet source
    const why = backlogged && quietMs >= CAUGHT_UP_QUIET_MS ? `caught up (no event for ${CAUGHT_UP_QUIET_MS} ms after ${((this.now() - this.activeSince!) / 1000).toFixed(1)} s of changes)` : 'interval, no event since';
    if (quietMs >= CAUGHT_UP_QUIET_MS) {
      this.activeSince = undefined;
      this.startBacklog = false;
    }
    return why;
  }

  /** Whether the changes have come without a quiet spell for at least an interval, or since the start (commit.whenCaughtUp). */
  private backlogged(): boolean {
    if (!this.options.whenCaughtUp || this.activeSince === undefined) return false;
    return this.startBacklog || this.now() - this.activeSince >= this.options.intervalMs;
  }
}
