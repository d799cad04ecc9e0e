/**
 * The storage of a value index in memory (memory-value-index.ts): a multimap from values (KeyIds)
 * to entries — a place (file slot × 2^32 + position) and the row's owner (its primary key, or
 * none). Each value heads a chain of its entries, held in typed arrays (no object per entry: a
 * keyless table's row index holds one per row); numeric values find their chain's head through a
 * typed-array hash table (number-key-table.ts), string values through a Map (large-map.ts).
 *
 * Entries are never looked up one by one, only by value: a chain is walked, and entries its caller
 * finds dead (their position deleted, their file gone) are unlinked on the way (`walk`), their slots
 * reused.
 */
import { LargeMap } from '../../util/large-map.js';
import { NumberKeyTable } from './number-key-table.js';
import type { KeyId } from './table-key.js';

const NONE = -1;
const MIN_ENTRIES = 1024;
/** About what a string value's Map entry costs besides its characters (2 bytes each). */
const STRING_VALUE_BYTES = 64;

export class ValueChains {
  private readonly numbers = new NumberKeyTable();
  private readonly strings = new LargeMap<string, number>();
  private places = new Float64Array(MIN_ENTRIES);
  private next = new Int32Array(MIN_ENTRIES);
  /** Numeric owners; NaN: none, or a string owner in `ownerStrings`. */
  private ownerNumbers = new Float64Array(MIN_ENTRIES);
  private ownerStrings: (string | undefined)[] | undefined;
  /** Entry slots in use so far (below it, free ones are chained from `free`). */
  private top = 0;
  private free = NONE;
  /** Entries held. */
  size = 0;
  private stringBytes = 0;

  /** About how many bytes the entries and values take. */
  get memoryBytes(): number {
    return 20 * this.places.length + 23 * this.numbers.size + this.stringBytes + (this.ownerStrings ? 8 * this.places.length : 0);
  }

  /** Adds an entry of `value`. */
  add(value: KeyId, place: number, owner: KeyId | undefined): void {
    const e = this.allocate();
    this.places[e] = place;
    if (typeof owner === 'string') {
      this.ownerNumbers[e] = Number.NaN;
      (this.ownerStrings ??= [])[e] = owner;
    } else {
      this.ownerNumbers[e] = owner ?? Number.NaN;
      if (this.ownerStrings) this.ownerStrings[e] = undefined;
    }
    if (typeof value === 'number') {
      const numbers = this.numbers;
      const at = numbers.find(value);
      this.next[e] = at < 0 ? NONE : numbers.first(at);
      numbers.set(value, e, 0);
    } else {
      const head = this.strings.get(value);
      if (head === undefined) this.stringBytes += STRING_VALUE_BYTES + 2 * value.length;
      this.next[e] = head ?? NONE;
      this.strings.set(value, e);
    }
    this.size++;
  }

  /**
   * `each(place, owner)` for the entries of `value`, newest first; an entry it answers 'drop' for is
   * removed, and 'stop' ends the walk.
   */
  walk(value: KeyId, each: (place: number, owner: KeyId | undefined) => 'keep' | 'drop' | 'stop'): void {
    let head: number;
    if (typeof value === 'number') {
      const at = this.numbers.find(value);
      if (at < 0) return;
      head = this.numbers.first(at);
    } else {
      const h = this.strings.get(value);
      if (h === undefined) return;
      head = h;
    }
    let prev = NONE;
    let newHead = head;
    let e = head;
    while (e !== NONE) {
      const after = this.next[e]!;
      const verdict = each(this.places[e]!, this.ownerOf(e));
      if (verdict === 'drop') {
        if (prev === NONE) newHead = after;
        else this.next[prev] = after;
        this.release(e);
      } else {
        prev = e;
        if (verdict === 'stop') break;
      }
      e = after;
    }
    if (newHead !== head) this.setHead(value, newHead);
  }

  /** Removes every entry whose place `drop` answers true for (a compaction dropped their files). */
  removeWhere(drop: (place: number) => boolean): void {
    const values: KeyId[] = [];
    this.numbers.forEach((v) => values.push(v));
    for (const v of this.strings.keys()) values.push(v);
    for (const v of values) this.walk(v, (place) => (drop(place) ? 'drop' : 'keep'));
  }

  /** `each(value, place, owner)` for every entry. */
  forEach(each: (value: KeyId, place: number, owner: KeyId | undefined) => void): void {
    this.numbers.forEach((v, head) => this.chain(head, (e) => each(v, this.places[e]!, this.ownerOf(e))));
    for (const [v, head] of this.strings) this.chain(head, (e) => each(v, this.places[e]!, this.ownerOf(e)));
  }

  private chain(head: number, each: (entry: number) => void): void {
    for (let e = head; e !== NONE; e = this.next[e]!) each(e);
  }

  private ownerOf(e: number): KeyId | undefined {
    const n = this.ownerNumbers[e]!;
    if (!Number.isNaN(n)) return n;
    return this.ownerStrings?.[e];
  }

  private setHead(value: KeyId, head: number): void {
    if (typeof value === 'number') {
      if (head === NONE) this.numbers.delete(value);
      else this.numbers.set(value, head, 0);
    } else if (head === NONE) {
      this.strings.delete(value);
      this.stringBytes -= STRING_VALUE_BYTES + 2 * value.length;
    } else this.strings.set(value, head);
  }

  private allocate(): number {
    if (this.free !== NONE) {
      const e = this.free;
      this.free = this.next[e]!;
      return e;
    }
    if (this.top === this.places.length) this.grow();
    return this.top++;
  }

  private release(e: number): void {
    if (this.ownerStrings) this.ownerStrings[e] = undefined;
    this.next[e] = this.free;
    this.free = e;
    this.size--;
  }

  private grow(): void {
    const n = this.places.length * 2;
    const places = new Float64Array(n);
    places.set(this.places);
    const next = new Int32Array(n);
    next.set(this.next);
    const owners = new Float64Array(n);
    owners.set(this.ownerNumbers);
    this.places = places;
    this.next = next;
    this.ownerNumbers = owners;
  }
}
