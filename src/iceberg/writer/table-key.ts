/**
 * How the upsert writer identifies rows of one table: the identifier fields (the MySQL primary key,
 * `identifier-field-ids`) when the table has them, else — for keyless tables — the whole row.
 *
 * Key values handed in explicitly (`RowChange.key`) follow the order of the schema's
 * `identifierFieldIds`; internally, and in equality-delete files, key columns are in schema order
 * (`equality_ids` in schema order: Trino once returned duplicate rows otherwise, trinodb/trino#14693).
 *
 * For keyless tables the equality-delete columns are every top-level primitive column except
 * float/double (the spec forbids those as equality fields) and `unknown`.
 */
import { FloeError } from '../../util/errors.js';
import type { Row, Value } from '../../model/values.js';
import type { Schema } from '../schema.js';
import { isPrimitive, type IcebergType } from '../types.js';
import { encodeKey } from './row-key.js';

const SUBSYSTEM = 'iceberg.writer';

export class TableKey {
  /** Top-level positions of the key columns, in schema order. */
  readonly positions: number[];
  /** Field ids of the key columns, in schema order (= equality_ids). */
  readonly fieldIds: number[];
  readonly types: IcebergType[];
  /** For each schema-ordered key column, its index in an explicit key (identifierFieldIds order). */
  private readonly explicitOrder: number[];
  private readonly rowTypes: IcebergType[];
  readonly width: number;

  private constructor(
    readonly schema: Schema,
    positions: number[],
    explicitOrder: number[],
    readonly keyless: boolean,
  ) {
    this.positions = positions;
    this.explicitOrder = explicitOrder;
    this.fieldIds = positions.map((p) => schema.fields[p].id);
    this.types = positions.map((p) => schema.fields[p].type);
    this.rowTypes = schema.fields.map((f) => f.type);
    this.width = schema.fields.length;
  }

  /** The identifier fields of `schema`; throws when it has none or one is nested. */
  static identifier(schema: Schema): TableKey {
    const ids = schema.identifierFieldIds;
    if (ids.length === 0) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `schema ${schema.schemaId} has no identifier fields; upsert needs a primary key (use mode 'append' for keyless tables)`);
    }
    const positions: { pos: number; explicit: number }[] = ids.map((id, explicit) => {
      const pos = schema.indexOfTopLevel(id);
      if (pos < 0) {
        throw new FloeError(SUBSYSTEM, 'unsupported', `identifier field ${id} (${schema.findField(id)?.name ?? '?'}) is nested in a struct; floe keys rows by top-level columns only`);
      }
      return { pos, explicit };
    });
    positions.sort((a, b) => a.pos - b.pos);
    return new TableKey(schema, positions.map((p) => p.pos), positions.map((p) => p.explicit), false);
  }

  /** Keyless tables: the columns an equality delete of a whole row can use. */
  static wholeRow(schema: Schema): TableKey {
    const positions: number[] = [];
    schema.fields.forEach((f, i) => {
      if (isPrimitive(f.type) && f.type.kind !== 'float' && f.type.kind !== 'double' && f.type.kind !== 'unknown') positions.push(i);
    });
    return new TableKey(schema, positions, positions.map((_, i) => i), true);
  }

  checkRow(row: Row | undefined, what: string): Row {
    if (!Array.isArray(row) || row.length !== this.width) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: expected an array of ${this.width} values in schema ${this.schema.schemaId} field order, found ${Array.isArray(row) ? `${row.length} values` : String(row)}`);
    }
    return row;
  }

  /** Key values of a row, schema order. */
  valuesOf(row: Row): Value[] {
    return this.positions.map((p) => row[p] ?? null);
  }

  /** Canonical key string of a row (identifier columns; the whole row for keyless tables). */
  keyOfRow(row: Row, what = 'row'): string {
    if (this.keyless) return encodeKey(this.rowTypes, row, what);
    const values = this.valuesOf(row);
    this.checkNotNull(values, what);
    return encodeKey(this.types, values, what);
  }

  /** Schema-ordered key values of an explicit key (identifierFieldIds order). */
  explicitToSchemaOrder(key: readonly Value[], what = 'key'): Value[] {
    if (key.length !== this.positions.length) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: expected ${this.positions.length} identifier value(s) (fields ${this.schema.identifierFieldIds.join(', ')}), found ${key.length}`);
    }
    return this.explicitOrder.map((i) => key[i]);
  }

  /** Canonical key string of schema-ordered key values. */
  encode(values: readonly Value[], what = 'key'): string {
    this.checkNotNull(values, what);
    return encodeKey(this.types, values, what);
  }

  private checkNotNull(values: readonly Value[], what: string): void {
    for (let i = 0; i < values.length; i++) {
      if (values[i] === null || values[i] === undefined) {
        throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: identifier field ${this.schema.fields[this.positions[i]].name} is null; identifier fields are required`);
      }
    }
  }
}
