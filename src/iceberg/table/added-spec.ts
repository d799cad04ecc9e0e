/**
 * A partition spec added in the same commit as the snapshot whose files use it — the unpartitioned
 * spec of a partitioned table's global equality deletes (spec "Scan Planning": a delete with an
 * unpartitioned spec applies to every partition). One commit, so the table never shows the spec
 * without the snapshot that needed it, nor the snapshot without its spec (Java commits a
 * `UpdatePartitionSpec` and a `RowDelta` of one `Transaction` the same way).
 *
 * The files are written before the commit, so they carry the id the table will give the spec: the
 * highest spec id + 1 (metadata-builder.ts, Java `TableMetadata.reuseOrCreateNewSpecId`), or the id
 * of an equal spec the table holds already. Each attempt checks that this still holds on the table
 * it commits on; the `add-spec` is guarded by `assert-last-assigned-partition-id`, as Java's
 * `UpdateRequirements` guards it.
 */
import { FloeError } from '../../util/errors.js';
import type { MetadataUpdate, TableRequirement } from '../metadata/metadata-updates.js';
import { isUnpartitioned, type PartitionSpec } from '../spec/partition.js';
import { specsCompatible } from '../spec/spec-compatibility.js';
import type { TableMetadata } from '../spec/table-metadata.js';

/** The table's unpartitioned spec (its default one first), if it has one. */
export function unpartitionedSpec(metadata: TableMetadata): PartitionSpec | undefined {
  const def = metadata.partitionSpecs.find((s) => s.specId === metadata.defaultSpecId);
  if (def && isUnpartitioned(def)) return def;
  return metadata.partitionSpecs.find(isUnpartitioned);
}

/** The table's unpartitioned spec, or the one a commit adds: what its id will be (`added`: not in the table yet). */
export function unpartitionedSpecFor(metadata: TableMetadata): { spec: PartitionSpec; added: boolean } {
  const spec = unpartitionedSpec(metadata);
  if (spec) return { spec, added: false };
  return { spec: { specId: nextSpecId(metadata), fields: [] }, added: true };
}

/** `metadata` with `spec` among its specs (what planning the commit's manifests sees). */
export function withSpec(metadata: TableMetadata, spec: PartitionSpec | undefined): TableMetadata {
  if (!spec || metadata.partitionSpecs.some((s) => s.specId === spec.specId)) return metadata;
  return { ...metadata, partitionSpecs: [...metadata.partitionSpecs, spec] };
}

/**
 * The updates and requirements that add `spec` to `base` with the id its files carry; none when
 * `base` has it already. A non-retryable conflict when `base` would give it another id (another
 * writer changed the table's specs meanwhile): the files must be written again.
 */
export function addSpecChange(base: TableMetadata, spec: PartitionSpec): { updates: MetadataUpdate[]; requirements: TableRequirement[] } {
  const equal = base.partitionSpecs.find((s) => specsCompatible(s, spec));
  const id = equal?.specId ?? nextSpecId(base);
  if (id !== spec.specId) {
    throw new FloeError('iceberg.commit', 'commit-conflict', `the commit's files were written for partition spec ${spec.specId}, which the table would now give id ${id} (its partition specs changed during the commit); write the files again`, { retryable: false });
  }
  if (equal) return { updates: [], requirements: [] };
  return {
    updates: [{ action: 'add-spec', spec: { specId: spec.specId, fields: [...spec.fields] } }],
    requirements: [{ type: 'assert-last-assigned-partition-id', lastAssignedPartitionId: base.lastPartitionId }],
  };
}

function nextSpecId(metadata: TableMetadata): number {
  return metadata.partitionSpecs.reduce((max, s) => Math.max(max, s.specId + 1), 0);
}
