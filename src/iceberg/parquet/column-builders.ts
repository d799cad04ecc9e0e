/**
 * Column builders: values of floe's value model (src/model/values.ts) appended one by one into typed
 * arrays, then handed out as Arrow `Data` for one record batch. They are the hot path of the Parquet
 * writer, so they write straight into growable typed arrays (no arrow-js Builders, no per-value
 * objects) and update the column's `FieldStats` in the same pass.
 *
 * Nested values (not in the value model's table, which covers primitives): a struct is an array of its
 * fields' values in field order (unknown fields included, ignored); a list is a JS array; a map is a
 * JS `Map` or an array of `[key, value]` pairs.
 *
 * Every value is checked against its Iceberg type before it reaches Arrow: typed arrays would silently
 * wrap an out-of-range int or long, and parquet-wasm silently drops a batch that arrow-rs rejects.
 */
import * as arrow from 'apache-arrow';
import { FloeError } from '../../util/errors.js';
import { parseDecimal } from '../../model/values.js';
import { compareBytes, compareDoubles, compareStrings } from '../value-compare.js';
import type { IcebergType, NestedField, PrimitiveType } from '../types.js';
import { arrowType, describeType } from './arrow-schema.js';
import type { FieldStats } from './field-stats.js';

const SUBSYSTEM = 'iceberg.parquet';
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const utf8 = new TextEncoder();

export interface ColumnBuilder {
  readonly length: number;
  /** Appends a value of the column's type; null is allowed only for optional columns. */
  append(value: unknown): void;
  /** Appends a null slot under a null parent struct (allowed for required children too). */
  appendMasked(): void;
  /** Approximate bytes held (Arrow buffer sizes), for batch and file size estimates. */
  byteSize(): number;
  /** Hands out the buffered values as Arrow data and starts a new batch. */
  finish(): arrow.Data;
}

/** Creates stats for a primitive column; return undefined to track none. */
export type StatsFactory = (field: { id: number; type: PrimitiveType }) => FieldStats | undefined;

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'bigint') return `${v}n (bigint)`;
  if (v instanceof Uint8Array) return `${v.length} bytes`;
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === 'string') return `${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)} (string)`;
  if (typeof v === 'object') return 'an object';
  return `${String(v)} (${typeof v})`;
}

function badValue(path: string, type: IcebergType, expected: string, v: unknown): never {
  throw new FloeError(SUBSYSTEM, 'invalid-argument', `column ${path} (${describeType(type)}): expected ${expected}, found ${describeValue(v)}`);
}

/** Growable validity bitmap; allocated on the first null. */
class Validity {
  private bits: Uint8Array | undefined;
  nullCount = 0;

  setNull(index: number): void {
    const byte = index >> 3;
    if (!this.bits || byte >= this.bits.length) {
      // Slots before the first null were all valid: new regions start as ones.
      const next = new Uint8Array(Math.max(64, byte * 2 + 8)).fill(0xff);
      if (this.bits) next.set(this.bits);
      this.bits = next;
    }
    this.bits[byte] &= ~(1 << (index & 7));
    this.nullCount++;
  }

  /** Bitmap for `length` slots (undefined when no nulls) and reset. */
  take(length: number): { nullBitmap: Uint8Array | undefined; nullCount: number } {
    let nullBitmap: Uint8Array | undefined;
    if (this.bits) {
      const size = (length + 7) >> 3;
      nullBitmap = new Uint8Array(size).fill(0xff);
      nullBitmap.set(this.bits.subarray(0, Math.min(size, this.bits.length)));
      // Bits past `length` are ignored by Arrow; keep them zero all the same.
      const tail = length & 7;
      if (tail !== 0) nullBitmap[size - 1] &= (1 << tail) - 1;
    }
    const out = { nullBitmap, nullCount: this.nullCount };
    this.bits = undefined;
    this.nullCount = 0;
    return out;
  }

  get bytes(): number {
    return this.bits ? this.bits.length : 0;
  }
}

type TypedArray = Int32Array | Float32Array | Float64Array | BigInt64Array | Uint8Array | Uint32Array;

function grow<T extends TypedArray>(arr: T, minLength: number): T {
  if (minLength <= arr.length) return arr;
  const Ctor = arr.constructor as new (n: number) => T;
  const next = new Ctor(Math.max(minLength, arr.length * 2, 16));
  next.set(arr as never);
  return next;
}

abstract class BaseBuilder implements ColumnBuilder {
  length = 0;
  protected validity = new Validity();

