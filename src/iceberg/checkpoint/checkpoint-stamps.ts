/**
 * Checkpoint stamps in snapshot summaries (docs/design.md §4): every snapshot floe commits carries
 *
 *   floe.job-id                       the pipeline's stable identity
 *   floe.checkpoint-id                the checkpoint this snapshot commits
 *   floe.max-committed-checkpoint-id  the highest checkpoint id of this job in the table, this one included
 *   floe.source-offset                opaque JSON: the table's progress once it holds the checkpoint — its
 *                                     whole progress summary (pipeline/state.ts: phase, offset, snapshot
 *                                     chunks), passed in as `progress`; the key keeps its historical name
 *
 * and `lastCommitted` reads them back from the table itself by walking the ancestors of `main` from
 * the current snapshot, newest first; the newest snapshot of the job wins (flink-cdc
 * `IcebergCommitter.getMaxCommittedCheckpointId`, docs/seeds/seed-003.txt §4-1 "2단계"). So a restarted process knows
 * where each table stands with no state of its own, on any machine.
 *
 * The same stamp is also kept in a table property, `floe.job.<job id>.last-checkpoint` (JSON), set
 * in the same commit as the snapshot. Another engine's maintenance — a compaction whose snapshot
 * carries no floe summary, then snapshot expiry down to that one snapshot — removes every stamped
 * snapshot from `main`'s history, but properties outlive snapshots: `lastCommitted` falls back to
 * the property (and prefers it when it names a later checkpoint than the history shows).
 */
import { FloeError } from '../../util/errors.js';
import { ancestorsOf } from '../spec/snapshot-ids.js';
import { MAIN_BRANCH } from '../spec/table-metadata-constants.js';
import type { TableMetadata } from '../spec/table-metadata.js';

export const JOB_ID_KEY = 'floe.job-id';
export const CHECKPOINT_ID_KEY = 'floe.checkpoint-id';
const MAX_COMMITTED_CHECKPOINT_ID_KEY = 'floe.max-committed-checkpoint-id';
const SOURCE_OFFSET_KEY = 'floe.source-offset';

export interface CommittedCheckpoint {
  /** The highest checkpoint id this job committed to the table (`floe.max-committed-checkpoint-id`). */
  checkpointId: bigint;
  /** The checkpoint id of the newest snapshot of the job (equal to checkpointId for floe's own commits). */
  snapshotCheckpointId: bigint;
  /** `floe.source-offset` of that snapshot, verbatim. */
  sourceOffset: string;
  snapshotId: bigint;
}

/** Table property holding job `jobId`'s last checkpoint stamp (see the module header). */
function lastCheckpointProperty(jobId: string): string {
  return `floe.job.${jobId}.last-checkpoint`;
}

/** The table property a checkpoint commit sets beside its snapshot (`snapshotId`); `progress` as in the summary. */
export function checkpointProperties(jobId: string, checkpointId: bigint, maxCommitted: bigint, progress: string, snapshotId: bigint): Record<string, string> {
  const stamp = { 'checkpoint-id': checkpointId.toString(), 'max-committed-checkpoint-id': maxCommitted.toString(), 'snapshot-id': snapshotId.toString(), 'source-offset': progress };
  return { [lastCheckpointProperty(jobId)]: JSON.stringify(stamp) };
}

function fromProperty(m: TableMetadata, jobId: string): CommittedCheckpoint | undefined {
  const key = lastCheckpointProperty(jobId);
  const text = m.properties[key];
  if (text === undefined) return undefined;
  let stamp: Record<string, unknown>;
  try {
    stamp = JSON.parse(text) as Record<string, unknown>;
  } catch {
    stamp = {};
  }
  const id = (name: string) => (typeof stamp[name] === 'string' && /^-?\d+$/.test(stamp[name] as string) ? BigInt(stamp[name] as string) : undefined);
  const checkpoint = id('checkpoint-id');
  const max = id('max-committed-checkpoint-id');
  const snapshotId = id('snapshot-id');
  if (checkpoint === undefined || max === undefined || snapshotId === undefined || typeof stamp['source-offset'] !== 'string') {
    throw new FloeError('iceberg.writer', 'invalid-data', `table property ${key} is ${JSON.stringify(text.slice(0, 200))}; expected the checkpoint stamp floe writes ({"checkpoint-id", "max-committed-checkpoint-id", "snapshot-id", "source-offset"}). Remove the property to resume from the snapshot history alone`);
  }
  return { checkpointId: max > checkpoint ? max : checkpoint, snapshotCheckpointId: checkpoint, sourceOffset: stamp['source-offset'] as string, snapshotId };
}

/** The summary properties of a checkpoint commit; `progress`: the table's progress summary (`floe.source-offset`). */
export function checkpointSummary(jobId: string, checkpointId: bigint, maxCommitted: bigint, progress: string): Record<string, string> {
  return {
    [JOB_ID_KEY]: jobId,
    [CHECKPOINT_ID_KEY]: checkpointId.toString(),
    [MAX_COMMITTED_CHECKPOINT_ID_KEY]: maxCommitted.toString(),
    [SOURCE_OFFSET_KEY]: progress,
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
  const fromHistory = lastCommittedInHistory(m, jobId);
  const stamped = fromProperty(m, jobId);
  if (!stamped) return fromHistory;
  if (!fromHistory || stamped.snapshotCheckpointId > fromHistory.snapshotCheckpointId) return stamped;
  return fromHistory;
}

function lastCommittedInHistory(m: TableMetadata, jobId: string): CommittedCheckpoint | undefined {
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

/**
 * The progress text (`floe.source-offset`) of every stamp the table's metadata holds — every
 * snapshot's summary and every job's last-checkpoint property, whatever job and branch — verbatim,
 * for whoever must know what the stamps reference (orphan removal: pipeline/state-references.ts). A
 * property that is not floe's stamp names nothing.
 */
export function everyStampedProgress(metadata: TableMetadata): string[] {
  const out: string[] = [];
  for (const s of metadata.snapshots) {
    const progress = s.summary[SOURCE_OFFSET_KEY];
    if (progress) out.push(progress);
  }
  for (const [key, value] of Object.entries(metadata.properties)) {
    if (!/^floe\.job\..+\.last-checkpoint$/.test(key)) continue;
    try {
      const stamp = JSON.parse(value) as { 'source-offset'?: unknown };
      if (typeof stamp['source-offset'] === 'string') out.push(stamp['source-offset']);
    } catch {
      // not floe's stamp: nothing it names
    }
  }
  return out;
}

/** Whether job `jobId` already committed checkpoint `checkpointId` (or a later one) to the table. */
export function isCheckpointCommitted(table: TableMetadata | { metadata: TableMetadata }, jobId: string, checkpointId: bigint): boolean {
  const last = lastCommitted(table, jobId);
  return last !== undefined && last.checkpointId >= checkpointId;
}
