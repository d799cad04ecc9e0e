/**
 * Puffin files (puffin-spec.md): `Magic Blob₁ … Blobₙ Footer`, with
 * `Footer = Magic FooterPayload FooterPayloadSize(i32 LE) Flags(4 bytes) Magic` and the footer payload
 * a UTF-8 JSON `FileMetadata` `{"blobs":[BlobMetadata…],"properties":{…}}`. Magic is `PFA1`.
 *
 * floe writes the footer uncompressed and blobs uncompressed (icebird reads only those; DV blobs must
 * never be compressed). The footer JSON has Java's key order (`FileMetadataParser`).
 */
import { FloeError } from '../../util/errors.js';
import { asInt, asLong, parseJson, stringifyJson } from '../../util/json.js';

const SUBSYSTEM = 'iceberg.puffin';
const PUFFIN_MAGIC = Uint8Array.of(0x50, 0x46, 0x41, 0x31); // "PFA1"
const FOOTER_STRUCT_SIZE = 4 + 4 + 4; // payload size, flags, magic
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

export interface PuffinBlobInput {
  type: string;
  /** Field ids the blob was computed for. */
  fields: number[];
  /** -1 when not known at write time (always for deletion vectors). */
  snapshotId?: bigint;
  sequenceNumber?: bigint;
  data: Uint8Array;
  properties?: Record<string, string>;
}

export interface PuffinBlobMetadata {
  type: string;
  fields: number[];
  snapshotId: bigint;
  sequenceNumber: bigint;
  offset: bigint;
  length: bigint;
  compressionCodec?: string;
  properties: Record<string, string>;
}

export interface PuffinFileMetadata {
  blobs: PuffinBlobMetadata[];
  properties: Record<string, string>;
}

/** Writes a Puffin file with the given (uncompressed) blobs, in order. */
export function writePuffin(blobs: readonly PuffinBlobInput[], properties: Record<string, string> = {}): { bytes: Uint8Array; blobs: PuffinBlobMetadata[] } {
  const metas: PuffinBlobMetadata[] = [];
  let offset = PUFFIN_MAGIC.length;
  for (const b of blobs) {
    metas.push({
      type: b.type,
      fields: [...b.fields],
      snapshotId: b.snapshotId ?? -1n,
      sequenceNumber: b.sequenceNumber ?? -1n,
      offset: BigInt(offset),
      length: BigInt(b.data.length),
      properties: { ...(b.properties ?? {}) },
    });
    offset += b.data.length;
  }
  const footerJson = stringifyJson({
    blobs: metas.map((m) => ({
      type: m.type,
      fields: m.fields,
      'snapshot-id': m.snapshotId,
      'sequence-number': m.sequenceNumber,
      offset: m.offset,
      length: m.length,
      properties: Object.keys(m.properties).length > 0 ? m.properties : undefined,
    })),
    properties: Object.keys(properties).length > 0 ? properties : undefined,
  });
  const payload = utf8.encode(footerJson);
  const total = offset + PUFFIN_MAGIC.length + payload.length + FOOTER_STRUCT_SIZE;
  const out = new Uint8Array(total);
  out.set(PUFFIN_MAGIC, 0);
  let p = PUFFIN_MAGIC.length;
  for (const b of blobs) {
    out.set(b.data, p);
    p += b.data.length;
  }
  out.set(PUFFIN_MAGIC, p);
  p += PUFFIN_MAGIC.length;
  out.set(payload, p);
  p += payload.length;
  const view = new DataView(out.buffer);
  view.setInt32(p, payload.length, true);
  p += 4;
  // flags: all zero = footer payload uncompressed
  p += 4;
  out.set(PUFFIN_MAGIC, p);
  return { bytes: out, blobs: metas };
}

function fail(what: string, msg: string): never {
  throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: ${msg}`);
}

function hasMagicAt(bytes: Uint8Array, at: number): boolean {
  if (at < 0 || at + 4 > bytes.length) return false;
  for (let i = 0; i < 4; i++) if (bytes[at + i] !== PUFFIN_MAGIC[i]) return false;
  return true;
}

/** Reads and checks the footer of a whole Puffin file. */
export function readPuffinFooter(bytes: Uint8Array, what = 'Puffin file'): PuffinFileMetadata {
  if (bytes.length < 4 + 4 + FOOTER_STRUCT_SIZE) fail(what, `${bytes.length} bytes is too small for a Puffin file`);
  if (!hasMagicAt(bytes, 0)) fail(what, 'does not start with the Puffin magic PFA1');
  if (!hasMagicAt(bytes, bytes.length - 4)) fail(what, 'does not end with the Puffin magic PFA1 (truncated, or file_size_in_bytes is wrong)');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const payloadSize = view.getInt32(bytes.length - FOOTER_STRUCT_SIZE, true);
  const flags = bytes.subarray(bytes.length - 8, bytes.length - 4);
  if ((flags[0]! & 1) !== 0) fail(what, 'footer payload is LZ4-compressed, which floe does not read');
  const footerStart = bytes.length - FOOTER_STRUCT_SIZE - payloadSize - 4;
  if (payloadSize < 0 || footerStart < 4) fail(what, `footer payload size ${payloadSize} does not fit the file`);
  if (!hasMagicAt(bytes, footerStart)) fail(what, `no footer magic at offset ${footerStart}`);
  let json: unknown;
  try {
    json = parseJson(utf8Decoder.decode(bytes.subarray(footerStart + 4, footerStart + 4 + payloadSize)));
  } catch (cause) {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: footer payload is not UTF-8 JSON`, { cause });
  }
  const o = json as { blobs?: unknown; properties?: unknown };
  if (!Array.isArray(o?.blobs)) fail(what, 'footer has no "blobs" array');
  const blobs = (o.blobs as Record<string, unknown>[]).map((b, i) => {
    const w = `${what} blob ${i}`;
    if (typeof b?.type !== 'string') fail(w, 'has no "type"');
    if (!Array.isArray(b.fields)) fail(w, 'has no "fields" list');
    const meta: PuffinBlobMetadata = {
      type: b.type as string,
      fields: (b.fields as unknown[]).map((f) => asInt(f, `${w} field`)),
      snapshotId: asLong(b['snapshot-id'], `${w} snapshot-id`),
      sequenceNumber: asLong(b['sequence-number'], `${w} sequence-number`),
      offset: asLong(b.offset, `${w} offset`),
      length: asLong(b.length, `${w} length`),
      properties: stringMap(b.properties, `${w} properties`),
    };
    if (typeof b['compression-codec'] === 'string') meta.compressionCodec = b['compression-codec'];
    if (meta.offset < 4n || meta.offset + meta.length > BigInt(footerStart)) fail(w, `range [${meta.offset}, +${meta.length}) lies outside the blob area [4, ${footerStart})`);
    return meta;
  });
  return { blobs, properties: stringMap(o.properties, `${what} properties`) };
}

function stringMap(v: unknown, what: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) fail(what, 'expected a JSON object of strings');
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (typeof x !== 'string') fail(what, `value of ${k} is not a string`);
    out[k] = x as string;
  }
  return out;
}
