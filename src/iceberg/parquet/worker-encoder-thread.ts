/**
 * The worker side of the worker-thread Parquet encoder (worker-encoder.ts): one `worker_threads`
 * thread running parquet-wasm encoders (`wasmParquetEncoder`, encoder.ts) for the files the main
 * thread assigns to it. Messages for one file are handled strictly in order; files interleave.
 *
 * Protocol (all messages carry the file's `id`):
 *   main → worker  open {options} · write {ipc} · finish · abort · encode {files: [{id, options, ipc}]}
 *   worker → main  opened · written {bytesEmitted, chunksEmitted} · finished {chunks, wrote} ·
 *                  aborted · failed {message}
 * `encode` carries whole files of one batch each (open, write and finish at once), answered by one
 * `encoded` {files: [{id, chunks, wrote} | {id, message}]}: the many small files of a partitioned
 * table share round trips.
 * A file whose options name a local file (`writeTo`) is also written there by this thread once
 * encoded (`wrote`), through a `LocalFileIO` of its own: the main thread is spared the seven
 * asynchronous calls of each write (a partitioned checkpoint writes thousands of small files, and
 * each call costs the calling thread a hand-off to libuv's pool and a wake-up back). When that
 * write fails, the file is still answered with its bytes, `wrote` false: the main thread then
 * writes them through its FileIO, whose error (a full disk, a permission) is the one reported, in
 * the FileIO's words.
 * Every request gets exactly one answer (the main thread keeps the worker alive while answers are
 * due); once a file failed, its later requests are answered `failed` (`aborted` for an abort).
 * IPC and file bytes are transferred, not copied.
 */
import { parentPort } from 'node:worker_threads';
import { LocalFileIO } from '../../io/local-file-io.js';
import { wasmParquetEncoder, type ParquetEncoder, type ParquetEncoderOptions } from './encoder.js';

export type WireEncoderOptions = Omit<ParquetEncoderOptions, 'keyValueMetadata'> & { keyValueMetadata: [string, string][] };

export type ToWorker =
  | { op: 'open'; id: number; options: WireEncoderOptions }
  | { op: 'write'; id: number; ipc: Uint8Array }
  | { op: 'finish'; id: number }
  | { op: 'abort'; id: number }
  | { op: 'encode'; files: EncodeRequest[] };

/** One whole file of one record batch. */
export interface EncodeRequest {
  id: number;
  options: WireEncoderOptions;
  ipc: Uint8Array;
}

export type FromWorker =
  | { op: 'opened'; id: number }
  | { op: 'written'; id: number; bytesEmitted: number; chunksEmitted: number }
  | { op: 'finished'; id: number; chunks: Uint8Array[]; wrote: boolean }
  | { op: 'aborted'; id: number }
  | { op: 'failed'; id: number; message: string }
  | { op: 'encoded'; files: { id: number; chunks?: Uint8Array[]; wrote?: boolean; message?: string }[] };

interface Slot {
  encoder: ParquetEncoder;
  writeTo: string | undefined;
  /** The file's messages run one after another. */
  tail: Promise<void>;
  failed: boolean;
}

const port = parentPort;
if (!port) throw new Error('worker-encoder-thread must run in a worker thread');
const slots = new Map<number, Slot>();

function send(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

function ownedBuffers(chunks: readonly Uint8Array[]): ArrayBuffer[] {
  const seen = new Set<ArrayBuffer>();
  for (const c of chunks) {
    if (c.byteOffset === 0 && c.byteLength === c.buffer.byteLength && c.buffer instanceof ArrayBuffer) seen.add(c.buffer);
  }
  return [...seen];
}

/** Requests about one file (all but `encode`). */
type FileRequest = Exclude<ToWorker, { op: 'encode' }>;

function refuse(m: FileRequest): void {
  if (m.op === 'abort') send({ op: 'aborted', id: m.id });
  else send({ op: 'failed', id: m.id, message: 'the file failed earlier' });
}

async function handle(slot: Slot, m: FileRequest): Promise<void> {
  if (slot.failed) return refuse(m);
  try {
    switch (m.op) {
      case 'write':
        await slot.encoder.write(m.ipc);
        send({ op: 'written', id: m.id, bytesEmitted: slot.encoder.bytesEmitted, chunksEmitted: slot.encoder.chunksEmitted });
        return;
      case 'finish': {
        slots.delete(m.id);
        const chunks = await slot.encoder.finish();
        const wrote = await stored(slot.writeTo, chunks);
        send({ op: 'finished', id: m.id, chunks, wrote }, ownedBuffers(chunks));
        return;
      }
      case 'abort':
        slots.delete(m.id);
        await slot.encoder.abort();
        send({ op: 'aborted', id: m.id });
        return;
      case 'open':
        return;
    }
  } catch (e) {
    slot.failed = true;
    slots.delete(m.id);
    // the encode error is the one sent back; aborting only frees the failed encoder
    await slot.encoder.abort().catch(() => undefined);
    send({ op: 'failed', id: m.id, message: e instanceof Error ? e.message : String(e) });
  }
}

const local = new LocalFileIO();

/** Writes the file at `writeTo` when there is one; whether it is there now (see the header on failures). */
async function stored(writeTo: string | undefined, chunks: readonly Uint8Array[]): Promise<boolean> {
  if (writeTo === undefined) return false;
  try {
    await local.writeUnpublished(writeTo, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    return true;
  } catch {
    return false;
  }
}

function wireOptions(options: WireEncoderOptions): ParquetEncoderOptions {
  return { ...options, keyValueMetadata: new Map(options.keyValueMetadata) };
}

/**
 * Encodes the files one after another; their writes (`writeTo`) go on meanwhile, side by side in
 * libuv's pool, and the answer waits for the last of them.
 */
async function encodeWhole(m: ToWorker & { op: 'encode' }): Promise<void> {
  const files: (FromWorker & { op: 'encoded' })['files'] = [];
  const writes: Promise<void>[] = [];
  const transfer: ArrayBuffer[] = [];
  for (const f of m.files) {
    try {
      const chunks = await wasmParquetEncoder(wireOptions(f.options)).finish(f.ipc);
      const answer: (typeof files)[number] = { id: f.id, chunks, wrote: false };
      files.push(answer);
      writes.push(stored(f.options.writeTo, chunks).then((wrote) => void (answer.wrote = wrote)));
      transfer.push(...ownedBuffers(chunks));
    } catch (e) {
      files.push({ id: f.id, message: e instanceof Error ? e.message : String(e) });
    }
  }
  await Promise.all(writes);
  send({ op: 'encoded', files }, transfer);
}

port.on('message', (m: ToWorker) => {
  if (m.op === 'encode') {
    void encodeWhole(m);
    return;
  }
  if (m.op === 'open') {
    try {
      const encoder = wasmParquetEncoder(wireOptions(m.options));
      slots.set(m.id, { encoder, writeTo: m.options.writeTo, tail: Promise.resolve(), failed: false });
      send({ op: 'opened', id: m.id });
    } catch (e) {
      send({ op: 'failed', id: m.id, message: e instanceof Error ? e.message : String(e) });
    }
    return;
  }
  const slot = slots.get(m.id);
  if (!slot) {
    // A file that already failed (its failure was reported) or was never opened.
    refuse(m);
    return;
  }
  slot.tail = slot.tail.then(() => handle(slot, m));
});
