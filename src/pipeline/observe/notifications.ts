/**
 * Pipeline notifications: the few events an operator wants pushed to them rather than found in the
 * logs — phase switches, schema changes, stops (Debezium's "notifications" channel
 * plays the same role).
 *
 * The runner calls `notifier.notify(event)`; that returns at once. Each sink gets every event:
 * - the log sink writes one line per event (level by severity);
 * - the webhook sink (notifications-webhook.ts) POSTs it as JSON from a bounded queue in the
 *   background, with retries, so a slow or dead endpoint never holds the pipeline back.
 * `close(timeoutMs)` gives pending deliveries a bounded time to finish at shutdown.
 */
import type { Logger } from './logger.js';

/** Every notification the pipeline emits. Tables are `db.table` source names; positions are text. */
export type PipelineEvent =
  | { type: 'snapshot-started'; tables: string[] }
  | { type: 'table-snapshot-finished'; table: string; rows: number }
  | { type: 'snapshot-finished'; tables: string[] }
  /** `offset` is the serialized binlog offset streaming starts from (`floe.source-offset` form). */
  | { type: 'streaming-started'; offset: string }
  | { type: 'schema-change-applied'; table: string; statement: string; position: string; changes: string[] }
  | { type: 'schema-change-refused'; table: string; statement: string; position: string; reason: string }
  /** The pipeline stopped because it was asked to (signal), after committing its current checkpoint. */
  | { type: 'stopped'; reason: 'signal' | 'snapshot-complete' }
  /** schemaChanges: stop — everything before the DDL is committed; `position` is its GTID and/or file:pos. */
  | { type: 'ddl-stop'; table?: string; statement: string; position: string }
  | { type: 'failed'; error: string }
  /** A verification `floe run` scheduled (verify.intervalMs) finished: the lake equals MySQL, differs, or could not all be verified. */
  | { type: 'verify-finished'; status: 'equal' | 'differs' | 'unverified'; tables: { table: string; status: string; differingChunks: number; differingRows: number }[] };

export type PipelineEventType = PipelineEvent['type'];

const STOP_EVENTS: ReadonlySet<PipelineEventType> = new Set(['stopped', 'ddl-stop', 'failed']);

/** An event as delivered to sinks: stamped with the job and the time it happened. */
export type Notification = PipelineEvent & { job: string; time: string };

/**
 * What the runner calls. `notify` never blocks and never throws.
 *
 * Who emits what: the runner emits phase switches and schema changes as they happen; the stop events
 * (`stopped`, `ddl-stop`, `failed`) are emitted by whoever called `runPipeline`, from its result (the
 * CLI does). A notifier delivers only the first stop event it is given, so a runner that also reports
 * its own stop does not produce a duplicate.
 */
export interface Notifier {
  notify(event: PipelineEvent): void;
  /** Waits up to `timeoutMs` for queued deliveries (webhook), then gives up on the rest (logged). */
  close(timeoutMs?: number): Promise<void>;
}

export interface NotificationSink {
  deliver(notification: Notification): void;
  close?(timeoutMs: number): Promise<void>;
}

export class FanOutNotifier implements Notifier {
  private closed = false;
  private stopReported = false;
  constructor(
    private readonly job: string,
    private readonly sinks: readonly NotificationSink[],
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  notify(event: PipelineEvent): void {
    if (this.closed) {
      this.logger.warn('notification after the notifier was closed; not delivered', { notification: event.type });
      return;
    }
    if (STOP_EVENTS.has(event.type)) {
      if (this.stopReported) return;
      this.stopReported = true;
    }
    const notification = { ...event, job: this.job, time: this.now().toISOString() } as Notification;
    for (const sink of this.sinks) {
      try {
        sink.deliver(notification);
      } catch (e) {
        this.logger.error('notification sink failed', { notification: event.type, err: e });
      }
    }
  }

  async close(timeoutMs = 10_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.sinks.map((s) => s.close?.(timeoutMs)));
  }
}

/** Writes each notification to the log: failures and DDL stops as errors/warnings, the rest as info. */
export class LogSink implements NotificationSink {
  constructor(private readonly logger: Logger) {}

  deliver(n: Notification): void {
    const { type, job: _job, time: _time, ...fields } = n;
    const message = describeEvent(n);
    const log = { notification: type, ...fields };
    if (type === 'failed' || type === 'schema-change-refused') this.logger.error(message, log);
    else if (type === 'ddl-stop' || (n.type === 'verify-finished' && n.status !== 'equal')) this.logger.warn(message, log);
    else this.logger.info(message, log);
  }
}

/** A one-line human description (log message, webhook `text` field for chat integrations). */
export function describeEvent(e: PipelineEvent): string {
  switch (e.type) {
    case 'snapshot-started':
      return `snapshot started for ${e.tables.length} table${e.tables.length === 1 ? '' : 's'}`;
    case 'table-snapshot-finished':
      return `snapshot of ${e.table} finished (${e.rows} rows)`;
    case 'snapshot-finished':
      return `snapshot finished for ${e.tables.length} table${e.tables.length === 1 ? '' : 's'}`;
    case 'streaming-started':
      return `binlog streaming started at ${e.offset}`;
    case 'schema-change-applied':
      return `schema change applied to ${e.table}: ${e.changes.join('; ')}`;
    case 'schema-change-refused':
      return `schema change refused on ${e.table}: ${e.reason}`;
    case 'stopped':
      return e.reason === 'signal' ? 'stopped cleanly after committing the current checkpoint' : 'snapshot complete; stopped';
    case 'ddl-stop':
      return `stopped before a DDL at ${e.position} (schemaChanges: stop); review it and start floe again: ${e.statement}`;
    case 'failed':
      return `pipeline failed: ${e.error}`;
    case 'verify-finished': {
      const differing = e.tables.filter((t) => t.differingChunks > 0).map((t) => `${t.table} (${t.differingRows} rows in ${t.differingChunks} chunks)`);
      if (e.status === 'equal') return `verification: the lake equals MySQL (${e.tables.length} table${e.tables.length === 1 ? '' : 's'})`;
      if (e.status === 'differs') return `verification: the lake differs from MySQL in ${differing.join(', ')}; floe verify --repair re-copies those chunks`;
      return `verification: not every table could be verified (${e.tables.filter((t) => t.status !== 'equal').map((t) => `${t.table}: ${t.status}`).join(', ')})`;
    }
  }
}

/** A notifier that only remembers events (for callers that want to observe them, e.g. the demo). */
export class RecordingSink implements NotificationSink {
  readonly received: Notification[] = [];
  private waiters: { type: PipelineEventType; resolve: (n: Notification) => void }[] = [];

  deliver(n: Notification): void {
    this.received.push(n);
    const ready = this.waiters.filter((w) => w.type === n.type);
    this.waiters = this.waiters.filter((w) => w.type !== n.type);
    for (const w of ready) w.resolve(n);
  }

  /** Resolves with the first notification of `type` (already received or future). */
  waitFor(type: PipelineEventType): Promise<Notification> {
    const seen = this.received.find((n) => n.type === type);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ type, resolve }));
  }
}
