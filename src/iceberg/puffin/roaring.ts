/**
 * 32-bit Roaring bitmaps in the "portable" serialization (RoaringFormatSpec, "General layout"), the
 * unit a `deletion-vector-v1` blob stores per 32-bit key (puffin-spec.md):
 *
 *   cookie  u32 LE 12346 (no run containers), then u32 LE container count n
 *        or u16 LE 12347 + u16 LE (n-1), then a run-container bitset of ceil(n/8) bytes
 *   n × (u16 LE key = high 16 bits, u16 LE cardinality-1)
 *   n × u32 LE container offsets from the bitmap start (always with 12346; with 12347 only if n ≥ 4)
 *   containers: array (cardinality ≤ 4096: sorted u16 LE values), bitmap (8192 bytes, bit v of the
 *   little-endian 64-bit words), or run (u16 LE run count, then (start, length-1) u16 LE pairs)
 *
 * The writer emits only array and bitmap containers with cookie 12346, the form every reader
 * accepts (docs/iceberg-writer-checklist.md §4.5); the reader also accepts run containers, which Java writes after
 * `runOptimize`.
 */
import { FloeError } from '../../util/errors.js';

const SUBSYSTEM = 'iceberg.puffin';
const SERIAL_COOKIE_NO_RUNCONTAINER = 12346;
const SERIAL_COOKIE = 12347;
/** Containers with more values than this are bitmaps (RoaringFormatSpec: DEFAULT_MAX_SIZE). */
const ARRAY_CONTAINER_MAX = 4096;
const BITMAP_BYTES = 8192;
const NO_OFFSET_THRESHOLD = 4;

interface Container {
  key: number;
  start: number;
  end: number;
}

function containersOf(values: Uint32Array): Container[] {
  const out: Container[] = [];
  let i = 0;
  while (i < values.length) {
    const key = values[i]! >>> 16;
    let j = i + 1;
    while (j < values.length && values[j]! >>> 16 === key) j++;
    out.push({ key, start: i, end: j });
    i = j;
  }
  return out;
}

function containerBytes(c: Container): number {
  const card = c.end - c.start;
  return card <= ARRAY_CONTAINER_MAX ? 2 * card : BITMAP_BYTES;
}

/** Serialized size of a bitmap of `values` (sorted ascending, unique). */
export function roaring32Size(values: Uint32Array): number {
  const cs = containersOf(values);
  let size = 8 + 8 * cs.length;
  for (const c of cs) size += containerBytes(c);
  return size;
}

/**
 * Writes the portable serialization of `values` (sorted ascending, unique) at `offset` of `out`,
 * which must have room for `roaring32Size(values)` bytes; returns the end offset.
 */
export function writeRoaring32(values: Uint32Array, out: Uint8Array, offset: number): number {
  for (let i = 1; i < values.length; i++) {
    if (values[i]! <= values[i - 1]!) throw new FloeError(SUBSYSTEM, 'internal', `roaring values must be sorted and unique, found ${values[i - 1]} then ${values[i]}`);
  }
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const cs = containersOf(values);
  const n = cs.length;
  let p = offset;
  view.setUint32(p, SERIAL_COOKIE_NO_RUNCONTAINER, true);
  view.setUint32(p + 4, n, true);
  p += 8;
  for (const c of cs) {
    view.setUint16(p, c.key, true);
    view.setUint16(p + 2, c.end - c.start - 1, true);
    p += 4;
  }
  // Offsets are relative to the start of this bitmap's serialization.
  let containerAt = 8 + 8 * n;
  for (const c of cs) {
    view.setUint32(p, containerAt, true);
    p += 4;
    containerAt += containerBytes(c);
  }
  for (const c of cs) {
    const card = c.end - c.start;
    if (card <= ARRAY_CONTAINER_MAX) {
      for (let i = c.start; i < c.end; i++) {
        view.setUint16(p, values[i]! & 0xffff, true);
        p += 2;
      }
    } else {
      out.fill(0, p, p + BITMAP_BYTES);
      for (let i = c.start; i < c.end; i++) {
        const low = values[i]! & 0xffff;
        out[p + (low >>> 3)]! |= 1 << (low & 7);
      }
      p += BITMAP_BYTES;
    }
  }
  return p;
}

function corrupt(offset: number, msg: string): FloeError {
  return new FloeError(SUBSYSTEM, 'invalid-data', `roaring bitmap at offset ${offset}: ${msg}; the deletion vector is corrupt`);
}

