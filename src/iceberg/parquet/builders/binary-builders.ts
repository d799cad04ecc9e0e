/**
 * Builders of byte columns: FIXED_LEN_BYTE_ARRAY for fixed[L] (bytes) and uuid (8-4-4-4-12 text → 16
 * big-endian bytes), and BYTE_ARRAY for string (UTF-8) and binary. Bounds compare
 * unsigned bytes, strings by code point (value-compare.ts).
 */
import * as arrow from 'apache-arrow';
import { FloeError } from '../../../util/errors.js';
import { compareBytes, compareStrings } from '../../spec/value-compare.js';
import type { PrimitiveType } from '../../spec/types.js';
import type { FieldStats } from '../field-stats.js';
import { INITIAL_BYTES, INITIAL_SLOTS, PrimitiveBuilder, SUBSYSTEM, badValue, grow } from './builder-base.js';

/**
 * Writes the UTF-8 of `s` into `data` at `at` (room for 3 bytes per UTF-16 unit assumed) and returns
 * the bytes written; unpaired surrogates become U+FFFD either way. Under Node, Buffer's own UTF-8
 * writer, which takes any Uint8Array as `this` (a C++ fast path: about 3× a copy loop in JS over the
 * ASCII of an 80-character string, and no view per value as `encodeInto` needs); elsewhere
 * TextEncoder. Buffer is only looked up, so this module stays runtime-neutral (docs/design.md §1).
 */
const encodeUtf8: (data: Uint8Array, s: string, at: number) => number = (() => {
  type Utf8Write = (this: Uint8Array, s: string, offset: number) => number;
  const write = (globalThis as { Buffer?: { prototype: { utf8Write?: Utf8Write } } }).Buffer?.prototype.utf8Write;
  if (write) return (data, s, at) => write.call(data, s, at);
  const utf8 = new TextEncoder();
  return (data, s, at) => utf8.encodeInto(s, data.subarray(at)).written;
})();

/** FIXED_LEN_BYTE_ARRAY: fixed[L] from bytes, uuid from its 8-4-4-4-12 text. */
export class FixedBuilder extends PrimitiveBuilder {
  private bytes: Uint8Array;
  private readonly width: number;
  private readonly uuid: boolean;

  constructor(path: string, type: PrimitiveType, required: boolean, stats: FieldStats | undefined) {
    super(path, type, required, stats);
    this.uuid = type.kind === 'uuid';
    this.width = type.kind === 'fixed' ? type.length : 16;
    this.bytes = new Uint8Array(this.width * INITIAL_SLOTS);
  }

  protected appendValue(v: unknown): void {
    const w = this.width;
    const o = this.length * w;
    if (o + w > this.bytes.length) this.bytes = grow(this.bytes, o + w);
    if (this.uuid) {
      if (typeof v !== 'string' || !writeUuid(v, this.bytes, o)) badValue(this.path, this.type, 'a uuid string (8-4-4-4-12 hex)', v);
    } else {
      if (!(v instanceof Uint8Array) || v.length !== w) badValue(this.path, this.type, `${w} bytes`, v);
      this.bytes.set(v, o);
    }
    const s = this.stats;
    if (s) {
      s.valueCount++;
      if (s.tracksBounds) {
        const view = this.bytes.subarray(o, o + w);
        if (s.min === undefined || compareBytes(view, s.min as Uint8Array) < 0) s.min = view.slice();
        if (s.max === undefined || compareBytes(view, s.max as Uint8Array) > 0) s.max = view.slice();
      }
    }
    this.length++;
  }

  protected pushPlaceholder(): void {
    const o = this.length * this.width;
    if (o + this.width > this.bytes.length) this.bytes = grow(this.bytes, o + this.width);
    this.bytes.fill(0, o, o + this.width);
  }

  byteSize(): number {
    return this.length * this.width + this.validity.bytes;
  }