  constructor(
    readonly path: string,
    readonly type: IcebergType,
    readonly arrowDataType: arrow.DataType,
    readonly required: boolean,
  ) {}

  append(value: unknown): void {
    if (value === null || value === undefined) {
      if (this.required) {
        throw new FloeError(SUBSYSTEM, 'invalid-argument', `column ${this.path} is required but the value is ${value === null ? 'null' : 'missing'}; supply a value (or the field's write-default)`);
      }
      this.appendNullSlot();
      return;
    }
    this.appendValue(value);
  }

  appendMasked(): void {
    this.appendNullSlot();
  }

  protected appendNullSlot(): void {
    this.validity.setNull(this.length);
    this.pushPlaceholder();
    this.length++;
  }

  protected abstract appendValue(value: unknown): void;
  /** Fills the slot of a null with a zero value / empty entry. */
  protected abstract pushPlaceholder(): void;
  abstract byteSize(): number;
  abstract finish(): arrow.Data;

  protected takeValidity(): { nullBitmap: Uint8Array | undefined; nullCount: number } {
    return this.validity.take(this.length);
  }
}

// ---------------------------------------------------------------------------------------------------
// fixed-width primitives

abstract class PrimitiveBuilder extends BaseBuilder {
  constructor(
    path: string,
    type: PrimitiveType,
    required: boolean,
    protected readonly stats: FieldStats | undefined,
  ) {
    super(path, type, arrowType(type, path), required);
  }

  protected override appendNullSlot(): void {
    if (this.stats) {
      this.stats.valueCount++;
      this.stats.nullCount++;
    }
    super.appendNullSlot();
  }
}

class BoolBuilder extends PrimitiveBuilder {
  private bits = new Uint8Array(64);

  protected appendValue(v: unknown): void {
    if (typeof v !== 'boolean') badValue(this.path, this.type, 'a boolean', v);
    const i = this.length;
    if ((i >> 3) >= this.bits.length) this.bits = grow(this.bits, (i >> 3) + 1);
    if (v) this.bits[i >> 3] |= 1 << (i & 7);
    const s = this.stats;
    if (s) {
      s.valueCount++;
      if (s.tracksBounds) {
        if (s.min === undefined || (s.min === true && !v)) s.min = v;
        if (s.max === undefined || (s.max === false && v)) s.max = v;
      }
    }
    this.length++;
  }

  protected pushPlaceholder(): void {
    if ((this.length >> 3) >= this.bits.length) this.bits = grow(this.bits, (this.length >> 3) + 1);
  }

  byteSize(): number {
    return (this.length >> 3) + 1 + this.validity.bytes;
  }

  finish(): arrow.Data {
    const n = this.length;
    const data = this.bits.subarray(0, (n + 7) >> 3);
    const v = this.takeValidity();
    this.bits = new Uint8Array(64);
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.Bool, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, data });
  }
}

class Int32Builder extends PrimitiveBuilder {
  private values = new Int32Array(1024);

  protected appendValue(v: unknown): void {
    if (typeof v !== 'number' || (v | 0) !== v) {
      badValue(this.path, this.type, this.type.kind === 'date' ? 'a day number (32-bit integer)' : 'a 32-bit integer (number)', v);
    }
    const i = this.length;
    if (i >= this.values.length) this.values = grow(this.values, i + 1);
    this.values[i] = v;
    const s = this.stats;
    if (s) {
      s.valueCount++;
      if (s.tracksBounds) {
        if (s.min === undefined || v < (s.min as number)) s.min = v | 0;
        if (s.max === undefined || v > (s.max as number)) s.max = v | 0;
      }
    }
    this.length++;
  }

  protected pushPlaceholder(): void {
    if (this.length >= this.values.length) this.values = grow(this.values, this.length + 1);
    this.values[this.length] = 0;
  }

  byteSize(): number {
    return this.length * 4 + this.validity.bytes;
  }

  finish(): arrow.Data {
    const n = this.length;
    const data = this.values.subarray(0, n);
    const v = this.takeValidity();
    this.values = new Int32Array(Math.min(Math.max(n, 1024), 1 << 20));
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.Int32, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, data });
  }
}

class Int64Builder extends PrimitiveBuilder {
  private values = new BigInt64Array(1024);

