/**
 * The worker side of worker-key-column.ts: the key column of one data file after another, decoded
 * as the main thread's build would (task-reader.ts `readIntegerColumn`, under `readTaskIntegers`)
 * into the file's keys by position, transferred back.
 *
 * Protocol: main → worker  start {column} · file {id, bytes, recordCount, deleted?} …
 *           worker → main  keys {id, keys} | keys {id, keys: undefined, why} | failed {id, message}
 */
import { parentPort } from 'node:worker_threads';
import { errorMessage } from '../../util/errors.js';
import { readIntegerColumn } from '../scan/task-reader.js';
import type { NestedField } from '../spec/types.js';
import type { IntegerKeyColumn } from './key-column-reader.js';

export type ToKeyColumnWorker =
  | { op: 'start'; column: IntegerKeyColumn }
  | { op: 'file'; id: number; bytes: Uint8Array; recordCount: number; deleted: Float64Array | undefined };

export type FromKeyColumnWorker = { op: 'keys'; id: number; keys: Float64Array | undefined } | { op: 'failed'; id: number; message: string };

const port = parentPort;
if (!port) throw new Error('worker-key-column-thread must run in a worker thread');

let field: NestedField | undefined;
/** Messages are handled one after another. */
let tail: Promise<void> = Promise.resolve();

async function readFile(bytes: Uint8Array, recordCount: number, deleted: Float64Array | undefined): Promise<Float64Array | undefined> {
  const keys = new Float64Array(recordCount).fill(Number.NaN);
  let numbers = true;
  const read = await readIntegerColumn(bytes, field!, async () => deleted, (v, pos) => {
    if (typeof v === 'number' && pos < keys.length) keys[pos] = v;
    else numbers = false;
  });
  return read && numbers ? keys : undefined;
}

async function handle(m: ToKeyColumnWorker): Promise<void> {
  if (m.op === 'start') {
    field = { id: m.column.id, name: m.column.name, required: true, type: { kind: m.column.kind } } as NestedField;
    return;
  }
  try {
    const keys = await readFile(m.bytes, m.recordCount, m.deleted);
    const out: FromKeyColumnWorker = { op: 'keys', id: m.id, keys };
    port!.postMessage(out, keys ? [keys.buffer as ArrayBuffer] : []);
  } catch (e) {
    const out: FromKeyColumnWorker = { op: 'failed', id: m.id, message: errorMessage(e) };
    port!.postMessage(out);
  }
}

port.on('message', (m: ToKeyColumnWorker) => {
  tail = tail.then(() => handle(m));
});
