/**
 * A set of row positions in one data file, the content of a deletion vector (spec "Deletion
 * Vectors"): 64-bit positions split into a 32-bit key (most significant 4 bytes) and a 32-bit
 * sub-position, with one 32-bit set per key, keys in unsigned ascending order.
 *
 * Each key's set has one of two forms, like a roaring bitmap's containers (a
 * "deletion-vector-v1" blob stores them as 32-bit roaring bitmaps: puffin-spec.md,
 * docs/iceberg-writer-checklist.md §4.5):
 * - sparse: a sorted, de-duplicated `Uint32Array` (4 bytes per position), additions buffered in a
 *   set and merged lazily, so bulk `add` is O(1) amortized and `has` is a binary search plus a set
 *   lookup — without merging, so that the upsert writer's interleaved `has`/`add` per deleted row
 *   stays O(log n) and not a copy of the whole array each time;
 * - dense: one bit per position of the range [0, 32 × words), taken once a merge finds the positions
 *   fill at least 1/32 of their range (the bits then take no more room than the array). The upsert
 *   writer's targets become dense — a checkpoint deletes many rows of the files it touches, the rows
 *   of its own files most of all — and a set's `add` and `has` are then a bit operation, not a hash
 *   (a hash per position is work on the CDC path's main thread for every row it deletes). A position far beyond the range
 *   that would leave the bits below 1/64 full turns the set sparse again.
 *
 * Positions must satisfy 0 ≤ pos < 2^63 (the most significant bit must be 0, puffin-spec.md).
 */
import { FloeError } from '../../util/errors.js';

const SUBSYSTEM = 'iceberg.puffin';
const TWO_32 = 4294967296;
const MAX_POSITION = 2n ** 63n - 1n;

interface KeySet {
  /** Sparse form: the sorted unique sub-positions (empty in the dense form). */
  sorted: Uint32Array;
  /** Sparse form: added since the last merge (may overlap `sorted`). */
  pending: Set<number>;
  /** Dense form: bit (p & 31) of word p >>> 5 is sub-position p. */
  bits: Uint32Array | undefined;
  /** Dense form: how many bits are set. */
  count: number;
}

/** A sparse set of this many positions or more may turn dense (below it the array is small anyway). */
const DENSE_MIN = 1024;

function sparseSet(sorted: Uint32Array): KeySet {
  return { sorted, pending: new Set(), bits: undefined, count: 0 };
}

/** The sorted sub-positions of a dense set. */
function bitsToSorted(bits: Uint32Array, count: number): Uint32Array {
  const out = new Uint32Array(count);
  let k = 0;
  for (let w = 0; w < bits.length; w++) {
    for (let v = bits[w]!; v !== 0; v &= v - 1) out[k++] = w * 32 + (31 - Math.clz32(v & -v));
  }
  return out;
}

/**
 * A position's 32-bit key and sub-position, in one object reused by every call (read it at once): a
 * pair per position was an allocation per deleted row on the upsert writer's hot path.
 */
const parts = { key: 0, low: 0 };

function split(pos: bigint | number): { readonly key: number; readonly low: number } {
  if (typeof pos === 'number') {
    if (!Number.isSafeInteger(pos) || pos < 0) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `row position ${pos}: expected a non-negative integer (use a bigint above 2^53)`);
    }
    parts.key = Math.floor(pos / TWO_32);
    parts.low = pos % TWO_32;
    return parts;
  }
  if (pos < 0n || pos > MAX_POSITION) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `row position ${pos}: expected 0 <= position < 2^63`);
  }
  parts.key = Number(pos >> 32n);
  parts.low = Number(pos & 0xffffffffn);
  return parts;
}

function mergeSorted(a: Uint32Array, added: Set<number>): Uint32Array {
  const pending = Float64Array.from(added).sort();
  const out = new Uint32Array(a.length + pending.length);
  let i = 0;
  let j = 0;
  let k = 0;
  let last = -1;
  while (i < a.length || j < pending.length) {
    const v = j >= pending.length || (i < a.length && a[i]! <= pending[j]!) ? a[i++]! : pending[j++]!;
    if (v !== last) {
      out[k++] = v;
      last = v;
    }
  }
  return out.subarray(0, k).slice();
}

/** Union of two sorted unique arrays. */
function mergeSortedArrays(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) {
    if (a[i]! < b[j]!) out[k++] = a[i++]!;
    else if (a[i]! > b[j]!) out[k++] = b[j++]!;
    else {
      out[k++] = a[i++]!;
      j++;
    }
  }
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return k === out.length ? out : out.slice(0, k);
}

export class PositionBitmap {
  private readonly keys = new Map<number, KeySet>();

  static of(positions: Iterable<bigint | number>): PositionBitmap {
    const b = new PositionBitmap();
    for (const p of positions) b.add(p);
    return b;
  }

  /** Builds a bitmap from one key's sorted unique sub-positions (used by the deserializer). */
  static fromKeyed(parts: Iterable<[key: number, values: Uint32Array]>): PositionBitmap {
    const b = new PositionBitmap();
    for (const [key, values] of parts) {
      if (values.length === 0) continue;
      const existing = b.keys.get(key);
      if (existing) existing.sorted = mergeSortedArrays(existing.sorted, values);
      else b.keys.set(key, sparseSet(values));
    }
    return b;
  }

  add(pos: bigint | number): void {
    this.put(pos, false);
  }

  /** Adds `pos`; whether it was not in the set before (one split and lookup instead of has + add). */
  addIfAbsent(pos: bigint | number): boolean {
    return this.put(pos, true);
  }

