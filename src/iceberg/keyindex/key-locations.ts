/**
 * Key → (file slot, row position): what the key index (key-index.ts) and a keyed writer's
 * in-checkpoint map (keyed-change-writer.ts) both hold, one entry per row. Numeric keys go to a
 * typed-array table (number-key-table.ts: no object per entry); string keys to a Map (large-map.ts:
 * past the 2^24 entries one V8 Map holds) with the two values packed into one number,
 * slot × 2^32 + position.
 *
 * A lookup allocates nothing: `find` (or `take`) says whether the key is there and leaves its values
 * in `foundSlot` / `foundPos`.
 */
import { LargeMap } from '../../util/large-map.js';
import { NumberKeyTable, type NumberKeyTableState } from './number-key-table.js';
import type { KeyId } from './table-key.js';

const TWO_32 = 4294967296;

/** Every entry as plain data (saved-index-file.ts): the numeric keys' table, the string keys and their packed values. */
export interface KeyLocationsState {
  readonly numbers: NumberKeyTableState;
  readonly strings: { readonly keys: string[]; readonly values: Float64Array };
}

export class KeyLocations {
  private readonly numbers: NumberKeyTable;
  private readonly strings = new LargeMap<string, number>();
  /** The values of the key the last successful `find` / `take` found. */
  foundSlot = 0;
  foundPos = 0;

  /** `numbers`: numeric keys to make room for without growing, or the table of numeric keys to start with. */
  constructor(numbers: number | NumberKeyTable = 0) {
    this.numbers = typeof numbers === 'number' ? new NumberKeyTable(numbers) : numbers;
  }

  /** The locations `state()` gave (the numeric table takes `state.numbers.buffer` over). */
  static fromState(state: KeyLocationsState): KeyLocations {
    const locations = new KeyLocations(NumberKeyTable.fromState(state.numbers));
    const { keys, values } = state.strings;
    for (let i = 0; i < keys.length; i++) locations.strings.set(keys[i]!, values[i]!);
    return locations;
  }

  /** Every entry as plain data; the numeric table's buffer is shared, not copied (do not transfer it). */
  state(): KeyLocationsState {
    const keys = [...this.strings.keys()];
    const values = Float64Array.from(this.strings.values());
    return { numbers: this.numbers.state(), strings: { keys, values } };
  }

  get size(): number {
    return this.numbers.size + this.strings.size;
  }

  /** Whether `k` is there; its values are then in `foundSlot` / `foundPos`. */
  find(k: KeyId): boolean {
    return typeof k === 'number' ? this.foundNumber(this.numbers.find(k)) : this.foundString(this.strings.get(k));
  }

  /** `find`, and the key removed when it was there. */
  take(k: KeyId): boolean {
    if (typeof k === 'number') {
      const slot = this.numbers.find(k);
      if (!this.foundNumber(slot)) return false;
      this.numbers.deleteSlot(slot);
      return true;
    }
    if (!this.foundString(this.strings.get(k))) return false;
    this.strings.delete(k);
    return true;
  }

  /** `slot` a non-negative 31-bit integer, `pos` an unsigned 32-bit one. */
  set(k: KeyId, slot: number, pos: number): void {
    if (typeof k === 'number') this.numbers.set(k, slot, pos);
    else this.strings.set(k, slot * TWO_32 + pos);
  }

  /**
   * `set`, and whether `k` had values before — those are left in `foundSlot` / `foundPos`: one probe
   * where `take` then `set` of a key the map does not hold make two.
   */
  swap(k: KeyId, slot: number, pos: number): boolean {
    if (typeof k === 'number') {
      const numbers = this.numbers;
      if (!numbers.set(k, slot, pos)) return false;
      this.foundSlot = numbers.previousFirst;
      this.foundPos = numbers.previousSecond;
      return true;
    }
    const old = this.strings.get(k);
    this.strings.set(k, slot * TWO_32 + pos);
    return this.foundString(old);
  }

  /** Room for `more` new numeric keys without a rehash on the way (NumberKeyTable.reserve). */
  reserve(more: number): void {
    this.numbers.reserve(more);
  }

  delete(k: KeyId): void {
    if (typeof k === 'number') this.numbers.delete(k);
    else this.strings.delete(k);
  }

  clear(): void {
    this.numbers.clear();
    this.strings.clear();
  }

  /** `each(key, slot, position)` for every entry (no array per entry, as `entries` makes). */
  forEach(each: (k: KeyId, slot: number, pos: number) => void): void {
    this.numbers.forEach(each);
    for (const [k, packed] of this.strings) each(k, Math.floor(packed / TWO_32), packed % TWO_32);
  }

  /** Every entry as [key, slot, position], one at a time. */
  *entries(): Generator<readonly [KeyId, number, number]> {
    yield* this.numbers.entries();
    for (const [k, packed] of this.strings) yield [k, Math.floor(packed / TWO_32), packed % TWO_32];
  }

  private foundNumber(slot: number): boolean {
    if (slot < 0) return false;
    this.foundSlot = this.numbers.first(slot);
    this.foundPos = this.numbers.second(slot);
    return true;
  }

  private foundString(packed: number | undefined): boolean {
    if (packed === undefined) return false;
    this.foundSlot = Math.floor(packed / TWO_32);
    this.foundPos = packed % TWO_32;
    return true;
  }
}
