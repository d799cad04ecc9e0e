/**
 * Reads one data file of a scan: its rows projected to the scan schema (missing columns from the
 * identity partition value, else `initial-default`, else null — spec "Column Projection"), with the
 * rows its deletion vector, position deletes and equality deletes remove dropped. Streams batch by
 * batch, so memory holds one data file's bytes plus the delete sets that apply to it.
 *
 * With `rowLineage` (format v3, spec "Row Lineage"), each row ends with its `_row_id` and
 * `_last_updated_sequence_number`: the file's explicit values where it has them, else inherited —
 * `first_row_id` + position (null without a `first_row_id`) and the file's data sequence number.
 */
import type { FileIO } from '../../io/file-io.js';
import { FloeError } from '../../util/errors.js';
import type { Row, Value } from '../../model/values.js';
import type { DataFile } from '../spec/data-file.js';
import type { PartitionSpec } from '../spec/partition.js';
import { readParquetBatches } from '../parquet/reader.js';
import type { PositionBitmap } from '../puffin/index.js';
import type { Schema } from '../spec/schema.js';
import type { IcebergType, NestedField } from '../spec/types.js';
import type { DeleteLoader } from './delete-loader.js';
import { ReadProjection } from './read-projection.js';
import type { FileScanTask } from './scan-plan.js';
import { ROW_LINEAGE_FIELDS } from '../spec/row-lineage.js';
import { tupleKey } from './value-keys.js';

const MICROS_PER_DAY = 86_400_000_000n;

/** A partition value (of the type the file was written with) as a value of the read type (spec promotions). */
function promote(value: Value, to: IcebergType): Value {
  if (value === null) return null;
  switch (to.kind) {
    case 'long':
      return typeof value === 'number' ? BigInt(value) : value;
    case 'timestamp':
    case 'timestamptz':
      return typeof value === 'number' ? BigInt(value) * MICROS_PER_DAY : value;
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return typeof value === 'number' ? BigInt(value) * MICROS_PER_DAY * 1000n : value;
    default:
      return value;
  }
}

/** Identity partition values by source field id, for fields the scan schema has at top level. */
function identityValues(file: DataFile, fields: readonly NestedField[], specs: readonly PartitionSpec[]): Map<number, Value> {
  const out = new Map<number, Value>();
  const spec = specs.find((s) => s.specId === file.specId);
  if (!spec) return out;
  spec.fields.forEach((pf, i) => {
    if (pf.transform.kind !== 'identity') return;
    const field = fields.find((f) => f.id === pf.sourceId);
    if (field) out.set(pf.sourceId, promote(file.partition[i] ?? null, field.type));
  });
  return out;
}

export interface TaskReadContext {
  io: FileIO;
  schema: Schema;
  schemas: readonly Schema[];
  specs: readonly PartitionSpec[];
  loader: DeleteLoader;
  /** Append `_row_id` and `_last_updated_sequence_number` to every row (spec "Row Lineage"). */
  rowLineage?: boolean;
}

export async function* readTask(task: FileScanTask, ctx: TaskReadContext): AsyncGenerator<Row[]> {
  for await (const batch of readTaskPositions(task, ctx)) yield batch.rows;
}

/**
 * The live rows of one data file with their positions in it (what a key → row-position index
 * needs): `positions[i]` is the position of `rows[i]`; absent when the rows are consecutive from
 * `firstPosition` (no delete removed any of the batch).
 */
export async function* readTaskPositions(task: FileScanTask, ctx: TaskReadContext): AsyncGenerator<{ rows: Row[]; firstPosition: number; positions?: number[] }> {
  const file = task.file;
  if (file.fileFormat !== 'PARQUET') {
    throw new FloeError('iceberg.scan', 'unsupported', `data file ${file.filePath} is ${file.fileFormat}; floe reads Parquet data files only`);
  }
  const lineage = ctx.rowLineage === true;
  const projection = new ReadProjection(lineage ? [...ctx.schema.fields, ...ROW_LINEAGE_FIELDS] : ctx.schema.fields, ctx.schemas, ctx.schema);
  const equality = await Promise.all(
    task.deletes.equality.map(async (ref) => {
      const set = await ctx.loader.equalitySet(ref);
      return { set, accessors: set.equalityIds.map((id) => projection.accessor(id)) };
    }),
  );
  const positionSets: PositionBitmap[] = [];
  for (const ref of task.deletes.position) {
    const p = await ctx.loader.positionsFor(ref, file.filePath);
    if (p && !p.isEmpty) positionSets.push(p);
  }
  const dv = task.deletes.dv ? await ctx.loader.deletionVector(task.deletes.dv) : undefined;
  const width = projection.outputWidth;
  const trim = projection.fields.length > width;
  const anyDeletes = equality.length > 0 || positionSets.length > 0 || dv !== undefined;

  const batches = readParquetBatches({ io: ctx.io, path: file.filePath }, { projection: projection.fields, missingValues: identityValues(file, ctx.schema.fields, ctx.specs) });
  // spec "Row Lineage": a null (or missing) `_row_id` is first_row_id + _pos, a null
  // `_last_updated_sequence_number` the data sequence number of the file's manifest entry
  const rowIdAt = width - 2;
  const seqAt = width - 1;
  const firstRowId = file.firstRowId;
  const inherit = (row: Row, pos: number): void => {
    if (row[rowIdAt] === null && firstRowId !== undefined) row[rowIdAt] = firstRowId + BigInt(pos);
    if (row[seqAt] === null) row[seqAt] = task.sequenceNumber;
  };
  for await (const batch of batches) {
    if (lineage) for (let i = 0; i < batch.rows.length; i++) inherit(batch.rows[i]!, batch.firstPosition + i);
    if (!anyDeletes) {
      yield { rows: trim ? batch.rows.map((r) => r.slice(0, width)) : batch.rows, firstPosition: batch.firstPosition };
      continue;
    }
    const out: Row[] = [];
    const positions: number[] = [];
    for (let i = 0; i < batch.rows.length; i++) {
      const pos = batch.firstPosition + i;
      if (dv?.has(pos)) continue;
      if (positionSets.some((s) => s.has(pos))) continue;
      const row = batch.rows[i]!;
      if (equality.some(({ set, accessors }) => set.keys.has(tupleKey(set.types, accessors.map((a) => a(row)))))) continue;
      out.push(trim ? row.slice(0, width) : row);
      positions.push(pos);
    }
    yield { rows: out, firstPosition: batch.firstPosition, positions };
  }
}

