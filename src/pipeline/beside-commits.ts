/**
 * When work done beside the checkpoints on the same thread (maintenance's: a compaction prepared
 * while the writer commits, run-maintenance.ts) may run its next piece: not while a checkpoint
 * commits, since the piece's synchronous work would stretch the commit, and not when a checkpoint
 * is due before a piece as long as the last one would end, since the piece would hold back its start.
 * Right after a checkpoint committed is the longest spell there is before the next, so a piece that
 * waited for a commit goes on then, however long it is.
 */

/** How often a checkpoint due that has not started yet is waited for (the run loop starts it on its own timer). */
const MAX_WAITS_FOR_DUE = 3;

export interface CommitClock {
  /** The checkpoint committing now, if any. */
  inFlight(): Promise<void> | undefined;
  /** Milliseconds until the next checkpoint is due (Infinity: none will be, nothing is buffered). */
  untilDue(): number;
}

/** Resolves when a piece of about `pieceMs` may run beside the commits of `clock`. */
export async function waitBesideCommits(clock: CommitClock, pieceMs: number): Promise<void> {
  let afterCommit = false;
  for (let waitsForDue = 0; ; ) {
    for (let c = clock.inFlight(); c; c = clock.inFlight()) {
      afterCommit = true;
      await c;
    }
    // and the events and I/O callbacks waiting meanwhile go first (setImmediate runs after them)
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (clock.inFlight()) continue;
    if (afterCommit) return;
    const untilDue = clock.untilDue();
    if (untilDue >= pieceMs || waitsForDue === MAX_WAITS_FOR_DUE) return;
    waitsForDue++;
    await new Promise<void>((resolve) => setTimeout(resolve, Math.max(1, untilDue)));
  }
}
