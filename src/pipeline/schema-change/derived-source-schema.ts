/**
 * The MySQL definition at a table's committed offset, derived from its Iceberg schema — for a table
 * whose lake records none (`floe.source-schema`, source-schema-record.ts: tables written by a floe
 * that did not record it) while the MySQL table changed since (a DDL made while floe was stopped,
 * still ahead in the binlog). floe applied every DDL before that offset to the Iceberg schema, so the
 * schema IS the table at the offset, in Iceberg terms; this turns it back into MySQL columns:
 *
 * - names: the Iceberg fields', plus the MySQL columns a `drop` transform keeps out of the lake
 *   (they are in every binlog row);
 * - types: a column MySQL still has whose type maps to the field's type (and every hashed or masked
 *   column) is taken as MySQL describes it now — charset, collation, signedness, labels included;
 *   any other field (dropped, renamed or retyped by the pending DDL) becomes the plain MySQL type of
 *   its Iceberg type (`columnOfType`);
 * - order: the columns MySQL still has in MySQL's order (a field floe added for `ADD … AFTER` sits
 *   last in the Iceberg schema but in its place in MySQL), each of the others right after the field
 *   before it in the Iceberg schema.
 *
 * What it cannot know: a pending DDL that moved a column (`MODIFY … FIRST / AFTER`), and details an
 * Iceberg type does not keep (INT vs SMALLINT, signedness, ENUM labels, JSON) of a column the pending
 * DDL dropped or retyped. Under `binlog_row_metadata=FULL` the binlog's TABLE_MAP names its columns
 * and the decoder checks them against this definition (row-decoder.ts `compileTable`): a wrong
 * derivation stops floe with both lists, never a wrongly decoded row.
 */
import type { Schema } from '../../iceberg/spec/schema.js';
import { typeToString, type NestedField, type PrimitiveType } from '../../iceberg/spec/types.js';
import type { ColumnSchema, TableSchema, TypeMappingOptions } from '../../source/mysql/index.js';
import type { TableMapping } from '../table-mapping.js';

/**
 * The definition at the offset of a table whose Iceberg schema is `iceberg`, MySQL's definition now
 * `today` (mapped as `mapping`); undefined when `today` already maps onto `iceberg` exactly.
 */
export function derivedSourceSchema(iceberg: Schema, today: TableSchema, mapping: TableMapping, options: TypeMappingOptions): TableSchema | undefined {
  const mapped = new Map(mapping.columns.map((c) => [c.name, c]));
  const lower = (s: string) => s.toLowerCase();
  const todayByName = new Map(today.columns.map((c) => [lower(c.name), c]));
  const fieldNames = new Set(iceberg.fields.map((f) => lower(f.name)));
  const sameAsToday =
    iceberg.fields.length === mapping.columns.length &&
    iceberg.fields.every((f) => {
      const c = mapped.get(f.name);
      return c !== undefined && typeToString(c.type) === typeToString(f.type);
    });
  if (sameAsToday) return undefined;

  // each Iceberg field as the MySQL column it was at the offset
  const atOffset = new Map<NestedField, ColumnSchema>();
  for (const f of iceberg.fields) {
    const now = todayByName.get(lower(f.name));
    const m = now ? mapped.get(now.name) : undefined;
    const keep = now !== undefined && m !== undefined && (m.transform !== undefined || typeToString(m.type) === typeToString(f.type));
    atOffset.set(f, keep ? now : columnOfType(f, now, options));
  }
  // MySQL's order for the columns it still has (with those a transform drops), then the others
  // after their Iceberg predecessor
  // (a column MySQL has now that is neither in the Iceberg schema nor kept out by a transform was added since)
  const stillThere = today.columns.filter((c) => fieldNames.has(lower(c.name)) || !mapped.has(c.name));
  const ordered: ColumnSchema[] = stillThere.map((c) => {
    const f = iceberg.fields.find((x) => lower(x.name) === lower(c.name));
    return f ? atOffset.get(f)! : c;
  });
  let previous: ColumnSchema | undefined;
  for (const f of iceberg.fields) {
    const column = atOffset.get(f)!;
    if (!ordered.includes(column)) ordered.splice(previous ? ordered.indexOf(previous) + 1 : 0, 0, column);
    previous = column;
  }
  const names = new Set(ordered.map((c) => lower(c.name)));
  return {
    ...today,
    columns: ordered.map((c, i) => ({ ...c, ordinal: i + 1 })),
    primaryKey: iceberg.identifierFieldIds.map((id) => iceberg.findField(id)?.name ?? '').filter((n) => n !== ''),
    indexes: today.indexes.filter((ix) => ix.columns.every((p) => names.has(lower(p.name)))),
  };
}

/**
 * The MySQL column an Iceberg field was, from its type alone: the plain MySQL type that maps to it
 * (type-mapping.ts), nullable unless the field is required, no default. A string or binary column
 * keeps what MySQL says now of a column of its name (its character set and collation).
 */
function columnOfType(f: NestedField, now: ColumnSchema | undefined, options: TypeMappingOptions): ColumnSchema {
  const plain: ColumnSchema = {
    name: f.name,
    ordinal: 0,
    dataType: '',
    columnType: '',
    unsigned: false,
    precision: null,
    scale: null,
    datetimePrecision: null,
    maxLength: null,
    charset: null,
    collation: null,
    nullable: !f.required,
    generated: null,
    generationExpression: null,
    comment: '',
    default: f.required ? { kind: 'none' } : { kind: 'null' },
    labels: null,
    json: false,
    invisible: false,
    autoIncrement: false,
  };
  const t = f.type as PrimitiveType;
  const text = (charsetFrom: ColumnSchema | undefined) => ({ charset: charsetFrom?.charset ?? 'utf8mb4', collation: charsetFrom?.collation ?? 'utf8mb4_general_ci' });
  switch (t.kind) {
    case 'boolean':
      return options.tinyInt1AsBoolean === false ? { ...plain, dataType: 'bit', columnType: 'bit(1)', precision: 1 } : { ...plain, dataType: 'tinyint', columnType: 'tinyint(1)', precision: 3 };
    case 'int':
      return { ...plain, dataType: 'int', columnType: 'int(11)', precision: 10 };
    case 'long':
      return { ...plain, dataType: 'bigint', columnType: 'bigint(20)', precision: 19 };
    case 'float':
      return { ...plain, dataType: 'float', columnType: 'float', precision: 12 };
    case 'double':
      return { ...plain, dataType: 'double', columnType: 'double', precision: 22 };
    case 'decimal':
      return { ...plain, dataType: 'decimal', columnType: `decimal(${t.precision},${t.scale})`, precision: t.precision, scale: t.scale };
    case 'date':
      return { ...plain, dataType: 'date', columnType: 'date' };
    case 'time':
      return { ...plain, dataType: 'time', columnType: 'time(6)', datetimePrecision: 6 };
    case 'timestamp':
      return { ...plain, dataType: 'datetime', columnType: 'datetime(6)', datetimePrecision: 6 };
    case 'timestamptz':
      return { ...plain, dataType: 'timestamp', columnType: 'timestamp(6)', datetimePrecision: 6 };
    case 'fixed':
      return { ...plain, dataType: 'binary', columnType: `binary(${t.length})`, maxLength: t.length };
    case 'binary':
      return { ...plain, dataType: 'longblob', columnType: 'longblob', maxLength: 4294967295 };
    default:
      return { ...plain, dataType: 'longtext', columnType: 'longtext', maxLength: 4294967295, ...text(now) };
  }
}
