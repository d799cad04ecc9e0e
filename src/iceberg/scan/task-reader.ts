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
import { integerNumbers, columnConverter } from '../parquet/arrow-values.js';
import { readParquetBatches, readParquetColumn, type ParquetSource } from '../parquet/reader.js';
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
  const deleted = await DeletedPositions.of(task, ctx);
  const width = projection.outputWidth;
  const trim = projection.fields.length > width;
  const anyDeletes = equality.length > 0 || deleted !== undefined;

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
      if (deleted?.has(pos)) continue;
      const row = batch.rows[i]!;
      if (equality.some(({ set, accessors }) => set.keys.has(tupleKey(set.types, accessors.map((a) => a(row)))))) continue;
      out.push(trim ? row.slice(0, width) : row);
      positions.push(pos);
    }
    yield { rows: out, firstPosition: batch.firstPosition, positions };
  }
}

/**
 * The positions a task's deletion vector and position deletes remove, ascending (duplicates — a
 * position in two sets — are possible and harmless to a cursor); undefined when there are none.
 */
export async function sortedDeletedPositions(task: FileScanTask, loader: DeleteLoader): Promise<Float64Array | undefined> {
  const sets: PositionBitmap[] = [];
  for (const ref of task.deletes.position) {
    const p = await loader.positionsFor(ref, task.file.filePath);
    if (p && !p.isEmpty) sets.push(p);
  }
  const dv = task.deletes.dv ? await loader.deletionVector(task.deletes.dv) : undefined;
  if (dv && !dv.isEmpty) sets.push(dv);
  if (sets.length === 0) return undefined;
  if (sets.length === 1) return sets[0]!.sortedNumbers();
  const parts = sets.map((b) => b.sortedNumbers());
  const all = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all.sort();
}

/**
 * The positions a task's deletion vector and position deletes remove, asked in ascending order (a
 * file is read front to back): a cursor through their sorted union instead of a set lookup per row.
 */
class DeletedPositions {
  private next = 0;

  /** `sorted`: the positions, ascending (sortedDeletedPositions). */
  constructor(private readonly sorted: Float64Array) {}

  /** Undefined when nothing of the file is deleted. */
  static async of(task: FileScanTask, ctx: TaskReadContext): Promise<DeletedPositions | undefined> {
    const sorted = await sortedDeletedPositions(task, ctx.loader);
    return sorted && new DeletedPositions(sorted);
  }

  /** Whether `pos` is deleted; `pos` must not be below the previous call's. */
  has(pos: number): boolean {
    const sorted = this.sorted;
    let i = this.next;
    while (i < sorted.length && sorted[i]! < pos) i++;
    this.next = i;
    return i < sorted.length && sorted[i] === pos;
  }
}

/**
 * The live rows of one data file as the values of one top-level integer column (int or long) with
 * their positions, read from the column's Arrow buffers: `each(value, pos)` gets a number, or — for
 * a null or a long beyond ±(2^53 − 1) — the value `readTaskPositions` would give (null, a bigint).
 * No row and no BigInt per value: what a numeric key's index build reads millions of. False, nothing
 * read, when the task has equality deletes (they match whole rows) or the file's column is missing
 * or not a plain signed integer (initial-defaults, identity partition values, dictionaries): read
 * those with `readTaskPositions`.
 */
export async function readTaskIntegers(task: FileScanTask, ctx: TaskReadContext, field: NestedField, each: (value: number | Value, pos: number) => void): Promise<boolean> {
  if (task.file.fileFormat !== 'PARQUET' || task.deletes.equality.length > 0) return false;
  return readIntegerColumn({ io: ctx.io, path: task.file.filePath }, field, () => sortedDeletedPositions(task, ctx.loader), each);
}

/**
 * `readTaskIntegers` of a Parquet file (its bytes, or where it is), with the positions `deleted`
 * gives skipped (ascending, sortedDeletedPositions; asked only once the column is known to be read
 * this way). The key index's worker thread reads files it is handed this way (worker-key-table-thread.ts).
 */
export async function readIntegerColumn(source: ParquetSource, field: NestedField, deleted: () => Promise<Float64Array | undefined>, each: (value: number | Value, pos: number) => void): Promise<boolean> {
  if (field.type.kind !== 'int' && field.type.kind !== 'long') return false;
  const type = field.type;
  return readParquetColumn(source, field, async (arrowType) => {
    const numbers = integerNumbers(type, arrowType);
    if (!numbers) return undefined; // the caller reads the rows instead: the deletes are loaded only once
    const exact = columnConverter(type, arrowType, field.name, 'id');
    const sorted = await deleted();
    const cursor = sorted && new DeletedPositions(sorted);
    return (data, first) => {
      const values = numbers(data);
      let slow: Value[] | undefined;
      for (let i = 0; i < values.length; i++) {
        const pos = first + i;
        if (cursor?.has(pos)) continue;
        const v = values[i]!;
        if (v === v) each(v, pos);
        else each((slow ??= exact(data))[i]!, pos); // NaN: null or beyond 2^53, exactly as the converter reads it
      }
    };
  });
}
