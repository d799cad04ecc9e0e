/**
 * The table metadata model (format/spec.md "Table Metadata Fields", "Snapshots", "Snapshot
 * References"), camelCase, with every Iceberg long as a bigint. The JSON serde lives in
 * `table-metadata-json.ts`; changes are expressed as `MetadataUpdate`s (metadata-updates.ts) and applied
 * by `metadata-builder.ts`, the same way for every catalog.
 */
import type { PartitionSpec } from './partition.js';
import type { Schema } from './schema.js';

export type FormatVersion = 1 | 2 | 3;

export interface SortField {
  sourceId: number;
  /** Transform string as in partition specs (identity, bucket[N], …). */
  transform: string;
  direction: 'asc' | 'desc';
  nullOrder: 'nulls-first' | 'nulls-last';
}

export interface SortOrder {
  orderId: number;
  fields: SortField[];
}

export const UNSORTED_ORDER: SortOrder = Object.freeze({ orderId: 0, fields: [] as SortField[] });

export interface Snapshot {
  snapshotId: bigint;
  parentSnapshotId?: bigint;
  sequenceNumber: bigint;
  timestampMs: bigint;
  /** Absolute URI of the manifest list. */
  manifestList: string;
  /** Always includes `operation` (append | replace | overwrite | delete). */
  summary: Record<string, string>;
  schemaId?: number;
  /** v3 row lineage. */
  firstRowId?: bigint;
  addedRows?: bigint;
}

export interface SnapshotRef {
  snapshotId: bigint;
  type: 'branch' | 'tag';
  minSnapshotsToKeep?: number;
  maxSnapshotAgeMs?: bigint;
  maxRefAgeMs?: bigint;
}

export interface SnapshotLogEntry {
  timestampMs: bigint;
  snapshotId: bigint;
}

export interface MetadataLogEntry {
  timestampMs: bigint;
  metadataFile: string;
}

export interface TableMetadata {
  formatVersion: FormatVersion;
  tableUuid: string;
  /** Table base location, a URI without trailing slash. */
  location: string;
  lastSequenceNumber: bigint;
  lastUpdatedMs: bigint;
  lastColumnId: number;
  schemas: Schema[];
  currentSchemaId: number;
  partitionSpecs: PartitionSpec[];
  defaultSpecId: number;
  lastPartitionId: number;
  properties: Record<string, string>;
  /** Undefined when the table has no snapshot yet. */
  currentSnapshotId?: bigint;
  snapshots: Snapshot[];
  snapshotLog: SnapshotLogEntry[];
  metadataLog: MetadataLogEntry[];
  sortOrders: SortOrder[];
  defaultSortOrderId: number;
  refs: Record<string, SnapshotRef>;
  /** Kept verbatim (JSON values) so that a round trip does not drop them. */
  statistics?: unknown[];
  partitionStatistics?: unknown[];
  /** v3: the next row id to assign (row lineage). */
  nextRowId?: bigint;
  /** v3 `encryption-keys`, kept verbatim (floe does not encrypt; Trino rejects encrypted tables). */
  encryptionKeys?: unknown[];
}
