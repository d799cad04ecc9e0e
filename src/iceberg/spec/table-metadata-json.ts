/**
 * Table metadata ⇄ JSON (format/spec.md "Table Metadata Fields", Appendix C, Appendix E), the
 * `*.metadata.json` document every catalog points at. Reads format v1, v2 and v3; writes v2 and v3
 * exactly as the docs/iceberg-writer-checklist.md §1 requires, with Java `TableMetadataParser`'s key order:
 *
 * - every long (ids, sequence numbers, timestamps, row ids) is a bigint in and out (src/util/json.ts);
 * - `current-snapshot-id` is always written: -1 when absent in v1/v2, null in v3 (Java
 *   MIN_NULL_CURRENT_SNAPSHOT_VERSION; older readers need the key, pyiceberg#134);
 * - `next-row-id` is required in v3; `statistics`, `partition-statistics` and `encryption-keys` are
 *   kept verbatim;
 * - a document without `refs` (old writers) gets `main` from `current-snapshot-id`, as Java does.
 *
 * Both directions run `validateTableMetadata`, so floe neither loads nor writes what Java would refuse.
 * Gzip-compressed files (`*.gz.metadata.json`) are decompressed by the caller (FileIO side).
 */
import { FloeError } from '../../util/errors.js';
import { asInt, asLong, parseJson, RawJson, stringifyJson, type JsonValue } from '../../util/json.js';
import type { PartitionSpec } from './partition.js';
import type { Schema } from './schema.js';
import {
  asArray,
  asObject,
  asString,
  partitionSpecFromJson,
  partitionSpecToJson,
  schemaFromJson,
  schemaToJson,
  sortOrderFromJson,
  sortOrderToJson,
} from './schema-json.js';
import {
  metadataLogFromJson,
  metadataLogToJson,
  snapshotFromJson,
  snapshotLogFromJson,
  snapshotLogToJson,
  snapshotRefFromJson,
  snapshotRefToJson,
  snapshotToJson,
} from './snapshot-json.js';
import { MAIN_BRANCH } from './table-metadata-constants.js';
import { validateTableMetadata } from './table-metadata-validate.js';
import { UNSORTED_ORDER, type FormatVersion, type Snapshot, type SnapshotRef, type TableMetadata } from './table-metadata.js';

type JsonObject = { [key: string]: JsonValue | undefined };

const SUBSYSTEM = 'iceberg.table-metadata';

function invalid(message: string): FloeError {
  return new FloeError(SUBSYSTEM, 'invalid-data', message);
}

/** Java strips a trailing slash from the table location (LocationUtil.stripTrailingSlash). */
export function stripTrailingSlash(location: string): string {
  let end = location.length;
  while (end > 1 && location[end - 1] === '/' && !location.slice(0, end).endsWith('://')) end--;
  return location.slice(0, end);
}

// ---------------------------------------------------------------------------------------------------
// write

/** The metadata as a JSON object (key order as Java writes it). Validates first. */
export function tableMetadataToJson(m: TableMetadata): JsonObject {
  return metadataJson(m, (s) => snapshotToJson(s, m.formatVersion));
}

/** Where a snapshot object starts in `*.metadata.json`: in the top-level "snapshots" array, two spaces a level. */
const SNAPSHOT_PAD = '    ';
/**
 * Each snapshot's text in `*.metadata.json`, by the format version it was written for. A snapshot
 * never changes once built, and a table keeps hundreds of them, written again at every commit.
 */
const snapshotTexts = new WeakMap<Snapshot, { formatVersion: FormatVersion; text: string }>();

function snapshotText(s: Snapshot, formatVersion: FormatVersion): RawJson {
  let cached = snapshotTexts.get(s);
  if (cached?.formatVersion !== formatVersion) {
    cached = { formatVersion, text: stringifyJson(snapshotToJson(s, formatVersion), 2, SNAPSHOT_PAD) };
    snapshotTexts.set(s, cached);
  }
  return new RawJson(cached.text);
}

