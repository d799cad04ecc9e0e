/**
 * A hash table from integer-valued numbers (the numeric `KeyId`s of table-key.ts: integers within
 * ±2^53) to a pair of 32-bit values — the key index's (data file slot, row position) — held in one typed
 * buffer: open addressing with linear probing, tombstones for deletes, rehashed at 70% occupancy.
 * A slot is 16 bytes, the key and its two values side by side, so an insert or a lookup of a key
 * that is not in the CPU's cache costs one cache line, not one per array (three separate arrays
 * made a 2M-key index build three times as slow: a table of 4M slots is far larger than the caches).
 *
 * Why not a Map<number, number>: the key index holds one entry per live row, millions of them, and
 * a packed value file × 2^32 + position above 2^31 is a heap number per entry. Building the index of
 * a 2M-row table spent a seventh of the CDC run in Map.set and much of the rest in collections
 * tracing those numbers (a CPU profile of the bench, docs/performance.md). Here an entry is 16 bytes and no
 * object, and nothing in the table is for the GC to trace.
 */

import { FloeError } from '../../util/errors.js';

/**
 * The tag of a slot: its first value + 1 when live, as a 32-bit word (so a first value of 2^31 − 1
 * is stored as −2^31 and read back unsigned); 0 empty (a fresh buffer is all empty), −1 a tombstone.
 */
const EMPTY = 0;
const DELETED = -1;
const MIN_CAPACITY = 1024;

function isLive(tag: number): boolean {
  return tag !== EMPTY && tag !== DELETED;
}
/** Occupancy (entries and tombstones) beyond which the table is rehashed. */
const MAX_LOAD = 0.7;

