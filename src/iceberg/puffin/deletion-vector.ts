/**
 * The `deletion-vector-v1` blob (puffin-spec.md; Java `BitmapPositionDeleteIndex.serialize`):
 *
 *   u32 BE  length of magic + vector
 *   D1 D3 39 64  magic
 *   vector: u64 LE number of 32-bit bitmaps, then per key in unsigned ascending order:
 *           u32 LE key (position >> 32), portable 32-bit Roaring bitmap of the low 32 bits
 *   u32 BE  CRC-32 of magic + vector
 *
 * The length and CRC are big-endian for compatibility with Delta deletion vectors; everything inside
 * the vector is little-endian. Reading checks the length prefix, the magic, the CRC and that the
 * vector fills the blob exactly, as Java does before trusting a DV.
 */
import { FloeError } from '../../util/errors.js';
import { crc32 } from 'node:zlib';
import { PositionBitmap } from './position-bitmap.js';
import { deserializeRoaring32, roaring32Size, writeRoaring32 } from './roaring.js';

const SUBSYSTEM = 'iceberg.puffin';
const DV_MAGIC = Uint8Array.of(0xd1, 0xd3, 0x39, 0x64);

/** Serializes positions as a complete `deletion-vector-v1` blob. */
export function serializeDeletionVector(bitmap: PositionBitmap): Uint8Array {
  const parts = bitmap.keyed();
  let vectorSize = 8;
  for (const [, low] of parts) vectorSize += 4 + roaring32Size(low);
  const out = new Uint8Array(4 + 4 + vectorSize + 4);
  const view = new DataView(out.buffer);
  view.setUint32(0, 4 + vectorSize, false);
  out.set(DV_MAGIC, 4);
  let p = 8;
  view.setBigUint64(p, BigInt(parts.length), true);
  p += 8;
  for (const [key, low] of parts) {
    view.setUint32(p, key, true);
    p = writeRoaring32(low, out, p + 4);
  }
  view.setUint32(p, crc32(out.subarray(4, p)), false);
  return out;
}

/**
 * Reads a `deletion-vector-v1` blob (exactly the blob's bytes). `what` names it in errors, e.g.
 * the Puffin path and the data file it refers to.
 */
export function deserializeDeletionVector(blob: Uint8Array, what = 'deletion vector'): PositionBitmap {
  const fail = (msg: string): never => {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: ${msg}`);
  };
  if (blob.length < 4 + 4 + 8 + 4) fail(`blob is ${blob.length} bytes; a deletion vector needs at least 20`);
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const declared = view.getUint32(0, false);
  if (declared !== blob.length - 8) fail(`length prefix says ${declared} bytes of magic + vector, the blob holds ${blob.length - 8}; the manifest's content_size_in_bytes or the file is wrong`);
  for (let i = 0; i < 4; i++) {
    if (blob[4 + i] !== DV_MAGIC[i]) fail(`magic is ${hex(blob.subarray(4, 8))}, expected d1d33964`);
  }
  const crcEnd = blob.length - 4;
  const expected = view.getUint32(crcEnd, false);
  const actual = crc32(blob.subarray(4, crcEnd));
  if (expected !== actual) fail(`CRC-32 is 0x${actual.toString(16)}, the blob says 0x${expected.toString(16)}`);
  const count = view.getBigUint64(8, true);
  let p = 16;
  const parts: [number, Uint32Array][] = [];
  let lastKey = -1;
  for (let i = 0n; i < count; i++) {
    if (p + 4 > crcEnd) fail(`vector declares ${count} bitmaps but ends after ${i}`);
    const key = view.getUint32(p, true);
    // Keys are ordered by unsigned comparison; positions are < 2^63 so a key never has its top bit.
    if (key <= lastKey) fail(`bitmap keys are not ascending (${lastKey} then ${key})`);
    if (key > 0x7fffffff) fail(`bitmap key ${key} makes positions of 2^63 or more`);
    lastKey = key;
    const { values, end } = deserializeRoaring32(blob, p + 4, crcEnd);
    parts.push([key, values]);
    p = end;
  }
  if (p !== crcEnd) fail(`${crcEnd - p} unread byte(s) between the last bitmap and the CRC`);
  return PositionBitmap.fromKeyed(parts);
}

function hex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}
