/**
 * The Arrow schema floe hands to parquet-wasm for an Iceberg schema (format/spec.md Appendix A
 * "Parquet"; docs/iceberg-writer-checklist.md §5). arrow-rs' `ArrowWriter` turns the Arrow field metadata `PARQUET:field_id`
 * into the Parquet `field_id`, and derives REQUIRED/OPTIONAL from Arrow nullability, so this module is
 * where both contracts are met:
 *
 * - every Iceberg field — top level, struct child, list element, map key and value — carries its id;
 *   the intermediate repeated groups (`list`, `key_value`) carry none, as Java writes them;
 * - nullable = !required;
 * - the physical type follows the spec's table: timestamps in micro/nanoseconds with the zone
 *   deciding `isAdjustedToUTC`, dates as Date32, decimals as Decimal128 (arrow-rs picks INT32 / INT64 /
 *   FIXED_LEN_BYTE_ARRAY by precision), uuid as 16-byte fixed;
 * - `unknown` fields are left out (spec: never written to data files);
 * - names are Java's `makeCompatibleName` of the Iceberg name.
 */
import * as arrow from 'apache-arrow';
import { FloeError } from '../../util/errors.js';
import type { Schema } from '../spec/schema.js';
import { primitiveToString, type IcebergType, type NestedField, type PrimitiveType } from '../spec/types.js';
import { makeCompatibleName } from './compatible-name.js';

/** Arrow field metadata key that arrow-rs maps to and from the Parquet `field_id`. */
export const FIELD_ID_KEY = 'PARQUET:field_id';

const SUBSYSTEM = 'iceberg.parquet';

function idMetadata(id: number): Map<string, string> {
  return new Map([[FIELD_ID_KEY, String(id)]]);
}

/** The Arrow type that makes arrow-rs write the spec's Parquet type for a primitive. */
function arrowPrimitiveType(type: PrimitiveType): arrow.DataType {
  switch (type.kind) {
    case 'boolean':
      return new arrow.Bool();
    case 'int':
      return new arrow.Int32();
    case 'long':
      return new arrow.Int64();
    case 'float':
      return new arrow.Float32();
    case 'double':
      return new arrow.Float64();
    case 'decimal':
      // arrow-js argument order is (scale, precision, bitWidth).
      return new arrow.Decimal(type.scale, type.precision, 128);
    case 'date':
      return new arrow.DateDay();
    case 'time':
      return new arrow.TimeMicrosecond();
    case 'timestamp':
      return new arrow.TimestampMicrosecond(null);
    case 'timestamptz':
      // Any non-empty zone makes arrow-rs write isAdjustedToUTC=true; values are UTC instants.
      return new arrow.TimestampMicrosecond('UTC');
    case 'timestamp_ns':
      return new arrow.TimestampNanosecond(null);
    case 'timestamptz_ns':
      return new arrow.TimestampNanosecond('UTC');
    case 'string':
      return new arrow.Utf8();
    case 'uuid':
      // parquet-wasm is built without arrow-rs' canonical extension types, so no UUID annotation is
      // written: Spark and Trino still read FLBA(16) as uuid when the table says uuid (docs/iceberg-writer-checklist.md §5).
      return new arrow.FixedSizeBinary(16);
    case 'fixed':
      return new arrow.FixedSizeBinary(type.length);
    case 'binary':
      return new arrow.Binary();
    case 'unknown':
      throw new FloeError(SUBSYSTEM, 'internal', 'unknown columns have no Parquet type; they are left out of data files');
  }
}

/** Arrow type of any Iceberg type, with ids on every nested field. */
export function arrowType(type: IcebergType, path: string): arrow.DataType {
  switch (type.kind) {
    case 'struct':
      return new arrow.Struct(arrowFields(type.fields, path));
    case 'list': {
      if (type.element.kind === 'unknown') unsupportedUnknown(`${path}.element`);
      const element = new arrow.Field('element', arrowType(type.element, `${path}.element`), !type.elementRequired, idMetadata(type.elementId));
      return new arrow.List(element);
    }
    case 'map': {
      if (type.keyType.kind === 'unknown' || type.valueType.kind === 'unknown') unsupportedUnknown(`${path} key/value`);
      const key = new arrow.Field('key', arrowType(type.keyType, `${path}.key`), false, idMetadata(type.keyId));
      const value = new arrow.Field('value', arrowType(type.valueType, `${path}.value`), !type.valueRequired, idMetadata(type.valueId));
      const entries = new arrow.Field('key_value', new arrow.Struct([key, value]), false);
      const map = new arrow.Map_(entries, false);
      // arrow-js renames the entries field to "entries" (ARROW-8716); Java names the repeated group
      // `key_value` (TypeToMessageType), and arrow-rs writes whatever name the Arrow field has.
      (map.children[0] as { name: string }).name = 'key_value';
      return map;
    }
    default:
      return arrowPrimitiveType(type);
  }
}

function unsupportedUnknown(path: string): never {
  throw new FloeError(SUBSYSTEM, 'unsupported', `${path} is of type unknown inside a list or map; unknown values can only be top-level or struct fields (they are never written)`);
}

/** Arrow fields of an Iceberg struct, leaving out `unknown` fields. */
function arrowFields(fields: readonly NestedField[], path = ''): arrow.Field[] {
  const out: arrow.Field[] = [];
  const seen = new Map<string, string>();
  for (const f of fields) {
    if (f.type.kind === 'unknown') continue;
    const fieldPath = path ? `${path}.${f.name}` : f.name;
    if (f.name.length === 0) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `field ${f.id} under ${path || 'the schema root'} has an empty name; Iceberg field names must be non-empty`);
    }
    const physical = makeCompatibleName(f.name);
    const clash = seen.get(physical);
    if (clash !== undefined) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `fields ${JSON.stringify(clash)} and ${JSON.stringify(f.name)}${path ? ` in ${path}` : ''} both become the Parquet column ${JSON.stringify(physical)}; rename one of them`);
    }
    seen.set(physical, f.name);
    if (f.type.kind === 'struct' && f.type.fields.every((c) => c.type.kind === 'unknown')) {
      throw new FloeError(SUBSYSTEM, 'unsupported', `struct ${fieldPath} has no writable fields (Parquet groups cannot be empty)`);
    }
    out.push(new arrow.Field(physical, arrowType(f.type, fieldPath), !f.required, idMetadata(f.id)));
  }
  return out;
}

/** The Arrow schema of the columns floe writes for `schema` (top-level `unknown` fields omitted). */
export function toArrowSchema(schema: Schema | readonly NestedField[]): arrow.Schema {
  const fields = Array.isArray(schema) ? (schema as readonly NestedField[]) : (schema as Schema).fields;
  if (fields.every((f) => f.type.kind === 'unknown')) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', 'the schema has no writable columns (only unknown fields); a Parquet file needs at least one column');
  }
  return new arrow.Schema(arrowFields(fields));
}

/** `decimal(10, 2)`-style text of a type, for messages. */
export function describeType(type: IcebergType): string {
  return type.kind === 'struct' || type.kind === 'list' || type.kind === 'map' ? type.kind : primitiveToString(type);
}
