/**
 * Reads Parquet data and delete files for the scan path: rows in floe's value model, projected onto a
 * requested Iceberg schema.
 *
 * Columns are matched by field id (spec Appendix A "Parquet"; Java `ReadConf`); only when the file has
 * no field id at all are they matched by name (original, then Java-sanitized). A requested field the
 * file lacks reads as its `initial-default`, else null (spec "Column Projection"); type promotions are
 * applied by arrow-values.ts. Decoding is arrow-rs (parquet-wasm), streamed batch by batch, reading
 * only the projected columns.
 */
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { FloeError } from '../../util/errors.js';
import { parseJson } from '../../util/json.js';
import type { Row, Value } from '../../model/values.js';
import type { FileIO } from '../../io/file-io.js';
import { Schema } from '../spec/schema.js';
import { schemaFromJson } from '../spec/schema-json.js';
import type { IcebergType, NestedField } from '../spec/types.js';
import { columnConverter, fieldIdOf, matchField, missingFieldValue, type ColumnConverter, type FieldMatch } from './arrow-values.js';
import { ICEBERG_SCHEMA_KEY } from './file-writer-options.js';

const SUBSYSTEM = 'iceberg.parquet';

/** Bytes in memory, or a path to read through a FileIO. */
export type ParquetSource = Uint8Array | { io: FileIO; path: string };

export interface ParquetReadOptions {
  /**
   * The Iceberg schema (or field list) to read as; rows come out in its field order. Default: the
   * schema in the file's `iceberg.schema` key-value entry.
   */
  projection?: Schema | readonly NestedField[];
  /** Rows per batch (default 8192). */
  batchRows?: number;
  /**
   * Values for top-level fields the file does not have, taking precedence over `initial-default`:
   * identity partition values (spec "Column Projection", rule 1). Keyed by field id.
   */
  missingValues?: ReadonlyMap<number, Value>;
}

/** Rows of consecutive positions; `firstPosition` is the file position of `rows[0]` (position deletes). */
export interface ParquetRowBatch {
  rows: Row[];
  firstPosition: number;
}

export interface ParquetFileInfo {
  numRows: number;
  keyValue: Map<string, string>;
  /** The schema in `iceberg.schema`, if the file has that entry. */
  icebergSchema: Schema | undefined;
  /** The file's columns as Arrow fields (with `PARQUET:field_id` metadata where present). */
  arrowSchema: arrow.Schema;
  /** Whether any column carries a field id. */
  hasFieldIds: boolean;
}

async function loadBytes(source: ParquetSource): Promise<{ bytes: Uint8Array; name: string }> {
  if (source instanceof Uint8Array) return { bytes: source, name: 'Parquet bytes' };
  return { bytes: await source.io.read(source.path), name: source.path };
}

async function openFile(bytes: Uint8Array, name: string): Promise<pw.ParquetFile> {
  try {
    return await pw.ParquetFile.fromFile(new Blob([bytes]));
  } catch (e) {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `${name} is not a readable Parquet file: ${String(e)}`, { cause: e });
  }
}

function fileInfo(file: pw.ParquetFile): ParquetFileInfo {
  const metadata = file.metadata();
  const fmd = metadata.fileMetadata();
  const keyValue = new Map<string, string>();
  for (const [k, v] of fmd.keyValueMetadata()) keyValue.set(String(k), v === undefined || v === null ? '' : String(v));
  const numRows = fmd.numRows();
  fmd.free();
  metadata.free();
  const arrowSchema = arrow.tableFromIPC(file.schema().intoIPCStream()).schema;
  const schemaText = keyValue.get(ICEBERG_SCHEMA_KEY);
  let icebergSchema: Schema | undefined;
  if (schemaText !== undefined) {
    try {
      icebergSchema = schemaFromJson(parseJson(schemaText));
    } catch {
      icebergSchema = undefined; // a malformed entry is the writer's problem; ids still identify columns
    }
  }
  return { numRows, keyValue, icebergSchema, arrowSchema, hasFieldIds: anyFieldId(arrowSchema.fields) };
}

function anyFieldId(fields: readonly arrow.Field[]): boolean {
  return fields.some((f) => fieldIdOf(f) !== undefined || anyFieldId(f.type.children ?? []));
}

/** Footer facts of a Parquet file: row count, key-value metadata, its Iceberg schema and columns. */
export async function readParquetFileInfo(source: ParquetSource): Promise<ParquetFileInfo> {
  const { bytes, name } = await loadBytes(source);
  const file = await openFile(bytes, name);
  try {
    return fileInfo(file);
  } finally {
    file.free();
  }
}

interface TopLevelPlan {
  field: NestedField;
  /** Name of the file column, or undefined when the field is missing from the file. */
  column: string | undefined;
  convert: ColumnConverter | undefined;
  constant: Value;
}

function planProjection(fields: readonly NestedField[], info: ParquetFileInfo, missingValues?: ReadonlyMap<number, Value>): TopLevelPlan[] {
  const match: FieldMatch = info.hasFieldIds ? 'id' : 'name';
  return fields.map((field) => {
    const fileField = matchField(info.arrowSchema.fields, field, match);
    if (!fileField || field.type.kind === 'unknown') {
      const constant = missingValues?.has(field.id) ? missingValues.get(field.id)! : missingFieldValue(field, field.name);
      return { field, column: undefined, convert: undefined, constant };
    }
    return { field, column: fileField.name, convert: columnConverter(field.type as IcebergType, fileField.type, field.name, match), constant: null };
  });
}