/** A 32-bit hash of an integer-valued double (its low and high 32-bit halves, mixed). */
function hashOf(k: number): number {
  const low = k | 0; // ToInt32: the low 32 bits of an integer
  const high = Math.floor(k / 4294967296) | 0;
  let h = Math.imul(low ^ Math.imul(high, 0x27d4eb2d), 0x9e3779b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h;
}

/**
 * A table's whole contents, to hand it to another thread (worker-key-table.ts builds a key index's
 * table in a worker and transfers `buffer`, no copy).
 */
export interface NumberKeyTableState {
  readonly buffer: ArrayBuffer;
  readonly size: number;
  readonly occupied: number;
}

export class NumberKeyTable {
  /** Slot i: the key at keys[2i]; the tag at words[4i + 2], the second value at words[4i + 3]. */
  private keys: Float64Array;
  private words: Int32Array;
  private mask: number;
  /** Live entries. */
  size = 0;
  /** Live entries and tombstones: what the probe sequences run through. */
  private occupied = 0;

  /** `expected`: entries to make room for without growing. */
  constructor(expected = 0) {
    let n = MIN_CAPACITY;
    while (n * MAX_LOAD < expected + 1) n *= 2;
    this.keys = new Float64Array(2 * n);
    this.words = new Int32Array(this.keys.buffer);
    this.mask = n - 1;
  }

  /** The table whose contents `state()` gave (in this thread or another one). */
  static fromState(state: NumberKeyTableState): NumberKeyTable {
    const slots = state.buffer.byteLength / 16;
    if (!Number.isInteger(slots) || slots < MIN_CAPACITY || (slots & (slots - 1)) !== 0 || state.size > state.occupied || state.occupied > slots) {
      throw new FloeError('iceberg.writer', 'internal', `a key table state of ${state.buffer.byteLength} bytes, ${state.size} entries and ${state.occupied} occupied slots is not one a table gives (number-key-table.ts)`);
    }
    const table = new NumberKeyTable();
    table.keys = new Float64Array(state.buffer);
    table.words = new Int32Array(state.buffer);
    table.mask = slots - 1;
    table.size = state.size;
    table.occupied = state.occupied;
    return table;
  }

  /**
   * The contents — to be transferred (the table must not be used afterwards), or written out as
   * they are (saved-index-file.ts: the table stays usable when the buffer is not transferred).
   */
  state(): NumberKeyTableState {
    return { buffer: this.keys.buffer as ArrayBuffer, size: this.size, occupied: this.occupied };
  }

  /** The slot of `k`, or -1; its values are `first(slot)` and `second(slot)`. */
  find(k: number): number {
    const keys = this.keys;
    const words = this.words;
    const mask = this.mask;
    for (let i = hashOf(k) & mask; ; i = (i + 1) & mask) {
      const tag = words[4 * i + 2]!;
      if (tag === EMPTY) return -1;
      if (tag !== DELETED && keys[2 * i] === k) return i;
    }
  }

  first(slot: number): number {
    return (this.words[4 * slot + 2]! - 1) >>> 0;
  }

  second(slot: number): number {
    return this.words[4 * slot + 3]! >>> 0;
  }

  /**
   * Makes room for `more` new entries at once: one rehash to the size they need instead of one per
   * doubling on the way (a snapshot's commit adds half a million keys to the key index at a time).
   */
  reserve(more: number): void {
    const capacity = this.mask + 1;
    // Tombstones do not count: `set` reuses them and cleans them itself once they fill the table.
    // A commit deletes the keys whose rows moved again and sets them anew, so counting their
    // tombstones here would rebuild the whole table at every commit.
    if (this.size + more <= capacity * MAX_LOAD) return;
    let next = capacity;
    while ((this.size + more + 1) > next * MAX_LOAD) next *= 2;
    this.rebuild(next);
  }

  /** The values a `set` replaced (when it returned true). */
  previousFirst = 0;
  previousSecond = 0;

  /**
   * Sets the values of `k`; `first` a non-negative 31-bit integer (below 2^31), `second` an unsigned
   * 32-bit one. Whether `k` had values already — those are left in `previousFirst` / `previousSecond`.
   */
  set(k: number, first: number, second: number): boolean {
    if (this.occupied + 1 > (this.mask + 1) * MAX_LOAD) this.rehash();
    const keys = this.keys;
    const words = this.words;
    const mask = this.mask;
    let tombstone = -1;
    for (let i = hashOf(k) & mask; ; i = (i + 1) & mask) {
      const tag = words[4 * i + 2]!;
      if (tag === EMPTY) {
        const at = tombstone >= 0 ? tombstone : i;
        if (tombstone < 0) this.occupied++;
        keys[2 * at] = k;
        words[4 * at + 2] = first + 1;
        words[4 * at + 3] = second;
        this.size++;
        return false;
      }
      if (tag === DELETED) {
        if (tombstone < 0) tombstone = i;
      } else if (keys[2 * i] === k) {
        this.previousFirst = (tag - 1) >>> 0;
        this.previousSecond = words[4 * i + 3]! >>> 0;
        words[4 * i + 2] = first + 1;
        words[4 * i + 3] = second;
        return true;
      }
    }
  }

  /** Removes `k`; whether it was there. */
  delete(k: number): boolean {
    const slot = this.find(k);
    if (slot < 0) return false;
    this.deleteSlot(slot);
    return true;
  }

  /** Removes the entry `find` gave the slot of (no second probe). */
  deleteSlot(slot: number): void {
    this.words[4 * slot + 2] = DELETED;
    this.size--;
  }

  /** Removes every entry (the storage stays, for the next round of the same size). */
  clear(): void {
    this.words.fill(0);
    this.size = 0;
    this.occupied = 0;
  }

  /** `each(key, first, second)` for every live entry: `entries` without an array (and an iterator result) per entry. */
  forEach(each: (key: number, first: number, second: number) => void): void {
    const capacity = this.mask + 1;
    const keys = this.keys;
    const words = this.words;
    for (let i = 0; i < capacity; i++) {
      const tag = words[4 * i + 2]!;
      if (isLive(tag)) each(keys[2 * i]!, (tag - 1) >>> 0, words[4 * i + 3]! >>> 0);
    }
  }

  /** Every live entry as [key, first, second], one at a time. */
  *entries(): Generator<readonly [number, number, number]> {
    const capacity = this.mask + 1;
    for (let i = 0; i < capacity; i++) {
      const tag = this.words[4 * i + 2]!;
      if (isLive(tag)) yield [this.keys[2 * i]!, (tag - 1) >>> 0, this.words[4 * i + 3]! >>> 0];
    }
  }

  /** Grows (or, with many tombstones, only cleans) the table and re-inserts the live entries. */
  private rehash(): void {
    const capacity = this.mask + 1;
    this.rebuild(this.size + 1 > (capacity * MAX_LOAD) / 2 ? capacity * 2 : capacity);
  }

  /** Re-inserts the live entries into a table of `next` slots (a power of two). */
  private rebuild(next: number): void {
    const capacity = this.mask + 1;
    const { keys, words } = this;
    this.keys = new Float64Array(2 * next);
    this.words = new Int32Array(this.keys.buffer);
    this.mask = next - 1;
    this.size = 0;
    this.occupied = 0;
    for (let i = 0; i < capacity; i++) {
      const tag = words[4 * i + 2]!;
      if (isLive(tag)) this.set(keys[2 * i]!, (tag - 1) >>> 0, words[4 * i + 3]! >>> 0);
    }
  }
}