/**
 * Reads one portable 32-bit Roaring bitmap starting at `offset` (bounded by `limit`): its values in
 * ascending order and the offset just past it.
 */
export function deserializeRoaring32(bytes: Uint8Array, offset: number, limit = bytes.length): { values: Uint32Array; end: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const need = (p: number, n: number, what: string): void => {
    if (p + n > limit) throw corrupt(offset, `truncated while reading ${what} (needs ${n} bytes at ${p}, ends at ${limit})`);
  };
  let p = offset;
  need(p, 4, 'the cookie');
  const cookie = view.getUint32(p, true);
  let n: number;
  let runBitset: Uint8Array | undefined;
  if ((cookie & 0xffff) === SERIAL_COOKIE) {
    n = (cookie >>> 16) + 1;
    p += 4;
    const len = (n + 7) >>> 3;
    need(p, len, 'the run-container bitset');
    runBitset = bytes.subarray(p, p + len);
    p += len;
  } else if (cookie === SERIAL_COOKIE_NO_RUNCONTAINER) {
    need(p, 8, 'the container count');
    n = view.getUint32(p + 4, true);
    p += 8;
  } else {
    throw corrupt(offset, `unknown cookie ${cookie}; expected ${SERIAL_COOKIE_NO_RUNCONTAINER} or ${SERIAL_COOKIE} (portable format)`);
  }
  if (n > 65536) throw corrupt(offset, `${n} containers; a 32-bit bitmap has at most 65536`);
  need(p, 4 * n, 'the container headers');
  const keys = new Uint32Array(n);
  const cards = new Uint32Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    keys[i] = view.getUint16(p, true);
    cards[i] = view.getUint16(p + 2, true) + 1;
    total += cards[i]!;
    if (i > 0 && keys[i]! <= keys[i - 1]!) throw corrupt(offset, `container keys not ascending (${keys[i - 1]} then ${keys[i]})`);
    p += 4;
  }
  if (!runBitset || n >= NO_OFFSET_THRESHOLD) {
    need(p, 4 * n, 'the container offsets');
    p += 4 * n; // containers are read in sequence; the offsets only allow random access
  }
  const values = new Uint32Array(total);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const high = keys[i]! * 65536;
    const card = cards[i]!;
    const isRun = runBitset !== undefined && (runBitset[i >>> 3]! & (1 << (i & 7))) !== 0;
    if (isRun) {
      need(p, 2, 'a run count');
      const runs = view.getUint16(p, true);
      p += 2;
      need(p, 4 * runs, 'runs');
      let seen = 0;
      let last = -1;
      for (let r = 0; r < runs; r++) {
        const start = view.getUint16(p, true);
        const length = view.getUint16(p + 2, true) + 1;
        p += 4;
        if (start <= last || start + length > 65536) throw corrupt(offset, `run [${start}, +${length}) overlaps or leaves the container`);
        seen += length;
        if (seen > card) throw corrupt(offset, `runs hold more than the declared cardinality ${card}`);
        for (let x = 0; x < length; x++) values[k++] = high + start + x;
        last = start + length - 1;
      }
      if (seen !== card) throw corrupt(offset, `runs hold ${seen} values, the header says ${card}`);
    } else if (card <= ARRAY_CONTAINER_MAX) {
      need(p, 2 * card, 'an array container');
      let last = -1;
      for (let x = 0; x < card; x++) {
        const v = view.getUint16(p, true);
        p += 2;
        if (v <= last) throw corrupt(offset, `array container values not ascending (${last} then ${v})`);
        values[k++] = high + v;
        last = v;
      }
    } else {
      need(p, BITMAP_BYTES, 'a bitmap container');
      let seen = 0;
      for (let b = 0; b < BITMAP_BYTES; b++) {
        let byte = bytes[p + b]!;
        while (byte !== 0) {
          const bit = 31 - Math.clz32(byte & -byte);
          if (seen >= card) throw corrupt(offset, `bitmap container holds more than the declared cardinality ${card}`);
          values[k++] = high + b * 8 + bit;
          seen++;
          byte &= byte - 1;
        }
      }
      if (seen !== card) throw corrupt(offset, `bitmap container holds ${seen} values, the header says ${card}`);
      p += BITMAP_BYTES;
    }
  }
  return { values, end: p };
}