function metadataJson(m: TableMetadata, snapshot: (s: Snapshot) => JsonValue): JsonObject {
  validateTableMetadata(m, { forWrite: true });
  if (m.formatVersion === 1) {
    // floe writes v2 and v3 only (spec App. E); v1 is read for compatibility.
    throw new FloeError(SUBSYSTEM, 'unsupported', 'writing format v1 metadata is not supported; upgrade the table to v2 (upgrade-format-version) first');
  }
  const refs: JsonObject = {};
  for (const [name, ref] of Object.entries(m.refs)) refs[name] = snapshotRefToJson(ref);
  const noSnapshot = m.formatVersion >= 3 ? null : -1;
  return {
    'format-version': m.formatVersion,
    'table-uuid': m.tableUuid,
    location: m.location,
    'last-sequence-number': m.lastSequenceNumber,
    'last-updated-ms': m.lastUpdatedMs,
    'last-column-id': m.lastColumnId,
    'current-schema-id': m.currentSchemaId,
    schemas: m.schemas.map(schemaToJson),
    'default-spec-id': m.defaultSpecId,
    'partition-specs': m.partitionSpecs.map(partitionSpecToJson),
    'last-partition-id': m.lastPartitionId,
    'default-sort-order-id': m.defaultSortOrderId,
    'sort-orders': m.sortOrders.map(sortOrderToJson),
    properties: { ...m.properties },
    'current-snapshot-id': m.currentSnapshotId ?? noSnapshot,
    'next-row-id': m.formatVersion >= 3 ? m.nextRowId : undefined,
    'encryption-keys': m.encryptionKeys !== undefined && m.encryptionKeys.length > 0 ? (m.encryptionKeys as JsonValue[]) : undefined,
    refs,
    snapshots: m.snapshots.map(snapshot),
    statistics: (m.statistics ?? []) as JsonValue[],
    'partition-statistics': (m.partitionStatistics ?? []) as JsonValue[],
    'snapshot-log': snapshotLogToJson(m.snapshotLog),
    'metadata-log': metadataLogToJson(m.metadataLog),
  };
}

/** The `*.metadata.json` text: pretty-printed with two spaces, no trailing newline. */
export function writeTableMetadata(m: TableMetadata): string {
  return stringifyJson(metadataJson(m, (s) => snapshotText(s, m.formatVersion)), 2);
}

function findSchema(schemas: readonly Schema[], id: number): Schema {
  const s = schemas.find((x) => x.schemaId === id);
  if (!s) throw invalid(`cannot find schema with current-schema-id ${id}; schema ids present: ${schemas.map((x) => x.schemaId).join(', ') || 'none'}`);
  return s;
}

// ---------------------------------------------------------------------------------------------------
// read

function required(o: Record<string, unknown>, key: string, formatVersion: number): unknown {
  const v = o[key];
  if (v === undefined || v === null) throw invalid(`${key} is required in format v${formatVersion}, found ${v === null ? 'null' : 'nothing'}`);
  return v;
}

/** Parses `*.metadata.json` text (already decompressed). */
export function parseTableMetadata(text: string): TableMetadata {
  return tableMetadataFromJson(parseJson(text));
}

