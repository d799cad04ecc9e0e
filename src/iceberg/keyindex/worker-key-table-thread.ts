/**
 * The worker side of worker-key-table.ts: one build of a key index's typed-array table per worker.
 * The files' Parquet bytes arrive one at a time; their key column is read as the main thread's
 * build reads it (task-reader.ts `readIntegerColumn`, under `readTaskIntegers`) and every live
 * row's key goes into a NumberKeyTable, whose buffer is transferred back at the end.
 *
 * Protocol, in order: main → worker  start {column, expected} · file {bytes, slot, deleted?} … · finish
 *                     worker → main  added (one per file) · done {state} | fallback {why} | failed {message}
 */
import { parentPort } from 'node:worker_threads';
import { errorMessage } from '../../util/errors.js';
import { readIntegerColumn } from '../scan/task-reader.js';
import type { NestedField } from '../spec/types.js';
import type { IntegerKeyColumn } from './key-table-builder.js';
import { NumberKeyTable, type NumberKeyTableState } from './number-key-table.js';

export type ToKeyTableWorker =
  | { op: 'start'; column: IntegerKeyColumn; expected: number }
  | { op: 'file'; bytes: Uint8Array; slot: number; deleted: Float64Array | undefined }
  | { op: 'finish' };

export type FromKeyTableWorker =
  | { op: 'added' }
  | { op: 'done'; state: NumberKeyTableState }
  | { op: 'fallback'; why: string }
  | { op: 'failed'; message: string };

const port = parentPort;
if (!port) throw new Error('worker-key-table-thread must run in a worker thread');

let field: NestedField | undefined;
let table: NumberKeyTable | undefined;
/** Why the table cannot hold this build's keys (the main thread then builds the index itself). */
let fallback: string | undefined;
let failure: string | undefined;
/** Messages are handled one after another. */
let tail: Promise<void> = Promise.resolve();

function send(message: FromKeyTableWorker, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

async function addFile(bytes: Uint8Array, slot: number, deleted: Float64Array | undefined): Promise<void> {
  const t = table!;
  const read = await readIntegerColumn(bytes, field!, async () => deleted, (v, pos) => {
    if (typeof v === 'number') t.set(v, slot, pos);
    else fallback ??= `a key at position ${pos} is null or beyond ±(2^53 − 1)`;
  });
  if (!read) fallback ??= `the file of slot ${slot} has no plain signed integer column ${field!.name} (id ${field!.id})`;
}

async function handle(m: ToKeyTableWorker): Promise<void> {
  switch (m.op) {
    case 'start':
      field = { id: m.column.id, name: m.column.name, required: true, type: { kind: m.column.kind } } as NestedField;
      table = new NumberKeyTable(m.expected);
      return;
    case 'file':
      if (!failure && !fallback) {
        try {
          await addFile(m.bytes, m.slot, m.deleted);
        } catch (e) {
          failure = errorMessage(e);
        }
      }
      send({ op: 'added' });
      return;
    case 'finish': {
      if (failure) return send({ op: 'failed', message: failure });
      if (fallback) return send({ op: 'fallback', why: fallback });
      const state = table!.state();
      table = undefined;
      send({ op: 'done', state }, [state.buffer]);
      return;
    }
  }
}

port.on('message', (m: ToKeyTableWorker) => {
  tail = tail.then(() => handle(m));
});
