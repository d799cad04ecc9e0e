/**
 * JSON forms of schemas, partition specs and sort orders (format/spec.md Appendix C), the only place
 * where their kebab-case names appear. Writes what Java's `SchemaParser`, `PartitionSpecParser` and
 * `SortOrderParser` write (same keys, same order); reads what they accept, with Java's checks on
 * defaults (`NestedField.castDefault`, `Literals.from`) so that floe refuses what Spark and Trino would
 * refuse to load.
 *
 * Format-version rules (v3 types, v3-only defaults) are not checked on read, because tables written by
 * other tools break them (the golden `add_columns_with_defaults` table is v2 with defaults); writers call
 * `validateSchemaForFormatVersion` before committing a schema.
 */
import { FloeError } from '../../util/errors.js';
import { asInt, type JsonValue } from '../../util/json.js';
import { PARTITION_FIELD_ID_START, parseTransform, transformToString, type PartitionField, type PartitionSpec } from './partition.js';
import { Schema } from './schema.js';
import { fromJsonSingleValue, toJsonSingleValue } from './single-value.js';
import type { SortField, SortOrder } from './table-metadata.js';
import {
  isPrimitive,
  minFormatVersion,
  parsePrimitive,
  primitiveToString,
  type IcebergType,
  type ListType,
  type MapType,
  type NestedField,
  type StructType,
} from './types.js';
import type { Value } from '../../model/values.js';

const SUBSYSTEM = 'iceberg.schema-json';

type JsonObject = { [key: string]: JsonValue | undefined };

function invalid(message: string): FloeError {
  return new FloeError(SUBSYSTEM, 'invalid-data', message);
}

function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  try {
    const s = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
    return s === undefined ? String(v) : s.length > 120 ? s.slice(0, 120) + '…' : s;
  } catch {
    return String(v);
  }
}

export function asObject(v: unknown, what: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalid(`${what}: expected a JSON object, found ${show(v)}`);
  return v as Record<string, unknown>;
}

export function asArray(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw invalid(`${what}: expected a JSON array, found ${show(v)}`);
  return v;
}

export function asString(v: unknown, what: string): string {
  if (typeof v !== 'string') throw invalid(`${what}: expected a JSON string, found ${show(v)}`);
  return v;
}

function asBoolean(v: unknown, what: string): boolean {
  if (typeof v !== 'boolean') throw invalid(`${what}: expected a JSON boolean, found ${show(v)}`);
  return v;
}

// ---------------------------------------------------------------------------------------------------
// types and schemas

/** JSON of a type: a string for primitives, an object for struct / list / map. */
export function typeToJson(type: IcebergType): JsonValue {
  switch (type.kind) {
    case 'struct':
      return structToJson(type);
    case 'list':
      return { type: 'list', 'element-id': type.elementId, element: typeToJson(type.element), 'element-required': type.elementRequired };
    case 'map':
      return {
        type: 'map',
        'key-id': type.keyId,
        key: typeToJson(type.keyType),
        'value-id': type.valueId,
        value: typeToJson(type.valueType),
        'value-required': type.valueRequired,
      };
    default:
      return primitiveToString(type);
  }
}

function defaultToJson(field: NestedField, key: string, value: unknown): JsonValue | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number' && Number.isNaN(value)) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `field ${field.name}: ${key} is NaN; Java cannot read a NaN default, use null or a number`);
  }
  return toJsonSingleValue(field.type, value as Value);
}

function fieldToJson(f: NestedField): JsonObject {
  return {
    id: f.id,
    name: f.name,
    required: f.required,
    type: typeToJson(f.type),
    doc: f.doc,
    'initial-default': defaultToJson(f, 'initial-default', f.initialDefault),
    'write-default': defaultToJson(f, 'write-default', f.writeDefault),
  };
}

function structToJson(struct: StructType, extra: JsonObject = {}): JsonObject {
  return { type: 'struct', ...extra, fields: struct.fields.map(fieldToJson) };
}