/** Streams the rows of a Parquet file projected onto `options.projection`, batch by batch. */
export async function* readParquetBatches(source: ParquetSource, options: ParquetReadOptions = {}): AsyncGenerator<ParquetRowBatch> {
  const { bytes, name } = await loadBytes(source);
  const file = await openFile(bytes, name);
  try {
    const info = fileInfo(file);
    const projection = options.projection ?? info.icebergSchema;
    if (!projection) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `${name} has no ${ICEBERG_SCHEMA_KEY} key-value entry; pass the schema to read it as`);
    }
    const fields = projection instanceof Schema ? projection.fields : projection;
    const plan = planProjection(fields, info, options.missingValues);
    const columns = [...new Set(plan.flatMap((p) => (p.column === undefined ? [] : [p.column])))];
    for await (const { batch, numRows, firstPosition } of recordBatches(file, info, name, columns, options.batchRows ?? 8192)) {
      yield { rows: batch ? convertBatch(plan, batch, name) : constantRows(plan, numRows), firstPosition };
    }
  } finally {
    file.free();
  }
}

/**
 * Reads one column of a Parquet file (matched as `readParquetBatches` matches it) as Arrow data,
 * batch by batch, for readers that take the buffers as they are. `open` is given the column's Arrow
 * type and returns what takes each batch (`data`, the file position of its first row), or undefined
 * to refuse the type. False, and nothing read, when the file lacks the column or `open` refuses it.
 */
export async function readParquetColumn(
  source: ParquetSource,
  field: NestedField,
  open: (type: arrow.DataType) => Promise<((data: arrow.Data, firstPosition: number) => void) | undefined>,
  batchRows = 8192,
): Promise<boolean> {
  const { bytes, name } = await loadBytes(source);
  const file = await openFile(bytes, name);
  try {
    const info = fileInfo(file);
    const column = matchField(info.arrowSchema.fields, field, info.hasFieldIds ? 'id' : 'name');
    const each = column && (await open(column.type));
    if (!column || !each) return false;
    for await (const { batch, firstPosition } of recordBatches(file, info, name, [column.name], batchRows)) {
      each(columnData(batch!, column.name, name), firstPosition);
    }
    return true;
  } finally {
    file.free();
  }
}

/**
 * The file's record batches of `columns`, each with the file position of its first row; the rows
 * read are checked against the footer's count at the end. With no columns (every projected field
 * is a constant) only the row counts come: `batch` is undefined.
 */
async function* recordBatches(
  file: pw.ParquetFile,
  info: ParquetFileInfo,
  name: string,
  columns: readonly string[],
  batchRows: number,
): AsyncGenerator<{ batch: arrow.RecordBatch | undefined; numRows: number; firstPosition: number }> {
  const stream = (await file.stream({ columns: [...columns], batchSize: batchRows })) as ReadableStream<pw.RecordBatch>;
  let position = 0;
  for await (const wasmBatch of stream as unknown as AsyncIterable<pw.RecordBatch>) {
    if (columns.length === 0) {
      const numRows = wasmBatch.numRows;
      wasmBatch.free();
      yield { batch: undefined, numRows, firstPosition: position };
      position += numRows;
      continue;
    }
    const table = arrow.tableFromIPC(wasmBatch.intoIPCStream());
    for (const batch of table.batches) {
      yield { batch, numRows: batch.numRows, firstPosition: position };
      position += batch.numRows;
    }
  }
  if (position !== info.numRows) {
    throw new FloeError(SUBSYSTEM, 'internal', `${name}: read ${position} rows but the footer says ${info.numRows}`);
  }
}

/** The Arrow data of the file column `column` in a batch read with it. */
function columnData(batch: arrow.RecordBatch, column: string, name: string): arrow.Data {
  const index = batch.schema.fields.findIndex((f) => f.name === column);
  if (index < 0) throw new FloeError(SUBSYSTEM, 'internal', `${name}: column ${column} missing from a read batch`);
  return batch.data.children[index]!;
}

function constantRows(plan: readonly TopLevelPlan[], n: number): Row[] {
  const rows = new Array<Row>(n);
  for (let i = 0; i < n; i++) rows[i] = plan.map((p) => p.constant);
  return rows;
}

function convertBatch(plan: readonly TopLevelPlan[], batch: arrow.RecordBatch, name: string): Row[] {
  const n = batch.numRows;
  const columns: (Value[] | undefined)[] = plan.map((p) => {
    if (!p.convert || p.column === undefined) return undefined;
    return p.convert(columnData(batch, p.column, name));
  });
  const rows = new Array<Row>(n);
  const width = plan.length;
  for (let i = 0; i < n; i++) {
    const row = new Array<Value>(width);
    for (let c = 0; c < width; c++) {
      const col = columns[c];
      row[c] = col ? col[i]! : plan[c]!.constant;
    }
    rows[i] = row;
  }
  return rows;
}

/** All rows of a Parquet file projected onto `options.projection`. */
export async function readParquetRows(source: ParquetSource, options: ParquetReadOptions = {}): Promise<Row[]> {
  const out: Row[] = [];
  for await (const batch of readParquetBatches(source, options)) {
    for (const row of batch.rows) out.push(row);
  }
  return out;
}
