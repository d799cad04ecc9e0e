/**
 * Canonical, exact encodings of row keys, so that two key values are "the same key" exactly when
 * Iceberg's equality deletes would match them (spec "Equality Delete Files": values compared by
 * equality of their type), independent of how the source happened to represent them:
 *
 * - int/date as their integer, long/time/timestamps as the bigint (a small long given as a JS number
 *   encodes like the same bigint, never through a double);
 * - decimal by its unscaled integer at the column's scale (`"1.50"` and `"1.5"` are one key);
 * - string by its code units, uuid lowercased, binary/fixed by byte content (hex);
 * - boolean, and null (only possible in keyless tables).
 *
 * Each value is tagged with its type letter and the list is JSON-encoded, which keeps the encoding
 * unambiguous (no separator inside a string can forge another key); a single non-null value is its
 * tagged text alone.
 *
 * Keyless tables use the encoding of the whole row as its identity (exact, at the cost of memory
 * proportional to the rows written in one checkpoint).
 */
import { FloeError } from '../../util/errors.js';
import { formatDecimal, fromHex, parseDecimal, toHex, type Value } from '../../model/values.js';
import type { IcebergType } from '../spec/types.js';
import { behaviourOf, type DecimalType, type ValueFamily } from '../spec/primitive-behaviour.js';

const SUBSYSTEM = 'iceberg.writer';

function fail(type: IcebergType, v: unknown, what: string): never {
  const found = v instanceof Uint8Array ? 'bytes' : typeof v === 'string' ? `the string ${JSON.stringify(v.slice(0, 40))}` : `${typeof v} ${String(v).slice(0, 40)}`;
  throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: expected a value of type ${type.kind}, found ${found}; see src/model/values.ts for the value model`);
}

function integerText(type: IcebergType, v: Value, what: string): string {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v.toString();
  return fail(type, v, what);
}

/** The canonical text of one non-null value (without the type tag). */
function canonicalValue(type: IcebergType, v: Value, what = 'key value'): string {
  switch (behaviourOf(type)?.value) {
    case 'boolean':
      if (typeof v !== 'boolean') fail(type, v, what);
      return v ? 't' : 'f';
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v)) fail(type, v, what);
      return String(v);
    case 'long':
      return integerText(type, v, what);
    case 'decimal':
      if (typeof v !== 'string') fail(type, v, what);
      try {
        return parseDecimal(v, (type as DecimalType).scale).toString();
      } catch (e) {
        throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: ${JSON.stringify(v)} is not a decimal with at most ${(type as DecimalType).scale} fraction digits`, { cause: e });
      }
    case 'string':
      if (typeof v !== 'string') fail(type, v, what);
      return v;
    case 'uuid':
      if (typeof v !== 'string') fail(type, v, what);
      return v.toLowerCase();
    case 'bytes':
      if (!(v instanceof Uint8Array)) fail(type, v, what);
      return toHex(v);
    case 'float': {
      // Only keyless tables hash float columns (the row is its identity); by value, NaN normalised.
      // A `float` column holds 32-bit values: a double handed in (MySQL's text of a FLOAT, 1.1) is
      // the float32 the data file stores (1.100000023841858), so a row read back from the lake has
      // the identity it had when it was written.
      if (typeof v !== 'number') fail(type, v, what);
      if (Number.isNaN(v)) return 'NaN';
      const x = type.kind === 'float' ? Math.fround(v) : v;
      return Object.is(x, -0) ? '-0' : String(x);
    }
    default:
      // Nested values (never in MySQL-sourced rows): a structural encoding is still exact.
      return structural(v);
  }
}

function structural(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return `0x${toHex(v)}`;
  if (v instanceof Map) return `{${[...v.entries()].map(([k, x]) => `${structural(k)}:${structural(x)}`).join(',')}}`;
  if (Array.isArray(v)) return `[${v.map(structural).join(',')}]`;
  if (typeof v === 'object') return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `${JSON.stringify(k)}:${structural(x)}`).join(',')}}`;
  return JSON.stringify(v);
}

/** The type letter of each value family (`unknown` and nested types: 'n'). */
const FAMILY_TAGS: Partial<Record<ValueFamily, string>> = { boolean: 'z', int: 'i', long: 'l', decimal: 'd', string: 's', uuid: 'u', bytes: 'b', float: 'f' };

function tagOf(type: IcebergType): string {
  const family = behaviourOf(type)?.value;
  return (family && FAMILY_TAGS[family]) ?? 'n';
}

/** Encodes key values of the given types (same length) as one canonical string. */
export function encodeKey(types: readonly IcebergType[], values: readonly Value[], what = 'key'): string {
  if (values.length !== types.length) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: expected ${types.length} key value(s), found ${values.length}`);
  }
  if (types.length === 1 && values[0] !== null && values[0] !== undefined) {
    // One non-null value (most primary keys): its tagged text alone. Injective among the keys of one
    // type list — the only keys ever compared with each other — and never equal to the JSON array
    // form below (which starts with '['; a tag is a letter).
    return tagOf(types[0]!) + canonicalValue(types[0]!, values[0], what);
  }
  const parts: (string | null)[] = new Array(types.length);
  for (let i = 0; i < types.length; i++) {
    const v = values[i];
    parts[i] = v === null || v === undefined ? null : tagOf(types[i]!) + canonicalValue(types[i]!, v, what);
  }
  return JSON.stringify(parts);
}

/** The value of one canonical text (`canonicalValue`), in the value model of `type`. */
function valueOfCanonical(type: IcebergType, text: string, what: string): Value {
  switch (behaviourOf(type)?.value) {
    case 'boolean':
      return text === 't';
    case 'int':
      return Number(text);
    case 'long':
      return BigInt(text);
    case 'decimal':
      return formatDecimal(BigInt(text), (type as DecimalType).scale);
    case 'string':
    case 'uuid':
      return text;
    case 'bytes':
      return fromHex(text);
    case 'float':
      return text === 'NaN' ? Number.NaN : Number(text);
    default:
      throw new FloeError(SUBSYSTEM, 'unsupported', `${what}: a key of type ${type.kind} cannot be turned back into values`);
  }
}

/**
 * The values a key identity (table-key.ts `KeyId`: a number for one integer-valued column, else
 * `encodeKey`'s text) stands for, in the order of `types` — the inverse of the encoding, so that
 * the keys of rows found in an index can be matched against another table's columns.
 */
export function decodeKey(types: readonly IcebergType[], id: string | number, what = 'key'): Value[] {
  if (typeof id === 'number') {
    if (types.length !== 1) throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: a numeric key identity stands for one column, not ${types.length}`);
    return [behaviourOf(types[0]!)?.value === 'long' ? BigInt(id) : id];
  }
  if (types.length === 1 && !id.startsWith('[')) return [valueOfCanonical(types[0]!, id.slice(1), what)];
  const parts = JSON.parse(id) as (string | null)[];
  if (!Array.isArray(parts) || parts.length !== types.length) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: expected an encoded key of ${types.length} value(s), found ${id.slice(0, 80)}`);
  }
  return parts.map((p, i) => (p === null ? null : valueOfCanonical(types[i]!, p.slice(1), what)));
}
