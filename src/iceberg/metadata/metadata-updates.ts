/**
 * Table changes as the REST catalog protocol models them (open-api/rest-catalog-open-api.yaml,
 * `TableUpdate` and `TableRequirement`). Every catalog commits a list of requirements + updates: the
 * REST client sends them as they are; the filesystem and SQL catalogs (and `floe catalog serve`) check
 * the requirements against the current metadata and apply the updates with the metadata builder, then
 * swap the metadata pointer atomically. Domain (camelCase) shapes here; the JSON serde is separate.
 */
import type { PartitionSpec } from '../spec/partition.js';
import type { Schema } from '../spec/schema.js';
import type { FormatVersion, Snapshot, SortOrder } from '../spec/table-metadata.js';

export type MetadataUpdate =
  | { action: 'assign-uuid'; uuid: string }
  | { action: 'upgrade-format-version'; formatVersion: FormatVersion }
  | { action: 'add-schema'; schema: Schema; lastColumnId?: number }
  /** schemaId -1 = the schema added last in this change set. */
  | { action: 'set-current-schema'; schemaId: number }
  /** A spec id of -1, or a field id of -1, asks the builder to assign one (REST clients may omit them). */
  | { action: 'add-spec'; spec: PartitionSpec }
  /** specId -1 = the spec added last in this change set. */
  | { action: 'set-default-spec'; specId: number }
  /** An order id of -1 asks the builder to assign one. */
  | { action: 'add-sort-order'; sortOrder: SortOrder }
  /** sortOrderId -1 = the sort order added last in this change set. */
  | { action: 'set-default-sort-order'; sortOrderId: number }
  | { action: 'add-snapshot'; snapshot: Snapshot }
  | {
      action: 'set-snapshot-ref';
      refName: string;
      type: 'branch' | 'tag';
      snapshotId: bigint;
      minSnapshotsToKeep?: number;
      maxSnapshotAgeMs?: bigint;
      maxRefAgeMs?: bigint;
    }
  | { action: 'remove-snapshots'; snapshotIds: bigint[] }
  | { action: 'remove-snapshot-ref'; refName: string }
  | { action: 'set-location'; location: string }
  | { action: 'set-properties'; updates: Record<string, string> }
  | { action: 'remove-properties'; removals: string[] }
  /** `statistics` / `partitionStatistics` are the spec's JSON objects, kept verbatim (snapshot-id inside). */
  | { action: 'set-statistics'; statistics: Record<string, unknown> }
  | { action: 'remove-statistics'; snapshotId: bigint }
  | { action: 'set-partition-statistics'; partitionStatistics: Record<string, unknown> }
  | { action: 'remove-partition-statistics'; snapshotId: bigint }
  | { action: 'remove-partition-specs'; specIds: number[] }
  | { action: 'remove-schemas'; schemaIds: number[] };

export type TableRequirement =
  | { type: 'assert-create' }
  | { type: 'assert-table-uuid'; uuid: string }
  /** snapshotId null = the ref must not exist. */
  | { type: 'assert-ref-snapshot-id'; ref: string; snapshotId: bigint | null }
  | { type: 'assert-last-assigned-field-id'; lastAssignedFieldId: number }
  | { type: 'assert-current-schema-id'; currentSchemaId: number }
  | { type: 'assert-last-assigned-partition-id'; lastAssignedPartitionId: number }
  | { type: 'assert-default-spec-id'; defaultSpecId: number }
  | { type: 'assert-default-sort-order-id'; defaultSortOrderId: number };
