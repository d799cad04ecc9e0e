/**
 * A `ParquetEncoderFactory` (encoder.ts) that encodes in a pool of `worker_threads`: the main thread
 * keeps reading the source, converting values and building Arrow batches while parquet-wasm
 * (dictionary, compression, page encoding — the expensive part of a snapshot's CPU) runs on
 * other cores. Each file is bound to one worker for its whole life (its arrow-rs writer lives in that
 * worker's wasm memory); files go to the worker with the fewest open files. A file is bound at its
 * first message, not when it is created: a file of one batch (most files of a table partitioned by
 * day or hour) is one entry of an `encode` message at `finish` (the files finished in one turn of
 * the event loop share a message), and a file aborted before its first batch costs no message.
 *
 * Why a Node-only module under src/iceberg: docs/design.md §1 keeps Node-only modules in io/ and cli/. This
 * file (and its thread, worker-encoder-thread.ts) are the one exception in iceberg/, contained behind
 * the runtime-neutral `ParquetEncoderFactory` seam: nothing in iceberg/ imports them; the caller that
 * wires a pipeline (cli/pipeline) passes `workerParquetEncoder` as `encoderFactory`, and every writer
 * works unchanged with the default single-thread `wasmParquetEncoder`.
 *
 * Pipelining and memory: `write` returns as soon as the batch is posted while fewer than
 * `maxInFlight` batches of that file are unacknowledged (default 2), so building the next batch
 * overlaps encoding the previous one; at the limit it waits. So at most `maxInFlight` IPC batches per
 * file are in transit, plus the row group in progress in the worker. Batches and file bytes are
 * transferred, never copied. A file bound for the local file system (`writeTo`) is written by its
 * worker as well (worker-encoder-thread.ts), off the main thread.
 *
 * Idle workers do not keep the process alive (they are `unref`ed while nothing is pending).
 *
 * Running from TypeScript sources (tsx, vitest): a worker does not inherit the loader hooks of its
 * parent, so for a `.ts` thread module the worker first registers tsx (`tsx/esm/api`) and then
 * imports the thread module; a build (`dist/…js`) loads the `.js` thread module directly.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startModuleWorker, threadModuleBeside } from '../../io/module-worker.js';
import { FloeError } from '../../util/errors.js';
import type { ParquetEncoder, ParquetEncoderFactory, ParquetEncoderOptions } from './encoder.js';
import type { EncodeRequest, FromWorker, ToWorker, WireEncoderOptions } from './worker-encoder-thread.js';

const SUBSYSTEM = 'iceberg.parquet';

export interface WorkerEncoderPoolOptions {
  /** Worker threads (default: available cores, at most 4). */
  threads?: number;
  /** Unacknowledged batches per file before `write` waits (default 2). */
  maxInFlight?: number;
}

interface PendingFile {
  onWritten(bytesEmitted: number, chunksEmitted: number): void;
  onFinished(chunks: Uint8Array[], wrote: boolean): void;
  onAborted(): void;
  onFailed(error: Error): void;
}

class EncoderThread {
  readonly worker: Worker;
  readonly files = new Map<number, PendingFile>();
  /** Requests waiting for an answer; the worker is ref'ed while there are any. */
  private outstanding = 0;
  /** Whole-file encodes not posted yet: they go as one message (`flushEncodes`). */
  private encodes: EncodeRequest[] = [];
  private flushScheduled = false;
  dead: Error | undefined;

  constructor(
    threadModule: URL,
    private readonly onDeath: (t: EncoderThread) => void,
  ) {
    this.worker = startModuleWorker(threadModule);
    this.worker.on('message', (m: FromWorker) => this.receive(m));
    this.worker.on('error', (e) => this.die(e));
    this.worker.on('exit', (code) => this.die(new Error(`Parquet encoder worker exited with code ${code}`)));
    // after the listeners: adding a 'message' listener refs the worker again (Node's MessagePort
    // semantics), and a thread started ahead of its first file must not keep the process alive
    this.worker.unref();
  }

  /** Posts a request; the worker answers every request exactly once (worker-encoder-thread.ts). */
  post(message: ToWorker, transfer: ArrayBuffer[] = []): void {
    if (this.dead) throw new FloeError(SUBSYSTEM, 'internal', `Parquet encoder worker is gone: ${this.dead.message}`, { cause: this.dead });
    if (this.outstanding++ === 0) this.worker.ref();
    this.worker.postMessage(message, transfer);
  }