  protected appendValue(v: unknown): void {
    let b: bigint;
    if (typeof v === 'bigint') b = v;
    else if (typeof v === 'number' && Number.isSafeInteger(v)) b = BigInt(v);
    else return badValue(this.path, this.type, 'a 64-bit integer (bigint)', v);
    if (b < LONG_MIN || b > LONG_MAX) badValue(this.path, this.type, 'a value within the signed 64-bit range', v);
    const i = this.length;
    if (i >= this.values.length) this.values = grow(this.values, i + 1);
    this.values[i] = b;
    const s = this.stats;
    if (s) {
      s.valueCount++;
      if (s.tracksBounds) {
        if (s.min === undefined || b < (s.min as bigint)) s.min = b;
        if (s.max === undefined || b > (s.max as bigint)) s.max = b;
      }
    }
    this.length++;
  }

  protected pushPlaceholder(): void {
    if (this.length >= this.values.length) this.values = grow(this.values, this.length + 1);
    this.values[this.length] = 0n;
  }

  byteSize(): number {
    return this.length * 8 + this.validity.bytes;
  }

  finish(): arrow.Data {
    const n = this.length;
    const data = this.values.subarray(0, n);
    const v = this.takeValidity();
    this.values = new BigInt64Array(Math.min(Math.max(n, 1024), 1 << 20));
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.Int64, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, data: data as never });
  }
}

class FloatBuilder extends PrimitiveBuilder {
  private values: Float32Array | Float64Array;
  private readonly single: boolean;

  constructor(path: string, type: PrimitiveType, required: boolean, stats: FieldStats | undefined) {
    super(path, type, required, stats);
    this.single = type.kind === 'float';
    this.values = this.single ? new Float32Array(1024) : new Float64Array(1024);
  }

  protected appendValue(v: unknown): void {
    if (typeof v !== 'number') badValue(this.path, this.type, 'a number', v);
    const i = this.length;
    if (i >= this.values.length) this.values = grow(this.values, i + 1);
    // Stats see the stored value: a float column keeps the float32 rounding of the number.
    const x = this.single ? Math.fround(v) : v;
    this.values[i] = x;
    const s = this.stats;
    if (s) {
      s.valueCount++;
      if (x !== x) s.nanCount++;
      else if (s.tracksBounds) {
        // Spec: NaN is never a bound; -0.0 sorts before +0.0.
        if (s.min === undefined || compareDoubles(x, s.min as number) < 0) s.min = x;
        if (s.max === undefined || compareDoubles(x, s.max as number) > 0) s.max = x;
      }
    }
    this.length++;
  }

  protected pushPlaceholder(): void {
    if (this.length >= this.values.length) this.values = grow(this.values, this.length + 1);
    this.values[this.length] = 0;
  }

  byteSize(): number {
    return this.length * (this.single ? 4 : 8) + this.validity.bytes;
  }

  finish(): arrow.Data {
    const n = this.length;
    const data = this.values.subarray(0, n);
    const v = this.takeValidity();
    const cap = Math.min(Math.max(n, 1024), 1 << 20);
    this.values = this.single ? new Float32Array(cap) : new Float64Array(cap);
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.Float32, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, data: data as Float32Array });
  }
}

const TWO_32 = 4294967296;

/**
 * Unscaled value of a plain decimal text ("-123.45") at `scale` when it is an exact double (below
 * 2^53); undefined sends the caller to the exact BigInt path, which also handles exponents, too many
 * fraction digits and malformed text (and reports the error).
 *
 * Exactness: the digits accumulate into a non-decreasing value, so if the final value is below 2^53,
 * every intermediate step was an exact integer operation.
 */
function fastUnscaled(s: string, scale: number): number | undefined {
  const n = s.length;
  let i = 0;
  let neg = false;
  const first = s.charCodeAt(0);
  if (first === 45) {
    neg = true;
    i = 1;
  } else if (first === 43) {
    i = 1;
  }
  let x = 0;
  let sawDigit = false;
  let frac = -1;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      x = x * 10 + (c - 48);
      sawDigit = true;
      if (frac >= 0) frac++;
    } else if (c === 46 && frac < 0) {
      frac = 0;
    } else {
      return undefined;
    }
  }
  const f = frac < 0 ? 0 : frac;
  if (!sawDigit || f > scale) return undefined;
  if (x !== 0) x *= 10 ** (scale - f);
  if (x > Number.MAX_SAFE_INTEGER) return undefined;
  return neg && x !== 0 ? -x : x;
}

class DecimalBuilder extends PrimitiveBuilder {
  private words = new Uint32Array(4 * 1024);
  private readonly scale: number;
  private readonly limit: bigint;
  private readonly numberLimit: number;
  /** Bounds of values that took the fast path, merged into the stats at `finish`. */
  private fastMin = Infinity;
  private fastMax = -Infinity;

