/**
 * Commits for catalog tests: one append snapshot whose manifest list is a dummy path (catalogs never
 * read manifests), with the requirements Java's `UpdateRequirements.forUpdateTable` would send.
 */
import type { MetadataUpdate, TableRequirement } from '../../src/iceberg/metadata/metadata-updates.js';
import { newSnapshotId } from '../../src/iceberg/spec/snapshot-ids.js';
import type { Snapshot, TableMetadata } from '../../src/iceberg/spec/table-metadata.js';
import { Schema } from '../../src/iceberg/spec/schema.js';
import { Types } from '../../src/iceberg/spec/types.js';

export interface SnapshotCommit {
  snapshot: Snapshot;
  requirements: TableRequirement[];
  updates: MetadataUpdate[];
}

/** An append snapshot on top of `base`'s main branch, tagged in its summary. */
export function appendSnapshotCommit(base: TableMetadata, tags: Record<string, string> = {}, addedRows = 10n): SnapshotCommit {
  const snapshotId = newSnapshotId();
  const parent = base.refs.main?.snapshotId;
  const snapshot: Snapshot = {
    snapshotId,
    sequenceNumber: base.lastSequenceNumber + 1n,
    timestampMs: BigInt(Date.now()),
    manifestList: `${base.location}/metadata/snap-${snapshotId}-1-dummy.avro`,
    summary: { operation: 'append', 'added-records': String(addedRows), ...tags },
    schemaId: base.currentSchemaId,
  };
  if (parent !== undefined) snapshot.parentSnapshotId = parent;
  if (base.formatVersion >= 3) {
    snapshot.firstRowId = base.nextRowId ?? 0n;
    snapshot.addedRows = addedRows;
  }
  return {
    snapshot,
    requirements: [
      { type: 'assert-table-uuid', uuid: base.tableUuid },
      { type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: parent ?? null },
    ],
    updates: [
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', refName: 'main', type: 'branch', snapshotId },
    ],
  };
}

/** A small schema with a required long key as identifier field. */
export function testSchema(): Schema {
  return new Schema(
    0,
    [
      { id: 1, name: 'id', required: true, type: Types.long },
      { id: 2, name: 'name', required: false, type: Types.string },
      { id: 3, name: 'ts', required: false, type: Types.timestamptz },
    ],
    [1],
  );
}
