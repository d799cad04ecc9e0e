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
import type { Schema } from '../spec/schema.js';
import type { IcebergType, NestedField } from '../spec/types.js';
import { isEqualityFieldType } from '../spec/primitive-behaviour.js';
import { encodeKey } from './row-key.js';

const SUBSYSTEM = 'iceberg.writer';

/**
 * A row's identity within one table's writer: the canonical key string (row-key.ts), or — for a key
 * of one integer-valued column (int, date, long, time, timestamps) whose value is within ±2^53 — the
 * value itself as a number. Exact and injective for one key type: a number never equals a string, and
 * a long given as a bigint or as a safe JS number is the same number. The common case (a numeric
 * primary key) then needs no string per row, and the writer's key map hashes small integers.
 */
export type KeyId = string | number;

const INT_KINDS = new Set(['int', 'date']);
const LONG_KINDS = new Set(['long', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The number a single integer key value is identified by, or undefined (use the string form). */
function numericKeyId(kind: 'int' | 'long', v: Value | undefined): number | undefined {
  if (kind === 'int') return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
  if (typeof v === 'bigint') return v >= -MAX_SAFE && v <= MAX_SAFE ? Number(v) : undefined;
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined;
}

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
  /** Set when the key is one integer-valued column (numeric KeyIds). */
  private readonly numeric: 'int' | 'long' | undefined;

  private constructor(
    readonly schema: Schema,
    positions: number[],
    explicitOrder: number[],
    readonly keyless: boolean,
  ) {
    this.positions = positions;
    this.explicitOrder = explicitOrder;
    const keyFields = positions.map((p) => schema.fields[p]!);
    this.fieldIds = keyFields.map((f) => f.id);
    this.types = keyFields.map((f) => f.type);
    this.rowTypes = schema.fields.map((f) => f.type);
    this.width = schema.fields.length;
    const only = !keyless && this.types.length === 1 ? this.types[0]!.kind : undefined;
    this.numeric = only === undefined ? undefined : INT_KINDS.has(only) ? 'int' : LONG_KINDS.has(only) ? 'long' : undefined;
  }

  /**
   * The key's one column when its values are their own KeyIds (an int, or a long within ±(2^53 − 1)):
   * a reader that yields such a value as a number may use it as the KeyId (key-index.ts).
   */
  get integerField(): NestedField | undefined {
    const kind = this.types[0]?.kind;
    return this.numeric !== undefined && (kind === 'int' || kind === 'long') ? this.schema.fields[this.positions[0]!] : undefined;
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

  /**
   * Every top-level column, nulls included: the identity of a whole row in a keyless table — what
   * `wholeRow(schema).keyOfRow(row)` gives, as values read from the lake (`encode`) — for the row
   * index of a keyless table (value-index.ts).
   */
  static allColumns(schema: Schema): TableKey {
    const positions = schema.fields.map((_, i) => i);
    return new TableKey(schema, positions, positions, true);
  }

  /** Keyless tables: the columns an equality delete of a whole row can use. */
  static wholeRow(schema: Schema): TableKey {
    const positions: number[] = [];
    schema.fields.forEach((f, i) => {
      if (isEqualityFieldType(f.type)) positions.push(i);
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

  /** Identity of a row (identifier columns; the whole row for keyless tables). */
  keyOfRow(row: Row, what = 'row'): KeyId {
    if (this.keyless) return encodeKey(this.rowTypes, row, what);
    if (this.numeric !== undefined) {
      // numeric is only set for a single-field key
      const id = numericKeyId(this.numeric, row[this.positions[0]!]);
      if (id !== undefined) return id;
    }
    const values = this.valuesOf(row);
    this.checkNotNull(values, what);
    return encodeKey(this.types, values, what);
  }

  /** Schema-ordered key values of an explicit key (identifierFieldIds order). */
  explicitToSchemaOrder(key: readonly Value[], what = 'key'): Value[] {
    if (key.length !== this.positions.length) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: expected ${this.positions.length} identifier value(s) (fields ${this.schema.identifierFieldIds.join(', ')}), found ${key.length}`);
    }
    return this.explicitOrder.map((i) => key[i]!);
  }

  /** Identity of schema-ordered key values (the same as `keyOfRow` of a row with them). */
  encode(values: readonly Value[], what = 'key'): KeyId {
    // a keyless key (allColumns) is a whole row: nulls are values like any other
    if (this.keyless) return encodeKey(this.types, values, what);
    if (this.numeric !== undefined && values.length === 1) {
      const id = numericKeyId(this.numeric, values[0]);
      if (id !== undefined) return id;
    }
    this.checkNotNull(values, what);
    return encodeKey(this.types, values, what);
  }

  private checkNotNull(values: readonly Value[], what: string): void {
    for (let i = 0; i < values.length; i++) {
      if (values[i] === null || values[i] === undefined) {
        const field = this.schema.fields[this.positions[i] ?? -1];
        if (!field) throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: expected ${this.positions.length} key value(s), found ${values.length}`);
        throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: identifier field ${field.name} is null; identifier fields are required`);
      }
    }
  }
}
