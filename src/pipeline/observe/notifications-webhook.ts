/**
 * The webhook notification sink: POSTs each notification as a JSON object to a configured URL.
 *
 * Body: the notification (`type`, `job`, `time` and the event's fields) plus `text`, a one-line
 * description (chat services such as Slack's incoming webhooks display a `text` field as is).
 *
 * Delivery never holds the pipeline back: `deliver` appends to a bounded in-memory queue and returns;
 * one background loop sends in order, each attempt with a timeout, retrying network errors, timeouts,
 * 408/429 and 5xx with exponential backoff. Other 4xx answers are not retried (the request itself is
 * wrong). A full queue drops its oldest entry, and `close` abandons what it cannot send in time —
 * both logged: notifications are at-most-once, best effort; the log sink keeps the full record.
 */
import type { Logger } from './logger.js';
import { describeEvent, type Notification, type NotificationSink } from './notifications.js';
import { errorMessage } from '../../util/errors.js';

export interface WebhookOptions {
  url: string;
  headers?: Record<string, string>;
  /** Attempts per notification (default 5). */
  maxAttempts?: number;
  /** Timeout of one attempt (default 5 s). */
  attemptTimeoutMs?: number;
  /** First retry delay; doubled per retry up to `maxBackoffMs` (defaults 500 ms, 30 s). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Queue bound (default 1000 notifications). */
  maxQueue?: number;
}

export class WebhookSink implements NotificationSink {
  /** Waiting to be sent; the one being sent is `inFlight`, not in here. */
  private readonly queue: Notification[] = [];
  private inFlight: Notification | undefined;
  private running: Promise<void> | undefined;
  private readonly shutdown = new AbortController();
  private readonly options: Required<Omit<WebhookOptions, 'headers'>> & { headers: Record<string, string> };

  constructor(
    options: WebhookOptions,
    private readonly logger: Logger,
  ) {
    this.options = {
      maxAttempts: 5,
      attemptTimeoutMs: 5_000,
      initialBackoffMs: 500,
      maxBackoffMs: 30_000,
      maxQueue: 1000,
      headers: {},
      ...options,
    };
  }

  /** The URL without credentials or query (which may carry a token), for log lines. */
  private get target(): string {
    try {
      const u = new URL(this.options.url);
      return `${u.protocol}//${u.host}${u.pathname}`;
    } catch {
      return '(invalid url)';
    }
  }

  deliver(n: Notification): void {
    if (this.shutdown.signal.aborted) return;
    if (this.queue.length >= this.options.maxQueue) {
      const dropped = this.queue.shift()!;
      this.logger.warn('webhook queue full; dropped the oldest notification', { webhook: this.target, notification: dropped.type });
    }
    this.queue.push(n);
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
  }

  async close(timeoutMs: number): Promise<void> {
    if (this.running) {
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      const outcome = await Promise.race([this.running.then(() => 'done' as const), expired]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        const pending = this.queue.length + (this.inFlight ? 1 : 0);
        this.shutdown.abort();
        this.logger.warn('webhook notifications not delivered before shutdown', { webhook: this.target, pending, timeoutMs });
        await this.running;
      }
    }
    this.shutdown.abort();
    this.queue.length = 0;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.shutdown.signal.aborted) {
      const n = this.queue.shift()!;
      this.inFlight = n;
      try {
        await this.send(n);
      } finally {
        this.inFlight = undefined;
      }
    }
  }

  private async send(n: Notification): Promise<void> {
    const body = JSON.stringify({ ...n, text: describeEvent(n) });
    let delay = this.options.initialBackoffMs;
    for (let attempt = 1; attempt <= this.options.maxAttempts; attempt++) {
      let problem: string;
      let retryable = true;
      try {
        const response = await fetch(this.options.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'floe', ...this.options.headers },
          body,
          signal: AbortSignal.any([this.shutdown.signal, AbortSignal.timeout(this.options.attemptTimeoutMs)]),
        });
        await response.arrayBuffer().catch(() => undefined); // release the connection
        if (response.ok) return;
        problem = `HTTP ${response.status}`;
        retryable = response.status === 408 || response.status === 429 || response.status >= 500;
      } catch (e) {
        if (this.shutdown.signal.aborted) return;
        problem = errorMessage(e);
      }
      if (!retryable || attempt === this.options.maxAttempts) {
        this.logger.error('webhook notification not delivered', {
          webhook: this.target,
          notification: n.type,
          attempts: attempt,
          problem,
          hint: retryable ? 'the endpoint kept failing; check that it is up' : 'the endpoint refused the request; check the URL and headers',
        });
        return;
      }
      this.logger.warn('webhook notification failed; retrying', { webhook: this.target, notification: n.type, attempt, problem, retryInMs: delay });
      await this.sleep(delay);
      if (this.shutdown.signal.aborted) return;
      delay = Math.min(delay * 2, this.options.maxBackoffMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const signal = this.shutdown.signal;
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
