/**
 * JSON forms of snapshots, snapshot references and log entries (format/spec.md "Snapshots", "Snapshot
 * References", Appendix C "Table Metadata and Snapshots"), shared by table-metadata JSON and the REST
 * `add-snapshot` / `set-snapshot-ref` updates. Key order follows Java's `SnapshotParser` and
 * `SnapshotRefParser`. Every long is a bigint (docs/iceberg-writer-checklist.md §1 mistake 7).
 */
import { FloeError } from '../../util/errors.js';
import { asInt, asLong, type JsonValue } from '../../util/json.js';
import { asObject, asString } from './schema-json.js';
import type { MetadataLogEntry, Snapshot, SnapshotLogEntry, SnapshotRef } from './table-metadata.js';

type JsonObject = { [key: string]: JsonValue | undefined };

const SUBSYSTEM = 'iceberg.snapshot-json';

function optionalLong(v: unknown, what: string): bigint | undefined {
  return v === undefined || v === null ? undefined : asLong(v, what);
}

/**
 * Snapshot JSON as Java's `SnapshotParser` writes it: `sequence-number` only when > 0 (v1 snapshots have
 * none, spec App. E), the summary (operation first) only when it has an operation, `first-row-id` /
 * `added-rows` when set (v3 row lineage). `formatVersion` is accepted for callers' clarity; Java's rule
 * does not need it.
 */
export function snapshotToJson(s: Snapshot, _formatVersion?: number): JsonObject {
  const { operation, ...rest } = s.summary;
  return {
    'sequence-number': s.sequenceNumber > 0n ? s.sequenceNumber : undefined,
    'snapshot-id': s.snapshotId,
    'parent-snapshot-id': s.parentSnapshotId,
    'timestamp-ms': s.timestampMs,
    summary: operation === undefined ? undefined : { operation, ...rest },
    'manifest-list': s.manifestList,
    'schema-id': s.schemaId,
    'first-row-id': s.firstRowId,
    'added-rows': s.addedRows,
  };
}

export function snapshotFromJson(json: unknown): Snapshot {
  const o = asObject(json, 'snapshot');
  const snapshotId = asLong(o['snapshot-id'], 'snapshot snapshot-id');
  const what = `snapshot ${snapshotId}`;
  if (typeof o['manifest-list'] !== 'string') {
    if (Array.isArray(o.manifests)) {
      throw new FloeError(SUBSYSTEM, 'unsupported', `${what}: v1 snapshots that embed a manifests list instead of a manifest-list file are not supported; rewrite the table's metadata with Spark or PyIceberg first`);
    }
    throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: expected manifest-list to be a string, found ${o['manifest-list'] === undefined ? 'nothing' : JSON.stringify(o['manifest-list'])}`);
  }
  const summary: Record<string, string> = {};
  if (o.summary !== undefined && o.summary !== null) {
    for (const [k, v] of Object.entries(asObject(o.summary, `${what} summary`))) summary[k] = asString(v, `${what} summary.${k}`);
  }
  const snapshot: Snapshot = {
    snapshotId,
    // spec App. E: a v1 snapshot's sequence number defaults to 0
    sequenceNumber: optionalLong(o['sequence-number'], `${what} sequence-number`) ?? 0n,
    timestampMs: asLong(o['timestamp-ms'], `${what} timestamp-ms`),
    manifestList: o['manifest-list'],
    summary,
  };
  const parent = optionalLong(o['parent-snapshot-id'], `${what} parent-snapshot-id`);
  if (parent !== undefined) snapshot.parentSnapshotId = parent;
  if (o['schema-id'] !== undefined && o['schema-id'] !== null) snapshot.schemaId = asInt(o['schema-id'], `${what} schema-id`);
  const firstRowId = optionalLong(o['first-row-id'], `${what} first-row-id`);
  if (firstRowId !== undefined) snapshot.firstRowId = firstRowId;
  const addedRows = optionalLong(o['added-rows'], `${what} added-rows`);
  if (addedRows !== undefined) snapshot.addedRows = addedRows;
  // Java BaseSnapshot: added-rows is required when first-row-id is set
  if (firstRowId !== undefined && addedRows === undefined) {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: has first-row-id ${firstRowId} but no added-rows; expected both (v3 row lineage)`);
  }
  return snapshot;
}

export function snapshotRefToJson(r: SnapshotRef): JsonObject {
  return {
    'snapshot-id': r.snapshotId,
    type: r.type,
    'min-snapshots-to-keep': r.minSnapshotsToKeep,
    'max-snapshot-age-ms': r.maxSnapshotAgeMs,
    'max-ref-age-ms': r.maxRefAgeMs,
  };
}

export function snapshotRefFromJson(json: unknown, name: string): SnapshotRef {
  const o = asObject(json, `ref ${name}`);
  const type = asString(o.type, `ref ${name} type`).toLowerCase();
  if (type !== 'branch' && type !== 'tag') {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `ref ${name}: expected type branch or tag, found ${JSON.stringify(o.type)}`);
  }
  const ref: SnapshotRef = { snapshotId: asLong(o['snapshot-id'], `ref ${name} snapshot-id`), type };
  if (o['min-snapshots-to-keep'] !== undefined && o['min-snapshots-to-keep'] !== null) {
    ref.minSnapshotsToKeep = asInt(o['min-snapshots-to-keep'], `ref ${name} min-snapshots-to-keep`);
  }
  const maxSnapshotAge = optionalLong(o['max-snapshot-age-ms'], `ref ${name} max-snapshot-age-ms`);
  if (maxSnapshotAge !== undefined) ref.maxSnapshotAgeMs = maxSnapshotAge;
  const maxRefAge = optionalLong(o['max-ref-age-ms'], `ref ${name} max-ref-age-ms`);
  if (maxRefAge !== undefined) ref.maxRefAgeMs = maxRefAge;
  return ref;
}

export function snapshotLogToJson(entries: readonly SnapshotLogEntry[]): JsonValue {
  return entries.map((e) => ({ 'timestamp-ms': e.timestampMs, 'snapshot-id': e.snapshotId }));
}

export function snapshotLogFromJson(json: unknown[]): SnapshotLogEntry[] {
  return json.map((x, i) => {
    const o = asObject(x, `snapshot-log[${i}]`);
    return { timestampMs: asLong(o['timestamp-ms'], `snapshot-log[${i}] timestamp-ms`), snapshotId: asLong(o['snapshot-id'], `snapshot-log[${i}] snapshot-id`) };
  });
}

export function metadataLogToJson(entries: readonly MetadataLogEntry[]): JsonValue {
  return entries.map((e) => ({ 'timestamp-ms': e.timestampMs, 'metadata-file': e.metadataFile }));
}

export function metadataLogFromJson(json: unknown[]): MetadataLogEntry[] {
  return json.map((x, i) => {
    const o = asObject(x, `metadata-log[${i}]`);
    return { timestampMs: asLong(o['timestamp-ms'], `metadata-log[${i}] timestamp-ms`), metadataFile: asString(o['metadata-file'], `metadata-log[${i}] metadata-file`) };
  });
}
