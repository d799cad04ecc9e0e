/**
 * Value checks shared by the binary and JSON single-value encodings: each one accepts a value of the
 * model in src/model/values.ts for one primitive type or throws a FloeError naming the type, what was
 * expected and what was found.
 */
import { FloeError } from '../../util/errors.js';
import { RawJson } from '../../util/json.js';
import { parseDecimal, type Value } from '../../model/values.js';
import { primitiveToString, type IcebergType, type PrimitiveType } from './types.js';

export const SUBSYSTEM = 'iceberg.single-value';
const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

export function fail(type: PrimitiveType, expected: string, found: unknown): never {
  throw new FloeError(SUBSYSTEM, 'invalid-data', `${primitiveToString(type)} value: expected ${expected}, found ${describe(found)}`);
}

export function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return `${v.length} bytes`;
  if (v instanceof RawJson) return v.text;
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? v.slice(0, 60) + '…' : v);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

export function requirePrimitive(type: IcebergType, what: string): PrimitiveType {
  if (type.kind === 'struct' || type.kind === 'list' || type.kind === 'map') {
    throw new FloeError(SUBSYSTEM, 'unsupported', `${what} of a ${type.kind}: only primitive types have single values here (Java rejects non-null nested defaults)`);
  }
  return type;
}

// ---------------------------------------------------------------------------------------------------
// value checks shared by both encodings

export function asIntValue(type: PrimitiveType, v: Value): number {
  if (typeof v === 'number' && Number.isInteger(v) && v >= INT_MIN && v <= INT_MAX) return v;
  if (typeof v === 'bigint' && v >= BigInt(INT_MIN) && v <= BigInt(INT_MAX)) return Number(v);
  return fail(type, 'a 32-bit integer', v);
}

export function asLongValue(type: PrimitiveType, v: Value): bigint {
  let b: bigint | undefined;
  if (typeof v === 'bigint') b = v;
  else if (typeof v === 'number' && Number.isSafeInteger(v)) b = BigInt(v);
  if (b === undefined || b < LONG_MIN || b > LONG_MAX) return fail(type, 'a 64-bit integer (bigint)', v);
  return b;
}

export function asNumberValue(type: PrimitiveType, v: Value): number {
  if (typeof v === 'number') return v;
  return fail(type, 'a number', v);
}

export function asBytesValue(type: PrimitiveType, v: Value): Uint8Array {
  if (!(v instanceof Uint8Array)) return fail(type, 'a Uint8Array', v);
  if (type.kind === 'fixed' && v.length !== type.length) return fail(type, `exactly ${type.length} bytes`, v);
  return v;
}

export function decimalUnscaled(type: PrimitiveType & { kind: 'decimal' }, v: Value): bigint {
  if (typeof v !== 'string') return fail(type, 'a decimal string', v);
  let unscaled: bigint;
  try {
    unscaled = parseDecimal(v, type.scale);
  } catch (e) {
    return fail(type, `a decimal with at most ${type.scale} fraction digits`, v);
  }
  const digits = (unscaled < 0n ? -unscaled : unscaled).toString().length;
  if (unscaled !== 0n && digits > type.precision) return fail(type, `at most ${type.precision} digits`, v);
  return unscaled;
}
