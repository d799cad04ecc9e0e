/**
 * The runner's read-ahead (src/pipeline/read-ahead.ts): while a commit runs, transactions and
 * snapshot chunks are taken from the source and held in order; nothing is taken past any other event
 * (a DDL switches the source's mapping when it is handled), nor past the bound; a failure of the
 * source reaches the next() that hands it out, a failure of the work reaches the caller. With a
 * route (the runner writing transactions into the next checkpoint), what it handles is not held.
 */
import { readFile } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ReadAhead, TIMED_OUT } from '../../src/pipeline/read-ahead.js';
import type { SourceEvent } from '../../src/source/mysql/index.js';

const tx = (n: number, changes = 1): SourceEvent =>
  ({ kind: 'transaction', position: { file: 'binlog.000001', pos: n }, offset: { file: 'binlog.000001', pos: n }, timestampMs: 0, changes: Array.from({ length: changes }, () => ({})) }) as unknown as SourceEvent;
const ddl: SourceEvent = { kind: 'ddl', statement: 'ALTER TABLE t ADD c INT' } as unknown as SourceEvent;

/** A source of `events` that records how many were taken (then never ends, as a binlog stream). */
function source(events: (SourceEvent | Error)[]): { iterator: AsyncIterator<SourceEvent>; taken: () => number } {
  let taken = 0;
  async function* gen(): AsyncGenerator<SourceEvent> {
    for (const e of events) {
      taken++;
      if (e instanceof Error) throw e;
      yield e;
    }
    await new Promise(() => {});
  }
  return { iterator: gen(), taken: () => taken };
}

/** Work that ends when `release` is called. */
function work(): { promise: Promise<void>; release: () => void; fail: (e: Error) => void } {
  let release!: () => void;
  let fail!: (e: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    release = resolve;
    fail = reject;
  });
  return { promise, release, fail };
}

const settle = () => new Promise((r) => setTimeout(r, 20));
const positions = async (a: ReadAhead, n: number) => {
  const out: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const r = await a.next();
    out.push(r.done ? 'done' : r.value.kind === 'transaction' ? (r.value.position as unknown as { pos: number }).pos : r.value.kind);
  }
  return out;
};

