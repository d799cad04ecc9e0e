/**
 * Snapshot-side rules of the metadata builder (Java `TableMetadata.Builder.addSnapshot`, `setRef`,
 * `removeSnapshots`, `updateSnapshotLog`, `addPreviousFile`): sequence numbers and v3 row lineage,
 * refs and the snapshot-log, statistics of removed snapshots, the capped metadata-log.
 */
import { MAIN_BRANCH, METADATA_PREVIOUS_VERSIONS_MAX, METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT } from '../spec/table-metadata-constants.js';
import type { Snapshot, SnapshotLogEntry, SnapshotRef, TableMetadata } from '../spec/table-metadata.js';
import { invalid, retryable, type Work } from './metadata-builder-work.js';

export function statsSnapshotId(s: unknown): bigint | undefined {
  const id = (s as Record<string, unknown> | null)?.['snapshot-id'];
  return typeof id === 'bigint' ? id : typeof id === 'number' ? BigInt(id) : undefined;
}

export function removeStatistics(w: Work, snapshotId: bigint): void {
  const before = w.m.statistics?.length ?? 0;
  w.m.statistics = (w.m.statistics ?? []).filter((s) => statsSnapshotId(s) !== snapshotId);
  if (w.m.statistics.length !== before) w.changed = true;
}

export function removePartitionStatistics(w: Work, snapshotId: bigint): void {
  const before = w.m.partitionStatistics?.length ?? 0;
  w.m.partitionStatistics = (w.m.partitionStatistics ?? []).filter((s) => statsSnapshotId(s) !== snapshotId);
  if (w.m.partitionStatistics.length !== before) w.changed = true;
}

export function addSnapshot(w: Work, snapshot: Snapshot): void {
  const m = w.m;
  if (m.schemas.length === 0 || m.partitionSpecs.length === 0 || m.sortOrders.length === 0) {
    throw invalid('cannot add a snapshot before the table has a schema, a partition spec and a sort order');
  }
  if (m.snapshots.some((s) => s.snapshotId === snapshot.snapshotId)) throw invalid(`snapshot ${snapshot.snapshotId} already exists; snapshot ids must be unique`);
  if (snapshot.summary.operation === undefined) {
    throw invalid(`snapshot ${snapshot.snapshotId} has no summary operation; expected append, replace, overwrite or delete (Spark fails without it)`);
  }
  if (m.formatVersion > 1 && snapshot.sequenceNumber <= m.lastSequenceNumber && snapshot.parentSnapshotId !== undefined) {
    throw retryable(`cannot add snapshot ${snapshot.snapshotId} with sequence number ${snapshot.sequenceNumber}: expected a number above the last sequence number ${m.lastSequenceNumber}`);
  }
  if (m.formatVersion >= 3) {
    const nextRowId = m.nextRowId ?? 0n;
    if (snapshot.firstRowId === undefined) throw invalid(`cannot add snapshot ${snapshot.snapshotId}: first-row-id is required in format v3, found none`);
    if (snapshot.addedRows === undefined) throw invalid(`cannot add snapshot ${snapshot.snapshotId}: added-rows is required with first-row-id, found none`);
    if (snapshot.firstRowId < nextRowId) {
      throw retryable(`cannot add snapshot ${snapshot.snapshotId}: first-row-id ${snapshot.firstRowId} is behind the table's next-row-id ${nextRowId}`);
    }
    m.nextRowId = nextRowId + snapshot.addedRows;
  }
  m.lastSequenceNumber = snapshot.sequenceNumber > m.lastSequenceNumber ? snapshot.sequenceNumber : m.lastSequenceNumber;
  m.snapshots.push(snapshot);
  w.addedSnapshotIds.add(snapshot.snapshotId);
  w.changed = true;
}

function refsEqual(a: SnapshotRef, b: SnapshotRef): boolean {
  return (
    a.snapshotId === b.snapshotId &&
    a.type === b.type &&
    a.minSnapshotsToKeep === b.minSnapshotsToKeep &&
    a.maxSnapshotAgeMs === b.maxSnapshotAgeMs &&
    a.maxRefAgeMs === b.maxRefAgeMs
  );
}

export function setRef(w: Work, name: string, ref: SnapshotRef): void {
  const m = w.m;
  const existing = m.refs[name];
  if (existing && refsEqual(existing, ref)) return;
  const snapshot = m.snapshots.find((s) => s.snapshotId === ref.snapshotId);
  if (!snapshot) throw invalid(`cannot set ${name} to unknown snapshot ${ref.snapshotId}`);
  if (name === MAIN_BRANCH) {
    if (ref.type !== 'branch') throw invalid(`cannot set ${MAIN_BRANCH} to a tag, it must be a branch`);
    m.currentSnapshotId = ref.snapshotId;
    // a rollback to an existing snapshot is logged at the time of the change
    const timeOfChange = w.addedSnapshotIds.has(ref.snapshotId) ? snapshot.timestampMs : w.nowMs;
    m.snapshotLog.push({ timestampMs: timeOfChange, snapshotId: ref.snapshotId });
    w.mainSetTo.push(ref.snapshotId);
  }
  m.refs[name] = ref;
  w.changed = true;
}

export function removeSnapshots(w: Work, ids: Set<bigint>): void {
  const m = w.m;
  const before = m.snapshots.length;
  m.snapshots = m.snapshots.filter((s) => !ids.has(s.snapshotId));
  if (m.snapshots.length === before) return;
  w.changed = true;
  w.removedSnapshots = true;
  for (const id of ids) {
    removeStatistics(w, id);
    removePartitionStatistics(w, id);
  }
  // refs pointing at removed snapshots go too (removing main clears the current snapshot)
  const live = new Set(m.snapshots.map((s) => s.snapshotId));
  for (const [name, ref] of Object.entries(m.refs)) {
    if (!live.has(ref.snapshotId)) {
      delete m.refs[name];
      if (name === MAIN_BRANCH) m.currentSnapshotId = undefined;
    }
  }
}

/** Java `updateSnapshotLog`: drop intermediate snapshots of this change set; cut history at removed ones. */
export function rebuildSnapshotLog(w: Work): SnapshotLogEntry[] {
  const m = w.m;
  const intermediate = new Set(w.mainSetTo.filter((id) => w.addedSnapshotIds.has(id) && id !== m.currentSnapshotId));
  if (intermediate.size === 0 && !w.removedSnapshots) return m.snapshotLog;
  const live = new Set(m.snapshots.map((s) => s.snapshotId));
  let out: SnapshotLogEntry[] = [];
  for (const e of m.snapshotLog) {
    if (live.has(e.snapshotId)) {
      if (!intermediate.has(e.snapshotId)) out.push(e);
    } else if (w.removedSnapshots) {
      // a gap in history would make time travel return the wrong snapshot: drop everything before it
      out = [];
    }
  }
  if (m.currentSnapshotId !== undefined && out[out.length - 1]?.snapshotId !== m.currentSnapshotId) {
    throw invalid('cannot set an invalid snapshot log: its latest entry is not the current snapshot');
  }
  return out;
}

export function appendMetadataLog(log: TableMetadata['metadataLog'], location: string, timestampMs: bigint, properties: Record<string, string>): TableMetadata['metadataLog'] {
  const configured = Number.parseInt(properties[METADATA_PREVIOUS_VERSIONS_MAX] ?? '', 10);
  const max = Math.max(1, Number.isFinite(configured) ? configured : METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT);
  const kept = log.length >= max ? log.slice(log.length - max + 1) : [...log];
  kept.push({ timestampMs, metadataFile: location });
  return kept;
}
