/**
 * The run's phase notifications (notifications.ts) and progress bars: snapshot started, a table's
 * snapshot finished (once its last chunk is committed), snapshot finished, streaming started (once,
 * with its offset). Stop notifications are the caller's (pipeline-session.ts).
 */
import { serializeOffset, type BinlogOffset } from '../source/mysql/index.js';
import type { CheckpointReport } from './checkpoint.js';
import type { Notifier } from './observe/notifications.js';
import type { ProgressReporter } from './observe/progress.js';
import { snapshotComplete, type TableProgress } from './state.js';

export class RunNotifications {
  /** Tables whose snapshot runs in this process. */
  private readonly snapshotting = new Set<string>();
  private readonly announcedFinished = new Set<string>();
  private streamingAnnounced = false;

  constructor(
    private readonly notifications: Notifier,
    private readonly progress: ProgressReporter | undefined,
  ) {}

  /** A table's snapshot runs in this process (it has chunks still to copy). */
  snapshotPlanned(key: string): void {
    this.snapshotting.add(key);
  }

  snapshotStarted(): void {
    this.notifications.notify({ type: 'snapshot-started', tables: [...this.snapshotting] });
  }

  /** Every chunk is committed (the hand-over). */
  snapshotFinished(): void {
    if (this.snapshotting.size > 0) this.notifications.notify({ type: 'snapshot-finished', tables: [...this.snapshotting] });
    this.snapshotting.clear();
    this.progress?.stop();
  }

  /** After a checkpoint: the tables whose snapshot it completed. */
  committed(report: CheckpointReport): void {
    for (const c of report.committed) {
      if (!this.snapshotting.has(c.key) || this.announcedFinished.has(c.key)) continue;
      if (!snapshotDone(c.after)) continue;
      this.announcedFinished.add(c.key);
      this.progress?.tableFinished(c.key);
      this.notifications.notify({ type: 'table-snapshot-finished', table: c.key, rows: c.snapshotRows ?? 0 });
    }
  }

  streamingStarted(offset: BinlogOffset | undefined): void {
    if (this.streamingAnnounced) return;
    this.streamingAnnounced = true;
    this.notifications.notify({ type: 'streaming-started', offset: offset ? serializeOffset(offset) : '(server default)' });
  }
}

function snapshotDone(p: TableProgress): boolean {
  return p.phase === 'streaming' || (p.snapshot !== undefined && snapshotComplete(p.snapshot));
}