  /**
   * Queues a whole-file encode. The queue is posted as one message once this turn of the event loop
   * is over: the files a checkpoint closes side by side then cost one message (and one wake-up of
   * the worker, and one of this thread for the answer) per batch instead of per file. On a machine
   * where the cores are busy, each wake-up can also cost the waker its time slice.
   */
  encode(request: EncodeRequest): void {
    if (this.dead) throw new FloeError(SUBSYSTEM, 'internal', `Parquet encoder worker is gone: ${this.dead.message}`, { cause: this.dead });
    this.encodes.push(request);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flushEncodes());
  }

  private flushEncodes(): void {
    this.flushScheduled = false;
    const files = this.encodes;
    this.encodes = [];
    if (files.length === 0 || this.dead) return;
    this.post({ op: 'encode', files }, files.map((f) => f.ipc.buffer as ArrayBuffer));
  }

  private answered(): void {
    if (this.outstanding > 0 && --this.outstanding === 0) this.worker.unref();
  }

  private receive(m: FromWorker): void {
    this.answered();
    if (m.op === 'encoded') {
      for (const r of m.files) {
        const f = this.files.get(r.id);
        if (!f) continue;
        this.files.delete(r.id);
        if (r.chunks) f.onFinished(r.chunks, r.wrote === true);
        else f.onFailed(new Error(r.message ?? 'the worker did not encode the file'));
      }
      return;
    }
    const f = this.files.get(m.id);
    if (!f) return;
    switch (m.op) {
      case 'opened':
        return;
      case 'written':
        f.onWritten(m.bytesEmitted, m.chunksEmitted);
        return;
      case 'finished':
        this.files.delete(m.id);
        f.onFinished(m.chunks, m.wrote);
        return;
      case 'aborted':
        this.files.delete(m.id);
        f.onAborted();
        return;
      case 'failed':
        this.files.delete(m.id);
        f.onFailed(new Error(m.message));
        return;
    }
  }

  private die(e: Error): void {
    if (this.dead) return;
    this.dead = e;
    this.outstanding = 0;
    this.encodes = [];
    const files = [...this.files.values()];
    this.files.clear();
    for (const f of files) f.onFailed(e);
    this.onDeath(this);
  }

  terminate(): Promise<number> {
    this.dead ??= new Error('Parquet encoder pool closed');
    return this.worker.terminate();
  }
}

/** A pool of encoder threads; `factory` is the `ParquetEncoderFactory` to hand to writers. */
export class WorkerEncoderPool {
  private readonly threads: EncoderThread[] = [];
  private readonly size: number;
  private readonly maxInFlight: number;
  private readonly threadModule: URL;
  private nextId = 1;
  private closed = false;

  constructor(options: WorkerEncoderPoolOptions = {}) {
    this.size = Math.max(1, Math.floor(options.threads ?? Math.min(4, availableParallelism())));
    this.maxInFlight = Math.max(1, Math.floor(options.maxInFlight ?? 2));
    this.threadModule = threadModuleBeside(import.meta.url, 'worker-encoder-thread');
  }

  readonly factory: ParquetEncoderFactory = (options) => this.open(options);

  /** Threads started so far (they start on demand). */
  get threadCount(): number {
    return this.threads.length;
  }

  /**
   * Starts every thread now, so that they load their modules while the caller does other things: a
   * thread started on demand costs the first files it encodes its start-up (the first checkpoint of a
   * run waits for it).
   */
  prewarm(): void {
    if (this.closed) return;
    while (this.threads.length < this.size) this.startThread();
  }

  private startThread(): EncoderThread {
    const t = new EncoderThread(this.threadModule, (dead) => {
      const i = this.threads.indexOf(dead);
      if (i >= 0) this.threads.splice(i, 1);
    });
    this.threads.push(t);
    return t;
  }

  private pick(): EncoderThread {
    if (this.closed) throw new FloeError(SUBSYSTEM, 'internal', 'Parquet encoder pool used after close');
    if (this.threads.length < this.size) {
      const idle = this.threads.find((t) => t.files.size === 0);
      if (idle) return idle;
      return this.startThread();
    }
    let best = this.threads[0];
    if (!best) throw new FloeError(SUBSYSTEM, 'internal', `Parquet encoder pool has no thread to pick (pool size ${this.size})`);
    for (const t of this.threads) if (t.files.size < best.files.size) best = t;
    return best;
  }

  open(options: ParquetEncoderOptions): ParquetEncoder {
    if (this.closed) throw new FloeError(SUBSYSTEM, 'internal', 'Parquet encoder pool used after close');
    return new WorkerParquetEncoder(() => this.pick(), this.nextId++, options, this.maxInFlight);
  }

  /** Stops every thread (open files fail). */
  async close(): Promise<void> {
    this.closed = true;
    const threads = this.threads.splice(0);
    await Promise.all(threads.map((t) => t.terminate()));
  }
}