  constructor(path: string, type: PrimitiveType & { kind: 'decimal' }, required: boolean, stats: FieldStats | undefined) {
    super(path, type, required, stats);
    this.scale = type.scale;
    this.limit = 10n ** BigInt(type.precision);
    this.numberLimit = type.precision <= 15 ? 10 ** type.precision : Infinity;
  }

  protected appendValue(v: unknown): void {
    if (typeof v !== 'string') badValue(this.path, this.type, 'a decimal string such as "12.50"', v);
    const i = this.length;
    if (4 * i + 4 > this.words.length) this.words = grow(this.words, 4 * i + 4);
    const fast = v.length > 0 && v.length <= 24 ? fastUnscaled(v, this.scale) : undefined;
    if (fast !== undefined) {
      if (fast >= this.numberLimit || fast <= -this.numberLimit) badValue(this.path, this.type, 'a value that fits the precision', v);
      this.writeNumber(i, fast);
      const s = this.stats;
      if (s) {
        s.valueCount++;
        if (s.tracksBounds) {
          if (fast < this.fastMin) this.fastMin = fast;
          if (fast > this.fastMax) this.fastMax = fast;
        }
      }
      this.length++;
      return;
    }
    let unscaled: bigint;
    try {
      unscaled = parseDecimal(v, this.scale);
    } catch {
      return badValue(this.path, this.type, `a decimal with at most ${this.scale} fraction digits`, v);
    }
    if (unscaled >= this.limit || unscaled <= -this.limit) badValue(this.path, this.type, 'a value that fits the precision', v);
    // Decimal128: 16 bytes little-endian two's complement, as four little-endian 32-bit words.
    let x = BigInt.asUintN(128, unscaled);
    const w = this.words;
    const o = 4 * i;
    w[o] = Number(x & 0xffffffffn);
    x >>= 32n;
    w[o + 1] = Number(x & 0xffffffffn);
    x >>= 32n;
    w[o + 2] = Number(x & 0xffffffffn);
    w[o + 3] = Number(x >> 32n);
    const s = this.stats;
    if (s) {
      s.valueCount++;
      if (s.tracksBounds) {
        if (s.min === undefined || unscaled < (s.min as bigint)) s.min = unscaled;
        if (s.max === undefined || unscaled > (s.max as bigint)) s.max = unscaled;
      }
    }
    this.length++;
  }

  /** Two's-complement words of a safe integer. */
  private writeNumber(i: number, x: number): void {
    const w = this.words;
    const o = 4 * i;
    const m = x < 0 ? -x : x;
    let lo = m % TWO_32;
    let hi = (m - lo) / TWO_32;
    if (x < 0) {
      // Negate: invert and add one, carrying from the low word.
      lo = (~lo >>> 0) + 1;
      hi = ~hi >>> 0;
      if (lo === TWO_32) {
        lo = 0;
        hi = (hi + 1) >>> 0;
      }
      w[o] = lo;
      w[o + 1] = hi;
      w[o + 2] = 0xffffffff;
      w[o + 3] = 0xffffffff;
    } else {
      w[o] = lo;
      w[o + 1] = hi;
      w[o + 2] = 0;
      w[o + 3] = 0;
    }
  }

  private publishFastBounds(): void {
    const s = this.stats;
    if (!s || this.fastMin === Infinity) return;
    const lo = BigInt(this.fastMin);
    const hi = BigInt(this.fastMax);
    if (s.min === undefined || lo < (s.min as bigint)) s.min = lo;
    if (s.max === undefined || hi > (s.max as bigint)) s.max = hi;
    this.fastMin = Infinity;
    this.fastMax = -Infinity;
  }

  protected pushPlaceholder(): void {
    const i = this.length;
    if (4 * i + 4 > this.words.length) this.words = grow(this.words, 4 * i + 4);
    this.words.fill(0, 4 * i, 4 * i + 4);
  }

  byteSize(): number {
    return this.length * 16 + this.validity.bytes;
  }

  finish(): arrow.Data {
    this.publishFastBounds();
    const n = this.length;
    const data = this.words.subarray(0, 4 * n);
    const v = this.takeValidity();
    this.words = new Uint32Array(4 * Math.min(Math.max(n, 1024), 1 << 18));
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.Decimal, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, data });
  }
}

