/**
 * Total order of values of one primitive type, as Iceberg Java's `Comparators` define it, for column
 * bounds (lower/upper) and sorting:
 *
 * - floats/doubles as Java `Double.compare`: -0.0 < +0.0, NaN above +Infinity (spec "Sorting"; callers
 *   computing bounds must exclude NaN, which the spec keeps out of bounds and counts separately);
 * - strings by Unicode code point, which equals unsigned UTF-8 byte order (Parquet's order for BYTE_ARRAY
 *   strings) and differs from JS `<` on UTF-16 code units for characters above U+FFFF;
 * - binary, fixed and uuid by unsigned lexicographic bytes;
 * - decimals by value (the model keeps them as text with exactly S digits).
 *
 * null sorts before every value (nulls-first), so a caller may sort mixed lists.
 */
import { FloeError } from '../../util/errors.js';
import { parseDecimal, type Value } from '../../model/values.js';
import { primitiveToString, type IcebergType } from './types.js';
import { behaviourOf, type DecimalType } from './primitive-behaviour.js';

function sign(n: number): -1 | 0 | 1 {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

/** Java `Double.compare`: numeric order, -0.0 < 0.0, NaN greatest and equal to itself. */
export function compareDoubles(a: number, b: number): -1 | 0 | 1 {
  if (a < b) return -1;
  if (a > b) return 1;
  const aNaN = Number.isNaN(a);
  const bNaN = Number.isNaN(b);
  if (aNaN || bNaN) return aNaN === bNaN ? 0 : aNaN ? 1 : -1;
  const aNeg = Object.is(a, -0);
  const bNeg = Object.is(b, -0);
  return aNeg === bNeg ? 0 : aNeg ? -1 : 1;
}

/** Unicode code point order (= unsigned UTF-8 byte order). */
export function compareStrings(a: string, b: string): -1 | 0 | 1 {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca === cb) continue;
    // Differing code units: a surrogate (0xD800–0xDFFF) stands for a code point above 0xFFFF, which sorts
    // after every BMP character, including 0xE000–0xFFFF that JS would put after it.
    const sa = ca >= 0xd800 && ca <= 0xdfff;
    const sb = cb >= 0xd800 && cb <= 0xdfff;
    if (sa !== sb) return sa ? 1 : -1;
    return ca < cb ? -1 : 1;
  }
  return sign(a.length - b.length);
}

/** Unsigned lexicographic byte order. */
export function compareBytes(a: Uint8Array, b: Uint8Array): -1 | 0 | 1 {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return sign(a.length - b.length);
}

function compareBigints(a: bigint, b: bigint): -1 | 0 | 1 {
  return a < b ? -1 : a > b ? 1 : 0;
}

function mismatch(type: IcebergType, a: Value, b: Value): never {
  const d = (v: Value): string => (v instanceof Uint8Array ? 'bytes' : typeof v);
  throw new FloeError('iceberg.single-value', 'invalid-argument', `cannot compare ${d(a)} and ${d(b)} as ${type.kind === 'struct' || type.kind === 'list' || type.kind === 'map' ? type.kind : primitiveToString(type)}`);
}

function toBigint(v: Value): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return undefined;
}

/** Compares two values of `type`: negative, zero or positive. */
export function compareValues(type: IcebergType, a: Value, b: Value): -1 | 0 | 1 {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  switch (behaviourOf(type)?.value) {
    case 'boolean':
      if (typeof a !== 'boolean' || typeof b !== 'boolean') return mismatch(type, a, b);
      return a === b ? 0 : a ? 1 : -1;
    case 'int':
      if (typeof a !== 'number' || typeof b !== 'number') return mismatch(type, a, b);
      return sign(a - b);
    case 'float':
      if (typeof a !== 'number' || typeof b !== 'number') return mismatch(type, a, b);
      return compareDoubles(a, b);
    case 'long': {
      const x = toBigint(a);
      const y = toBigint(b);
      if (x === undefined || y === undefined) return mismatch(type, a, b);
      return compareBigints(x, y);
    }
    case 'decimal':
      if (typeof a !== 'string' || typeof b !== 'string') return mismatch(type, a, b);
      return compareBigints(parseDecimal(a, (type as DecimalType).scale), parseDecimal(b, (type as DecimalType).scale));
    case 'string':
      if (typeof a !== 'string' || typeof b !== 'string') return mismatch(type, a, b);
      return compareStrings(a, b);
    case 'uuid':
      // Lowercase hex text orders like its 16 big-endian bytes, compared unsigned.
      if (typeof a !== 'string' || typeof b !== 'string') return mismatch(type, a, b);
      return compareStrings(a.toLowerCase(), b.toLowerCase());
    case 'bytes':
      if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array)) return mismatch(type, a, b);
      return compareBytes(a, b);
    default:
      return mismatch(type, a, b);
  }
}
