/**
 * Binary single values (format/spec.md Appendix D "Binary single-value serialization"), the form of
 * manifest lower/upper bounds, plus the UUID and decimal byte helpers that bucket hashing, Avro and
 * Parquet share.
 */
import { FloeError } from '../../util/errors.js';
import { formatDecimal, fromHex, toHex, type Value } from '../../model/values.js';
import { asBytesValue, asIntValue, asLongValue, asNumberValue, decimalUnscaled, describe, fail, requirePrimitive, SUBSYSTEM } from './single-value-checks.js';
import { primitiveToString, type IcebergType } from './types.js';

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });
const MICROS_PER_DAY = 86_400_000_000n;
const NANOS_PER_DAY = 86_400_000_000_000n;

// ---------------------------------------------------------------------------------------------------
// UUID and decimal byte helpers (also used by bucket hashing and the Parquet writer)

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** 16 big-endian bytes of a UUID string (spec Appendix B note 4). */
export function uuidToBytes(uuid: string): Uint8Array {
  if (!UUID_RE.test(uuid)) {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `uuid value: expected 8-4-4-4-12 hex digits, found ${describe(uuid)}`);
  }
  return fromHex(uuid.replace(/-/g, ''));
}

/** Lowercase 8-4-4-4-12 string of 16 big-endian bytes. */
export function uuidFromBytes(bytes: Uint8Array): string {
  if (bytes.length !== 16) {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `uuid value: expected 16 bytes, found ${bytes.length}`);
  }
  const h = toHex(bytes);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * Two's-complement big-endian bytes of an unscaled decimal: the minimal length (as Java
 * `BigInteger.toByteArray`, 1 byte for zero) or, with `width`, sign-extended to exactly that many bytes
 * (Parquet FIXED_LEN_BYTE_ARRAY decimals).
 */
export function unscaledToBytes(unscaled: bigint, width?: number): Uint8Array {
  let n = 1;
  while (unscaled < -(1n << BigInt(8 * n - 1)) || unscaled >= 1n << BigInt(8 * n - 1)) n++;
  const len = width ?? n;
  if (len < n) {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `decimal unscaled value ${unscaled} needs ${n} bytes, found room for ${len}`);
  }
  const out = new Uint8Array(len);
  let x = BigInt.asUintN(8 * len, unscaled);
  for (let i = len - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

/** Unscaled value of two's-complement big-endian bytes (any length). */
export function unscaledFromBytes(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let x = 0n;
  for (const b of bytes) x = (x << 8n) | BigInt(b);
  return BigInt.asIntN(8 * bytes.length, x);
}

// ---------------------------------------------------------------------------------------------------
// binary single values (spec Appendix D "Binary single-value serialization")

function littleEndian(size: 4 | 8, write: (view: DataView) => void): Uint8Array {
  const out = new Uint8Array(size);
  write(new DataView(out.buffer));
  return out;
}

/** The binary single-value form of a non-null value of a primitive type. */
export function toBinary(type: IcebergType, value: Value): Uint8Array {
  const t = requirePrimitive(type, 'binary single value');
  if (value === null) fail(t, 'a non-null value (null has no binary single-value form)', value);
  switch (t.kind) {
    case 'boolean':
      if (typeof value !== 'boolean') fail(t, 'a boolean', value);
      return Uint8Array.of(value ? 1 : 0);
    case 'int':
      return littleEndian(4, (d) => d.setInt32(0, asIntValue(t, value), true));
    case 'date':
      return littleEndian(4, (d) => d.setInt32(0, asIntValue(t, value), true));
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return littleEndian(8, (d) => d.setBigInt64(0, asLongValue(t, value), true));
    case 'float':
      return littleEndian(4, (d) => d.setFloat32(0, asNumberValue(t, value), true));
    case 'double':
      return littleEndian(8, (d) => d.setFloat64(0, asNumberValue(t, value), true));
    case 'decimal':
      return unscaledToBytes(decimalUnscaled(t, value));
    case 'string':
      if (typeof value !== 'string') fail(t, 'a string', value);
      return utf8Encoder.encode(value);
    case 'uuid':
      if (typeof value !== 'string') fail(t, 'a uuid string', value);
      return uuidToBytes(value);
    case 'fixed':
    case 'binary':
      return asBytesValue(t, value);
    case 'unknown':
      throw new FloeError(SUBSYSTEM, 'unsupported', 'unknown has no binary single-value form (it is always null)');
  }
}

function readView(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * The value of a binary single value. Accepts the narrower encodings that type promotion leaves in
 * old manifests (spec "Schema Evolution", bounds table): 4-byte int bounds for long, 4-byte float bounds
 * for double, 4-byte date bounds for timestamp / timestamp_ns.
 */
export function fromBinary(type: IcebergType, bytes: Uint8Array): Value {
  const t = requirePrimitive(type, 'binary single value');
  const len = bytes.length;
  const expectLength = (...allowed: number[]): void => {
    if (!allowed.includes(len)) {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `${primitiveToString(t)} binary value: expected ${allowed.join(' or ')} bytes, found ${len}`);
    }
  };
  switch (t.kind) {
    case 'boolean':
      expectLength(1);
      return bytes[0] !== 0;
    case 'int':
    case 'date':
      expectLength(4);
      return readView(bytes).getInt32(0, true);
    case 'long':
      expectLength(4, 8);
      return len === 4 ? BigInt(readView(bytes).getInt32(0, true)) : readView(bytes).getBigInt64(0, true);
    case 'time':
    case 'timestamptz':
    case 'timestamptz_ns':
      expectLength(8);
      return readView(bytes).getBigInt64(0, true);
    case 'timestamp':
    case 'timestamp_ns':
      expectLength(4, 8);
      if (len === 4) {
        const days = BigInt(readView(bytes).getInt32(0, true));
        return days * (t.kind === 'timestamp' ? MICROS_PER_DAY : NANOS_PER_DAY);
      }
      return readView(bytes).getBigInt64(0, true);
    case 'float':
      expectLength(4);
      return readView(bytes).getFloat32(0, true);
    case 'double':
      expectLength(4, 8);
      return len === 4 ? readView(bytes).getFloat32(0, true) : readView(bytes).getFloat64(0, true);
    case 'decimal':
      return formatDecimal(unscaledFromBytes(bytes), t.scale);
    case 'string':
      try {
        return utf8Decoder.decode(bytes);
      } catch (e) {
        throw new FloeError(SUBSYSTEM, 'invalid-data', `string binary value: expected UTF-8, found invalid bytes ${toHex(bytes.subarray(0, 32))}`, { cause: e });
      }
    case 'uuid':
      return uuidFromBytes(bytes);
    case 'fixed':
      expectLength(t.length);
      return bytes.slice();
    case 'binary':
      return bytes.slice();
    case 'unknown':
      throw new FloeError(SUBSYSTEM, 'unsupported', 'unknown has no binary single-value form (it is always null)');
  }
}
