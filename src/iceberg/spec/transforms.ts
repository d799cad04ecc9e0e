/**
 * Partition transform functions (format/spec.md "Partition Transforms", "Bucket Transform Details",
 * "Truncate Transform Details", Appendix B) over the value model of src/model/values.ts. The result of
 * a transform has the type `transformResultType` (partition.ts) gives: bucket/year/month/hour → int
 * (number), day → date (number of days), identity/truncate → the source type, void → null.
 *
 * Date and time arithmetic uses floor semantics for values before 1970, as Java's `DateTimeUtil` does
 * (1969-12-31 is year -1, month -1, day -1).
 */
import { FloeError } from '../../util/errors.js';
import { civilFromDays, formatDecimal, parseDecimal, type Value } from '../../model/values.js';
import { transformToString, type Transform } from './partition.js';
import { murmur3Hash32, murmur3HashLong } from './murmur3.js';
import { toBinary } from './single-value.js';
import { primitiveToString, type IcebergType, type PrimitiveType } from './types.js';

const SUBSYSTEM = 'iceberg.transforms';
const MICROS_PER_DAY = 86_400_000_000n;
const MICROS_PER_HOUR = 3_600_000_000n;
const utf8Encoder = new TextEncoder();

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

function floorMod(a: bigint, b: bigint): bigint {
  return ((a % b) + b) % b;
}

function asBig(v: Value): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  throw new FloeError(SUBSYSTEM, 'invalid-argument', `expected an integer value, found ${typeof v}`);
}