/** FIXED_LEN_BYTE_ARRAY: fixed[L] from bytes, uuid from its 8-4-4-4-12 text. */
class FixedBuilder extends PrimitiveBuilder {
  private bytes: Uint8Array;
  private readonly width: number;
  private readonly uuid: boolean;

  constructor(path: string, type: PrimitiveType, required: boolean, stats: FieldStats | undefined) {
    super(path, type, required, stats);
    this.uuid = type.kind === 'uuid';
    this.width = type.kind === 'fixed' ? type.length : 16;
    this.bytes = new Uint8Array(this.width * 256);
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

  finish(): arrow.Data {
    const n = this.length;
    const data = this.bytes.subarray(0, n * this.width);
    const v = this.takeValidity();
    this.bytes = new Uint8Array(this.width * Math.min(Math.max(n, 256), 1 << 16));
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

// ---------------------------------------------------------------------------------------------------
// variable-width primitives

class VarBinaryBuilder extends PrimitiveBuilder {
  private offsets = new Int32Array(1025);
  private data = new Uint8Array(16 * 1024);
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
      // ASCII is copied in JS; TextEncoder (a native call plus a view per value) only takes over at
      // the first non-ASCII character.
      const data = this.data;
      let o = this.used;
      let k = 0;
      for (; k < len; k++) {
        const c = v.charCodeAt(k);
        if (c >= 0x80) break;
        data[o++] = c;
      }
      if (k < len) o += utf8.encodeInto(k === 0 ? v : v.slice(k), data.subarray(o)).written;
      this.used = o;
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

  finish(): arrow.Data {
    const n = this.length;
    const valueOffsets = this.offsets.subarray(0, n + 1);
    const data = this.data.subarray(0, this.used);
    const v = this.takeValidity();
    this.offsets = new Int32Array(Math.min(Math.max(n, 1024), 1 << 20) + 1);
    this.data = new Uint8Array(Math.min(Math.max(this.used, 16 * 1024), 1 << 24));
    this.used = 0;
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.Utf8, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, valueOffsets, data });
  }
}

// ---------------------------------------------------------------------------------------------------
// nested types

class StructBuilder extends BaseBuilder {
  /** Index in the struct's field list of each child builder (unknown fields have none). */
  private readonly positions: number[];

  constructor(
    path: string,
    type: IcebergType & { kind: 'struct' },
    required: boolean,
    private readonly children: ColumnBuilder[],
  ) {
    super(path, type, arrowType(type, path), required);
    this.positions = [];
    type.fields.forEach((f, i) => {
      if (f.type.kind !== 'unknown') this.positions.push(i);
    });
  }

  protected appendValue(v: unknown): void {
    const fields = (this.type as { fields: NestedField[] }).fields;
    if (!Array.isArray(v) || v.length !== fields.length) badValue(this.path, this.type, `an array of ${fields.length} field values in field order`, v);
    for (let c = 0; c < this.children.length; c++) this.children[c].append(v[this.positions[c]]);
    this.length++;
  }

  protected override appendNullSlot(): void {
    this.validity.setNull(this.length);
    for (const child of this.children) child.appendMasked();
    this.length++;
  }

  protected pushPlaceholder(): void {}

  byteSize(): number {
    let n = this.validity.bytes;
    for (const c of this.children) n += c.byteSize();
    return n;
  }

  finish(): arrow.Data {
    const n = this.length;
    const v = this.takeValidity();
    const children = this.children.map((c) => c.finish());
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.Struct, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, children });
  }
}

class ListBuilder extends BaseBuilder {
  private offsets = new Int32Array(1025);

  constructor(
    path: string,
    type: IcebergType & { kind: 'list' },
    required: boolean,
    private readonly element: ColumnBuilder,
  ) {
    super(path, type, arrowType(type, path), required);
  }

  protected appendValue(v: unknown): void {
    if (!Array.isArray(v)) badValue(this.path, this.type, 'an array', v);
    for (const item of v) this.element.append(item);
    this.pushOffset();
  }

  private pushOffset(): void {
    const i = this.length;
    if (i + 1 >= this.offsets.length) this.offsets = grow(this.offsets, i + 2);
    this.offsets[i + 1] = this.element.length;
    this.length++;
  }

  protected override appendNullSlot(): void {
    this.validity.setNull(this.length);
    this.pushOffset();
  }

  protected pushPlaceholder(): void {}

  byteSize(): number {
    return this.length * 4 + this.validity.bytes + this.element.byteSize();
  }

  finish(): arrow.Data {
    const n = this.length;
    const valueOffsets = this.offsets.subarray(0, n + 1);
    const v = this.takeValidity();
    const child = this.element.finish();
    this.offsets = new Int32Array(1025);
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.List, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, valueOffsets, child });
  }
}

