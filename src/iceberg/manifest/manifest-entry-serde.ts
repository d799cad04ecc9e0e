/**
 * `manifest_entry` / `data_file` records ⇄ the domain model (`ManifestEntry`, `DataFile`). The only
 * place where the Avro names of manifest entries appear.
 *
 * Writing produces records for the schemas of `manifest-schemas.ts`. Reading resolves every field by
 * its Iceberg field id in the file's own writer schema, not by name, because other writers name
 * things differently (Java ≤ 1.4 manifest lists, sanitized partition names) and only the ids are
 * the contract (spec Appendix A "Field IDs").
 */
import { FloeError } from '../../util/errors.js';
import type { Value } from '../../model/values.js';
import { avroFieldName, avroToPrimitive } from '../avro/iceberg-schema.js';
import { fromAvroValue, toAvroValue } from '../avro/iceberg-values.js';
import { fieldId, unwrapOptional, type AvroRecord, type AvroSchema } from '../avro/schema.js';
import type { DataFile, EntryStatus, FileContent, FileFormat, ManifestEntry } from '../spec/data-file.js';
import type { ManifestFormatVersion } from './manifest-schemas.js';
import type { PrimitiveType, StructType } from '../spec/types.js';

const SUBSYSTEM = 'iceberg.manifest';

const STATUS_CODES: Record<EntryStatus, number> = { existing: 0, added: 1, deleted: 2 };
const STATUS_NAMES: EntryStatus[] = ['existing', 'added', 'deleted'];
const CONTENT_CODES: Record<FileContent, number> = { data: 0, 'position-deletes': 1, 'equality-deletes': 2 };
const CONTENT_NAMES: FileContent[] = ['data', 'position-deletes', 'equality-deletes'];

export function statusCode(s: EntryStatus): number {
  const c = STATUS_CODES[s];
  if (c === undefined) throw new FloeError(SUBSYSTEM, 'invalid-argument', `entry status ${JSON.stringify(s)}: expected existing, added or deleted`);
  return c;
}

// ---- writing -------------------------------------------------------------------------------------

/** Avro map-as-array of `{key, value}` records, sorted by key for reproducible files. */
function metricMap<V>(m: Map<number, V> | undefined): { key: number; value: V }[] | null {
  if (!m) return null;
  return [...m.entries()].sort((a, b) => a[0] - b[0]).map(([key, value]) => ({ key, value }));
}

/**
 * The `data_file` record of a file. `partitionType` is the spec's partition tuple type
 * (`partitionType(spec, schema)`); its field names become the record's (sanitized) field names.
 */
export function dataFileToRecord(file: DataFile, formatVersion: ManifestFormatVersion, partitionType: StructType): Record<string, unknown> {
  const where = `data file ${file.filePath}`;
  const content = CONTENT_CODES[file.content];
  if (content === undefined) throw new FloeError(SUBSYSTEM, 'invalid-argument', `${where}: content ${JSON.stringify(file.content)} is not data, position-deletes or equality-deletes`);
  if (file.partition.length !== partitionType.fields.length) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `${where}: partition tuple has ${file.partition.length} value(s), the spec has ${partitionType.fields.length} field(s)`);
  }
  const partition: Record<string, unknown> = {};
  partitionType.fields.forEach((f, i) => {
    partition[avroFieldName(f.name)] = toAvroValue(f.type as PrimitiveType, file.partition[i]!, `${where}: partition field ${f.name}`);
  });
  const isPositionDelete = file.content === 'position-deletes';
  const record: Record<string, unknown> = {
    content,
    file_path: file.filePath,
    file_format: file.fileFormat,
    partition,
    record_count: file.recordCount,
    file_size_in_bytes: file.fileSizeInBytes,
    column_sizes: metricMap(file.columnSizes),
    value_counts: metricMap(file.valueCounts),
    null_value_counts: metricMap(file.nullValueCounts),
    nan_value_counts: metricMap(file.nanValueCounts),
    lower_bounds: metricMap(file.lowerBounds),
    upper_bounds: metricMap(file.upperBounds),
    key_metadata: file.keyMetadata ?? null,
    split_offsets: file.splitOffsets ?? null,
    equality_ids: file.equalityIds ?? null,
    sort_order_id: file.sortOrderId ?? null,
    referenced_data_file: isPositionDelete ? (file.referencedDataFile ?? null) : null,
  };
  if (formatVersion >= 3) {
    record.first_row_id = file.content === 'data' ? (file.firstRowId ?? null) : null;
    record.content_offset = isPositionDelete ? (file.contentOffset ?? null) : null;
    record.content_size_in_bytes = isPositionDelete ? (file.contentSizeInBytes ?? null) : null;
  }
  return record;
}

