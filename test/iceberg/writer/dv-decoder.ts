/**
 * An independent decoder of Puffin files holding `deletion-vector-v1` blobs, written from
 * format/puffin-spec.md and the Roaring "portable" serialization spec (RoaringFormatSpec), sharing no
 * code with floe's Puffin module. CRC-32 comes from Node's zlib. Every structural rule is checked and
 * reported with the offending value.
 */
import zlib from 'node:zlib';

const PUFFIN_MAGIC = [0x50, 0x46, 0x41, 0x31];
const DV_MAGIC = [0xd1, 0xd3, 0x39, 0x64];
const SERIAL_COOKIE_NO_RUNCONTAINER = 12346;
const SERIAL_COOKIE = 12347;

interface DecodedBlob {
  type: string;
  fields: number[];
  snapshotId: number | bigint;
  sequenceNumber: number | bigint;
  offset: number;
  length: number;
  properties: Record<string, string>;
  compressionCodec?: string;
}

export interface DecodedPuffin {
  blobs: DecodedBlob[];
  properties: Record<string, string>;
}

function check(cond: boolean, msg: string): asserts cond {
  if (!cond) throw new Error(`puffin/dv decoder: ${msg}`);
}

function magicAt(bytes: Uint8Array, at: number, magic: number[]): boolean {
  return magic.every((b, i) => bytes[at + i] === b);
}

export function decodePuffin(bytes: Uint8Array): DecodedPuffin {
  check(bytes.length >= 4 + 4 + 4 + 4 + 4, `file of ${bytes.length} bytes is too short`);
  check(magicAt(bytes, 0, PUFFIN_MAGIC), 'file does not start with PFA1');
  check(magicAt(bytes, bytes.length - 4, PUFFIN_MAGIC), 'file does not end with PFA1');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const flags = bytes.subarray(bytes.length - 8, bytes.length - 4);
  check(flags.every((b) => b === 0), `footer flags ${[...flags]} are not all zero (compressed footer)`);
  const payloadSize = view.getInt32(bytes.length - 12, true);
  const footerStart = bytes.length - 12 - payloadSize - 4;
  check(footerStart >= 4, `footer payload size ${payloadSize} does not fit the file`);
  check(magicAt(bytes, footerStart, PUFFIN_MAGIC), 'footer does not start with PFA1');
  const json = JSON.parse(new TextDecoder().decode(bytes.subarray(footerStart + 4, footerStart + 4 + payloadSize)));
  check(Array.isArray(json.blobs), 'footer has no blobs array');
  const blobs: DecodedBlob[] = json.blobs.map((b: Record<string, unknown>) => ({
    type: b.type as string,
    fields: b.fields as number[],
    snapshotId: b['snapshot-id'] as number,
    sequenceNumber: b['sequence-number'] as number,
    offset: Number(b.offset),
    length: Number(b.length),
    properties: (b.properties ?? {}) as Record<string, string>,
    compressionCodec: b['compression-codec'] as string | undefined,
  }));
  for (const b of blobs) {
    check(b.offset >= 4 && b.offset + b.length <= footerStart, `blob [${b.offset}, +${b.length}) lies outside the blob area [4, ${footerStart})`);
  }
  return { blobs, properties: json.properties ?? {} };
}

/** The 64-bit positions of one `deletion-vector-v1` blob (exactly the blob's bytes), ascending. */
export function decodeDeletionVectorBlob(blob: Uint8Array): bigint[] {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const declared = view.getUint32(0, false);
  check(declared === blob.length - 8, `length prefix ${declared} != blob length ${blob.length} - 8`);
  check(magicAt(blob, 4, DV_MAGIC), 'blob magic is not D1 D3 39 64');
  const crcStored = view.getUint32(blob.length - 4, false);
  const crc = zlib.crc32(blob.subarray(4, blob.length - 4)) >>> 0;
  check(crc === crcStored, `CRC-32 0x${crc.toString(16)} != stored 0x${crcStored.toString(16)}`);
  const end = blob.length - 4;
  const count = view.getBigUint64(8, true);
  let p = 16;
  const out: bigint[] = [];
  let lastKey = -1;
  for (let i = 0n; i < count; i++) {
    const key = view.getUint32(p, true);
    check(key > lastKey, `bitmap keys not ascending: ${lastKey} then ${key}`);
    lastKey = key;
    const { values, next } = decodePortableRoaring(view, p + 4, end);
    for (const v of values) out.push((BigInt(key) << 32n) | BigInt(v));
    p = next;
  }
  check(p === end, `${end - p} bytes between the last bitmap and the CRC`);
  return out;
}

/** One 32-bit Roaring bitmap in the portable format at `start`; returns values (ascending) and the end. */
function decodePortableRoaring(view: DataView, start: number, limit: number): { values: number[]; next: number } {
  let p = start;
  const cookieWord = view.getUint32(p, true);
  let size: number;
  let runFlags: Uint8Array | undefined;
  let hasOffsets: boolean;
  if ((cookieWord & 0xffff) === SERIAL_COOKIE) {
    size = (cookieWord >>> 16) + 1;
    p += 4;
    const n = Math.ceil(size / 8);
    runFlags = new Uint8Array(view.buffer, view.byteOffset + p, n);
    p += n;
    hasOffsets = size >= 4;
  } else {
    check(cookieWord === SERIAL_COOKIE_NO_RUNCONTAINER, `unknown Roaring cookie ${cookieWord}`);
    size = view.getUint32(p + 4, true);
    p += 8;
    hasOffsets = true;
  }
  const keys: number[] = [];
  const cards: number[] = [];
  for (let i = 0; i < size; i++) {
    keys.push(view.getUint16(p, true));
    cards.push(view.getUint16(p + 2, true) + 1);
    p += 4;
  }
  for (let i = 1; i < size; i++) check(keys[i] > keys[i - 1], `container keys not ascending: ${keys[i - 1]} then ${keys[i]}`);
  const offsets: number[] = [];
  if (hasOffsets) {
    for (let i = 0; i < size; i++) {
      offsets.push(view.getUint32(p, true));
      p += 4;
    }
  }
  const values: number[] = [];
  for (let i = 0; i < size; i++) {
    if (hasOffsets) check(start + offsets[i] === p, `container ${i} offset ${offsets[i]} does not match its position ${p - start}`);
    const high = keys[i] << 16;
    const isRun = runFlags !== undefined && (runFlags[i >> 3] & (1 << (i & 7))) !== 0;
    const before = values.length;
    if (isRun) {
      const runs = view.getUint16(p, true);
      p += 2;
      for (let r = 0; r < runs; r++) {
        const s = view.getUint16(p, true);
        const len = view.getUint16(p + 2, true);
        p += 4;
        for (let v = s; v <= s + len; v++) values.push((high | v) >>> 0);
      }
    } else if (cards[i] <= 4096) {
      let last = -1;
      for (let j = 0; j < cards[i]; j++) {
        const v = view.getUint16(p, true);
        check(v > last, `array container ${i} not strictly ascending`);
        last = v;
        values.push((high | v) >>> 0);
        p += 2;
      }
    } else {
      for (let w = 0; w < 1024; w++) {
        const word = view.getBigUint64(p, true);
        p += 8;
        for (let b = 0; b < 64; b++) if ((word >> BigInt(b)) & 1n) values.push((high | (w * 64 + b)) >>> 0);
      }
    }
    check(values.length - before === cards[i], `container ${i} holds ${values.length - before} values, its header says ${cards[i]}`);
    check(p <= limit, 'bitmap runs past the end of the blob');
  }
  return { values, next: p };
}