class MapBuilder extends BaseBuilder {
  private offsets = new Int32Array(1025);
  private entries = 0;

  constructor(
    path: string,
    type: IcebergType & { kind: 'map' },
    required: boolean,
    private readonly key: ColumnBuilder,
    private readonly value: ColumnBuilder,
  ) {
    super(path, type, arrowType(type, path), required);
  }

  protected appendValue(v: unknown): void {
    const pairs: Iterable<unknown> = v instanceof Map ? v.entries() : Array.isArray(v) ? v : badValue(this.path, this.type, 'a Map or an array of [key, value] pairs', v);
    for (const pair of pairs) {
      if (!Array.isArray(pair) || pair.length !== 2) badValue(this.path, this.type, 'a [key, value] pair', pair);
      if (pair[0] === null || pair[0] === undefined) badValue(this.path, this.type, 'a non-null map key', pair[0]);
      this.key.append(pair[0]);
      this.value.append(pair[1]);
      this.entries++;
    }
    this.pushOffset();
  }

  private pushOffset(): void {
    const i = this.length;
    if (i + 1 >= this.offsets.length) this.offsets = grow(this.offsets, i + 2);
    this.offsets[i + 1] = this.entries;
    this.length++;
  }

  protected override appendNullSlot(): void {
    this.validity.setNull(this.length);
    this.pushOffset();
  }

  protected pushPlaceholder(): void {}

  byteSize(): number {
    return this.length * 4 + this.validity.bytes + this.key.byteSize() + this.value.byteSize();
  }

  finish(): arrow.Data {
    const n = this.length;
    const valueOffsets = this.offsets.subarray(0, n + 1);
    const v = this.takeValidity();
    const mapType = this.arrowDataType as arrow.Map_;
    const entryType = mapType.children[0].type as arrow.Struct;
    const child = arrow.makeData({ type: entryType, length: this.entries, nullCount: 0, children: [this.key.finish(), this.value.finish()] });
    this.offsets = new Int32Array(1025);
    this.entries = 0;
    this.length = 0;
    return arrow.makeData({ type: mapType, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, valueOffsets, child });
  }
}

// ---------------------------------------------------------------------------------------------------

/**
 * A builder for a field. `stats` is consulted for primitive fields that are not inside a list or map
 * (Java stores no metrics for those).
 */
export function createBuilder(field: NestedField, stats: StatsFactory, path: string = field.name, inRepeated = false): ColumnBuilder {
  return builderFor(field.id, field.type, field.required, path, stats, inRepeated);
}

function builderFor(id: number, type: IcebergType, required: boolean, path: string, stats: StatsFactory, inRepeated: boolean): ColumnBuilder {
  switch (type.kind) {
    case 'struct': {
      const children = type.fields
        .filter((f) => f.type.kind !== 'unknown')
        .map((f) => builderFor(f.id, f.type, f.required, `${path}.${f.name}`, stats, inRepeated));
      return new StructBuilder(path, type, required, children);
    }
    case 'list':
      return new ListBuilder(path, type, required, builderFor(type.elementId, type.element, type.elementRequired, `${path}.element`, stats, true));
    case 'map':
      return new MapBuilder(
        path,
        type,
        required,
        builderFor(type.keyId, type.keyType, true, `${path}.key`, stats, true),
        builderFor(type.valueId, type.valueType, type.valueRequired, `${path}.value`, stats, true),
      );
    default: {
      const s = inRepeated ? undefined : stats({ id, type });
      switch (type.kind) {
        case 'boolean':
          return new BoolBuilder(path, type, required, s);
        case 'int':
        case 'date':
          return new Int32Builder(path, type, required, s);
        case 'long':
        case 'time':
        case 'timestamp':
        case 'timestamptz':
        case 'timestamp_ns':
        case 'timestamptz_ns':
          return new Int64Builder(path, type, required, s);
        case 'float':
        case 'double':
          return new FloatBuilder(path, type, required, s);
        case 'decimal':
          return new DecimalBuilder(path, type, required, s);
        case 'uuid':
        case 'fixed':
          return new FixedBuilder(path, type, required, s);
        case 'string':
        case 'binary':
          return new VarBinaryBuilder(path, type, required, s);
        case 'unknown':
          throw new FloeError(SUBSYSTEM, 'internal', `column ${path} is unknown; unknown columns have no builder`);
      }
    }
  }
}
