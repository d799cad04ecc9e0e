/**
 * TRANSACTION_PAYLOAD_EVENT (type 40), MySQL 8.0.20+ with binlog_transaction_compression=ON: the
 * server logs a transaction's events — Query BEGIN, TABLE_MAPs, rows events, Xid — compressed into
 * this one event, right after the transaction's GTID (or ANONYMOUS_GTID) event. This module turns
 * the event back into its inner events, each as the server would have logged it uncompressed, so
 * that they go through the same parsing and assembly as every other event.
 *
 * Layout (libbinlogevents codecs/binary.cpp `Transaction_payload::decode`, field numbers from
 * codecs/binary.h, compression types from compression/base.h):
 *   common header (19 bytes)
 *   | header fields, each: type (lenenc), length (lenenc), value (lenenc, `length` bytes) —
 *     1 payload size, 2 compression type (0 ZSTD, 255 NONE), 3 uncompressed size; unknown types
 *     are skipped by their length; type 0 ends the header
 *   | payload (`payload size` bytes: one zstd stream for ZSTD) | CRC32 when binlog_checksum=CRC32
 * The uncompressed payload is the inner events back to back, each with its common header and
 * without a checksum; the server walks them by their event_length (compression/iterator.cpp).
 *
 * Positions: inner events are logged with log_pos 0, and the server reports each of them at the end
 * position of the payload event (SHOW BINLOG EVENTS: `Pos` and `End_log_pos` of every inner event
 * are the payload's end). A dump can only start at an event boundary, so no offset can point inside a
 * compressed transaction: the whole transaction is at the payload's position. The inner events get
 * that end position as their log_pos here, which makes the Xid's end — the transaction's resume
 * offset — the payload's end, exactly where the next transaction starts.
 */
import zlib from 'node:zlib';
import { decompress as fzstdDecompress } from 'fzstd';
import { FloeError } from '../../../util/errors.js';
import { COMMON_HEADER_BYTES } from './rows/table-map.js';

export const TRANSACTION_PAYLOAD_EVENT = 40;

const SUBSYSTEM = 'source.mysql.binlog';

// codecs/binary.h Transaction_payload::fields
const FIELD_END = 0;
const FIELD_PAYLOAD_SIZE = 1;
const FIELD_COMPRESSION_TYPE = 2;
const FIELD_UNCOMPRESSED_SIZE = 3;
// compression/base.h
const ZSTD = 0;
const NONE = 255;

// common header offsets (log_event.h)
const EVENT_LENGTH_AT = 9;
const LOG_POS_AT = 13;

interface TransactionPayloadHeader {
  /** 0 ZSTD, 255 NONE. */
  readonly compressionType: number;
  readonly payloadSize: number;
  readonly uncompressedSize: number;
  /** Where the payload starts, from the start of the event. */
  readonly payloadStart: number;
}

/**
 * Node's own zstd (zlib.zstdDecompressSync, Node 22.15+ / 23.8+) where it exists, else fzstd (pure
 * JavaScript). Both read a stream of one or more frames.
 */
const nodeZstd = (zlib as { zstdDecompressSync?: (data: Uint8Array) => Buffer }).zstdDecompressSync;
const zstdDecompress: (data: Uint8Array) => Uint8Array = nodeZstd ? (data) => nodeZstd(data) : (data) => fzstdDecompress(data);

/** Reads the header fields of a TRANSACTION_PAYLOAD_EVENT (`event`: the whole event, checksum included). */
export function readPayloadHeader(event: Uint8Array, checksumBytes: number, file?: string): TransactionPayloadHeader {
  const view = Buffer.from(event.buffer, event.byteOffset, event.byteLength);
  const where = place(view, file);
  const end = view.length - checksumBytes;
  let at = COMMON_HEADER_BYTES;
  const lenenc = (): number => {
    if (at >= end) throw truncated(where);
    const first = view[at++]!;
    if (first < 0xfb) return first;
    const size = first === 0xfc ? 2 : first === 0xfd ? 3 : first === 0xfe ? 8 : 0;
    if (size === 0 || at + size > end) throw truncated(where);
    const value = size === 8 ? view.readBigUInt64LE(at) : BigInt(view.readUIntLE(at, size));
    at += size;
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw truncated(where);
    return Number(value);
  };
  let compressionType: number | undefined;
  let payloadSize: number | undefined;
  let uncompressedSize: number | undefined;
  for (;;) {
    const type = lenenc();
    if (type === FIELD_END) break;
    const length = lenenc();
    const valueEnd = at + length;
    if (valueEnd > end) throw truncated(where);
    if (type === FIELD_PAYLOAD_SIZE) payloadSize = lenenc();
    else if (type === FIELD_COMPRESSION_TYPE) compressionType = lenenc();
    else if (type === FIELD_UNCOMPRESSED_SIZE) uncompressedSize = lenenc();
    // fields this version does not know are skipped, as the server's decoder does
    at = valueEnd;
  }
  if (payloadSize === undefined || compressionType === undefined) {
    throw new FloeError(
      SUBSYSTEM,
      'invalid-data',
      `expected the TRANSACTION_PAYLOAD_EVENT ${where} to carry its payload size and compression type, found ${payloadSize === undefined ? 'no payload size' : 'no compression type'}: the binlog is damaged or of a newer server than floe reads`,
      { context: { reason: 'payload-header' } },
    );
  }
  if (at + payloadSize !== end) {
    throw new FloeError(
      SUBSYSTEM,
      'invalid-data',
      `expected the payload of the TRANSACTION_PAYLOAD_EVENT ${where} to be ${payloadSize} bytes as its header says, found ${end - at}: the event is damaged`,
      { context: { reason: 'payload-size' } },
    );
  }
  // the server defaults the uncompressed size to the payload size (Transaction_payload::decode)
  return { compressionType, payloadSize, uncompressedSize: uncompressedSize ?? payloadSize, payloadStart: at };
}

