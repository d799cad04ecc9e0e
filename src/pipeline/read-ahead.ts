/**
 * Reading the source on while a checkpoint commits, so that the binlog is not left unread while the
 * lake commits: a commit (data files encoded in the Parquet workers, manifests, metadata, the
 * catalog) and the maintenance after it leave the main thread waiting; meanwhile the next events
 * are taken from the source — which decodes a transaction's rows when it is taken
 * (binlog/raw-transactions.ts) — and either handed to `route` (the runner writes a transaction into
 * the next checkpoint when it can) or held, in order, to be handled once the commit is done.
 *
 * Only events that change nothing the source itself depends on are read past: transactions,
 * snapshot chunks and progress marks. Any other event (a DDL, a phase switch, the end) is held as
 * the last one, and nothing after it is taken until it is handled: the runner's handling of a DDL
 * switches the source's table mapping (ddl-handler.ts), which decodes every row after it.
 *
 * Nothing held is routed before the commit ends, so no checkpoint ever holds part of it; a stop or a
 * failure drops what is held — its offsets were never advanced, and a restart reads it again. What
 * `route` handles during the commit goes to the next checkpoint (checkpoint.ts takes the committing
 * checkpoint's changes out before the first event is taken).
 * Memory: at most `maxChanges` row changes (or chunk rows) held, plus the one event that passes it;
 * what `route` writes is bounded by the checkpoint's own bound (`commit.maxBufferedChanges`).
 */
import { setImmediate as yieldToIo } from 'node:timers/promises';
import type { SourceEvent } from '../source/mysql/index.js';

/**
 * Row changes (or snapshot rows) held at most while a commit runs. Measured (`npm run bench`, 200,000
 * rows, 600,000 changes): at 65,536 the CDC process's peak RSS was 648–736 MiB against 562–635
 * without read-ahead and 574–617 at 8,192 (held changes outlive the young generation); no speed
 * difference showed through the machine's run-to-run noise at any of the three.
 */
const READ_AHEAD_CHANGES = 8_192;

/** What `nextWithin` gives when no event came in time. */
export const TIMED_OUT = Symbol('timed out');

/** How long `nextWithin` hands out events the source holds before it lets I/O callbacks run. */
const YIELD_EVERY_MS = 10;

export class ReadAhead implements AsyncIterator<SourceEvent> {
  private readonly held: IteratorResult<SourceEvent>[] = [];
  /** A `next()` of the source still pending when the work ended: the next event, when it comes. */
  private pending: Promise<IteratorResult<SourceEvent>> | undefined;
  /** When `nextWithin` last let I/O callbacks run. */
  private lastYield = performance.now();

  constructor(
    private readonly source: AsyncIterator<SourceEvent>,
    private readonly maxChanges = READ_AHEAD_CHANGES,
  ) {}

  /** Events read ahead, handed out first; then the source's own. */
  next(): Promise<IteratorResult<SourceEvent>> {
    const held = this.held.shift();
    if (held) return Promise.resolve(held);
    const pending = this.pending;
    this.pending = undefined;
    return pending ?? this.source.next();
  }

