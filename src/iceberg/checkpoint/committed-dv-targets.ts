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
import type { FileIO } from '../../io/file-io.js';
import { FloeError, isFloeError } from '../../util/errors.js';
import { ancestorsOf } from '../spec/snapshot-ids.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import { DV_TARGET_CONFLICT } from '../table/concurrent-dv-check.js';
import { readManifestEntries, readSnapshotManifests } from '../table/manifest-io.js';
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
 */
export async function validateTargetsUntouched(io: FileIO, current: TableMetadata, indexSnapshotId: bigint | undefined, targets: ReadonlySet<string>): Promise<void> {
  if (targets.size === 0) return;
  const head = current.refs.main?.snapshotId ?? current.currentSnapshotId;
  if (head === indexSnapshotId) return;
  let reached = indexSnapshotId === undefined;
  for (const snapshot of ancestorsOf(current, head)) {
    if (snapshot.snapshotId === indexSnapshotId) {
      reached = true;
      break;
    }
    for (const mf of await readSnapshotManifests(io, snapshot)) {
      if (mf.addedSnapshotId !== snapshot.snapshotId) continue; // carried over: not this snapshot's change
      for (const e of await readManifestEntries(io, mf)) {
        const removedData = mf.content === 'data' && e.status === 'deleted' && targets.has(e.dataFile.filePath);
        const addedDv = mf.content === 'deletes' && e.status === 'added' && isDeletionVector(e.dataFile) && targets.has(e.dataFile.referencedDataFile!);
        if (removedData || addedDv) {
          throw new FloeError(
            SUBSYSTEM,
            'commit-conflict',
            `snapshot ${snapshot.snapshotId} (${snapshot.summary.operation ?? 'unknown operation'}), committed by another writer, ${removedData ? 'removed' : 'added a deletion vector to'} data file ${removedData ? e.dataFile.filePath : e.dataFile.referencedDataFile} that this checkpoint deletes rows of; the checkpoint's deletes must be located again in the table as it is now`,
            { retryable: false, context: DV_TARGET_CONFLICT },
          );
        }
      }
    }
  }
  if (!reached) {
    throw new FloeError(SUBSYSTEM, 'commit-conflict', `snapshot ${indexSnapshotId}, which this checkpoint's deletes were planned on, is no longer in the history of main (expired or rolled back), so concurrent changes to the files it deletes rows of cannot be ruled out; the checkpoint's deletes must be located again in the table as it is now`, { retryable: false, context: DV_TARGET_CONFLICT });
  }
}
