/**
 * An Iceberg schema: a struct of fields with unique ids, a schema id, and the identifier fields that
 * act as the row key (floe sets them to the MySQL primary key).
 *
 * Identifier fields are validated as Java's `Schema.validateIdentifierField` does, because a violation
 * makes the table metadata unloadable in Spark and Trino (docs/iceberg-writer-checklist.md §2; spec "Identifier Field IDs"):
 * the field exists, is primitive, is required, is not float/double, and is nested only in required
 * structs.
 */
import { FloeError } from '../../util/errors.js';
import { isPrimitive, type IcebergType, type NestedField, type StructType } from './types.js';

export class Schema {
  readonly schemaId: number;
  readonly fields: readonly NestedField[];
  readonly identifierFieldIds: readonly number[];
  private readonly byId = new Map<number, NestedField>();
  private readonly parentOf = new Map<number, number | null>();
  private readonly byName = new Map<string, NestedField>();

  constructor(schemaId: number, fields: readonly NestedField[], identifierFieldIds: readonly number[] = []) {
    this.schemaId = schemaId;
    this.fields = fields;
    this.identifierFieldIds = identifierFieldIds;
    indexFields(fields, null, '', this.byId, this.parentOf, this.byName);
    for (const id of identifierFieldIds) this.validateIdentifierField(id);
  }

  get asStruct(): StructType {
    return { kind: 'struct', fields: [...this.fields] };
  }

  /** A field anywhere in the schema (nested list element / map key / value ids are not fields). */
  findField(id: number): NestedField | undefined {
    return this.byId.get(id);
  }

  field(id: number): NestedField {
    const f = this.byId.get(id);
    if (!f) throw new FloeError('iceberg.schema', 'not-found', `schema ${this.schemaId} has no field with id ${id}`);
    return f;
  }

  /** Field by dotted name (`a.b` for nested struct fields); top-level names match exactly. */
  findFieldByName(name: string): NestedField | undefined {
    return this.byName.get(name);
  }

  /** Index of a top-level field in `fields`, or -1. */
  indexOfTopLevel(id: number): number {
    return this.fields.findIndex((f) => f.id === id);
  }

  /** Highest id used by any field, list element, or map key/value. */
  highestFieldId(): number {
    let max = 0;
    const visit = (t: IcebergType): void => {
      if (t.kind === 'struct') {
        for (const f of t.fields) {
          max = Math.max(max, f.id);
          visit(f.type);
        }
      } else if (t.kind === 'list') {
        max = Math.max(max, t.elementId);
        visit(t.element);
      } else if (t.kind === 'map') {
        max = Math.max(max, t.keyId, t.valueId);
        visit(t.keyType);
        visit(t.valueType);
      }
    };
    visit(this.asStruct);
    return max;
  }

  private validateIdentifierField(id: number): void {
    const f = this.byId.get(id);
    const fail = (why: string): never => {
      throw new FloeError('iceberg.schema', 'invalid-argument', `identifier field ${id}${f ? ` (${f.name})` : ''} ${why}; identifier fields must be required primitive non-float columns, nested only in required structs`);
    };
    if (!f) fail('does not exist in the schema');
    const field = f as NestedField;
    if (!isPrimitive(field.type)) fail(`is a ${field.type.kind}`);
    if (!field.required) fail('is optional');
    if (field.type.kind === 'float' || field.type.kind === 'double') fail(`is a ${field.type.kind}`);
    let parent = this.parentOf.get(id);
    while (parent !== null && parent !== undefined) {
      const p = this.byId.get(parent);
      if (!p || p.type.kind !== 'struct') fail('is nested in a list or map');
      if (!p!.required) fail(`is nested in the optional struct ${p!.name}`);
      parent = this.parentOf.get(parent);
    }
  }
}

function indexFields(
  fields: readonly NestedField[],
  parent: number | null,
  prefix: string,
  byId: Map<number, NestedField>,
  parentOf: Map<number, number | null>,
  byName: Map<string, NestedField>,
): void {
  for (const f of fields) {
    if (byId.has(f.id)) {
      throw new FloeError('iceberg.schema', 'invalid-argument', `field id ${f.id} is used twice (${byId.get(f.id)!.name} and ${f.name}); field ids must be unique`);
    }
    byId.set(f.id, f);
    parentOf.set(f.id, parent);
    byName.set(prefix + f.name, f);
    if (f.type.kind === 'struct') indexFields(f.type.fields, f.id, `${prefix}${f.name}.`, byId, parentOf, byName);
    // Fields inside lists and maps are indexed with a non-struct parent marker so that identifier
    // validation rejects them.
    if (f.type.kind === 'list' && f.type.element.kind === 'struct') {
      indexNestedContainer(f.type.element.fields, f.id, byId, parentOf);
    }
    if (f.type.kind === 'map' && f.type.valueType.kind === 'struct') {
      indexNestedContainer(f.type.valueType.fields, f.id, byId, parentOf);
    }
  }
}

function indexNestedContainer(
  fields: readonly NestedField[],
  container: number,
  byId: Map<number, NestedField>,
  parentOf: Map<number, number | null>,
): void {
  for (const f of fields) {
    byId.set(f.id, f);
    parentOf.set(f.id, container);
  }
}