class WorkerParquetEncoder implements ParquetEncoder, PendingFile {
  bytesEmitted = 0;
  chunksEmitted = 0;
  wroteFile = false;
  private inFlight = 0;
  private slotWaiters: (() => void)[] = [];
  private failure: Error | undefined;
  private state: 'open' | 'finishing' | 'done' = 'open';
  /** The worker this file is bound to, from its first message on. */
  private thread: EncoderThread | undefined;
  private readonly wire: WireEncoderOptions;
  private ending: { resolve: (chunks: Uint8Array[]) => void; reject: (e: Error) => void } | undefined;
  private aborting: (() => void) | undefined;

  constructor(
    private readonly pick: () => EncoderThread,
    private readonly id: number,
    options: ParquetEncoderOptions,
    private readonly maxInFlight: number,
  ) {
    this.wire = { ...options, keyValueMetadata: [...options.keyValueMetadata] };
  }

  private bind(): EncoderThread {
    const thread = this.pick();
    thread.files.set(this.id, this);
    this.thread = thread;
    return thread;
  }

  async write(ipcBatch: Uint8Array): Promise<void> {
    if (this.state !== 'open') throw new FloeError(SUBSYSTEM, 'internal', 'write after finish on a Parquet encoder');
    this.throwIfFailed();
    let thread = this.thread;
    if (!thread) {
      thread = this.bind();
      thread.post({ op: 'open', id: this.id, options: this.wire });
    }
    while (this.inFlight >= this.maxInFlight) {
      await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
      this.throwIfFailed();
    }
    const ipc = transferable(ipcBatch);
    this.inFlight++;
    thread.post({ op: 'write', id: this.id, ipc }, [ipc.buffer as ArrayBuffer]);
  }

  async finish(lastBatch?: Uint8Array): Promise<Uint8Array[]> {
    if (this.state !== 'open') throw new FloeError(SUBSYSTEM, 'internal', 'Parquet encoder finished twice');
    this.throwIfFailed();
    if (!this.thread && lastBatch) {
      // The whole file is this one batch: one message, one answer.
      this.state = 'finishing';
      const done = new Promise<Uint8Array[]>((resolve, reject) => (this.ending = { resolve, reject }));
      this.bind().encode({ id: this.id, options: this.wire, ipc: transferable(lastBatch) });
      const chunks = await done;
      this.state = 'done';
      return chunks;
    }
    if (lastBatch) await this.write(lastBatch);
    const thread = this.thread;
    if (!thread) throw new FloeError(SUBSYSTEM, 'internal', 'a Parquet encoder needs at least one batch (an empty one will do) before finish');
    this.throwIfFailed();
    this.state = 'finishing';
    const done = new Promise<Uint8Array[]>((resolve, reject) => (this.ending = { resolve, reject }));
    thread.post({ op: 'finish', id: this.id });
    const chunks = await done;
    this.state = 'done';
    return chunks;
  }

  async abort(): Promise<void> {
    if (this.state === 'done') return;
    this.state = 'done';
    const thread = this.thread;
    if (!thread || this.failure || thread.dead) return;
    const acked = new Promise<void>((resolve) => (this.aborting = resolve));
    try {
      thread.post({ op: 'abort', id: this.id });
    } catch {
      return;
    }
    await acked;
  }

  // ---- answers from the thread --------------------------------------------------------------------

  onWritten(bytesEmitted: number, chunksEmitted: number): void {
    this.bytesEmitted = bytesEmitted;
    this.chunksEmitted = chunksEmitted;
    this.inFlight--;
    this.slotWaiters.shift()?.();
  }

  onFinished(chunks: Uint8Array[], wrote: boolean): void {
    this.wroteFile = wrote;
    this.ending?.resolve(chunks);
  }

  onAborted(): void {
    this.aborting?.();
  }

  onFailed(error: Error): void {
    this.failure = error;
    for (const w of this.slotWaiters.splice(0)) w();
    this.ending?.reject(this.wrap(error));
    this.aborting?.();
  }

  private wrap(e: Error): FloeError {
    return new FloeError(SUBSYSTEM, 'internal', `parquet-wasm failed while encoding in a worker thread: ${e.message}`, { cause: e });
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.wrap(this.failure);
  }
}

/** The bytes as a Uint8Array that owns its whole ArrayBuffer (copied only when it is a view). */
function transferable(bytes: Uint8Array): Uint8Array {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return bytes;
  return bytes.slice();
}

let shared: WorkerEncoderPool | undefined;

/** The process-wide pool (created on first use). */
export function sharedWorkerEncoderPool(options?: WorkerEncoderPoolOptions): WorkerEncoderPool {
  shared ??= new WorkerEncoderPool(options);
  return shared;
}
