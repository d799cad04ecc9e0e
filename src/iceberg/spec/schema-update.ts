/**
 * Schema evolution (format/spec.md "Schema Evolution", "Default values"; Java `SchemaUpdate`): the
 * changes floe makes when MySQL DDL arrives under the `evolve` policy (docs/design.md §3, §5):
 *
 * - add a column: new ids above last-column-id (for nested types too); optional, or required only with a
 *   default; a default becomes `initial-default` + `write-default` and needs format v3;
 * - rename: the field id stays, so old data files still read;
 * - drop: never an identifier field, nor a source of the default partition spec or sort order;
 * - widen: int→long, float→double, decimal(P,S)→decimal(P',S) with P' > P, and in v3 date→timestamp /
 *   timestamp_ns (refused when a bucket or identity partition would change value) and unknown→any;
 * - make optional; change a write-default (v3) or a doc.
 *
 * Anything else is refused with an error that says what is allowed. The result is the new schema (next
 * schema id), the new last-column-id, and the updates + requirements to commit it
 * (`add-schema` + `set-current-schema -1`, guarded as Java's `UpdateRequirements` guards them).
 */
import { FloeError } from '../../util/errors.js';
import type { Value } from '../../model/values.js';
import type { MetadataUpdate, TableRequirement } from '../metadata/metadata-updates.js';
import { Schema } from './schema.js';
import { toJsonSingleValue } from './single-value.js';
import type { TableMetadata } from './table-metadata.js';
import { isPrimitive, minFormatVersion, typeToString, type IcebergType, type NestedField, type PrimitiveType, type StructType } from './types.js';

export type SchemaChange =
  | {
      kind: 'add-column';
      /** Name of the new column; `parent` is the dotted path of an existing struct column to add into. */
      name: string;
      parent?: string;
      type: IcebergType;
      required?: boolean;
      doc?: string;
      /** v3 only: becomes both initial-default and write-default (spec "Default values"). */
      defaultValue?: Value;
    }
  | { kind: 'rename-column'; name: string; newName: string }
  | { kind: 'drop-column'; name: string }
  | { kind: 'update-column-type'; name: string; type: PrimitiveType }
  | { kind: 'make-optional'; name: string }
  /** v3 only: a new write-default (null clears it); initial-default never changes. */
  | { kind: 'update-write-default'; name: string; value: Value }
  | { kind: 'update-doc'; name: string; doc: string | undefined };

export interface SchemaEvolution {
  /** The evolved schema, with the next free schema id; `changed` false means nothing to commit. */
  schema: Schema;
  lastColumnId: number;
  changed: boolean;
  requirements: TableRequirement[];
  updates: MetadataUpdate[];
}

const SUBSYSTEM = 'iceberg.schema-update';
const MICROS_PER_DAY = 86_400_000_000n;

function refuse(message: string): FloeError {
  return new FloeError(SUBSYSTEM, 'invalid-argument', message);
}

/** Deep copy of a type (fields are mutated while changes apply). */
function cloneType(t: IcebergType): IcebergType {
  if (t.kind === 'struct') return { kind: 'struct', fields: t.fields.map((f) => ({ ...f, type: cloneType(f.type) })) };
  if (t.kind === 'list') return { ...t, element: cloneType(t.element) };
  if (t.kind === 'map') return { ...t, keyType: cloneType(t.keyType), valueType: cloneType(t.valueType) };
  return t;
}

/** Gives every id inside an added type a fresh id (element, key, value and struct field ids). */
function assignFreshIds(t: IcebergType, next: () => number): IcebergType {
  if (t.kind === 'struct') return { kind: 'struct', fields: t.fields.map((f) => ({ ...f, id: next(), type: assignFreshIds(f.type, next) })) };
  if (t.kind === 'list') {
    const elementId = next();
    return { ...t, elementId, element: assignFreshIds(t.element, next) };
  }
  if (t.kind === 'map') {
    const keyId = next();
    const valueId = next();
    return { ...t, keyId, valueId, keyType: assignFreshIds(t.keyType, next), valueType: assignFreshIds(t.valueType, next) };
  }
  return t;
}

