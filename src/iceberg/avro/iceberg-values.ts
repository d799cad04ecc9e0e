/**
 * Conversions between floe's value model (src/model/values.ts) and Avro datums for Iceberg primitive
 * types, following the Appendix A mapping built by `iceberg-schema.ts`: decimals as sign-extended
 * two's-complement fixed of the minimum bytes for their precision, uuids as 16 big-endian bytes,
 * dates as int days, times and timestamps as long micros (nanos for the *_ns types).
 *
 * Partition tuples in manifests are the main user: Java writes them with these exact physical types,
 * and a mismatch (bytes where fixed is declared) makes other readers fail (iceberg-python#241).
 */
import { FloeError } from '../../util/errors.js';
import { formatDecimal, parseDecimal, type Value } from '../../model/values.js';
import { unscaledFromBytes, unscaledToBytes, uuidFromBytes, uuidToBytes } from '../spec/single-value.js';
import { primitiveToString, type PrimitiveType } from '../spec/types.js';
import { decimalRequiredBytes } from './iceberg-schema.js';

const SUBSYSTEM = 'iceberg.avro';
const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

function bad(t: PrimitiveType, expected: string, v: unknown, what: string): FloeError {
  const found = v instanceof Uint8Array ? `${v.length} bytes` : typeof v === 'bigint' ? `${v}n` : `${typeof v} ${String(v)}`;
  return new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: ${primitiveToString(t)} value must be ${expected}, found ${found}`);
}

/** The Avro datum for a (possibly null) value of an Iceberg primitive type. */
export function toAvroValue(t: PrimitiveType, v: Value, what = 'value'): unknown {
  if (v === null || v === undefined) return null;
  switch (t.kind) {
    case 'boolean':
      if (typeof v !== 'boolean') throw bad(t, 'a boolean', v, what);
      return v;
    case 'int':
    case 'date':
      if (typeof v !== 'number' || !Number.isInteger(v) || v < INT_MIN || v > INT_MAX) throw bad(t, 'a 32-bit integer number', v, what);
      return v;
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      if (typeof v !== 'bigint') throw bad(t, 'a bigint', v, what);
      return v;
    case 'float':
    case 'double':
      if (typeof v !== 'number') throw bad(t, 'a number', v, what);
      return v;
    case 'string':
      if (typeof v !== 'string') throw bad(t, 'a string', v, what);
      return v;
    case 'uuid':
      if (typeof v !== 'string') throw bad(t, 'a uuid string', v, what);
      return uuidToBytes(v);
    case 'fixed':
      if (!(v instanceof Uint8Array) || v.length !== t.length) throw bad(t, `a Uint8Array of ${t.length} bytes`, v, what);
      return v;
    case 'binary':
      if (!(v instanceof Uint8Array)) throw bad(t, 'a Uint8Array', v, what);
      return v;
    case 'decimal': {
      if (typeof v !== 'string') throw bad(t, 'a decimal string', v, what);
      let unscaled: bigint;
      try {
        unscaled = parseDecimal(v, t.scale);
      } catch (cause) {
        throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: ${JSON.stringify(v)} is not a ${primitiveToString(t)} value`, { cause });
      }
      if (unscaled !== 0n && (unscaled < 0n ? -unscaled : unscaled).toString().length > t.precision) {
        throw bad(t, `at most ${t.precision} digits`, v, what);
      }
      return unscaledToBytes(unscaled, decimalRequiredBytes(t.precision));
    }
    case 'unknown':
      throw bad(t, 'null', v, what);
  }
}

/** The value-model value of an Avro datum read for an Iceberg primitive type. */
export function fromAvroValue(t: PrimitiveType, v: unknown, what = 'value'): Value {
  if (v === null || v === undefined) return null;
  switch (t.kind) {
    case 'boolean':
      if (typeof v !== 'boolean') throw badRead(t, v, what);
      return v;
    case 'int':
    case 'date':
      if (typeof v === 'number') return v;
      throw badRead(t, v, what);
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      // An int here is a promoted column (int → long, date → timestamp is not a partition case).
      if (typeof v === 'bigint') return v;
      if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
      throw badRead(t, v, what);
    case 'float':
    case 'double':
      if (typeof v === 'number') return v;
      throw badRead(t, v, what);
    case 'string':
      if (typeof v === 'string') return v;
      throw badRead(t, v, what);
    case 'uuid':
      if (v instanceof Uint8Array) return uuidFromBytes(v);
      if (typeof v === 'string') return v.toLowerCase();
      throw badRead(t, v, what);
    case 'fixed':
    case 'binary':
      if (v instanceof Uint8Array) return v;
      throw badRead(t, v, what);
    case 'decimal':
      if (v instanceof Uint8Array) return formatDecimal(unscaledFromBytes(v), t.scale);
      throw badRead(t, v, what);
    case 'unknown':
      return null;
  }
}

function badRead(t: PrimitiveType, v: unknown, what: string): FloeError {
  const found = v instanceof Uint8Array ? `${v.length} bytes` : `${typeof v}`;
  return new FloeError(SUBSYSTEM, 'invalid-data', `${what}: an Avro datum for ${primitiveToString(t)} must match Appendix A, found ${found}`);
}