/** Schema JSON as Java writes it: type, schema-id, identifier-field-ids (only when non-empty), fields. */
export function schemaToJson(schema: Schema): JsonObject {
  return structToJson(schema.asStruct, {
    'schema-id': schema.schemaId,
    'identifier-field-ids': schema.identifierFieldIds.length > 0 ? [...schema.identifierFieldIds] : undefined,
  });
}

export function typeFromJson(json: unknown, what = 'type'): IcebergType {
  if (typeof json === 'string') return parsePrimitive(json);
  const o = asObject(json, what);
  switch (o.type) {
    case 'struct':
      return structFromJson(o, what);
    case 'list':
      return listFromJson(o, what);
    case 'map':
      return mapFromJson(o, what);
    default:
      throw invalid(`${what}: expected a primitive type string or an object with type struct, list or map, found ${show(json)}`);
  }
}

/**
 * A default read from JSON. Java refuses (and so makes the table unloadable) a non-null default on a
 * nested type and a NaN default; floe refuses the same, so it never writes what Java cannot read.
 */
function defaultFromJson(o: Record<string, unknown>, key: 'initial-default' | 'write-default', name: string, type: IcebergType): unknown {
  if (!(key in o)) return undefined;
  const json = o[key];
  if (json === null) return null;
  if (!isPrimitive(type)) {
    throw invalid(`field ${name}: ${key} of a ${type.kind} must be null, found ${show(json)} (Java rejects non-null defaults on nested types)`);
  }
  const value = fromJsonSingleValue(type, json);
  if (typeof value === 'number' && Number.isNaN(value)) {
    throw invalid(`field ${name}: ${key} is NaN; expected a number (Java cannot create a literal from NaN)`);
  }
  return value;
}

function fieldFromJson(json: unknown, what: string): NestedField {
  const o = asObject(json, what);
  const id = asInt(o.id, `${what}.id`);
  const name = asString(o.name, `${what}.name`);
  const type = typeFromJson(o.type, `field ${name} type`);
  const field: NestedField = { id, name, required: asBoolean(o.required, `field ${name}.required`), type };
  if (o.doc !== undefined && o.doc !== null) field.doc = asString(o.doc, `field ${name}.doc`);
  const initialDefault = defaultFromJson(o, 'initial-default', name, type);
  if (initialDefault !== undefined) field.initialDefault = initialDefault;
  const writeDefault = defaultFromJson(o, 'write-default', name, type);
  if (writeDefault !== undefined) field.writeDefault = writeDefault;
  return field;
}

function structFromJson(o: Record<string, unknown>, what: string): StructType {
  const fields = asArray(o.fields, `${what}.fields`).map((f, i) => fieldFromJson(f, `${what}.fields[${i}]`));
  return { kind: 'struct', fields };
}

function listFromJson(o: Record<string, unknown>, what: string): ListType {
  return {
    kind: 'list',
    elementId: asInt(o['element-id'], `${what}.element-id`),
    element: typeFromJson(o.element, `${what}.element`),
    elementRequired: asBoolean(o['element-required'], `${what}.element-required`),
  };
}

function mapFromJson(o: Record<string, unknown>, what: string): MapType {
  return {
    kind: 'map',
    keyId: asInt(o['key-id'], `${what}.key-id`),
    keyType: typeFromJson(o.key, `${what}.key`),
    valueId: asInt(o['value-id'], `${what}.value-id`),
    valueType: typeFromJson(o.value, `${what}.value`),
    valueRequired: asBoolean(o['value-required'], `${what}.value-required`),
  };
}

/**
 * A schema from JSON. `defaultSchemaId` is used when the JSON has no `schema-id` (v1 metadata). The
 * Schema constructor checks id uniqueness and identifier fields as Java's does.
 */
