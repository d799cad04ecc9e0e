/**
 * What a deletion-vector upsert must check about the data files committed earlier whose rows it
 * deletes (the files its key index pointed at) — their current deletes, merged into the new DVs, come
 * from existing-deletes.ts:
 *
 * - that nobody removed them meanwhile (Java `RowDelta.validateDataFilesExist`): a DV on a data
 *   file another writer rewrote (a compaction) would delete nothing, and the row would live on in
 *   the rewritten file. Every snapshot between the one the index matches and the head is checked
 *   for DELETED entries of those files, and for DVs it added to them.
 */
import { FloeError, isFloeError } from '../../util/errors.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import { DV_TARGET_CONFLICT } from '../table/concurrent-dv-check.js';
import type { ManifestReads } from '../table/manifest-reads.js';
import { isDeletionVector } from '../table/snapshot-summary.js';

const SUBSYSTEM = 'iceberg.writer';

/**
 * A conflict that locating the deletes again resolves (table/concurrent-dv-check.ts): the committer
 * rebuilds its key index and re-plans the DVs instead of failing the checkpoint.
 */
export function isDvTargetConflict(e: unknown): boolean {
  return isFloeError(e, 'commit-conflict') && e.context.conflict === DV_TARGET_CONFLICT.conflict;
}

/**
 * Throws a non-retryable conflict when a snapshot committed after `indexSnapshotId` removed one of
 * `targets` or added a DV for it. `indexSnapshotId` must be an ancestor of the head; if it is not
 * (expired, or the branch was rolled back) the check cannot be made and that is a conflict too.
 * `reads`: the commit's (each snapshot's changes read once across its attempts).
 */
export async function validateTargetsUntouched(reads: ManifestReads, current: TableMetadata, indexSnapshotId: bigint | undefined, targets: ReadonlySet<string>): Promise<void> {
  if (targets.size === 0) return;
  const since = reads.snapshotsSince(current, indexSnapshotId);
  for (const snapshot of since.snapshots) {
    const changes = await reads.changesOf(snapshot);
    const removed = changes.removedDataFiles.find((f) => targets.has(f.filePath));
    const dv = removed ? undefined : changes.addedDeleteFiles.find((f) => isDeletionVector(f) && targets.has(f.referencedDataFile!));
    if (removed || dv) {
      throw new FloeError(
        SUBSYSTEM,
        'commit-conflict',
        `snapshot ${snapshot.snapshotId} (${snapshot.summary.operation ?? 'unknown operation'}), committed by another writer, ${removed ? 'removed' : 'added a deletion vector to'} data file ${removed ? removed.filePath : dv!.referencedDataFile} that this checkpoint deletes rows of; the checkpoint's deletes must be located again in the table as it is now`,
        { retryable: false, context: DV_TARGET_CONFLICT },
      );
    }
  }
  if (!since.reached) {
    throw new FloeError(SUBSYSTEM, 'commit-conflict', `snapshot ${indexSnapshotId}, which this checkpoint's deletes were planned on, is no longer in the history of main (expired or rolled back), so concurrent changes to the files it deletes rows of cannot be ruled out; the checkpoint's deletes must be located again in the table as it is now`, { retryable: false, context: DV_TARGET_CONFLICT });
  }
}
