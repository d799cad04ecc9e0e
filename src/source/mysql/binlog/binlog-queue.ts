/**
 * A bounded hand-off between a push-based producer (zongji's event callback) and a pull-based
 * async iterator. When `highWater` items wait, `onFull` pauses the producer; when the consumer has
 * taken the queue down to half, `onDrain` resumes it. Memory stays bounded by the pause latency.
 * A failure is delivered after the items queued before it; `return()` (a `break` in `for await`)
 * calls `onCancel`.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private head = 0;
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  private ended = false;
  private error: unknown;
  private full = false;

  constructor(
    private readonly highWater: number,
    private readonly onFull: () => void,
    private readonly onDrain: () => void,
    private readonly onCancel: () => void,
  ) {}

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    if (this.ended) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve({ value: item, done: false });
      return;
    }
    this.items.push(item);
    if (!this.full && this.size >= this.highWater) {
      this.full = true;
      this.onFull();
    }
  }

  fail(error: unknown): void {
    if (this.ended) return;
    this.error = error;
    this.ended = true;
    this.settleWaiter();
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.settleWaiter();
  }

  private settleWaiter(): void {
    if (!this.waiter || this.size > 0) return;
    const w = this.waiter;
    this.waiter = undefined;
    if (this.error !== undefined) w.reject(this.error);
    else w.resolve({ value: undefined, done: true });
  }

  private take(): T {
    const item = this.items[this.head] as T;
    this.items[this.head] = undefined as T;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items.splice(0, this.head);
      this.head = 0;
    }
    if (this.full && this.size <= this.highWater / 2) {
      this.full = false;
      this.onDrain();
    }
    return item;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.size > 0) return Promise.resolve({ value: this.take(), done: false });
        if (this.ended) return this.error !== undefined ? Promise.reject(this.error) : Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => {
          this.waiter = { resolve, reject };
        });
      },
      return: () => {
        this.ended = true;
        this.items.length = 0;
        this.head = 0;
        this.onCancel();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
