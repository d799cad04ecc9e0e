/**
 * A set of row positions in one data file, the content of a deletion vector (spec "Deletion
 * Vectors"): 64-bit positions split into a 32-bit key (most significant 4 bytes) and a 32-bit
 * sub-position, with one 32-bit set per key, keys in unsigned ascending order.
 *
 * Positions are kept per key as a sorted, de-duplicated `Uint32Array` (4 bytes per position);
 * additions are buffered in a set and merged lazily, so bulk `add` is O(1) amortized and `has` is a
 * binary search plus a set lookup — without merging, so that the upsert writer's interleaved
 * `has`/`add` per deleted row stays O(log n) and not a copy of the whole array each time. Positions
 * must satisfy 0 ≤ pos < 2^63 (the most significant bit must be 0, puffin-spec.md).
 */
import { FloeError } from '../../util/errors.js';

const SUBSYSTEM = 'iceberg.puffin';
const TWO_32 = 4294967296;
const MAX_POSITION = 2n ** 63n - 1n;

interface KeySet {
  sorted: Uint32Array;
  /** Added since the last merge (may overlap `sorted`). */
  pending: Set<number>;
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
      else b.keys.set(key, { sorted: values, pending: new Set() });
    }
    return b;
  }

  add(pos: bigint | number): void {
    const { key, low } = split(pos);
    let set = this.keys.get(key);
    if (!set) {
      set = { sorted: new Uint32Array(0), pending: new Set() };
      this.keys.set(key, set);
    }
    set.pending.add(low);
    // Bound the buffer: merge once it outgrows the sorted part, keeping memory near 4 bytes/position.
    if (set.pending.size > 1024 && set.pending.size > set.sorted.length) this.normalizeKey(set);
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
    if (set.pending.has(low)) return true;
    const a = set.sorted;
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

  /** Number of distinct positions. */
  get cardinality(): bigint {
    let n = 0;
    for (const set of this.keys.values()) {
      this.normalizeKey(set);
      n += set.sorted.length;
    }
    return BigInt(n);
  }

  get isEmpty(): boolean {
    for (const set of this.keys.values()) if (set.sorted.length > 0 || set.pending.size > 0) return false;
    return true;
  }

  /** The union of this bitmap and `other`, as a new bitmap (merging a new DV with an earlier one). */
  union(other: PositionBitmap): PositionBitmap {
    const out = new PositionBitmap();
    for (const src of [this, other]) {
      for (const [key, low] of src.keyed()) {
        const set = out.keys.get(key);
        if (set) set.sorted = mergeSortedArrays(set.sorted, low);
        else out.keys.set(key, { sorted: low, pending: new Set() });
      }
    }
    return out;
  }

  /** Per key (ascending unsigned), the sorted unique 32-bit sub-positions. Empty keys are skipped. */
  keyed(): [number, Uint32Array][] {
    const out: [number, Uint32Array][] = [];
    for (const [key, set] of [...this.keys.entries()].sort((a, b) => a[0] - b[0])) {
      this.normalizeKey(set);
      if (set.sorted.length > 0) out.push([key, set.sorted]);
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

  private normalizeKey(set: KeySet): void {
    if (set.pending.size === 0) return;
    set.sorted = mergeSorted(set.sorted, set.pending);
    set.pending = new Set();
  }
}

/** The union of two position sets (a new DV merged with the file's earlier DV; spec "Deletion Vectors"). */
export function union(a: PositionBitmap, b: PositionBitmap): PositionBitmap {
  return a.union(b);
}
