/**
 * Avro object container files (Avro 1.11 spec, "Object Container Files"):
 *
 *   "Obj" 0x01 | metadata map<bytes> (avro.schema, avro.codec, user keys) | 16-byte sync marker |
 *   blocks of (long record count, long byte size, records, sync marker)
 *
 * Codecs: `null` and `deflate` (raw RFC 1951 deflate, no zlib header), the only two every Iceberg
 * reader supports (docs/iceberg-writer-checklist.md §3.1: icebird rejects anything else; Java's default is deflate).
 * Iceberg manifests keep their table metadata (schema, partition spec, format version, …) in the
 * user metadata keys, so those are exposed as strings.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { FloeError } from '../../util/errors.js';
import { AvroReader, AvroWriter } from './binary.js';
import { compileDecoder, compileEncoder } from './datum.js';
import { parseSchema, schemaToJson, type AvroSchema } from './schema.js';

const SUBSYSTEM = 'iceberg.avro';
const MAGIC = new Uint8Array([0x4f, 0x62, 0x6a, 0x01]); // "Obj" 1
const SYNC_SIZE = 16;
/** Java's DataFileWriter flushes a block at ~64 KiB of serialized records (`DEFAULT_SYNC_INTERVAL`). */
const BLOCK_TARGET_BYTES = 64 * 1024;

export type AvroCodec = 'null' | 'deflate';

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

export interface AvroFileWriteOptions {
  schema: AvroSchema;
  /** User metadata, written after avro.schema and avro.codec in the given order. */
  metadata?: Record<string, string> | Map<string, string>;
  codec?: AvroCodec;
  /** The 16-byte sync marker; random when omitted (tests pass one for reproducible bytes). */
  syncMarker?: Uint8Array;
}

/** Encodes records into one complete container file. */
export function writeAvroFile(options: AvroFileWriteOptions, records: Iterable<unknown>): Uint8Array {
  const codec = options.codec ?? 'deflate';
  if (codec !== 'null' && codec !== 'deflate') {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `unsupported Avro codec ${JSON.stringify(codec)}; expected "null" or "deflate"`);
  }
  const sync = options.syncMarker ?? globalThis.crypto.getRandomValues(new Uint8Array(SYNC_SIZE));
  if (sync.length !== SYNC_SIZE) throw new FloeError(SUBSYSTEM, 'invalid-argument', `sync marker must be ${SYNC_SIZE} bytes, found ${sync.length}`);
  const encode = compileEncoder(options.schema);

  const out = new AvroWriter(8192);
  out.writeRaw(MAGIC);
  const meta: [string, string][] = [
    ['avro.schema', schemaToJson(options.schema)],
    ['avro.codec', codec],
  ];
  const user = options.metadata instanceof Map ? [...options.metadata.entries()] : Object.entries(options.metadata ?? {});
  for (const [k, v] of user) {
    if (k.startsWith('avro.')) throw new FloeError(SUBSYSTEM, 'invalid-argument', `metadata key ${k} is reserved by Avro; choose a key without the "avro." prefix`);
    meta.push([k, v]);
  }
  out.writeLong(BigInt(meta.length));
  for (const [k, v] of meta) {
    out.writeString(k);
    out.writeBytes(utf8.encode(v));
  }
  out.writeLong(0n);
  out.writeRaw(sync);

  const block = new AvroWriter(BLOCK_TARGET_BYTES + 1024);
  let count = 0;
  const flush = (): void => {
    if (count === 0) return;
    const data = codec === 'deflate' ? deflateRawSync(block.bytes()) : block.bytes();
    out.writeLong(BigInt(count));
    out.writeLong(BigInt(data.length));
    out.writeRaw(data);
    out.writeRaw(sync);
    block.reset();
    count = 0;
  };
  for (const record of records) {
    encode(block, record);
    count++;
    if (block.pos >= BLOCK_TARGET_BYTES) flush();
  }
  flush();
  return out.bytes().slice();
}

export interface AvroFile {
  /** The writer schema stored in the file. */
  schema: AvroSchema;
  schemaJson: string;
  codec: AvroCodec;
  /** All metadata entries except avro.schema / avro.codec, decoded as UTF-8. */
  metadata: Map<string, string>;
  records: unknown[];
}

/** Reads a whole container file: header, writer schema, metadata and every record. */
export function readAvroFile(bytes: Uint8Array): AvroFile {
  const r = new AvroReader(bytes);
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC[i]) {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `not an Avro container file: expected the magic "Obj\\x01", found ${JSON.stringify(String.fromCharCode(...bytes.subarray(0, 4)))}`);
    }
  }
  r.pos = MAGIC.length;
  const rawMeta = new Map<string, Uint8Array>();
  for (;;) {
    let n = r.readCount('metadata block count');
    if (n === 0) break;
    if (n < 0) {
      n = -n;
      r.readLong();
    }
    for (let i = 0; i < n; i++) {
      const k = r.readString();
      rawMeta.set(k, r.readBytes());
    }
  }
  const sync = r.readRawView(SYNC_SIZE);
  const schemaBytes = rawMeta.get('avro.schema');
  if (!schemaBytes) throw new FloeError(SUBSYSTEM, 'invalid-data', 'Avro container file has no avro.schema metadata');
  const schemaJson = decodeUtf8(schemaBytes, 'avro.schema');
  const schema = parseSchema(schemaJson);
  const codecBytes = rawMeta.get('avro.codec');
  const codec = codecBytes ? decodeUtf8(codecBytes, 'avro.codec') : 'null';
  if (codec !== 'null' && codec !== 'deflate') {
    throw new FloeError(SUBSYSTEM, 'unsupported', `Avro codec ${JSON.stringify(codec)} is not supported; expected "null" or "deflate" (the codecs Iceberg writers use)`);
  }
  const metadata = new Map<string, string>();
  for (const [k, v] of rawMeta) {
    if (k === 'avro.schema' || k === 'avro.codec') continue;
    metadata.set(k, decodeUtf8(v, k));
  }

  const decode = compileDecoder(schema);
  const records: unknown[] = [];
  while (r.remaining() > 0) {
    const count = r.readCount('block record count');
    const size = r.readLength('block size');
    const raw = r.readRawView(size);
    let data: Uint8Array;
    if (codec === 'deflate') {
      try {
        const inflated = inflateRawSync(raw);
        data = new Uint8Array(inflated.buffer, inflated.byteOffset, inflated.byteLength);
      } catch (cause) {
        throw new FloeError(SUBSYSTEM, 'invalid-data', `cannot inflate an Avro deflate block at offset ${r.pos - size}: ${(cause as Error).message}`, { cause });
      }
    } else {
      data = raw;
    }
    const br = new AvroReader(data);
    for (let i = 0; i < count; i++) records.push(decode(br));
    if (br.remaining() !== 0) {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `Avro block holds ${br.remaining()} byte(s) after its ${count} record(s); the writer schema does not match the data`);
    }
    const marker = r.readRawView(SYNC_SIZE);
    for (let i = 0; i < SYNC_SIZE; i++) {
      if (marker[i] !== sync[i]) throw new FloeError(SUBSYSTEM, 'invalid-data', `Avro block at offset ${r.pos - SYNC_SIZE} ends without the file's sync marker; the file is corrupt`);
    }
  }
  return { schema, schemaJson, codec, metadata, records };
}

function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return utf8Decoder.decode(bytes);
  } catch (cause) {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `Avro metadata ${what} is not valid UTF-8`, { cause });
  }
}