  /**
   * `next()`, or TIMED_OUT when no event came within `ms` (undefined: no limit): the source's read
   * then stays pending and the next call hands out its event (nothing is skipped or reordered).
   */
  async nextWithin(ms: number | undefined): Promise<IteratorResult<SourceEvent> | typeof TIMED_OUT> {
    // Events the source holds already resolve as microtasks: a loop through them never lets the
    // event loop's I/O callbacks run — a key index loading in the background (its file reads), a
    // commit's steps — until the source runs dry, and with the pipeline's thread the bottleneck it
    // seldom does (a 2M-row index's load took 1–1.5 s of a CDC stream instead of a tenth of that,
    // and the first commit waited for it). So every few milliseconds the loop yields to them.
    if (performance.now() - this.lastYield >= YIELD_EVERY_MS) {
      await yieldToIo();
      this.lastYield = performance.now();
    }
    if (ms === undefined) return this.next();
    const held = this.held.shift();
    if (held) return held;
    const pending = (this.pending ??= this.take());
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), ms)));
    try {
      // an event already read resolves first: its reaction runs before any timer fires
      const r = await Promise.race([pending, timeout]);
      if (r !== TIMED_OUT) this.pending = undefined;
      return r;
    } catch (e) {
      this.pending = undefined;
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Events taken from the source but not handed out yet. */
  get heldCount(): number {
    return this.held.length;
  }

  /** Whether row changes (or snapshot rows) are among the events held: work is waiting. */
  get holdsChanges(): boolean {
    return this.held.some((r) => sizeOf(r) > 0);
  }

  /**
   * Awaits `work`, taking events from the source meanwhile (see the module header). Resolves or
   * rejects as `work` does; a read-ahead failure is not raised here but by the `next()` that reaches it.
   *
   * `route`, when given, handles each event taken as it comes — the runner writes transactions into
   * the next checkpoint while this one commits (checkpoint.ts) — and answers whether it did; the
   * first event it declines is held, and so is every event after it (order).
   */
  async during(work: Promise<unknown>, route?: (event: SourceEvent) => Promise<boolean>): Promise<void> {
    let finished = false;
    // One waiter on the work at a time, not a Promise.race with it per event: every race leaves a
    // reaction on the work's promise holding that race's result — each event taken, with all its
    // decoded rows — until the work ends (nodejs/node#17469, as stream-stop.ts); a commit that
    // waited 3 s for a key index kept 300,000 routed changes reachable, and every scavenge copied them.
    let wake: ((r: 'ended') => void) | undefined;
    const end = (): void => {
      finished = true;
      wake?.('ended');
    };
    work.then(end, end);
    let changes = 0;
    let routing = route !== undefined && this.held.length === 0;
    let routeFailure: { error: unknown } | undefined;
    while (!finished && changes < this.maxChanges && this.readable()) {
      const pending = (this.pending ??= this.take());
      // a failed read stays pending for the next() that hands it out; the work is awaited either way
      const r = await new Promise<{ result: IteratorResult<SourceEvent> } | 'failed' | 'ended'>((resolve) => {
        wake = resolve;
        pending.then(
          (result) => resolve({ result }),
          () => resolve('failed'),
        );
      });
      wake = undefined;
      if (r === 'ended' || r === 'failed') break;
      this.pending = undefined;
      if (routing && !r.result.done) {
        try {
          if (await route!(r.result.value)) {
            await yieldToIo();
            continue;
          }
        } catch (e) {
          // raised once the work has ended: a commit is never left running behind the caller
          routeFailure = { error: e };
          break;
        }
      }
      routing = false;
      this.held.push(r.result);
      changes += sizeOf(r.result);
      // Let the commit's I/O callbacks run (setImmediate comes after the poll phase): events the
      // source already holds resolve as microtasks, and reading on through them alone would hold
      // the commit back until the limit — the commit would wait for the read-ahead, not overlap it.
      await yieldToIo();
    }
    await work;
    if (routeFailure) throw routeFailure.error;
  }

  /** The last event held lets reading go on past it. */
  private readable(): boolean {
    const last = this.held[this.held.length - 1];
    return last === undefined || (!last.done && passable(last.value));
  }

  private take(): Promise<IteratorResult<SourceEvent>> {
    const p = this.source.next();
    // a failure here is raised by the next() that hands this event out; until then nobody awaits it
    p.catch(() => {});
    return p;
  }
}

function passable(e: SourceEvent): boolean {
  return e.kind === 'transaction' || e.kind === 'snapshot-rows' || e.kind === 'progress';
}

function sizeOf(r: IteratorResult<SourceEvent>): number {
  if (r.done) return 0;
  const e = r.value;
  if (e.kind === 'transaction') return e.changes.length;
  if (e.kind === 'snapshot-rows') return e.rows.length;
  return 0;
}
