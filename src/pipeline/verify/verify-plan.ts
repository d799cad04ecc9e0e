/**
 * What verification compares of one table: the columns both sides hold, each in the form the lake
 * holds it (transformed columns as the transform left them), in the Iceberg table's field order —
 * the same list for the server's SQL (source/mysql/verify/canonical-sql.ts) and for the lake's rows
 * (canonical-row.ts); how a MySQL row becomes a lake row (the pipeline's own projection,
 * table-mapping-catalog.ts); where the lake row holds the chunk key (to place it in a chunk) and the
 * identifier fields (to pair rows).
 *
 * Left out, and said so: columns only one side has (a schema change not applied yet, a dropped
 * column), columns whose Iceberg type is not what the MySQL column maps to, and transformed columns
 * SQL cannot reproduce (a hashed or masked FLOAT / DOUBLE: its text is JavaScript's).
 */
import type { FloeConfig } from '../../config/schema.js';
import type { Schema } from '../../iceberg/spec/schema.js';
import { isPrimitive, typesEqual, typeToString } from '../../iceberg/spec/types.js';
import type { Row } from '../../model/values.js';
import { transformComputable, type CanonicalColumn, type MappedColumn, type MappedTable } from '../../source/mysql/index.js';
import { rowProjection } from '../table-mapping-catalog.js';
import { planTableMapping } from '../table-mapping.js';
import { compileTransforms, type ColumnTransform } from '../transforms.js';
import { columnPart, RowHasher } from './canonical-row.js';
import type { FloatTextStyle } from './server-float-text.js';

interface ComparedColumn {
  readonly name: string;
  /** Index of the field in lake rows (the Iceberg table's current schema order). */
  readonly fieldIndex: number;
  readonly mapped: MappedColumn;
  readonly transform?: Exclude<ColumnTransform, { kind: 'drop' }>;
}

interface ExcludedColumn {
  readonly column: string;
  readonly reason: string;
}

export interface VerifyPlan {
  readonly mapped: MappedTable;
  readonly schema: Schema;
  readonly compared: readonly ComparedColumn[];
  readonly excluded: readonly ExcludedColumn[];
  /** The compared columns as the server's checksum SQL takes them (same order). */
  readonly canonical: readonly CanonicalColumn[];
  /** Canonical text and hash of lake-shaped rows over the compared columns. */
  readonly hasher: RowHasher;
  /** MySQL row (value model, column order) → lake row (current schema order, transforms applied). */
  readonly project: (row: Row) => Row;
  /** Lake row indexes of the identifier fields (empty: the table has no key). */
  readonly identifierFields: readonly number[];
}

export function planVerification(config: FloeConfig, mapped: MappedTable, schema: Schema, floatStyle: FloatTextStyle | undefined): VerifyPlan {
  const transforms = compileTransforms(config.transforms);
  const mapping = planTableMapping(mapped, config, transforms);
  const byName = new Map(mapping.columns.map((c) => [c.name, c]));
  const id = mapped.schema.id;
  const compared: ComparedColumn[] = [];
  const excluded: ExcludedColumn[] = [];
  schema.fields.forEach((field, fieldIndex) => {
    const column = byName.get(field.name);
    if (!column) {
      excluded.push({ column: field.name, reason: 'in the Iceberg table but not in MySQL (a schema change not applied yet?)' });
      return;
    }
    const source = mapped.columns[column.sourceIndex]!;
    if (!isPrimitive(field.type) || !typesEqual(field.type, column.type)) {
      excluded.push({ column: field.name, reason: `Iceberg type ${typeToString(field.type)}, while MySQL ${source.column.columnType} maps to ${typeToString(column.type)}` });
      return;
    }
    const t = transforms(id.database, id.table, field.name);
    const transform = t && t.kind !== 'drop' ? t : undefined;
    if (transform && (source.kind === 'float' || source.kind === 'double' || !transformComputable({ column: source, transform }))) {
      excluded.push({ column: field.name, reason: `${transform.kind}ed ${source.column.dataType}: its transformed text (JavaScript's) cannot be computed in SQL` });
      return;
    }
    compared.push({ name: field.name, fieldIndex, mapped: source, ...(transform ? { transform } : {}) });
  });
  const inLake = new Set(schema.fields.map((f) => f.name));
  for (const c of mapped.columns) {
    const t = transforms(id.database, id.table, c.column.name);
    if (t?.kind === 'drop') excluded.push({ column: c.column.name, reason: 'dropped by a transform (not in the lake)' });
    else if (!inLake.has(c.column.name)) excluded.push({ column: c.column.name, reason: 'in MySQL but not in the Iceberg table (a schema change not applied yet?)' });
  }
  const floatLeftOut = !floatStyle ? compared.filter((c) => !c.transform && (c.mapped.kind === 'float' || c.mapped.kind === 'double')) : [];
  for (const c of floatLeftOut) excluded.push({ column: c.name, reason: "the server prints doubles in a way floe cannot reproduce (its float text probe failed)" });
  const kept = compared.filter((c) => !floatLeftOut.includes(c));
  return {
    mapped,
    schema,
    compared: kept,
    excluded,
    canonical: kept.map((c) => ({ column: c.mapped, ...(c.transform ? { transform: c.transform } : {}) })),
    hasher: new RowHasher(
      kept.map((c) => c.fieldIndex),
      kept.map((c) => columnPart(c.mapped, c.transform !== undefined, floatStyle)),
    ),
    project: rowProjection(mapping, schema),
    identifierFields: schema.identifierFieldIds.map((fid) => schema.fields.findIndex((f) => f.id === fid)),
  };
}

/**
 * Lake row indexes of the chunk key columns, when every one is compared untransformed (a lake row can
 * then be placed in its chunk); undefined otherwise (the table is compared as one chunk).
 */
export function chunkKeyFields(plan: VerifyPlan, keyColumns: readonly string[]): number[] | undefined {
  const out: number[] = [];
  for (const name of keyColumns) {
    const c = plan.compared.find((x) => x.name === name);
    if (!c || c.transform) return undefined;
    out.push(c.fieldIndex);
  }
  return out;
}
