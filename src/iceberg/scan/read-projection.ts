/**
 * The columns read from one data file: the scan schema's fields (the rows the scan returns), followed
 * by any equality-delete column the scan schema lacks (a column dropped after the delete was written
 * must still be applied, spec "Equality Delete Files"), pruned to the needed struct children. Gives an
 * accessor per field id, for nested struct fields too (struct values are arrays in field order).
 */
import { FloeError } from '../../util/errors.js';
import type { Row, Value } from '../../model/values.js';
import { equalityDeleteSchema } from '../parquet/delete-schemas.js';
import type { Schema } from '../spec/schema.js';
import type { IcebergType, NestedField } from '../spec/types.js';

export type ValueAccessor = (row: Row) => Value;

interface FieldPath {
  /** Index of the top-level field in the projection. */
  top: number;
  /** Child indices through nested structs. */
  nested: number[];
  type: IcebergType;
}

function findPath(fields: readonly NestedField[], id: number): { indices: number[]; type: IcebergType } | undefined {
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if (f.id === id) return { indices: [i], type: f.type };
    if (f.type.kind === 'struct') {
      const inner = findPath(f.type.fields, id);
      if (inner) return { indices: [i, ...inner.indices], type: inner.type };
    }
  }
  return undefined;
}

/** The newest schema that has every id (`preferred` first). */
export function schemaWithFields(preferred: Schema, schemas: readonly Schema[], ids: readonly number[]): Schema {
  const candidates = [preferred, ...[...schemas].sort((a, b) => b.schemaId - a.schemaId)];
  const found = candidates.find((s) => ids.every((id) => findPath(s.fields, id) !== undefined));
  if (!found) {
    throw new FloeError('iceberg.scan', 'invalid-data', `equality field ids [${ids.join(', ')}] are not all in any schema of the table; the delete file does not belong to it`);
  }
  return found;
}

export class ReadProjection {
  readonly fields: NestedField[];
  /** Number of leading fields that form the output rows. */
  readonly outputWidth: number;
  private readonly paths = new Map<number, FieldPath>();

  constructor(
    output: readonly NestedField[],
    private readonly schemas: readonly Schema[],
    private readonly outputSchema: Schema,
  ) {
    this.fields = [...output];
    this.outputWidth = output.length;
  }

  /** Makes `id` readable (adding a pruned column when the output lacks it) and returns its path. */
  private ensure(id: number): FieldPath {
    let path = this.paths.get(id);
    if (path) return path;
    const inOutput = findPath(this.fields, id);
    if (inOutput) {
      path = { top: inOutput.indices[0]!, nested: inOutput.indices.slice(1), type: inOutput.type };
    } else {
      const source = schemaWithFields(this.outputSchema, this.schemas, [id]);
      const pruned = equalityDeleteSchema(source, [id]).fields[0]!;
      this.fields.push(pruned);
      const inner = findPath([pruned], id)!;
      path = { top: this.fields.length - 1, nested: inner.indices.slice(1), type: inner.type };
    }
    this.paths.set(id, path);
    return path;
  }

  typeOf(id: number): IcebergType {
    return this.ensure(id).type;
  }

  accessor(id: number): ValueAccessor {
    const { top, nested } = this.ensure(id);
    if (nested.length === 0) return (row) => row[top] ?? null;
    return (row) => {
      let v = row[top] as unknown;
      for (const i of nested) {
        if (v === null || v === undefined) return null;
        v = (v as unknown[])[i];
      }
      return (v ?? null) as Value;
    };
  }
}
