/**
 * The schemas of manifests and manifest lists (format/spec.md "Manifests", "Manifest Lists"), defined
 * as Iceberg structs exactly as Java defines them (`DataFile`, `ManifestFile`, `ManifestEntry`,
 * `V2Metadata`, `V3Metadata`: same ids, names, docs, requiredness and field order) and converted to
 * Avro with Java's naming (`manifest_entry`, `r2`, `r102`, `manifest_file`, `r508`, `k117_v118`…).
 *
 * `schemas/*.avsc` holds these schemas (the manifest with an unpartitioned `r102`) as reference files;
 * a test keeps them equal to what this module builds.
 */
import { FloeError } from '../../util/errors.js';
import { stringifyJson, type JsonValue } from '../../util/json.js';
import { structToAvro } from '../avro/iceberg-schema.js';
import type { AvroRecord } from '../avro/schema.js';
import { typeToJson } from '../spec/schema-json.js';
import { Types, type IcebergType, type NestedField, type StructType } from '../spec/types.js';

export type ManifestFormatVersion = 2 | 3;

function req(id: number, name: string, type: IcebergType, doc?: string): NestedField {
  return doc === undefined ? { id, name, required: true, type } : { id, name, required: true, type, doc };
}
function opt(id: number, name: string, type: IcebergType, doc?: string): NestedField {
  return doc === undefined ? { id, name, required: false, type } : { id, name, required: false, type, doc };
}
function mapOf(keyId: number, valueId: number, keyType: IcebergType, valueType: IcebergType): IcebergType {
  return { kind: 'map', keyId, keyType, valueId, valueType, valueRequired: true };
}
function listOf(elementId: number, element: IcebergType): IcebergType {
  return { kind: 'list', elementId, element, elementRequired: true };
}

// ---- data_file (spec "Data File Fields"; Java DataFile + V2Metadata/V3Metadata.fileType) --------------

const DATA_FILE_FIELD_ID = 2;
const PARTITION_FIELD_ID = 102;

const CONTENT = req(134, 'content', Types.int, 'Contents of the file: 0=data, 1=position deletes, 2=equality deletes');
const FILE_PATH = req(100, 'file_path', Types.string, 'Location URI with FS scheme');
const FILE_FORMAT = req(101, 'file_format', Types.string, 'File format name: avro, orc, or parquet');
const RECORD_COUNT = req(103, 'record_count', Types.long, 'Number of records in the file');
const FILE_SIZE = req(104, 'file_size_in_bytes', Types.long, 'Total file size in bytes');
const COLUMN_SIZES = opt(108, 'column_sizes', mapOf(117, 118, Types.int, Types.long), 'Map of column id to total size on disk');
const VALUE_COUNTS = opt(109, 'value_counts', mapOf(119, 120, Types.int, Types.long), 'Map of column id to total count, including null and NaN');
const NULL_VALUE_COUNTS = opt(110, 'null_value_counts', mapOf(121, 122, Types.int, Types.long), 'Map of column id to null value count');
const NAN_VALUE_COUNTS = opt(137, 'nan_value_counts', mapOf(138, 139, Types.int, Types.long), 'Map of column id to number of NaN values in the column');
const LOWER_BOUNDS = opt(125, 'lower_bounds', mapOf(126, 127, Types.int, Types.binary), 'Map of column id to lower bound');
const UPPER_BOUNDS = opt(128, 'upper_bounds', mapOf(129, 130, Types.int, Types.binary), 'Map of column id to upper bound');
const KEY_METADATA = opt(131, 'key_metadata', Types.binary, 'Encryption key metadata blob');
const SPLIT_OFFSETS = opt(132, 'split_offsets', listOf(133, Types.long), 'Splittable offsets');
const EQUALITY_IDS = opt(135, 'equality_ids', listOf(136, Types.int), 'Equality comparison field IDs');
const SORT_ORDER_ID = opt(140, 'sort_order_id', Types.int, 'Sort order ID');
const FIRST_ROW_ID = opt(142, 'first_row_id', Types.long, 'The first row ID assigned to the first row in the data file');
const REFERENCED_DATA_FILE = opt(
  143,
  'referenced_data_file',
  Types.string,
  'Fully qualified location (URI with FS scheme) of a data file that all deletes reference',
);
const CONTENT_OFFSET = opt(144, 'content_offset', Types.long, 'The offset in the file where the content starts');
const CONTENT_SIZE = opt(145, 'content_size_in_bytes', Types.long, 'The length of referenced content stored in the file');

