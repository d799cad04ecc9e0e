/**
 * Checkpoint stamps in snapshot summaries (DESIGN §4): every snapshot floe commits carries
 *
 *   floe.job-id                       the pipeline's stable identity
 *   floe.checkpoint-id                the checkpoint this snapshot commits
 *   floe.max-committed-checkpoint-id  the highest checkpoint id of this job in the table, this one included
 *   floe.source-offset                opaque JSON: where the source stands once this table holds the checkpoint
 *
 * and `lastCommitted` reads them back from the table itself by walking the ancestors of `main` from
 * the current snapshot, newest first; the newest snapshot of the job wins (flink-cdc
 * `IcebergCommitter.getMaxCommittedCheckpointId`, seed 003 §4-1 "2단계"). So a restarted process knows
 * where each table stands with no state of its own, on any machine.
 *
 * Caveat: expiring snapshots must keep the newest snapshot of each job on `main` (floe's maintenance
 * does); if another writer's snapshots follow it and it is expired, the job's position is lost and a
 * restart replays from the source's start — absorbed by upserts in keyed tables, duplicated in
 * append-mode tables.
 */
import { FloeError } from '../../util/errors.js';
import { ancestorsOf } from '../snapshot-ids.js';
import { MAIN_BRANCH } from '../table-metadata-constants.js';
import type { TableMetadata } from '../table-metadata.js';

export const JOB_ID_KEY = 'floe.job-id';
export const CHECKPOINT_ID_KEY = 'floe.checkpoint-id';
export const MAX_COMMITTED_CHECKPOINT_ID_KEY = 'floe.max-committed-checkpoint-id';
export const SOURCE_OFFSET_KEY = 'floe.source-offset';

export interface CommittedCheckpoint {
  /** The highest checkpoint id this job committed to the table (`floe.max-committed-checkpoint-id`). */
  checkpointId: bigint;
  /** The checkpoint id of the newest snapshot of the job (equal to checkpointId for floe's own commits). */
  snapshotCheckpointId: bigint;
  /** `floe.source-offset` of that snapshot, verbatim. */
  sourceOffset: string;
  snapshotId: bigint;
}

/** The summary properties of a checkpoint commit. */
export function checkpointSummary(jobId: string, checkpointId: bigint, maxCommitted: bigint, sourceOffset: string): Record<string, string> {
  return {
    [JOB_ID_KEY]: jobId,
    [CHECKPOINT_ID_KEY]: checkpointId.toString(),
    [MAX_COMMITTED_CHECKPOINT_ID_KEY]: maxCommitted.toString(),
    [SOURCE_OFFSET_KEY]: sourceOffset,
  };
}

function metadataOf(table: TableMetadata | { metadata: TableMetadata }): TableMetadata {
  return 'metadata' in table ? table.metadata : table;
}

function parseId(text: string | undefined, key: string, snapshotId: bigint): bigint | undefined {
  if (text === undefined) return undefined;
  if (!/^-?\d+$/.test(text.trim())) {
    throw new FloeError('iceberg.writer', 'invalid-data', `snapshot ${snapshotId}: summary ${key} is ${JSON.stringify(text)}; expected an integer written by floe`);
  }
  return BigInt(text.trim());
}

/**
 * Where job `jobId` stands in the table: the newest snapshot of the job among the ancestors of the
 * current `main` snapshot, or undefined when the job never committed to the table (or its snapshots
 * were expired).
 */
export function lastCommitted(table: TableMetadata | { metadata: TableMetadata }, jobId: string): CommittedCheckpoint | undefined {
  const m = metadataOf(table);
  const head = m.refs[MAIN_BRANCH]?.snapshotId ?? m.currentSnapshotId;
  for (const s of ancestorsOf(m, head)) {
    if (s.summary[JOB_ID_KEY] !== jobId) continue;
    const checkpoint = parseId(s.summary[CHECKPOINT_ID_KEY], CHECKPOINT_ID_KEY, s.snapshotId);
    const max = parseId(s.summary[MAX_COMMITTED_CHECKPOINT_ID_KEY], MAX_COMMITTED_CHECKPOINT_ID_KEY, s.snapshotId);
    if (checkpoint === undefined && max === undefined) continue;
    const snapshotCheckpointId = checkpoint ?? max!;
    return {
      checkpointId: max !== undefined && max > snapshotCheckpointId ? max : snapshotCheckpointId,
      snapshotCheckpointId,
      sourceOffset: s.summary[SOURCE_OFFSET_KEY] ?? '',
      snapshotId: s.snapshotId,
    };
  }
  return undefined;
}

/** Whether job `jobId` already committed checkpoint `checkpointId` (or a later one) to the table. */
export function isCheckpointCommitted(table: TableMetadata | { metadata: TableMetadata }, jobId: string, checkpointId: bigint): boolean {
  const last = lastCommitted(table, jobId);
  return last !== undefined && last.checkpointId >= checkpointId;
}