export function schemaFromJson(json: unknown, defaultSchemaId = 0): Schema {
  const o = asObject(json, 'schema');
  if (o.type !== 'struct') throw invalid(`schema: expected "type": "struct", found ${show(o.type)}`);
  const struct = structFromJson(o, 'schema');
  const schemaId = o['schema-id'] === undefined || o['schema-id'] === null ? defaultSchemaId : asInt(o['schema-id'], 'schema-id');
  const ids = o['identifier-field-ids'];
  const identifierFieldIds = ids === undefined || ids === null ? [] : asArray(ids, 'identifier-field-ids').map((x) => asInt(x, 'identifier-field-ids[]'));
  return new Schema(schemaId, struct.fields, identifierFieldIds);
}

// ---------------------------------------------------------------------------------------------------
// format-version rules for writers

/** Spec "Reserved Field IDs": ids above Integer.MAX_VALUE - 200 belong to metadata columns. */
const MAX_USER_FIELD_ID = 2_147_483_447;

/**
 * Checks a schema that floe is about to commit to a table of `formatVersion`, as Java's
 * `Schema.checkCompatibility` does, plus the default rules of the docs/iceberg-writer-checklist.md §2:
 * - timestamp_ns / timestamptz_ns / unknown need v3;
 * - non-null `initial-default` or `write-default` need v3 (Java checks initial-default; icebird both);
 * - `unknown` must be optional; no field id above 2147483447.
 * Throws one FloeError listing every problem.
 */