/** The uncompressed payload: the inner events back to back, without checksums. */
function payloadEvents(event: Uint8Array, checksumBytes: number, file?: string): Uint8Array {
  const header = readPayloadHeader(event, checksumBytes, file);
  const where = place(event, file);
  const payload = event.subarray(header.payloadStart, header.payloadStart + header.payloadSize);
  let events: Uint8Array;
  if (header.compressionType === NONE) events = payload;
  else if (header.compressionType === ZSTD) {
    try {
      events = zstdDecompress(payload);
    } catch (e) {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `expected the zstd payload of the TRANSACTION_PAYLOAD_EVENT ${where} to decompress, found: ${(e as Error).message}; the event is damaged`, {
        cause: e,
        context: { reason: 'payload-zstd' },
      });
    }
  } else {
    throw new FloeError(
      SUBSYSTEM,
      'unsupported',
      `expected the compressed transaction (TRANSACTION_PAYLOAD_EVENT ${where}) to use compression type 0 (ZSTD) or 255 (NONE), found type ${header.compressionType}, which floe cannot decompress: ` +
        'set binlog_transaction_compression=OFF on the source (SET PERSIST binlog_transaction_compression=OFF) so that new transactions are logged uncompressed, ' +
        'and re-snapshot the captured tables, since the transactions already logged this way cannot be read',
      { context: { reason: 'payload-compression-type' } },
    );
  }
  if (events.length !== header.uncompressedSize) {
    throw new FloeError(
      SUBSYSTEM,
      'invalid-data',
      `expected the payload of the TRANSACTION_PAYLOAD_EVENT ${where} to hold ${header.uncompressedSize} bytes of events as its header says, found ${events.length}: the event is damaged`,
      { context: { reason: 'payload-size' } },
    );
  }
  return events;
}

/**
 * The inner events of a TRANSACTION_PAYLOAD_EVENT, each rewritten to what the server logs for an
 * uncompressed event at the payload's position: log_pos = the payload's end position (see the module
 * header) and, when the stream carries checksums (`checksumBytes` 4), event_length + 4 and a CRC32
 * of the event appended, so that the events parse like every other event of the stream. Each comes
 * with `lead` zero bytes before it (room for a packet header, without another copy). The payload is
 * decompressed and its framing checked at once (a damaged payload fails before any of its events is
 * handed out); each event is copied out as it is taken.
 */
export function innerEvents(event: Uint8Array, checksumBytes: number, options: { lead?: number; file?: string } = {}): IterableIterator<Buffer> {
  const lead = options.lead ?? 0;
  const events = payloadEvents(event, checksumBytes, options.file);
  const view = Buffer.from(events.buffer, events.byteOffset, events.byteLength);
  const logPos = Buffer.from(event.buffer, event.byteOffset, event.byteLength).readUInt32LE(LOG_POS_AT);
  const starts: number[] = [];
  for (let at = 0; at < view.length; ) {
    const length = at + COMMON_HEADER_BYTES <= view.length ? view.readUInt32LE(at + EVENT_LENGTH_AT) : 0;
    if (length < COMMON_HEADER_BYTES || at + length > view.length) {
      throw new FloeError(
        SUBSYSTEM,
        'invalid-data',
        `expected the events inside the TRANSACTION_PAYLOAD_EVENT ${place(event, options.file)} to fill its ${view.length} bytes, found an event of ${length} bytes at byte ${at}: the event is damaged`,
        { context: { reason: 'payload-events' } },
      );
    }
    starts.push(at);
    at += length;
  }
  return (function* () {
    for (const at of starts) {
      const length = view.readUInt32LE(at + EVENT_LENGTH_AT);
      const inner = Buffer.alloc(lead + length + checksumBytes);
      view.copy(inner, lead, at, at + length);
      inner.writeUInt32LE(length + checksumBytes, lead + EVENT_LENGTH_AT);
      inner.writeUInt32LE(logPos, lead + LOG_POS_AT);
      // CRC32 over the event as rewritten (log_event.cc: the checksum covers header and body)
      if (checksumBytes === 4) inner.writeUInt32LE(zlib.crc32(inner.subarray(lead, lead + length)), lead + length);
      yield inner;
    }
  })();
}

/** Where the event is, for messages: "ending at <file>:<its log_pos>" (the position after it). */
function place(event: Uint8Array, file: string | undefined): string {
  const view = Buffer.from(event.buffer, event.byteOffset, event.byteLength);
  if (view.length < COMMON_HEADER_BYTES) return 'of an unknown position';
  return `ending at ${file ? `${file}:` : 'position '}${view.readUInt32LE(LOG_POS_AT)}`;
}

function truncated(where: string): FloeError {
  return new FloeError(SUBSYSTEM, 'invalid-data', `expected the TRANSACTION_PAYLOAD_EVENT ${where} to have well-formed header fields, found them malformed or cut short: the event is damaged`, {
    context: { reason: 'payload-header' },
  });
}
