/**
 * Rows as JSON, the form `floe scan` prints: one object per row keyed by column name, each primitive
 * value in Iceberg's JSON single-value form (spec Appendix D: exact integers for longs, decimals as
 * strings with exactly S digits, ISO dates/times/timestamps, timestamptz with `+00:00`, binary and
 * fixed as hex). Nested values: a list is an array, a map is `{"keys": […], "values": […]}` as in the
 * spec, and a struct is an object keyed by field NAME (the spec's single-value form keys struct
 * fields by id, which is unreadable for people; this is output for people and tools, not metadata).
 * Write it with `stringifyJson` (lossless: longs stay exact, floats keep their fraction).
 */
import type { JsonValue } from '../../util/json.js';
import type { Row, Value } from '../../model/values.js';
import type { Schema } from '../spec/schema.js';
import { toJsonSingleValue } from '../spec/single-value.js';
import type { IcebergType, NestedField } from '../spec/types.js';

export function valueToJson(type: IcebergType, value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  switch (type.kind) {
    case 'struct':
      return fieldsToJson(type.fields, value as unknown[]);
    case 'list':
      return (value as unknown[]).map((v) => valueToJson(type.element, v));
    case 'map': {
      const pairs = value as [unknown, unknown][];
      return { keys: pairs.map(([k]) => valueToJson(type.keyType, k)), values: pairs.map(([, v]) => valueToJson(type.valueType, v)) };
    }
    default:
      return toJsonSingleValue(type, value as Value);
  }
}

function fieldsToJson(fields: readonly NestedField[], values: readonly unknown[]): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {};
  fields.forEach((f, i) => {
    out[f.name] = valueToJson(f.type, values[i]);
  });
  return out;
}

/** A scan row (values in the schema's top-level field order) as a JSON object keyed by column name. */
export function rowToJson(schema: Schema, row: Row): { [key: string]: JsonValue } {
  return fieldsToJson(schema.fields, row);
}
