/**
 * A `KeyColumnReader` (key-column-reader.ts) that decodes in a `worker_threads` worker, one per
 * build: decoding the key column of a 10M-row table is seconds of CPU (hyparquet's Parquet decoding,
 * docs/performance.md), which on the pipeline's thread would stall every change behind it. Here the
 * pipeline's thread only reads the files and their deletes and posts them; each file's keys come
 * back as one transferred buffer.
 *
 * Why a Node-only module under src/iceberg: the same exception as parquet/worker-encoder.ts
 * (docs/design.md §1), behind the runtime-neutral `KeyColumnReader` seam: nothing in iceberg/
 * imports it; cli/ passes `workerKeyColumnReader` into the pipeline.
 */
import type { Worker } from 'node:worker_threads';
import { startModuleWorker, threadModuleBeside } from '../../io/module-worker.js';
import { FloeError } from '../../util/errors.js';
import type { IntegerKeyColumn, KeyColumnRead, KeyColumnReader } from './key-column-reader.js';
import type { FromKeyColumnWorker, ToKeyColumnWorker } from './worker-key-column-thread.js';

const SUBSYSTEM = 'iceberg.keyindex';

/** The buffer of `bytes` to transfer: its own, or a copy when it is a view into a larger one (Node's pooled Buffers). */
function transferable(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer ? bytes : bytes.slice();
}

class WorkerKeyColumnRead implements KeyColumnRead {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve: (keys: Float64Array | undefined) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private failure: Error | undefined;
  private over = false;

  constructor(column: IntegerKeyColumn) {
    this.worker = startModuleWorker(threadModuleBeside(import.meta.url, 'worker-key-column-thread'));
    this.worker.on('message', (m: FromKeyColumnWorker) => this.receive(m));
    this.worker.on('error', (e) => this.fail(e));
    this.worker.on('exit', (code) => this.fail(new Error(`the key column worker exited with code ${code}`)));
    this.post({ op: 'start', column });
  }

  read(bytes: Uint8Array, recordCount: number, deleted: Float64Array | undefined): Promise<Float64Array | undefined> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.over) return Promise.reject(new FloeError(SUBSYSTEM, 'internal', 'a key column reader used after it was closed'));
    const id = this.nextId++;
    const owned = transferable(bytes);
    const answer = new Promise<Float64Array | undefined>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    this.post({ op: 'file', id, bytes: owned, recordCount, deleted }, deleted ? [owned.buffer as ArrayBuffer, deleted.buffer as ArrayBuffer] : [owned.buffer as ArrayBuffer]);
    return answer;
  }

  close(): void {
    if (this.over) return;
    this.over = true;
    void this.worker.terminate();
  }

  private post(message: ToKeyColumnWorker, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  private receive(m: FromKeyColumnWorker): void {
    const w = this.waiting.get(m.id);
    this.waiting.delete(m.id);
    if (m.op === 'keys') w?.resolve(m.keys);
    else w?.reject(new FloeError(SUBSYSTEM, 'internal', `decoding a key column in a worker thread failed: ${m.message}`));
  }

  private fail(e: Error): void {
    if (this.over) return;
    this.failure = new FloeError(SUBSYSTEM, 'internal', `the key column worker failed: ${e.message}`, { cause: e });
    this.close();
    for (const w of this.waiting.values()) w.reject(this.failure);
    this.waiting.clear();
  }
}

export const workerKeyColumnReader: KeyColumnReader = (column) => new WorkerKeyColumnRead(column);
