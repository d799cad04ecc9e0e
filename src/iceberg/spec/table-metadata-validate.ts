/**
 * Consistency checks of a whole TableMetadata, as Java's `TableMetadata` constructor makes them
 * (`indexAndValidateSnapshots`, `validateRefs`, the sorted-log checks). Java refuses to load metadata
 * that fails them, which makes a table unreadable in Spark and Trino; floe checks every document it
 * reads and every document it is about to write. Messages say what was expected and what was found.
 */
import { FloeError } from '../../util/errors.js';
import { MAIN_BRANCH } from './table-metadata-constants.js';
import type { TableMetadata } from './table-metadata.js';

/** Java's tolerance for clock skew between committers (TableMetadata.ONE_MINUTE). */
const ONE_MINUTE_MS = 60_000n;
const SUPPORTED_FORMAT_VERSIONS = [1, 2, 3] as const;

function invalid(message: string): FloeError {
  return new FloeError('iceberg.table-metadata', 'invalid-data', message);
}

function ids(values: Iterable<number | bigint>): string {
  return [...values].join(', ') || 'none';
}

/**
 * `forWrite` adds checks Java's constructor does not make but a correct writer must keep (last-column-id
 * and last-partition-id cover every assigned id, next-row-id >= 0): floe refuses to write such metadata
 * but still reads it, as Java does.
 */
