/**
 * Retry validation for deletion vectors (Java `MergingSnapshotProducer.validateAddedDVs`): the spec
 * allows at most one DV per data file in a snapshot, and Java readers fail on two ("Can't index
 * multiple DVs"). When a commit that adds DVs must be retried on top of snapshots committed meanwhile,
 * none of those snapshots may have added a DV for the same data file; if one did, the commit cannot
 * simply be re-sequenced — the writer must merge the DVs and plan again.
 */
import { FloeError } from '../../util/errors.js';
import type { DataFile } from '../spec/data-file.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import type { ManifestReads } from './manifest-reads.js';
import { isDeletionVector } from './snapshot-summary.js';

/**
 * The context of a conflict that planning the DVs again on the table as it is now resolves: another
 * writer gave a DV to, or rewrote, a data file a commit deletes rows of by DV (the writer then
 * merges or re-locates its deletes instead of failing).
 */
export const DV_TARGET_CONFLICT: Readonly<Record<string, string>> = Object.freeze({ conflict: 'dv-targets' });

export class ConcurrentDVCheck {
  private readonly targets: Set<string>;

  constructor(
    /** The commit's reads: each snapshot's changes are read once, whatever the number of retries. */
    private readonly reads: ManifestReads,
    addedDeleteFiles: readonly DataFile[],
    /** The main branch head the commit was planned on. */
    private readonly startSnapshotId: bigint | undefined,
  ) {
    this.targets = new Set(addedDeleteFiles.filter(isDeletionVector).map((f) => f.referencedDataFile!));
  }

  /** Throws a non-retryable conflict when a snapshot committed since the start added a DV for one of ours. */
  async validate(current: TableMetadata): Promise<void> {
    if (this.targets.size === 0) return;
    for (const snapshot of this.reads.snapshotsSince(current, this.startSnapshotId).snapshots) {
      for (const f of (await this.reads.changesOf(snapshot)).addedDeleteFiles) {
        if (isDeletionVector(f) && this.targets.has(f.referencedDataFile!)) {
          throw new FloeError('iceberg.commit', 'commit-conflict', `snapshot ${snapshot.snapshotId}, committed concurrently, added a deletion vector for ${f.referencedDataFile}, which this commit also adds one for; at most one DV per data file is allowed — merge the deletes and plan the commit again`, { retryable: false, context: DV_TARGET_CONFLICT });
        }
      }
    }
  }
}