export function validateSchemaForFormatVersion(schema: Schema, formatVersion: number): void {
  const problems: string[] = [];
  const visit = (t: IcebergType, path: string): void => {
    if (t.kind === 'struct') {
      for (const f of t.fields) {
        const name = path ? `${path}.${f.name}` : f.name;
        if (f.id > MAX_USER_FIELD_ID) problems.push(`field ${name} has id ${f.id}, above the reserved limit ${MAX_USER_FIELD_ID}`);
        if (f.type.kind === 'unknown' && f.required) problems.push(`field ${name} of type unknown must be optional`);
        for (const [key, value] of [
          ['initial-default', f.initialDefault],
          ['write-default', f.writeDefault],
        ] as const) {
          if (value === undefined || value === null) continue;
          if (formatVersion < 3) problems.push(`field ${name}: non-null ${key} (${show(value)}) is not supported until v3`);
          if (f.type.kind === 'unknown') problems.push(`field ${name}: unknown columns must default to null`);
        }
        visit(f.type, name);
      }
    } else if (t.kind === 'list') {
      visit(t.element, `${path}.element`);
    } else if (t.kind === 'map') {
      visit(t.keyType, `${path}.key`);
      visit(t.valueType, `${path}.value`);
    } else if (minFormatVersion(t) > formatVersion) {
      problems.push(`field ${path}: ${primitiveToString(t)} is not supported until v${minFormatVersion(t)}`);
    }
  };
  visit(schema.asStruct, '');
  if (problems.length > 0) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `schema ${schema.schemaId} is invalid for format v${formatVersion}:\n- ${problems.join('\n- ')}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// partition specs

function partitionFieldToJson(f: PartitionField): JsonObject {
  return { name: f.name, transform: transformToString(f.transform), 'source-id': f.sourceId, 'field-id': f.fieldId };
}

/** `{spec-id, fields}` as in table metadata. */
export function partitionSpecToJson(spec: PartitionSpec): JsonObject {
  return { 'spec-id': spec.specId, fields: spec.fields.map(partitionFieldToJson) };
}

/** Only the fields array: the manifest's `partition-spec` key-value entry (spec "Manifest Metadata"). */
export function partitionFieldsToJson(spec: PartitionSpec): JsonValue {
  return spec.fields.map(partitionFieldToJson);
}

function partitionFieldFromJson(json: unknown, index: number, what: string, unassigned: boolean): PartitionField {
  const o = asObject(json, `${what}.fields[${index}]`);
  const name = asString(o.name, `${what}.fields[${index}].name`);
  let sourceId: number;
  if (o['source-id'] !== undefined) {
    sourceId = asInt(o['source-id'], `partition field ${name} source-id`);
  } else {
    const ids = asArray(o['source-ids'], `partition field ${name} source-id(s)`);
    if (ids.length !== 1) {
      throw new FloeError(SUBSYSTEM, 'unsupported', `partition field ${name}: multi-argument transforms (source-ids ${show(ids)}) are not supported`);
    }
    sourceId = asInt(ids[0], `partition field ${name} source-ids[0]`);
  }
  return {
    sourceId,
    // v1 specs may lack field ids: the reference implementation assigned 1000, 1001, … (spec Appendix C).
    // REST add-spec may omit them too: -1 there asks the metadata builder to assign one.
    fieldId:
      o['field-id'] === undefined || o['field-id'] === null
        ? unassigned
          ? -1
          : PARTITION_FIELD_ID_START + index
        : asInt(o['field-id'], `partition field ${name} field-id`),
    name,
    transform: parseTransform(asString(o.transform, `partition field ${name} transform`)),
  };
}

/**
 * A partition spec from its object form, or from a bare fields array (v1 `partition-spec`) with `specId`.
 * With `unassigned` (REST `add-spec`), a missing spec id or field id reads as -1 for the builder to assign.
 */
export function partitionSpecFromJson(json: unknown, specId = 0, unassigned = false): PartitionSpec {
  if (Array.isArray(json)) return { specId, fields: json.map((f, i) => partitionFieldFromJson(f, i, 'partition-spec', unassigned)) };
  const o = asObject(json, 'partition spec');
  const id = unassigned && (o['spec-id'] === undefined || o['spec-id'] === null) ? -1 : asInt(o['spec-id'], 'partition spec spec-id');
  const fields = asArray(o.fields, `partition spec ${id} fields`).map((f, i) => partitionFieldFromJson(f, i, `partition spec ${id}`, unassigned));
  return { specId: id, fields };
}

// ---------------------------------------------------------------------------------------------------
// sort orders

export function sortOrderToJson(order: SortOrder): JsonObject {
  return {
    'order-id': order.orderId,
    fields: order.fields.map((f) => ({ transform: f.transform, 'source-id': f.sourceId, direction: f.direction, 'null-order': f.nullOrder })),
  };
}

export function sortOrderFromJson(json: unknown): SortOrder {
  const o = asObject(json, 'sort order');
  const orderId = asInt(o['order-id'], 'sort order order-id');
  const fields = asArray(o.fields, `sort order ${orderId} fields`).map((x, i): SortField => {
    const f = asObject(x, `sort order ${orderId} fields[${i}]`);
    const what = `sort order ${orderId} field ${i}`;
    const direction = asString(f.direction, `${what} direction`).toLowerCase();
    const nullOrder = asString(f['null-order'], `${what} null-order`).toLowerCase();
    if (direction !== 'asc' && direction !== 'desc') throw invalid(`${what}: expected direction asc or desc, found ${show(f.direction)}`);
    if (nullOrder !== 'nulls-first' && nullOrder !== 'nulls-last') {
      throw invalid(`${what}: expected null-order nulls-first or nulls-last, found ${show(f['null-order'])}`);
    }
    let sourceId: number;
    if (f['source-id'] !== undefined) sourceId = asInt(f['source-id'], `${what} source-id`);
    else {
      const ids = asArray(f['source-ids'], `${what} source-id(s)`);
      if (ids.length !== 1) throw new FloeError(SUBSYSTEM, 'unsupported', `${what}: multi-argument transforms are not supported`);
      sourceId = asInt(ids[0], `${what} source-ids[0]`);
    }
    const transform = transformToString(parseTransform(asString(f.transform, `${what} transform`)));
    return { sourceId, transform, direction, nullOrder };
  });
  return { orderId, fields };
}