function checkTypeVersion(t: IcebergType, formatVersion: number, what: string): void {
  if (t.kind === 'struct') t.fields.forEach((f) => checkTypeVersion(f.type, formatVersion, what));
  else if (t.kind === 'list') checkTypeVersion(t.element, formatVersion, what);
  else if (t.kind === 'map') {
    checkTypeVersion(t.keyType, formatVersion, what);
    checkTypeVersion(t.valueType, formatVersion, what);
  } else if (minFormatVersion(t) > formatVersion) {
    throw refuse(`${what}: type ${typeToString(t)} needs format v${minFormatVersion(t)}, the table is v${formatVersion}`);
  }
}

/** Checks a default value for a field type: primitive, encodable, not NaN (Java refuses NaN literals). */
function checkDefault(type: IcebergType, value: Value, what: string): void {
  if (value === null) return;
  if (!isPrimitive(type) || type.kind === 'unknown') throw refuse(`${what}: only primitive columns can have a non-null default, found ${typeToString(type)}`);
  if (typeof value === 'number' && Number.isNaN(value)) throw refuse(`${what}: a NaN default cannot be read by Java; use null or a number`);
  toJsonSingleValue(type, value); // throws when the value does not fit the type
}

/** Whether `from` may be promoted to `to` (spec "Schema Evolution" promotion table). */
function canPromote(from: PrimitiveType, to: PrimitiveType, formatVersion: number): boolean {
  if (from.kind === 'int' && to.kind === 'long') return true;
  if (from.kind === 'float' && to.kind === 'double') return true;
  if (from.kind === 'decimal' && to.kind === 'decimal') return to.scale === from.scale && to.precision > from.precision;
  if (formatVersion >= 3 && from.kind === 'date' && (to.kind === 'timestamp' || to.kind === 'timestamp_ns')) return true;
  if (formatVersion >= 3 && from.kind === 'unknown') return true;
  return false;
}

function promoteDefault(value: unknown, from: PrimitiveType, to: PrimitiveType): unknown {
  if (value === undefined || value === null) return value;
  if (from.kind === 'int' && to.kind === 'long') return BigInt(value as number);
  if (from.kind === 'date' && to.kind === 'timestamp') return BigInt(value as number) * MICROS_PER_DAY;
  if (from.kind === 'date' && to.kind === 'timestamp_ns') return BigInt(value as number) * MICROS_PER_DAY * 1000n;
  return value; // float→double and decimal widening keep the same JS value
}

/** Resolves a dotted column path to its struct and field, through nested structs only. */
function locate(root: StructType, path: string): { parent: StructType; field: NestedField; index: number } | undefined {
  const parts = path.split('.');
  const struct = root;
  // try the longest top-level name first, so a column literally named "a.b" is found
  for (let i = parts.length; i >= 1; i--) {
    const head = parts.slice(0, i).join('.');
    const index = struct.fields.findIndex((f) => f.name === head);
    if (index < 0) continue;
    const field = struct.fields[index]!;
    if (i === parts.length) return { parent: struct, field, index };
    const next = field.type;
    if (next.kind !== 'struct') return undefined;
    const rest = locate(next, parts.slice(i).join('.'));
    if (rest) return rest;
  }
  return undefined;
}

function collectIds(t: IcebergType, out: number[]): number[] {
  if (t.kind === 'struct') for (const f of t.fields) {
    out.push(f.id);
    collectIds(f.type, out);
  }
  else if (t.kind === 'list') {
    out.push(t.elementId);
    collectIds(t.element, out);
  } else if (t.kind === 'map') {
    out.push(t.keyId, t.valueId);
    collectIds(t.keyType, out);
    collectIds(t.valueType, out);
  }
  return out;
}