  /** `check` false: a sparse set buffers `pos` without looking (O(1), and the answer is true). */
  private put(pos: bigint | number, check: boolean): boolean {
    const { key, low } = split(pos);
    let set = this.keys.get(key);
    if (!set) {
      set = sparseSet(new Uint32Array(0));
      this.keys.set(key, set);
    }
    const bits = set.bits;
    if (bits !== undefined) {
      const w = low >>> 5;
      if (w >= bits.length) return addBeyond(set, low);
      const m = 1 << (low & 31);
      if ((bits[w]! & m) !== 0) return false;
      bits[w] = bits[w]! | m;
      set.count++;
      return true;
    }
    const pending = set.pending;
    if (check && (pending.has(low) || sortedHas(set.sorted, low))) return false;
    pending.add(low);
    // Bound the buffer: merge once it outgrows the sorted part, keeping memory near 4 bytes/position.
    if (pending.size > DENSE_MIN && pending.size > set.sorted.length) normalizeKey(set);
    return true;
  }

  addAll(positions: Iterable<bigint | number>): void {
    for (const p of positions) this.add(p);
  }

  has(pos: bigint | number): boolean {
    let key: number;
    let low: number;
    try {
      ({ key, low } = split(pos));
    } catch {
      return false;
    }
    const set = this.keys.get(key);
    if (!set) return false;
    const bits = set.bits;
    if (bits !== undefined) {
      const w = low >>> 5;
      return w < bits.length && (bits[w]! & (1 << (low & 31))) !== 0;
    }
    return set.pending.has(low) || sortedHas(set.sorted, low);
  }

  /** Number of distinct positions. */
  get cardinality(): bigint {
    let n = 0;
    for (const set of this.keys.values()) {
      normalizeKey(set);
      n += set.bits !== undefined ? set.count : set.sorted.length;
    }
    return BigInt(n);
  }

  get isEmpty(): boolean {
    for (const set of this.keys.values()) if (set.sorted.length > 0 || set.pending.size > 0 || set.count > 0) return false;
    return true;
  }

  /** The union of this bitmap and `other`, as a new bitmap (merging a new DV with an earlier one). */
  union(other: PositionBitmap): PositionBitmap {
    const out = new PositionBitmap();
    for (const src of [this, other]) {
      for (const [key, low] of src.keyed()) {
        const set = out.keys.get(key);
        if (set) set.sorted = mergeSortedArrays(set.sorted, low);
        else out.keys.set(key, sparseSet(low));
      }
    }
    return out;
  }

  /** Per key (ascending unsigned), the sorted unique 32-bit sub-positions. Empty keys are skipped. */
  keyed(): [number, Uint32Array][] {
    const out: [number, Uint32Array][] = [];
    for (const [key, set] of [...this.keys.entries()].sort((a, b) => a[0] - b[0])) {
      normalizeKey(set);
      const low = set.bits !== undefined ? bitsToSorted(set.bits, set.count) : set.sorted;
      if (low.length > 0) out.push([key, low]);
    }
    return out;
  }

  /** Every position in ascending order. */
  *positions(): Generator<bigint> {
    for (const [key, low] of this.keyed()) {
      const high = BigInt(key) << 32n;
      for (let i = 0; i < low.length; i++) yield high | BigInt(low[i]!);
    }
  }

  /** Every position in ascending order, as numbers (exact below 2^53: any data file's positions). */
  sortedNumbers(): Float64Array {
    const keyed = this.keyed();
    const out = new Float64Array(keyed.reduce((n, [, low]) => n + low.length, 0));
    let k = 0;
    for (const [key, low] of keyed) for (let i = 0; i < low.length; i++) out[k++] = key * TWO_32 + low[i]!;
    return out;
  }

  toArray(): bigint[] {
    return [...this.positions()];
  }
}

function sortedHas(a: Uint32Array, low: number): boolean {
  let lo = 0;
  let hi = a.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = a[mid]!;
    if (v === low) return true;
    if (v < low) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** Merges a sparse set's pending additions, and turns it dense when its positions fill 1/32 of their range. */
function normalizeKey(set: KeySet): void {
  if (set.bits !== undefined || set.pending.size === 0) return;
  const sorted = mergeSorted(set.sorted, set.pending);
  set.pending = new Set();
  const n = sorted.length;
  const words = n === 0 ? 0 : (sorted[n - 1]! >>> 5) + 1;
  if (n < DENSE_MIN || words > n) {
    set.sorted = sorted;
    return;
  }
  const bits = new Uint32Array(words);
  for (let i = 0; i < n; i++) {
    const v = sorted[i]!;
    bits[v >>> 5] = bits[v >>> 5]! | (1 << (v & 31));
  }
  set.bits = bits;
  set.count = n;
  set.sorted = new Uint32Array(0);
}

/**
 * A dense set's addition beyond its words: the bits grow (at least doubling, so that positions
 * added in ascending order cost amortized O(1)) while they stay 1/64 full; otherwise the set turns
 * sparse again (a far position must not cost 2^32 bits).
 */
function addBeyond(set: KeySet, low: number): boolean {
  const bits = set.bits!;
  const words = Math.max((low >>> 5) + 1, Math.min(bits.length * 2, 0x8000000));
  if (words <= (set.count + 1) * 2) {
    const grown = new Uint32Array(words);
    grown.set(bits);
    grown[low >>> 5] = 1 << (low & 31);
    set.bits = grown;
  } else {
    set.sorted = bitsToSorted(bits, set.count);
    set.bits = undefined;
    set.count = 0;
    set.pending.add(low);
    return true;
  }
  set.count++;
  return true;
}

/** The union of two position sets (a new DV merged with the file's earlier DV; spec "Deletion Vectors"). */
export function union(a: PositionBitmap, b: PositionBitmap): PositionBitmap {
  return a.union(b);
}