const BUCKET_SOURCES = new Set(['int', 'long', 'decimal', 'date', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns', 'string', 'uuid', 'fixed', 'binary']);
const TRUNCATE_SOURCES = new Set(['int', 'long', 'decimal', 'string', 'binary']);
const DATE_SOURCES = new Set(['date', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);
const HOUR_SOURCES = new Set(['timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);

/** Whether the spec allows `transform` on a source column of `type` (spec "Partition Transforms" table). */
export function canTransform(transform: Transform, type: IcebergType): boolean {
  if (type.kind === 'struct' || type.kind === 'list' || type.kind === 'map') return transform.kind === 'void';
  switch (transform.kind) {
    case 'identity':
    case 'void':
      return true;
    case 'bucket':
      return BUCKET_SOURCES.has(type.kind);
    case 'truncate':
      return TRUNCATE_SOURCES.has(type.kind);
    case 'year':
    case 'month':
    case 'day':
      return DATE_SOURCES.has(type.kind);
    case 'hour':
      return HOUR_SOURCES.has(type.kind);
  }
}

/**
 * The 32-bit Murmur3 hash of a value as Appendix B defines it per type: ints, dates and longs hash as
 * 8-byte longs (so int→long promotion keeps buckets), timestamp_ns as microseconds, decimals as their
 * minimal big-endian unscaled bytes, strings as UTF-8, uuids as 16 big-endian bytes. Floats and
 * booleans follow the "not valid for bucketing" table for completeness.
 */
export function bucketHash(type: PrimitiveType, value: Value): number {
  if (value === null) throw new FloeError(SUBSYSTEM, 'invalid-argument', 'bucketHash of null: callers must map null to a null partition value');
  switch (type.kind) {
    case 'int':
    case 'date':
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return murmur3HashLong(asBig(value));
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return murmur3HashLong(floorDiv(asBig(value), 1000n));
    case 'boolean':
      return murmur3HashLong(value ? 1n : 0n);
    case 'float':
    case 'double': {
      // doubleToLongBits with NaN canonicalized and -0.0 as 0.0 (Appendix B note 5)
      const v = value as number;
      const view = new DataView(new ArrayBuffer(8));
      view.setFloat64(0, Number.isNaN(v) ? NaN : v === 0 ? 0 : v);
      return murmur3HashLong(Number.isNaN(v) ? 0x7ff8000000000000n : view.getBigInt64(0));
    }
    case 'string':
      return murmur3Hash32(utf8Encoder.encode(value as string));
    case 'decimal':
    case 'uuid':
    case 'fixed':
    case 'binary':
      return murmur3Hash32(toBinary(type, value));
    case 'unknown':
      throw new FloeError(SUBSYSTEM, 'unsupported', 'unknown values are always null and have no hash');
  }
}

/** Spec: `bucket_N(x) = (murmur3_x86_32_hash(x) & Integer.MAX_VALUE) % N`. */
export function bucketValue(type: PrimitiveType, value: Value, n: number): number {
  return (bucketHash(type, value) & 0x7fffffff) % n;
}

function truncateValue(type: PrimitiveType, value: Value, width: number): Value {
  const w = BigInt(width);
  switch (type.kind) {
    case 'int':
      return Number(asBig(value) - floorMod(asBig(value), w));
    case 'long':
      return asBig(value) - floorMod(asBig(value), w);
    case 'decimal': {
      // The width applies to the unscaled value (spec note 2): W=50, scale 2: 10.65 → 10.50.
      const unscaled = parseDecimal(value as string, type.scale);
      return formatDecimal(unscaled - floorMod(unscaled, w), type.scale);
    }
    case 'string': {
      // at most W code points, never splitting a surrogate pair (spec note 3)
      const s = value as string;
      let end = 0;
      for (let count = 0; count < width && end < s.length; count++) {
        const c = s.codePointAt(end)!;
        end += c > 0xffff ? 2 : 1;
      }
      return s.slice(0, end);
    }
    case 'binary':
      return (value as Uint8Array).slice(0, width);
    default:
      throw unsupported({ kind: 'truncate', width }, type);
  }
}

function unsupported(transform: Transform, type: IcebergType): FloeError {
  const typeText = type.kind === 'struct' || type.kind === 'list' || type.kind === 'map' ? type.kind : primitiveToString(type);
  return new FloeError(SUBSYSTEM, 'invalid-argument', `transform ${transformToString(transform)} cannot be applied to a ${typeText} column; see the spec's Partition Transforms table`);
}

/** Days since epoch of a date / timestamp value (floor for values before 1970). */
function epochDays(type: PrimitiveType, value: Value): number {
  switch (type.kind) {
    case 'date':
      return value as number;
    case 'timestamp':
    case 'timestamptz':
      return Number(floorDiv(asBig(value), MICROS_PER_DAY));
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return Number(floorDiv(asBig(value), MICROS_PER_DAY * 1000n));
    default:
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `expected a date or timestamp, found ${primitiveToString(type)}`);
  }
}

/** Applies a partition transform to a non-null or null source value. */
export function applyTransform(transform: Transform, sourceType: IcebergType, value: Value): Value {
  if (!canTransform(transform, sourceType)) throw unsupported(transform, sourceType);
  if (value === null || transform.kind === 'void') return null;
  const type = sourceType as PrimitiveType;
  switch (transform.kind) {
    case 'identity':
      return value;
    case 'bucket':
      return bucketValue(type, value, transform.n);
    case 'truncate':
      return truncateValue(type, value, transform.width);
    case 'year':
      return civilFromDays(epochDays(type, value)).year - 1970;
    case 'month': {
      const c = civilFromDays(epochDays(type, value));
      return (c.year - 1970) * 12 + (c.month - 1);
    }
    case 'day':
      return epochDays(type, value);
    case 'hour': {
      const micros = type.kind === 'timestamp_ns' || type.kind === 'timestamptz_ns' ? floorDiv(asBig(value), 1000n) : asBig(value);
      return Number(floorDiv(micros, MICROS_PER_HOUR));
    }
  }
}

/**
 * A function that applies one transform to values of one source type, checked once (for writers that
 * partition many rows).
 */
export function transformFunction(transform: Transform, sourceType: IcebergType): (value: Value) => Value {
  if (!canTransform(transform, sourceType)) throw unsupported(transform, sourceType);
  return (value) => applyTransform(transform, sourceType, value);
}