/**
 * Checks the rules a content file must satisfy in a manifest of `formatVersion` (spec "Data File
 * Fields" notes, "Delete Formats"); throws on the first violation with what to fix.
 */
export function validateDataFile(file: DataFile, formatVersion: ManifestFormatVersion, status: EntryStatus): void {
  const fail = (msg: string): never => {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `data file ${file.filePath}: ${msg}`);
  };
  if (file.recordCount < 0n) fail(`record count ${file.recordCount} is negative`);
  if (file.fileSizeInBytes < 0n) fail(`file size ${file.fileSizeInBytes} is negative`);
  if (file.content === 'equality-deletes') {
    if (!file.equalityIds || file.equalityIds.length === 0) fail('an equality-delete file needs equality_ids (spec: required when content=2)');
  } else if (file.equalityIds !== undefined) {
    fail(`equality_ids are only for equality-delete files, found them on a ${file.content} file`);
  }
  if (file.content !== 'data' && file.firstRowId !== undefined) fail('first_row_id must be null for delete files (spec "First Row ID Inheritance")');
  if (file.content !== 'position-deletes') {
    if (file.referencedDataFile !== undefined) fail(`referenced_data_file is only for position deletes, found it on a ${file.content} file`);
    if (file.contentOffset !== undefined || file.contentSizeInBytes !== undefined) fail(`content_offset/content_size_in_bytes are only for deletion vectors, found them on a ${file.content} file`);
  }
  const isDv = file.content === 'position-deletes' && file.fileFormat === 'PUFFIN';
  if (formatVersion === 2) {
    if (isDv) fail('deletion vectors (Puffin) need format version 3; write a Parquet position-delete file in v2 tables');
    if (file.firstRowId !== undefined) fail('first_row_id needs format version 3');
    if (file.contentOffset !== undefined || file.contentSizeInBytes !== undefined) fail('content_offset/content_size_in_bytes need format version 3');
  } else {
    // Spec "Delete Formats": position delete files must not be added to v3 tables (existing ones stay valid).
    if (file.content === 'position-deletes' && !isDv && status === 'added') {
      fail('format v3 forbids adding position-delete files; write a deletion vector (Puffin deletion-vector-v1) instead');
    }
  }
  if (isDv) {
    if (file.referencedDataFile === undefined) fail('a deletion vector needs referenced_data_file (spec "Deletion Vectors")');
    if (file.contentOffset === undefined || file.contentSizeInBytes === undefined) {
      fail('a deletion vector needs content_offset and content_size_in_bytes equal to its Puffin blob offset and length');
    }
  }
  if ((file.contentOffset === undefined) !== (file.contentSizeInBytes === undefined)) {
    fail('content_offset and content_size_in_bytes must be set together');
  }
}

// ---- reading -------------------------------------------------------------------------------------

/** Field-id → Avro field name of a record schema (fields without ids are skipped). */
export function namesById(record: AvroRecord): Map<number, string> {
  const m = new Map<number, string>();
  for (const f of record.fields) {
    const id = fieldId(f);
    if (id !== undefined) m.set(id, f.name);
  }
  return m;
}

