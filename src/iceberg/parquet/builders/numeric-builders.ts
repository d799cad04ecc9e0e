/**
 * Builders of fixed-width primitives: boolean (bit-packed), int and date (Int32), long, time and the
 * timestamps (BigInt64), float and double. Each checks the JS type and range of a value (a typed array
 * would silently wrap it) and updates min/max in the same pass; floats keep NaN out of the bounds and
 * order -0.0 before +0.0 (spec "Manifests", Java `Double.compare`).
 */
import * as arrow from 'apache-arrow';
import { compareDoubles } from '../../spec/value-compare.js';
import type { PrimitiveType } from '../../spec/types.js';
import type { FieldStats } from '../field-stats.js';
import { INITIAL_SLOTS, PrimitiveBuilder, badValue, grow } from './builder-base.js';

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const MICROS_PER_DAY = 86_400_000_000n;

export class BoolBuilder extends PrimitiveBuilder {
  private bits = new Uint8Array(64);

  protected appendValue(v: unknown): void {
    if (typeof v !== 'boolean') badValue(this.path, this.type, 'a boolean', v);
    const i = this.length;
    if ((i >> 3) >= this.bits.length) this.bits = grow(this.bits, (i >> 3) + 1);
    if (v) this.bits[i >> 3]! |= 1 << (i & 7);
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

  finish(last = false): arrow.Data {
    const n = this.length;
    const data = this.bits.subarray(0, (n + 7) >> 3);
    const v = this.takeValidity();
    this.bits = new Uint8Array(last ? 0 : 64);
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.Bool, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, data });
  }
}

export class Int32Builder extends PrimitiveBuilder {
  private values = new Int32Array(INITIAL_SLOTS);

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

  finish(last = false): arrow.Data {
    const n = this.length;
    const data = this.values.subarray(0, n);
    const v = this.takeValidity();
    this.values = new Int32Array(last ? 0 : Math.min(Math.max(n, INITIAL_SLOTS), 1 << 20));
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.Int32, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, data });
  }
}

export class Int64Builder extends PrimitiveBuilder {
  private values = new BigInt64Array(INITIAL_SLOTS);
  /** Iceberg `time` is a time of day: 0 ≤ µs < 24 h (MySQL TIME durations must not get here). */
  private readonly timeOfDay = this.type.kind === 'time';

  protected appendValue(v: unknown): void {
    let b: bigint;
    if (typeof v === 'bigint') b = v;
    else if (typeof v === 'number' && Number.isSafeInteger(v)) b = BigInt(v);
    else return badValue(this.path, this.type, 'a 64-bit integer (bigint)', v);
    if (b < LONG_MIN || b > LONG_MAX) badValue(this.path, this.type, 'a value within the signed 64-bit range', v);
    if (this.timeOfDay && (b < 0n || b >= MICROS_PER_DAY)) badValue(this.path, this.type, 'microseconds since midnight, 0 to 86399999999', v);
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

  finish(last = false): arrow.Data {
    const n = this.length;
    const data = this.values.subarray(0, n);
    const v = this.takeValidity();
    this.values = new BigInt64Array(last ? 0 : Math.min(Math.max(n, INITIAL_SLOTS), 1 << 20));
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.Int64, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, data: data as never });
  }
}

export class FloatBuilder extends PrimitiveBuilder {
  private values: Float32Array | Float64Array;
  private readonly single: boolean;

  constructor(path: string, type: PrimitiveType, required: boolean, stats: FieldStats | undefined) {
    super(path, type, required, stats);
    this.single = type.kind === 'float';
    this.values = this.single ? new Float32Array(INITIAL_SLOTS) : new Float64Array(INITIAL_SLOTS);
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

  finish(last = false): arrow.Data {
    const n = this.length;
    const data = this.values.subarray(0, n);
    const v = this.takeValidity();
    const cap = last ? 0 : Math.min(Math.max(n, INITIAL_SLOTS), 1 << 20);
    this.values = this.single ? new Float32Array(cap) : new Float64Array(cap);
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.Float32, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, data: data as Float32Array });
  }
}
