/**
 * Decimal builder: the value model's canonical decimal text → Decimal128 (16-byte little-endian two's
 * complement), which arrow-rs writes as INT32 / INT64 / FIXED_LEN_BYTE_ARRAY by precision (spec
 * Appendix A). Plain texts whose unscaled value is an exact double take a fast path; everything else
 * goes through the exact BigInt parser of src/model/values.ts.
 */
import * as arrow from 'apache-arrow';
import { parseDecimal } from '../../../model/values.js';
import type { PrimitiveType } from '../../spec/types.js';
import type { FieldStats } from '../field-stats.js';
import { INITIAL_SLOTS, PrimitiveBuilder, badValue, grow } from './builder-base.js';

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

export class DecimalBuilder extends PrimitiveBuilder {
  private words = new Uint32Array(4 * INITIAL_SLOTS);
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

  finish(last = false): arrow.Data {
    this.publishFastBounds();
    const n = this.length;
    const data = this.words.subarray(0, 4 * n);
    const v = this.takeValidity();
    this.words = new Uint32Array(last ? 0 : 4 * Math.min(Math.max(n, INITIAL_SLOTS), 1 << 18));
    this.length = 0;
    return arrow.makeData({ type: this.arrowDataType as arrow.Decimal, length: n, nullCount: v.nullCount, nullBitmap: v.nullBitmap, data });
  }
}