  finish(last = false): arrow.Data {
    const n = this.length;
    const data = this.bytes.subarray(0, n * this.width);
    const v = this.takeValidity();
    this.bytes = new Uint8Array(last ? 0 : this.width * Math.min(Math.max(n, INITIAL_SLOTS), 1 << 16));
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.FixedSizeBinary, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, data });
  }
}

function hexNibble(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** Writes the 16 big-endian bytes of a UUID string; false if it is not 8-4-4-4-12 hex. */
function writeUuid(s: string, out: Uint8Array, offset: number): boolean {
  if (s.length !== 36 || s[8] !== '-' || s[13] !== '-' || s[18] !== '-' || s[23] !== '-') return false;
  let k = offset;
  for (let i = 0; i < 36; ) {
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      i++;
      continue;
    }
    const hi = hexNibble(s.charCodeAt(i));
    const lo = hexNibble(s.charCodeAt(i + 1));
    if (hi < 0 || lo < 0) return false;
    out[k++] = (hi << 4) | lo;
    i += 2;
  }
  return true;
}

export class VarBinaryBuilder extends PrimitiveBuilder {
  private offsets = new Int32Array(INITIAL_SLOTS + 1);
  private data = new Uint8Array(INITIAL_BYTES);
  private used = 0;
  private readonly text: boolean;

  constructor(path: string, type: PrimitiveType, required: boolean, stats: FieldStats | undefined) {
    super(path, type, required, stats);
    this.text = type.kind === 'string';
  }

  protected appendValue(v: unknown): void {
    const i = this.length;
    if (i + 1 >= this.offsets.length) this.offsets = grow(this.offsets, i + 2);
    if (this.text) {
      if (typeof v !== 'string') badValue(this.path, this.type, 'a string', v);
      // UTF-8 needs at most 3 bytes per UTF-16 unit.
      const len = v.length;
      if (this.used + len * 3 > this.data.length) this.data = grow(this.data, this.used + len * 3);
      this.used += encodeUtf8(this.data, v, this.used);
    } else {
      if (!(v instanceof Uint8Array)) badValue(this.path, this.type, 'bytes (Uint8Array)', v);
      const need = this.used + v.length;
      if (need > this.data.length) this.data = grow(this.data, need);
      this.data.set(v, this.used);
      this.used += v.length;
    }
    if (this.used > 0x7fffffff) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `column ${this.path}: more than 2 GiB of ${this.text ? 'string' : 'binary'} data in one batch; use smaller batches`);
    }
    this.offsets[i + 1] = this.used;
    const s = this.stats;
    if (s) {
      s.valueCount++;
      if (s.tracksBounds) {
        if (this.text) {
          const str = v as string;
          if (s.min === undefined || compareStrings(str, s.min as string) < 0) s.min = str;
          if (s.max === undefined || compareStrings(str, s.max as string) > 0) s.max = str;
        } else {
          const b = v as Uint8Array;
          if (s.min === undefined || compareBytes(b, s.min as Uint8Array) < 0) s.min = b.slice();
          if (s.max === undefined || compareBytes(b, s.max as Uint8Array) > 0) s.max = b.slice();
        }
      }
    }
    this.length++;
  }

  protected pushPlaceholder(): void {
    if (this.length + 1 >= this.offsets.length) this.offsets = grow(this.offsets, this.length + 2);
    this.offsets[this.length + 1] = this.used;
  }

  byteSize(): number {
    return this.used + this.length * 4 + this.validity.bytes;
  }

  finish(last = false): arrow.Data {
    const n = this.length;
    const valueOffsets = this.offsets.subarray(0, n + 1);
    const data = this.data.subarray(0, this.used);
    const v = this.takeValidity();
    this.offsets = new Int32Array(last ? 1 : Math.min(Math.max(n, INITIAL_SLOTS), 1 << 20) + 1);
    this.data = new Uint8Array(last ? 0 : Math.min(Math.max(this.used, INITIAL_BYTES), 1 << 24));
    this.used = 0;
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.Utf8, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, valueOffsets, data });
  }
}