/** TableMetadata from a parsed JSON document (lossless parse: longs may be number or bigint). */
export function tableMetadataFromJson(json: unknown): TableMetadata {
  const o = asObject(json, 'table metadata');
  const formatVersion = asInt(o['format-version'], 'format-version');
  if (formatVersion < 1 || formatVersion > 3) {
    throw new FloeError(SUBSYSTEM, 'unsupported', `cannot read format-version ${formatVersion}; floe reads format versions 1, 2 and 3`);
  }
  const v = formatVersion as FormatVersion;

  const tableUuid = o['table-uuid'] === undefined || o['table-uuid'] === null ? '' : asString(o['table-uuid'], 'table-uuid');
  const location = stripTrailingSlash(asString(o.location, 'location'));
  const lastSequenceNumber = v > 1 ? asLong(required(o, 'last-sequence-number', v), 'last-sequence-number') : 0n;
  const lastColumnId = asInt(required(o, 'last-column-id', v), 'last-column-id');

  // schemas (v1 may carry only `schema`)
  let schemas: Schema[];
  let currentSchemaId: number;
  if (o.schemas !== undefined && o.schemas !== null) {
    schemas = asArray(o.schemas, 'schemas').map((s) => schemaFromJson(s));
    currentSchemaId = asInt(required(o, 'current-schema-id', v), 'current-schema-id');
  } else {
    if (v !== 1) throw invalid(`schemas is required in format v${v}, found nothing`);
    const schema = schemaFromJson(required(o, 'schema', v));
    schemas = [schema];
    currentSchemaId = schema.schemaId;
  }

  // partition specs (v1 may carry only `partition-spec`, a bare field list)
  let partitionSpecs: PartitionSpec[];
  let defaultSpecId: number;
  if (o['partition-specs'] !== undefined && o['partition-specs'] !== null) {
    partitionSpecs = asArray(o['partition-specs'], 'partition-specs').map((s) => partitionSpecFromJson(s));
    defaultSpecId = asInt(required(o, 'default-spec-id', v), 'default-spec-id');
  } else {
    if (v !== 1) throw invalid(`partition-specs is required in format v${v}, found nothing`);
    partitionSpecs = [partitionSpecFromJson(asArray(required(o, 'partition-spec', v), 'partition-spec'), 0)];
    defaultSpecId = 0;
  }
  let lastPartitionId: number;
  if (o['last-partition-id'] !== undefined && o['last-partition-id'] !== null) {
    lastPartitionId = asInt(o['last-partition-id'], 'last-partition-id');
  } else {
    if (v !== 1) throw invalid(`last-partition-id is required in format v${v}, found nothing`);
    lastPartitionId = Math.max(999, ...partitionSpecs.flatMap((s) => s.fields.map((f) => f.fieldId)));
  }

  // sort orders
  let sortOrders = [UNSORTED_ORDER];
  let defaultSortOrderId = 0;
  if (o['sort-orders'] !== undefined && o['sort-orders'] !== null) {
    sortOrders = asArray(o['sort-orders'], 'sort-orders').map(sortOrderFromJson);
    defaultSortOrderId = asInt(required(o, 'default-sort-order-id', v), 'default-sort-order-id');
  } else if (v !== 1) {
    throw invalid(`sort-orders is required in format v${v}, found nothing`);
  }

  const properties: Record<string, string> = {};
  if (o.properties !== undefined && o.properties !== null) {
    for (const [k, val] of Object.entries(asObject(o.properties, 'properties'))) properties[k] = asString(val, `properties.${k}`);
  }

  // current-snapshot-id: -1 (v1/v2) or null (v3) or missing mean "none"
  const rawCurrent = o['current-snapshot-id'];
  const currentLong = rawCurrent === undefined || rawCurrent === null ? -1n : asLong(rawCurrent, 'current-snapshot-id');
  const currentSnapshotId = currentLong === -1n ? undefined : currentLong;

  const snapshots = o.snapshots === undefined || o.snapshots === null ? [] : asArray(o.snapshots, 'snapshots').map(snapshotFromJson);

  let refs: Record<string, SnapshotRef> = {};
  if (o.refs !== undefined && o.refs !== null) {
    for (const [name, r] of Object.entries(asObject(o.refs, 'refs'))) refs[name] = snapshotRefFromJson(r, name);
  } else if (currentSnapshotId !== undefined) {
    refs = { [MAIN_BRANCH]: { snapshotId: currentSnapshotId, type: 'branch' } };
  }

  const m: TableMetadata = {
    formatVersion: v,
    tableUuid,
    location,
    lastSequenceNumber,
    lastUpdatedMs: asLong(required(o, 'last-updated-ms', v), 'last-updated-ms'),
    lastColumnId,
    schemas,
    currentSchemaId,
    partitionSpecs,
    defaultSpecId,
    lastPartitionId,
    properties,
    currentSnapshotId,
    snapshots,
    snapshotLog: o['snapshot-log'] == null ? [] : snapshotLogFromJson(asArray(o['snapshot-log'], 'snapshot-log')),
    metadataLog: o['metadata-log'] == null ? [] : metadataLogFromJson(asArray(o['metadata-log'], 'metadata-log')),
    sortOrders,
    defaultSortOrderId,
    refs,
  };
  // absent statistics read as [] (what Java writes), so that parse(write(m)) equals m
  m.statistics = o.statistics == null ? [] : asArray(o.statistics, 'statistics');
  m.partitionStatistics = o['partition-statistics'] == null ? [] : asArray(o['partition-statistics'], 'partition-statistics');
  if (o['encryption-keys'] != null) m.encryptionKeys = asArray(o['encryption-keys'], 'encryption-keys');
  if (v >= 3) m.nextRowId = asLong(required(o, 'next-row-id', v), 'next-row-id');
  else if (o['next-row-id'] != null) m.nextRowId = asLong(o['next-row-id'], 'next-row-id');
  validateTableMetadata(m);
  return m;
}

/** The current schema of a table. */
export function currentSchema(m: TableMetadata): Schema {
  return findSchema(m.schemas, m.currentSchemaId);
}

/** The default partition spec of a table. */
export function defaultSpec(m: TableMetadata): PartitionSpec {
  const spec = m.partitionSpecs.find((s) => s.specId === m.defaultSpecId);
  if (!spec) throw invalid(`cannot find partition spec with default-spec-id ${m.defaultSpecId}`);
  return spec;
}
