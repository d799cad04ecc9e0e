/**
 * A checkpoint that empties a table (MySQL `TRUNCATE TABLE`, or a table whose rows must all be copied
 * again): one snapshot, operation `delete`, that removes every live data file and every live delete
 * file — what Java's `DeleteFiles` with an always-true filter commits — stamped like every checkpoint
 * commit (checkpoint-stamps.ts), so that the emptying and the progress it belongs to land together.
 * Chosen over equality deletes because it is exact whatever the table holds (keyless tables, float
 * columns) and leaves no delete files for readers to apply; the old files stay reachable through
 * earlier snapshots until they expire (time travel still sees the rows).
 *
 * Replay-safe as every checkpoint commit: a table that already holds this checkpoint of the job is
 * not changed again (`validate`).
 */
import type { DataFile } from '../spec/data-file.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import { commitSnapshot, readManifestEntries, readSnapshotManifests, type CatalogTable, type CommitResult, type RetryPolicy } from '../table/index.js';
import { checkpointProperties, checkpointSummary, isCheckpointCommitted, lastCommitted } from './checkpoint-stamps.js';

export interface TruncationResult {
  readonly result: CommitResult;
  readonly removedDataFiles: number;
  readonly removedDeleteFiles: number;
}

/** Every live file of the table's current snapshot. */
async function liveFiles(table: CatalogTable): Promise<DataFile[]> {
  const snapshot = currentSnapshot(table.metadata);
  if (!snapshot) return [];
  const live: DataFile[] = [];
  for (const manifest of await readSnapshotManifests(table.io, snapshot)) {
    for (const entry of await readManifestEntries(table.io, manifest)) if (entry.status !== 'deleted') live.push(entry.dataFile);
  }
  return live;
}

/** Commits checkpoint `checkpointId` of job `jobId` as a snapshot that removes every live file, stamped with `progress`. */
export async function commitTruncation(table: CatalogTable, jobId: string, checkpointId: bigint, progress: string, options: { retry?: Partial<RetryPolicy>; warn?: (m: string) => void } = {}): Promise<TruncationResult> {
  const live = await liveFiles(table);
  const previous = lastCommitted(table.metadata, jobId);
  const maxCommitted = previous && previous.checkpointId > checkpointId ? previous.checkpointId : checkpointId;
  const result = await commitSnapshot(
    table,
    // nothing live: a stamps-only snapshot (an empty delete removes nothing)
    { operation: live.length > 0 ? 'delete' : 'append', removedFiles: live },
    {
      summary: checkpointSummary(jobId, checkpointId, maxCommitted, progress),
      properties: (snapshotId) => checkpointProperties(jobId, checkpointId, maxCommitted, progress, snapshotId),
      validate: (current: TableMetadata) => (isCheckpointCommitted(current, jobId, checkpointId) ? 'skip' : 'proceed'),
      retry: options.retry,
      warn: options.warn,
    },
  );
  const data = live.filter((f) => f.content === 'data').length;
  return { result, removedDataFiles: data, removedDeleteFiles: live.length - data };
}