describe('ReadAhead', () => {
  it('holds the transactions taken while the work runs and hands them out first, in order', async () => {
    const s = source([tx(1), tx(2), tx(3), tx(4)]);
    const a = new ReadAhead(s.iterator);
    const w = work();
    const during = a.during(w.promise);
    await settle();
    expect(s.taken()).toBe(4);
    expect(a.heldCount).toBe(4);
    w.release();
    await during;
    expect(await positions(a, 4)).toEqual([1, 2, 3, 4]);
  });

  it('takes nothing past a DDL until it is handled', async () => {
    const s = source([tx(1), ddl, tx(3)]);
    const a = new ReadAhead(s.iterator);
    const w = work();
    const during = a.during(w.promise);
    await settle();
    expect(s.taken()).toBe(2);
    w.release();
    await during;
    expect(await positions(a, 3)).toEqual([1, 'ddl', 3]);
  });

  it('stops at the bound of changes held', async () => {
    const s = source([tx(1, 5), tx(2, 5), tx(3, 5)]);
    const a = new ReadAhead(s.iterator, 8);
    const w = work();
    const during = a.during(w.promise);
    await settle();
    expect(s.taken(), 'the event that passes the bound is held, nothing after it').toBe(2);
    w.release();
    await during;
    expect(await positions(a, 3)).toEqual([1, 2, 3]);
  });

  it('a next() still pending when the work ends is the next event', async () => {
    let push!: (e: SourceEvent) => void;
    const iterator: AsyncIterator<SourceEvent> = { next: () => new Promise((r) => (push = (e) => r({ done: false, value: e }))) };
    const a = new ReadAhead(iterator);
    const w = work();
    const during = a.during(w.promise);
    await settle();
    w.release();
    await during;
    expect(a.heldCount).toBe(0);
    const next = a.next();
    push(tx(7));
    expect(await next).toEqual({ done: false, value: tx(7) });
  });

  it("a source failure is raised by the next() that reaches it; the work's failure by during()", async () => {
    const s = source([tx(1), new Error('binlog gone')]);
    const a = new ReadAhead(s.iterator);
    const w = work();
    const during = a.during(w.promise);
    await settle();
    w.fail(new Error('commit failed'));
    await expect(during).rejects.toThrow('commit failed');
    expect(await positions(a, 1)).toEqual([1]);
    await expect(a.next()).rejects.toThrow('binlog gone');
  });

  it('with a route: events it handles are not held; from the first it declines on, every event is held, in order', async () => {
    const s = source([tx(1), tx(2), tx(3), tx(4), tx(5)]);
    const a = new ReadAhead(s.iterator);
    const routed: number[] = [];
    const route = async (e: SourceEvent): Promise<boolean> => {
      const pos = (e as unknown as { position: { pos: number } }).position.pos;
      if (pos === 3) return false;
      routed.push(pos);
      return true;
    };
    const w = work();
    const during = a.during(w.promise, route);
    await settle();
    expect(routed, 'tx 4 and 5 come after the declined tx 3: held, not routed').toEqual([1, 2]);
    expect(a.heldCount).toBe(3);
    w.release();
    await during;
    expect(await positions(a, 3)).toEqual([3, 4, 5]);
  });

  it("with a route: its failure is raised once the work has ended (the commit is never left running)", async () => {
    const s = source([tx(1), tx(2)]);
    const a = new ReadAhead(s.iterator);
    const w = work();
    let workEnded = false;
    const during = a.during(
      w.promise.then(() => (workEnded = true)),
      async () => {
        throw new Error('write refused');
      },
    );
    await settle();
    expect(workEnded).toBe(false);
    let settled = false;
    void during.catch(() => (settled = true));
    await settle();
    expect(settled, 'during() waits for the work').toBe(false);
    w.release();
    await expect(during).rejects.toThrow('write refused');
    expect(workEnded).toBe(true);
  });

  it('nextWithin: events ready come before the time runs out; without one it times out and keeps the read, whose event is the next handed out', async () => {
    // a source whose events come when pushed (a binlog stream in a silence)
    const arrivals: ((e: SourceEvent) => void)[] = [];
    const later: Promise<SourceEvent>[] = [];
    for (let i = 0; i < 3; i++) later.push(new Promise((r) => arrivals.push(r)));
    let taken = 0;
    async function* gen(): AsyncGenerator<SourceEvent> {
      yield tx(1);
      for (const e of later) {
        taken++;
        yield await e;
      }
    }
    const a = new ReadAhead(gen());
    const first = await a.nextWithin(0);
    expect(first !== TIMED_OUT && !first.done && first.value.kind).toBe('transaction');
    expect(await a.nextWithin(30), 'nothing came').toBe(TIMED_OUT);
    expect(await a.nextWithin(30), 'nothing came again').toBe(TIMED_OUT);
    expect(taken, 'one read of the source pending, not one per wait').toBe(1);
    arrivals[0]!(tx(2));
    arrivals[1]!(tx(3));
    expect(await positions(a, 1)).toEqual([2]);
    const txPos = (r: IteratorResult<SourceEvent> | typeof TIMED_OUT) => (r !== TIMED_OUT && !r.done && r.value.kind === 'transaction' ? (r.value.position as unknown as { pos: number }).pos : r);
    expect(txPos(await a.nextWithin(1000))).toBe(3);
    // held events (taken during a commit) come out first, at once
    const w = work();
    const during = a.during(w.promise);
    arrivals[2]!(tx(4));
    await settle();
    w.release();
    await during;
    expect(txPos(await a.nextWithin(0))).toBe(4);
  });

  it("lets the work's I/O run while the source has events ready (it does not read on to the bound first)", async () => {
    // Events a source already holds resolve as microtasks; a commit waits on I/O callbacks. Reading
    // on through ready events without yielding held a commit back until the bound (a 1 s commit
    // interval saw its table reload take 0.95 s in the bench).
    const ready = 20_000;
    const s = source(Array.from({ length: ready }, (_, i) => tx(i + 1)));
    const a = new ReadAhead(s.iterator, ready + 1);
    const io = readFile(new URL(import.meta.url));
    await a.during(io);
    expect(a.heldCount, 'events taken before the work\'s file read completed').toBeLessThan(ready / 4);
    expect(await positions(a, 3)).toEqual([1, 2, 3]);
  });

  it('what the route handled while the work runs is not kept alive by the wait for the work (no reaction per event on it)', async () => {
    // a Promise.race with the work per event left a reaction on the work's promise holding each
    // race's result — every routed transaction with its rows — until the work ended
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const n = 200;
    const events = Array.from({ length: n }, (_, i) => tx(i + 1, 10));
    const collected = new Set<number>();
    const registry = new FinalizationRegistry<number>((i) => collected.add(i));
    events.forEach((e, i) => registry.register(e, i));
    // a source that lets go of each event as it hands it out; then nothing but the read-ahead may hold them
    const queue = events.splice(0);
    const iterator: AsyncIterator<SourceEvent> = {
      next: async () => (queue.length > 0 ? { value: queue.shift()!, done: false } : new Promise(() => {})),
    };
    const a = new ReadAhead(iterator, 1_000_000);
    const w = work();
    let routed = 0;
    const during = a.during(w.promise, async () => {
      routed++;
      return true;
    });
    for (let i = 0; i < 50 && routed < n; i++) await settle();
    expect(routed).toBe(n);
    for (let i = 0; i < 5 && collected.size < n - 1; i++) {
      gc();
      await settle();
    }
    // the work still runs: every routed event is garbage (the last one handed out may still sit in
    // the read-ahead's suspended frame)
    expect(collected.size).toBeGreaterThanOrEqual(n - 1);
    w.release();
    await during;
  });

  it("nextWithin lets I/O run while the source has events ready (the run loop does not starve a background load)", async () => {
    const ready = 200_000;
    const s = source(Array.from({ length: ready }, (_, i) => tx(i + 1)));
    const a = new ReadAhead(s.iterator);
    let read = false;
    void readFile(new URL(import.meta.url)).then(() => (read = true));
    let taken = 0;
    // as the runner takes events: each with a little work, its changes routed
    while (!read && taken < ready) {
      const r = await a.nextWithin(undefined);
      if (r === TIMED_OUT || r.done) break;
      taken++;
      for (let spin = performance.now(); performance.now() - spin < 0.01; );
    }
    expect(read, 'the file read completed while events were still being taken').toBe(true);
    expect(taken).toBeLessThan(ready);
  });
});