export function validateTableMetadata(m: TableMetadata, options: { forWrite?: boolean } = {}): void {
  const forWrite = options.forWrite ?? false;
  if (!(SUPPORTED_FORMAT_VERSIONS as readonly number[]).includes(m.formatVersion)) {
    throw invalid(`format-version ${m.formatVersion} is not supported; expected 1, 2 or 3`);
  }
  if (m.formatVersion > 1 && !m.tableUuid) throw invalid(`table-uuid is required in format v${m.formatVersion}, found none`);
  if (m.formatVersion === 1 && m.lastSequenceNumber !== 0n) {
    throw invalid(`last-sequence-number must be 0 in format v1, found ${m.lastSequenceNumber}`);
  }
  if (m.formatVersion >= 3 && m.nextRowId === undefined) throw invalid('next-row-id is required in format v3, found none');
  if (forWrite && m.nextRowId !== undefined && m.nextRowId < 0n) throw invalid(`next-row-id must be >= 0, found ${m.nextRowId}`);

  // schemas
  if (m.schemas.length === 0) throw invalid('schemas: expected at least one schema, found none');
  const schemaIds = new Set<number>();
  let highestFieldId = 0;
  for (const s of m.schemas) {
    if (schemaIds.has(s.schemaId)) throw invalid(`schemas: schema id ${s.schemaId} is used twice`);
    schemaIds.add(s.schemaId);
    highestFieldId = Math.max(highestFieldId, s.highestFieldId());
  }
  if (!schemaIds.has(m.currentSchemaId)) {
    throw invalid(`cannot find schema with current-schema-id ${m.currentSchemaId}; schema ids present: ${ids(schemaIds)}`);
  }
  if (forWrite && m.lastColumnId < highestFieldId) {
    throw invalid(`last-column-id ${m.lastColumnId} is below the highest field id ${highestFieldId} used by the schemas; expected last-column-id >= ${highestFieldId}`);
  }

  // partition specs
  if (m.partitionSpecs.length === 0) throw invalid('partition-specs: expected at least one spec, found none');
  const specIds = new Set<number>();
  let highestPartitionId = 999;
  for (const spec of m.partitionSpecs) {
    if (specIds.has(spec.specId)) throw invalid(`partition-specs: spec id ${spec.specId} is used twice`);
    specIds.add(spec.specId);
    for (const f of spec.fields) highestPartitionId = Math.max(highestPartitionId, f.fieldId);
  }
  if (!specIds.has(m.defaultSpecId)) throw invalid(`cannot find partition spec with default-spec-id ${m.defaultSpecId}; spec ids present: ${ids(specIds)}`);
  // v1 specs did not track field ids, so only v2+ must account for every assigned id.
  if (forWrite && m.formatVersion > 1 && m.lastPartitionId < highestPartitionId) {
    throw invalid(`last-partition-id ${m.lastPartitionId} is below the highest partition field id ${highestPartitionId}; expected last-partition-id >= ${highestPartitionId}`);
  }

  // sort orders
  if (m.sortOrders.length === 0) throw invalid('sort-orders: expected at least one sort order (use [{"order-id":0,"fields":[]}]), found none');
  if (!m.sortOrders.some((o) => o.orderId === m.defaultSortOrderId)) {
    throw invalid(`cannot find sort order with default-sort-order-id ${m.defaultSortOrderId}; order ids present: ${ids(m.sortOrders.map((o) => o.orderId))}`);
  }

  // snapshots (Java indexAndValidateSnapshots)
  const snapshotIds = new Set<bigint>();
  for (const s of m.snapshots) {
    if (snapshotIds.has(s.snapshotId)) throw invalid(`snapshots: snapshot id ${s.snapshotId} is used twice; snapshot ids must be unique`);
    snapshotIds.add(s.snapshotId);
    if (s.sequenceNumber > m.lastSequenceNumber) {
      throw invalid(`snapshot ${s.snapshotId} has sequence-number ${s.sequenceNumber}, greater than last-sequence-number ${m.lastSequenceNumber}; expected <= ${m.lastSequenceNumber}`);
    }
    if (m.formatVersion >= 3 && s.firstRowId !== undefined && s.addedRows === undefined) {
      throw invalid(`snapshot ${s.snapshotId} has first-row-id but no added-rows; expected both (v3 row lineage)`);
    }
  }
  if (m.currentSnapshotId !== undefined && !snapshotIds.has(m.currentSnapshotId)) {
    throw invalid(`current-snapshot-id ${m.currentSnapshotId} is not in snapshots (found ${ids(snapshotIds)})`);
  }

  // refs (Java validateRefs)
  for (const [name, ref] of Object.entries(m.refs)) {
    if (!snapshotIds.has(ref.snapshotId)) throw invalid(`ref ${name} points at snapshot ${ref.snapshotId}, which is not in snapshots (found ${ids(snapshotIds)})`);
  }
  const main = m.refs[MAIN_BRANCH];
  if (m.currentSnapshotId !== undefined && main?.snapshotId !== m.currentSnapshotId) {
    throw invalid(`current-snapshot-id ${m.currentSnapshotId} does not match the main branch (found ${main ? main.snapshotId : 'no main ref'}); expected refs.main.snapshot-id = current-snapshot-id`);
  }
  if (m.currentSnapshotId === undefined && main !== undefined) {
    throw invalid(`refs.main points at snapshot ${main.snapshotId} but there is no current-snapshot-id; expected both or neither`);
  }
  if (main !== undefined && main.type !== 'branch') throw invalid(`ref main must be a branch, found a ${main.type}`);

  // logs sorted, and last-updated-ms not before them (1 minute of clock skew allowed, as Java)
  checkSortedLog('snapshot-log', m.snapshotLog.map((e) => e.timestampMs), m.lastUpdatedMs);
  checkSortedLog('metadata-log', m.metadataLog.map((e) => e.timestampMs), m.lastUpdatedMs);
}

function checkSortedLog(name: string, timestamps: bigint[], lastUpdatedMs: bigint): void {
  for (let i = 1; i < timestamps.length; i++) {
    if (timestamps[i]! - timestamps[i - 1]! < -ONE_MINUTE_MS) {
      throw invalid(`${name} is not sorted: entry ${i} has timestamp-ms ${timestamps[i]}, before entry ${i - 1} at ${timestamps[i - 1]}`);
    }
  }
  const last = timestamps[timestamps.length - 1];
  if (last !== undefined && lastUpdatedMs - last < -ONE_MINUTE_MS) {
    throw invalid(`last-updated-ms ${lastUpdatedMs} is before the last ${name} entry at ${last}; expected last-updated-ms >= ${last - ONE_MINUTE_MS}`);
  }
}