/** The record schema of a field found by id (unwrapping an optional union). */
export function childRecord(record: AvroRecord, id: number, what: string): AvroRecord {
  const f = record.fields.find((x) => fieldId(x) === id);
  const t = f ? unwrapOptional(f.type) : undefined;
  if (!t || t.type !== 'record') {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: expected a record field with field-id ${id} in Avro record ${record.name}, found ${f ? t?.type : 'none'}`);
  }
  return t;
}

export interface PartitionFieldLayout {
  fieldId: number;
  /** Name of the field in the file's partition record. */
  avroName: string;
  type: PrimitiveType;
}

/** The partition fields of a manifest's `r102` record, with their types read from the Avro schema. */
export function partitionLayout(partitionRecord: AvroRecord): PartitionFieldLayout[] {
  return partitionRecord.fields.map((f) => {
    const id = fieldId(f);
    if (id === undefined) {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `partition field ${f.name} has no field-id; manifests must carry Iceberg field ids (spec Appendix A)`);
    }
    return { fieldId: id, avroName: f.name, type: avroToPrimitive(f.type as AvroSchema) };
  });
}

/** Reads a metrics map stored as array of {key, value} records or as an Avro string-keyed map. */
function readMetricMap<V>(v: unknown, convert: (x: unknown) => V): Map<number, V> | undefined {
  if (v === null || v === undefined) return undefined;
  const out = new Map<number, V>();
  if (Array.isArray(v)) {
    for (const kv of v as Record<string, unknown>[]) out.set(Number(kv.key), convert(kv.value));
  } else if (v instanceof Map) {
    for (const [k, x] of v) out.set(Number(k), convert(x));
  }
  return out;
}

const asBigint = (x: unknown): bigint => (typeof x === 'bigint' ? x : BigInt(x as number));
const asBytes = (x: unknown): Uint8Array => x as Uint8Array;

/** Compiled reader of one manifest's entry records, built from the file's writer schema. */
export class ManifestEntryReader {
  private readonly entryNames: Map<number, string>;
  private readonly fileNames: Map<number, string>;
  private readonly partitionName: string;
  /** For each spec field (in spec order), where its value is in the partition record. */
  private readonly partitionSlots: (PartitionFieldLayout | undefined)[];

  /**
   * @param specFieldIds the partition spec's field ids in spec order (from the manifest's
   *   `partition-spec` metadata); the partition tuple is returned in this order.
   */
  constructor(entrySchema: AvroRecord, specFieldIds: readonly number[] | undefined, readonly layout: PartitionFieldLayout[]) {
    this.entryNames = namesById(entrySchema);
    const fileRecord = childRecord(entrySchema, 2, 'manifest entry data_file');
    this.fileNames = namesById(fileRecord);
    this.partitionName = this.fileNames.get(102) ?? 'partition';
    const byId = new Map(layout.map((l) => [l.fieldId, l]));
    this.partitionSlots = specFieldIds ? specFieldIds.map((id) => byId.get(id)) : layout;
  }

  private get(record: Record<string, unknown>, names: Map<number, string>, id: number): unknown {
    const name = names.get(id);
    return name === undefined ? undefined : record[name];
  }

  /** The entry as written (no inheritance), with `specId` as given. */
  read(record: Record<string, unknown>, specId: number): ManifestEntry {
    const e = (id: number): unknown => this.get(record, this.entryNames, id);
    const statusCode = e(0);
    const status = STATUS_NAMES[statusCode as number];
    if (status === undefined) throw new FloeError(SUBSYSTEM, 'invalid-data', `manifest entry status ${String(statusCode)}: expected 0 (existing), 1 (added) or 2 (deleted)`);
    const fileRecord = e(2) as Record<string, unknown>;
    const f = (id: number): unknown => this.get(fileRecord, this.fileNames, id);
    const contentCode = f(134) ?? 0; // v1 manifests have no content: all data files
    const content = CONTENT_NAMES[contentCode as number];
    if (content === undefined) throw new FloeError(SUBSYSTEM, 'invalid-data', `data_file content ${String(contentCode)}: expected 0, 1 or 2`);
    const filePath = f(100) as string;
    const partitionRecord = (fileRecord[this.partitionName] ?? {}) as Record<string, unknown>;
    const partition: Value[] = this.partitionSlots.map((slot) =>
      slot ? fromAvroValue(slot.type, partitionRecord[slot.avroName], `${filePath}: partition field ${slot.avroName}`) : null,
    );
    const dataFile: DataFile = {
      content,
      filePath,
      fileFormat: String(f(101)).toUpperCase() as FileFormat,
      specId,
      partition,
      recordCount: f(103) as bigint,
      fileSizeInBytes: f(104) as bigint,
    };
    const opt = <K extends keyof DataFile>(key: K, value: DataFile[K] | undefined | null): void => {
      if (value !== undefined && value !== null) dataFile[key] = value;
    };
    opt('columnSizes', readMetricMap(f(108), asBigint));
    opt('valueCounts', readMetricMap(f(109), asBigint));
    opt('nullValueCounts', readMetricMap(f(110), asBigint));
    opt('nanValueCounts', readMetricMap(f(137), asBigint));
    opt('lowerBounds', readMetricMap(f(125), asBytes));
    opt('upperBounds', readMetricMap(f(128), asBytes));
    opt('keyMetadata', f(131) as Uint8Array | null);
    opt('splitOffsets', f(132) as bigint[] | null);
    opt('equalityIds', f(135) as number[] | null);
    opt('sortOrderId', f(140) as number | null);
    opt('firstRowId', f(142) as bigint | null);
    opt('referencedDataFile', f(143) as string | null);
    opt('contentOffset', f(144) as bigint | null);
    opt('contentSizeInBytes', f(145) as bigint | null);
    const entry: ManifestEntry = { status, dataFile };
    const snapshotId = e(1);
    const seq = e(3);
    const fileSeq = e(4);
    if (snapshotId !== null && snapshotId !== undefined) entry.snapshotId = snapshotId as bigint;
    if (seq !== null && seq !== undefined) entry.sequenceNumber = seq as bigint;
    if (fileSeq !== null && fileSeq !== undefined) entry.fileSequenceNumber = fileSeq as bigint;
    return entry;
  }
}
