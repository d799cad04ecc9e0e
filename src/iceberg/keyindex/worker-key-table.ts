/**
 * A `KeyTableBuilder` (key-table-builder.ts) that builds in a `worker_threads` worker, one per build:
 * the key index of a 2M-row table costs about 0.8 s of CPU to build (docs/performance.md: the
 * Parquet decoding of the key column and the table's inserts, which are memory bound), which on the
 * pipeline's thread stalls every change behind it. Here the pipeline's thread only reads the files
 * and their deletes and posts them; the table comes back as one transferred buffer.
 *
 * At most two files are in flight (`add` waits for the older one's answer), so the worker holds no
 * more than two files' bytes besides the table. The worker is ended once the build is over.
 *
 * Why a Node-only module under src/iceberg: the same exception as parquet/worker-encoder.ts
 * (docs/design.md §1), behind the runtime-neutral `KeyTableBuilder` seam: nothing in iceberg/
 * imports it; cli/ passes `workerKeyTableBuilder` into the pipeline.
 */
import type { Worker } from 'node:worker_threads';
import { startModuleWorker, threadModuleBeside } from '../../io/module-worker.js';
import { FloeError } from '../../util/errors.js';
import type { IntegerKeyColumn, KeyTableBuild, KeyTableBuilder } from './key-table-builder.js';
import type { NumberKeyTableState } from './number-key-table.js';
import type { FromKeyTableWorker, ToKeyTableWorker } from './worker-key-table-thread.js';

const SUBSYSTEM = 'iceberg.writer';
const MAX_IN_FLIGHT = 2;

/** The buffer of `bytes` to transfer: its own, or a copy when it is a view into a larger one (Node's pooled Buffers). */
function transferable(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer ? bytes : bytes.slice();
}

class WorkerKeyTableBuild implements KeyTableBuild {
  private readonly worker: Worker;
  private inFlight = 0;
  private readonly slotWaiters: (() => void)[] = [];
  private failure: Error | undefined;
  private ending: { resolve: (s: NumberKeyTableState | undefined) => void; reject: (e: Error) => void } | undefined;
  private over = false;

  constructor(column: IntegerKeyColumn, expected: number) {
    this.worker = startModuleWorker(threadModuleBeside(import.meta.url, 'worker-key-table-thread'));
    this.worker.on('message', (m: FromKeyTableWorker) => this.receive(m));
    this.worker.on('error', (e) => this.fail(e));
    this.worker.on('exit', (code) => this.fail(new Error(`the key table worker exited with code ${code}`)));
    this.post({ op: 'start', column, expected });
  }

  async add(bytes: Uint8Array, slot: number, deleted: Float64Array | undefined): Promise<void> {
    this.throwIfFailed();
    const owned = transferable(bytes);
    this.inFlight++;
    this.post({ op: 'file', bytes: owned, slot, deleted }, deleted ? [owned.buffer as ArrayBuffer, deleted.buffer as ArrayBuffer] : [owned.buffer as ArrayBuffer]);
    while (this.inFlight >= MAX_IN_FLIGHT && !this.failure) await new Promise<void>((r) => this.slotWaiters.push(r));
    this.throwIfFailed();
  }

  finish(): Promise<NumberKeyTableState | undefined> {
    this.throwIfFailed();
    const result = new Promise<NumberKeyTableState | undefined>((resolve, reject) => (this.ending = { resolve, reject }));
    this.post({ op: 'finish' });
    return result;
  }

  abort(): void {
    this.end();
  }

  private post(message: ToKeyTableWorker, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  private receive(m: FromKeyTableWorker): void {
    switch (m.op) {
      case 'added':
        this.inFlight--;
        this.slotWaiters.shift()?.();
        return;
      case 'done':
        this.end();
        this.ending?.resolve(m.state);
        return;
      case 'fallback':
        this.end();
        this.ending?.resolve(undefined);
        return;
      case 'failed':
        this.fail(new Error(m.message));
        return;
    }
  }

  private fail(e: Error): void {
    if (this.over) return;
    this.failure = new FloeError(SUBSYSTEM, 'internal', `building a key index in a worker thread failed: ${e.message}`, { cause: e });
    this.end();
    for (const w of this.slotWaiters.splice(0)) w();
    this.ending?.reject(this.failure);
  }

  private end(): void {
    if (this.over) return;
    this.over = true;
    void this.worker.terminate();
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure;
    if (this.over) throw new FloeError(SUBSYSTEM, 'internal', 'a key table build used after it ended');
  }
}

export const workerKeyTableBuilder: KeyTableBuilder = (column, expected) => new WorkerKeyTableBuild(column, expected);
