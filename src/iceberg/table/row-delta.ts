/**
 * The commits floe's writers make, on top of `commitSnapshot`:
 *
 * - `commitRowDelta`: data files + delete files (equality deletes, v2 position deletes, v3 deletion
 *   vectors) + optionally removed files in one snapshot — what the upsert writer commits per checkpoint.
 *   The operation is chosen as Java's `BaseRowDelta.operation()`: only data added (nothing removed) →
 *   `append`; delete files and no data → `delete`; anything else → `overwrite`. Deviation: an empty
 *   row delta (a checkpoint with no changes that still records its offsets) is an `append`, where Java
 *   says `overwrite` — streaming readers (Spark `streaming-skip-overwrite-snapshots`) stop at
 *   overwrites, and an empty snapshot overwrites nothing.
 * - `appendFiles`: data files only, operation `append` (Java `MergeAppend`: manifests are merged as
 *   for every floe commit — floe commits too often for Java's non-merging FastAppend to be wise).
 */
import type { DataFile } from '../spec/data-file.js';
import type { CatalogTable } from './catalog-table.js';
import { commitSnapshot, type CommitOptions, type CommitResult, type SnapshotOperation } from './snapshot-producer.js';

export interface RowDeltaFiles {
  dataFiles?: readonly DataFile[];
  /** Equality deletes, v2 position deletes and v3 deletion vectors. */
  deleteFiles?: readonly DataFile[];
  /** Files to remove (data files, or delete files such as a DV replaced by a merged one). */
  removedFiles?: readonly DataFile[];
}

/** Java `BaseRowDelta.operation()`. */
function rowDeltaOperation(files: RowDeltaFiles): SnapshotOperation {
  const addsData = (files.dataFiles?.length ?? 0) > 0;
  const addsDeletes = (files.deleteFiles?.length ?? 0) > 0;
  const removesData = (files.removedFiles ?? []).some((f) => f.content === 'data');
  if (addsData && !addsDeletes && !removesData) return 'append';
  if (addsDeletes && !addsData) return 'delete';
  if (!addsData && !addsDeletes && !removesData && (files.removedFiles?.length ?? 0) === 0) return 'append';
  return 'overwrite';
}

export function commitRowDelta(table: CatalogTable, files: RowDeltaFiles, options: CommitOptions = {}): Promise<CommitResult> {
  return commitSnapshot(
    table,
    {
      operation: rowDeltaOperation(files),
      addedDataFiles: files.dataFiles ?? [],
      addedDeleteFiles: files.deleteFiles ?? [],
      removedFiles: files.removedFiles ?? [],
    },
    options,
  );
}

export function appendFiles(table: CatalogTable, dataFiles: readonly DataFile[], options: CommitOptions = {}): Promise<CommitResult> {
  return commitSnapshot(table, { operation: 'append', addedDataFiles: dataFiles }, options);
}