function dataFileType(formatVersion: ManifestFormatVersion, partitionType: StructType): StructType {
  const partition = req(PARTITION_FIELD_ID, 'partition', partitionType, 'Partition data tuple, schema based on the partition spec');
  const common = [
    CONTENT,
    FILE_PATH,
    FILE_FORMAT,
    partition,
    RECORD_COUNT,
    FILE_SIZE,
    COLUMN_SIZES,
    VALUE_COUNTS,
    NULL_VALUE_COUNTS,
    NAN_VALUE_COUNTS,
    LOWER_BOUNDS,
    UPPER_BOUNDS,
    KEY_METADATA,
    SPLIT_OFFSETS,
    EQUALITY_IDS,
    SORT_ORDER_ID,
  ];
  const fields = formatVersion === 2 ? [...common, REFERENCED_DATA_FILE] : [...common, FIRST_ROW_ID, REFERENCED_DATA_FILE, CONTENT_OFFSET, CONTENT_SIZE];
  return { kind: 'struct', fields };
}

// ---- manifest_entry (spec "Manifest Entry Fields"; Java ManifestEntry) -------------------------------

export function manifestEntryType(formatVersion: ManifestFormatVersion, partitionType: StructType): StructType {
  checkVersion(formatVersion);
  return {
    kind: 'struct',
    fields: [
      req(0, 'status', Types.int),
      opt(1, 'snapshot_id', Types.long),
      opt(3, 'sequence_number', Types.long),
      opt(4, 'file_sequence_number', Types.long),
      req(DATA_FILE_FIELD_ID, 'data_file', dataFileType(formatVersion, partitionType)),
    ],
  };
}

/** The Avro schema of a manifest for a partition tuple type (see `partitionType` in partition.ts). */
export function manifestEntryAvroSchema(formatVersion: ManifestFormatVersion, partitionType: StructType): AvroRecord {
  return structToAvro(manifestEntryType(formatVersion, partitionType), 'manifest_entry');
}

// ---- manifest_file (spec "Manifest Lists"; Java ManifestFile + V2/V3Metadata.MANIFEST_LIST_SCHEMA) ----

const FIELD_SUMMARY: StructType = {
  kind: 'struct',
  fields: [
    req(509, 'contains_null', Types.boolean, 'True if any file has a null partition value'),
    opt(518, 'contains_nan', Types.boolean, 'True if any file has a nan partition value'),
    opt(510, 'lower_bound', Types.binary, 'Partition lower bound for all files'),
    opt(511, 'upper_bound', Types.binary, 'Partition upper bound for all files'),
  ],
};

const MANIFEST_FILE_V2_FIELDS: NestedField[] = [
  req(500, 'manifest_path', Types.string, 'Location URI with FS scheme'),
  req(501, 'manifest_length', Types.long, 'Total file size in bytes'),
  req(502, 'partition_spec_id', Types.int, 'Spec ID used to write'),
  req(517, 'content', Types.int, 'Contents of the manifest: 0=data, 1=deletes'),
  req(515, 'sequence_number', Types.long, 'Sequence number when the manifest was added'),
  req(516, 'min_sequence_number', Types.long, 'Lowest sequence number in the manifest'),
  req(503, 'added_snapshot_id', Types.long, 'Snapshot ID that added the manifest'),
  req(504, 'added_files_count', Types.int, 'Added entry count'),
  req(505, 'existing_files_count', Types.int, 'Existing entry count'),
  req(506, 'deleted_files_count', Types.int, 'Deleted entry count'),
  req(512, 'added_rows_count', Types.long, 'Added rows count'),
  req(513, 'existing_rows_count', Types.long, 'Existing rows count'),
  req(514, 'deleted_rows_count', Types.long, 'Deleted rows count'),
  opt(507, 'partitions', listOf(508, FIELD_SUMMARY), 'Summary for each partition'),
  opt(519, 'key_metadata', Types.binary, 'Encryption key metadata blob'),
];

export function manifestFileType(formatVersion: ManifestFormatVersion): StructType {
  checkVersion(formatVersion);
  const fields =
    formatVersion === 2
      ? MANIFEST_FILE_V2_FIELDS
      : [...MANIFEST_FILE_V2_FIELDS, opt(520, 'first_row_id', Types.long, 'Starting row ID to assign to new rows in ADDED data files')];
  return { kind: 'struct', fields };
}

export function manifestListAvroSchema(formatVersion: ManifestFormatVersion): AvroRecord {
  return structToAvro(manifestFileType(formatVersion), 'manifest_file');
}

function checkVersion(v: number): asserts v is ManifestFormatVersion {
  if (v !== 2 && v !== 3) {
    throw new FloeError('iceberg.manifest', 'unsupported', `format version ${v}: floe writes manifests for format versions 2 and 3 only`);
  }
}

/** The manifest's own schema as Iceberg JSON, as Java's Avro writer stores it under `iceberg.schema`. */
export function icebergSchemaJson(struct: StructType): string {
  const json = typeToJson(struct) as { fields: JsonValue };
  return stringifyJson({ type: 'struct', 'schema-id': 0, fields: json.fields });
}
