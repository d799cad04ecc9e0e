/**
 * The table the round-trip tests write: every primitive type (v3 adds the nanosecond timestamps), rows
 * generated from a key and a version, a partition spec using identity / day / bucket / truncate, and
 * helpers that write rows grouped by partition (remembering where each row went, for position
 * deletes) and that render rows for comparison.
 */
import type { DataFile } from '../../../src/iceberg/spec/data-file.js';
import type { PartitionField } from '../../../src/iceberg/spec/partition.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { rowToJson } from '../../../src/iceberg/scan/index.js';
import type { CatalogTable } from '../../../src/iceberg/table/index.js';
import { applyTransform } from '../../../src/iceberg/spec/transforms.js';
import { Types, type NestedField } from '../../../src/iceberg/spec/types.js';
import { formatDecimal, type Row, type Value } from '../../../src/model/values.js';
import { stringifyJson } from '../../../src/util/json.js';
import { writeDataFile } from '../table/table-fixtures.js';

export function roundTripSchema(formatVersion: 2 | 3): Schema {
  const fields: NestedField[] = [
    { id: 1, name: 'id', required: true, type: Types.long },
    { id: 2, name: 'name', required: false, type: Types.string },
    { id: 3, name: 'cat', required: false, type: Types.string },
    { id: 4, name: 'flag', required: false, type: Types.boolean },
    { id: 5, name: 'i', required: false, type: Types.int },
    { id: 6, name: 'l', required: false, type: Types.long },
    { id: 7, name: 'f', required: false, type: Types.float },
    { id: 8, name: 'd', required: false, type: Types.double },
    { id: 9, name: 'dec', required: false, type: Types.decimal(9, 2) },
    { id: 10, name: 'big', required: false, type: Types.decimal(38, 10) },
    { id: 11, name: 'day', required: false, type: Types.date },
    { id: 12, name: 't', required: false, type: Types.time },
    { id: 13, name: 'ts', required: false, type: Types.timestamp },
    { id: 14, name: 'tstz', required: true, type: Types.timestamptz },
    { id: 15, name: 'u', required: false, type: Types.uuid },
    { id: 16, name: 'fx', required: false, type: Types.fixed(4) },
    { id: 17, name: 'bin', required: false, type: Types.binary },
  ];
  if (formatVersion === 3) {
    fields.push({ id: 18, name: 'tsn', required: false, type: Types.timestampNs }, { id: 19, name: 'tstzn', required: false, type: Types.timestamptzNs });
  }
  return new Schema(0, fields, [1]);
}

/** identity(cat), day(tstz), bucket[4](id), truncate[3](name). */
export const PARTITION_FIELDS: PartitionField[] = [
  { sourceId: 3, fieldId: 1000, name: 'cat', transform: { kind: 'identity' } },
  { sourceId: 14, fieldId: 1001, name: 'tstz_day', transform: { kind: 'day' } },
  { sourceId: 1, fieldId: 1002, name: 'id_bucket', transform: { kind: 'bucket', n: 4 } },
  { sourceId: 2, fieldId: 1003, name: 'name_trunc', transform: { kind: 'truncate', width: 3 } },
];

const DAY = 86_400_000_000n;

export function makeRow(schema: Schema, k: number, version = 1): Row {
  const row: Row = [
    BigInt(k),
    k % 9 === 0 ? null : `${['ant', 'bee', 'cow'][k % 3]}-${k}-v${version}`,
    ['x', 'y'][k % 2],
    k % 3 === 0,
    k % 7 === 0 ? null : k * 1000 - 5000 + version,
    BigInt(k) * 2n ** 58n * (k % 2 ? -1n : 1n) + BigInt(version),
    Math.fround(k / 3 + version),
    k === 4 ? NaN : k / 7 + version,
    formatDecimal(BigInt(k * 12345 - 50000 + version), 2),
    formatDecimal(10n ** 30n + BigInt(k * 1000 + version), 10),
    19_000 + k,
    (BigInt(k) * 3_600_000_123n) % DAY,
    1_700_000_000_000_000n + BigInt(k) * 1_000_001n,
    1_700_000_000_000_000n + BigInt(k % 2) * DAY + BigInt(k),
    `00000000-0000-4000-8000-${k.toString(16).padStart(12, '0')}`,
    Uint8Array.of(k, k + 1, 255, version),
    k % 5 === 0 ? null : new Uint8Array(k % 5).fill(k),
  ];
  if (schema.fields.length > 17) row.push(1_700_000_000_000_000_123n + BigInt(k) * 1_000_000_007n, -BigInt(k) * 999_999_999_999n);
  return row;
}

export interface Placement {
  file: DataFile;
  pos: number;
}

/** Writes rows grouped by the table's default-spec partition; returns the files and each row's place. */
export async function writeRows(table: CatalogTable, rows: Row[]): Promise<{ files: DataFile[]; placements: Placement[] }> {
  const m = table.metadata;
  const spec = m.partitionSpecs.find((s) => s.specId === m.defaultSpecId)!;
  const schema = m.schemas.find((s) => s.schemaId === m.currentSchemaId)!;
  const groups = new Map<string, { partition: Value[]; indices: number[] }>();
  rows.forEach((row, i) => {
    const partition = partitionOf(schema, spec.fields, row);
    const key = stringifyJson(partition.map((v) => (v === null ? null : String(v))));
    const g = groups.get(key) ?? { partition, indices: [] };
    g.indices.push(i);
    groups.set(key, g);
  });
  const files: DataFile[] = [];
  const placements: Placement[] = new Array(rows.length);
  for (const g of groups.values()) {
    const file = await writeDataFile(table, g.indices.map((i) => rows[i]), { specId: spec.specId, partition: g.partition });
    files.push(file);
    g.indices.forEach((i, pos) => (placements[i] = { file, pos }));
  }
  return { files, placements };
}

export function partitionOf(schema: Schema, fields: readonly PartitionField[], row: Row): Value[] {
  return fields.map((pf) => {
    const index = schema.fields.findIndex((f) => f.id === pf.sourceId);
    return applyTransform(pf.transform, schema.fields[index].type, row[index]);
  });
}

/** Rows as sorted JSON texts (Iceberg JSON single-value forms). */
export function canonical(schema: Schema, rows: readonly Row[]): string[] {
  return rows.map((r) => stringifyJson(rowToJson(schema, r))).sort();
}