/**
 * Applies `changes` to the current schema of `metadata`, in order (a change may refer to a column an
 * earlier change added or renamed).
 */
export function evolveSchema(metadata: TableMetadata, changes: readonly SchemaChange[]): SchemaEvolution {
  const current = metadata.schemas.find((s) => s.schemaId === metadata.currentSchemaId);
  if (!current) throw refuse(`table has no current schema ${metadata.currentSchemaId}`);
  const v = metadata.formatVersion;
  const root = cloneType(current.asStruct) as StructType;
  const identifierIds = new Set(current.identifierFieldIds);
  let lastColumnId = metadata.lastColumnId;
  const nextId = (): number => ++lastColumnId;
  let changed = false;

  const defaultSpec = metadata.partitionSpecs.find((s) => s.specId === metadata.defaultSpecId);
  const defaultOrder = metadata.sortOrders.find((o) => o.orderId === metadata.defaultSortOrderId);

  const find = (name: string, what: string) => {
    const found = locate(root, name);
    if (!found) throw refuse(`${what}: column ${name} does not exist in schema ${current.schemaId}`);
    return found;
  };

  for (const c of changes) {
    switch (c.kind) {
      case 'add-column': {
        const what = `add column ${c.parent ? `${c.parent}.` : ''}${c.name}`;
        let parent = root;
        if (c.parent) {
          const p = find(c.parent, what);
          if (p.field.type.kind !== 'struct') throw refuse(`${what}: ${c.parent} is a ${typeToString(p.field.type)}, not a struct`);
          parent = p.field.type;
        }
        if (!c.name || c.name.includes('.')) throw refuse(`${what}: expected a column name without dots (use parent for nested columns)`);
        if (parent.fields.some((f) => f.name === c.name)) throw refuse(`${what}: a column with that name already exists`);
        checkTypeVersion(c.type, v, what);
        const hasDefault = c.defaultValue !== undefined && c.defaultValue !== null;
        if (hasDefault && v < 3) throw refuse(`${what}: column defaults need format v3, the table is v${v}; add the column without a default or upgrade the table`);
        if (c.required && !hasDefault) {
          throw refuse(`${what}: a required column needs a default value for the rows written before it existed (spec "Schema Evolution"); add it as optional or give a default`);
        }
        if (c.type.kind === 'unknown' && c.required) throw refuse(`${what}: unknown columns must be optional`);
        if (hasDefault) checkDefault(c.type, c.defaultValue!, what);
        const id = nextId();
        const field: NestedField = { id, name: c.name, required: c.required ?? false, type: assignFreshIds(c.type, nextId) };
        if (c.doc !== undefined) field.doc = c.doc;
        if (hasDefault) {
          field.initialDefault = c.defaultValue;
          field.writeDefault = c.defaultValue;
        }
        parent.fields.push(field);
        changed = true;
        break;
      }
      case 'rename-column': {
        const { parent, field, index } = find(c.name, `rename column ${c.name}`);
        if (field.name === c.newName) break;
        if (!c.newName || parent.fields.some((f) => f.name === c.newName)) {
          throw refuse(`rename column ${c.name}: ${c.newName ? `a column named ${c.newName} already exists` : 'expected a non-empty new name'}`);
        }
        parent.fields[index] = { ...field, name: c.newName };
        changed = true;
        break;
      }
      case 'drop-column': {
        const { parent, field, index } = find(c.name, `drop column ${c.name}`);
        const dropped = new Set([field.id, ...collectIds(field.type, [])]);
        const ident = [...identifierIds].find((id) => dropped.has(id));
        if (ident !== undefined) {
          throw refuse(`drop column ${c.name}: field ${ident} is an identifier field (the table's row key); change the identifier fields first`);
        }
        const partitionField = defaultSpec?.fields.find((f) => dropped.has(f.sourceId));
        if (partitionField) throw refuse(`drop column ${c.name}: it is the source of partition field ${partitionField.name}; evolve the partition spec first`);
        if (defaultOrder?.fields.some((f) => dropped.has(f.sourceId))) throw refuse(`drop column ${c.name}: it is used by the table's sort order ${defaultOrder.orderId}`);
        parent.fields.splice(index, 1);
        changed = true;
        break;
      }
      case 'update-column-type': {
        const { parent, field, index } = find(c.name, `change type of ${c.name}`);
        const from = field.type;
        if (!isPrimitive(from)) throw refuse(`change type of ${c.name}: it is a ${from.kind}; only primitive columns can be promoted`);
        if (typeToString(from) === typeToString(c.type)) break;
        if (!canPromote(from, c.type, v)) {
          throw refuse(
            `change type of ${c.name} from ${typeToString(from)} to ${typeToString(c.type)}: not an allowed promotion; allowed are int→long, float→double, decimal(P,S)→decimal(P',S) with P'>P` +
              (v >= 3 ? ', date→timestamp/timestamp_ns, unknown→any' : ' (v3 tables also date→timestamp)'),
          );
        }
        if (from.kind === 'date') {
          // bucket and identity values of a date differ from those of the promoted timestamp (spec "Schema Evolution")
          const risky = metadata.partitionSpecs.flatMap((s) => s.fields).find((f) => f.sourceId === field.id && !['year', 'month', 'day', 'void'].includes(f.transform.kind));
          if (risky) throw refuse(`change type of ${c.name} from date to ${typeToString(c.type)}: partition field ${risky.name} (${risky.transform.kind}) would change value`);
        }
        const next: NestedField = { ...field, type: c.type };
        if (field.initialDefault !== undefined) next.initialDefault = promoteDefault(field.initialDefault, from, c.type);
        if (field.writeDefault !== undefined) next.writeDefault = promoteDefault(field.writeDefault, from, c.type);
        parent.fields[index] = next;
        changed = true;
        break;
      }
      case 'make-optional': {
        const { parent, field, index } = find(c.name, `make ${c.name} optional`);
        if (!field.required) break;
        if (identifierIds.has(field.id)) throw refuse(`make ${c.name} optional: it is an identifier field, which must stay required`);
        parent.fields[index] = { ...field, required: false };
        changed = true;
        break;
      }
      case 'update-write-default': {
        const what = `set write-default of ${c.name}`;
        const { parent, field, index } = find(c.name, what);
        if (v < 3) throw refuse(`${what}: column defaults need format v3, the table is v${v}`);
        if (c.value === null && field.required) throw refuse(`${what}: a required column must keep a non-null write-default`);
        checkDefault(field.type, c.value, what);
        parent.fields[index] = { ...field, writeDefault: c.value };
        changed = true;
        break;
      }
      case 'update-doc': {
        const { parent, field, index } = find(c.name, `update doc of ${c.name}`);
        if (field.doc === c.doc) break;
        const next: NestedField = { ...field };
        if (c.doc === undefined) delete next.doc;
        else next.doc = c.doc;
        parent.fields[index] = next;
        changed = true;
        break;
      }
    }
  }

  if (!changed) return { schema: current, lastColumnId: metadata.lastColumnId, changed: false, requirements: [], updates: [] };
  const schemaId = metadata.schemas.reduce((max, s) => Math.max(max, s.schemaId + 1), 0);
  const schema = new Schema(schemaId, root.fields, [...identifierIds]);
  return {
    schema,
    lastColumnId,
    changed: true,
    requirements: [
      { type: 'assert-current-schema-id', currentSchemaId: metadata.currentSchemaId },
      { type: 'assert-last-assigned-field-id', lastAssignedFieldId: metadata.lastColumnId },
    ],
    updates: [
      { action: 'add-schema', schema, lastColumnId },
      { action: 'set-current-schema', schemaId: -1 },
    ],
  };
}
