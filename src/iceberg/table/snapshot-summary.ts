/**
 * Snapshot summaries as Java writes them (`SnapshotSummary.Builder` + `SnapshotProducer.summary`; spec
 * Appendix F "Optional Snapshot Summary Fields"; docs/iceberg-writer-checklist.md §1): the counts this commit adds and
 * removes, `changed-partition-count`, and the running totals computed from the parent snapshot's
 * totals plus this commit's deltas. Engines rely on them: Spark sizes scans with `total-records` and
 * checks `total-equality-deletes != "0"` before looking for equality deletes; PyIceberg derives its
 * next totals from ours.
 *
 * A total is carried only when the parent has it (a table's first snapshot starts every total at 0),
 * and dropped when it would go negative — Java's `updateTotal`.
 */
import type { DataFile } from '../spec/data-file.js';
import { toHex, type Value } from '../../model/values.js';

const ADDED_DATA_FILES = 'added-data-files';
export const DELETED_DATA_FILES = 'deleted-data-files';
const TOTAL_DATA_FILES = 'total-data-files';
const ADDED_DELETE_FILES = 'added-delete-files';
const ADDED_EQ_DELETE_FILES = 'added-equality-delete-files';
const REMOVED_EQ_DELETE_FILES = 'removed-equality-delete-files';
const ADDED_POS_DELETE_FILES = 'added-position-delete-files';
const REMOVED_POS_DELETE_FILES = 'removed-position-delete-files';
const ADDED_DVS = 'added-dvs';
const REMOVED_DVS = 'removed-dvs';
const REMOVED_DELETE_FILES = 'removed-delete-files';
const TOTAL_DELETE_FILES = 'total-delete-files';
const ADDED_RECORDS = 'added-records';
const DELETED_RECORDS = 'deleted-records';
export const TOTAL_RECORDS = 'total-records';
const ADDED_FILE_SIZE = 'added-files-size';
const REMOVED_FILE_SIZE = 'removed-files-size';
const TOTAL_FILE_SIZE = 'total-files-size';
const ADDED_POS_DELETES = 'added-position-deletes';
const REMOVED_POS_DELETES = 'removed-position-deletes';
export const TOTAL_POS_DELETES = 'total-position-deletes';
const ADDED_EQ_DELETES = 'added-equality-deletes';
const REMOVED_EQ_DELETES = 'removed-equality-deletes';
export const TOTAL_EQ_DELETES = 'total-equality-deletes';
const CHANGED_PARTITION_COUNT = 'changed-partition-count';

/** Keys a commit computes itself; callers' extra summary properties must not use them. */
export const COMPUTED_SUMMARY_KEYS: ReadonlySet<string> = new Set([
  'operation',
  ADDED_DATA_FILES,
  DELETED_DATA_FILES,
  TOTAL_DATA_FILES,
  ADDED_DELETE_FILES,
  ADDED_EQ_DELETE_FILES,
  REMOVED_EQ_DELETE_FILES,
  ADDED_POS_DELETE_FILES,
  REMOVED_POS_DELETE_FILES,
  ADDED_DVS,
  REMOVED_DVS,
  REMOVED_DELETE_FILES,
  TOTAL_DELETE_FILES,
  ADDED_RECORDS,
  DELETED_RECORDS,
  TOTAL_RECORDS,
  ADDED_FILE_SIZE,
  REMOVED_FILE_SIZE,
  TOTAL_FILE_SIZE,
  ADDED_POS_DELETES,
  REMOVED_POS_DELETES,
  TOTAL_POS_DELETES,
  ADDED_EQ_DELETES,
  REMOVED_EQ_DELETES,
  TOTAL_EQ_DELETES,
  CHANGED_PARTITION_COUNT,
]);

export function isDeletionVector(file: DataFile): boolean {
  return file.content === 'position-deletes' && file.fileFormat === 'PUFFIN';
}

/** Java `ScanTaskUtil.contentSizeInBytes`: a DV counts its blob, not the whole Puffin file. */
function contentSize(file: DataFile): bigint {
  return isDeletionVector(file) ? (file.contentSizeInBytes ?? 0n) : file.fileSizeInBytes;
}

/** Java `UpdateMetrics`. */
class UpdateMetrics {
  addedSize = 0n;
  removedSize = 0n;
  addedFiles = 0;
  removedFiles = 0;
  addedEqDeleteFiles = 0;
  removedEqDeleteFiles = 0;
  addedPosDeleteFiles = 0;
  removedPosDeleteFiles = 0;
  addedDVs = 0;
  removedDVs = 0;
  addedDeleteFiles = 0;
  removedDeleteFiles = 0;
  addedRecords = 0n;
  deletedRecords = 0n;
  addedPosDeletes = 0n;
  removedPosDeletes = 0n;
  addedEqDeletes = 0n;
  removedEqDeletes = 0n;

  added(file: DataFile): void {
    this.addedSize += contentSize(file);
    switch (file.content) {
      case 'data':
        this.addedFiles++;
        this.addedRecords += file.recordCount;
        break;
      case 'position-deletes':
        if (isDeletionVector(file)) this.addedDVs++;
        else this.addedPosDeleteFiles++;
        this.addedDeleteFiles++;
        this.addedPosDeletes += file.recordCount;
        break;
      case 'equality-deletes':
        this.addedDeleteFiles++;
        this.addedEqDeleteFiles++;
        this.addedEqDeletes += file.recordCount;
        break;
    }
  }

  removed(file: DataFile): void {
    this.removedSize += contentSize(file);
    switch (file.content) {
      case 'data':
        this.removedFiles++;
        this.deletedRecords += file.recordCount;
        break;
      case 'position-deletes':
        if (isDeletionVector(file)) this.removedDVs++;
        else this.removedPosDeleteFiles++;
        this.removedDeleteFiles++;
        this.removedPosDeletes += file.recordCount;
        break;
      case 'equality-deletes':
        this.removedDeleteFiles++;
        this.removedEqDeleteFiles++;
        this.removedEqDeletes += file.recordCount;
        break;
    }
  }

  /** Java `addTo`: only non-zero counts, in Java's order. */
  addTo(out: Record<string, string>): void {
    const setIf = (cond: boolean, key: string, v: number | bigint): void => {
      if (cond) out[key] = String(v);
    };
    setIf(this.addedFiles > 0, ADDED_DATA_FILES, this.addedFiles);
    setIf(this.removedFiles > 0, DELETED_DATA_FILES, this.removedFiles);
    setIf(this.addedEqDeleteFiles > 0, ADDED_EQ_DELETE_FILES, this.addedEqDeleteFiles);
    setIf(this.removedEqDeleteFiles > 0, REMOVED_EQ_DELETE_FILES, this.removedEqDeleteFiles);
    setIf(this.addedPosDeleteFiles > 0, ADDED_POS_DELETE_FILES, this.addedPosDeleteFiles);
    setIf(this.removedPosDeleteFiles > 0, REMOVED_POS_DELETE_FILES, this.removedPosDeleteFiles);
    setIf(this.addedDeleteFiles > 0, ADDED_DELETE_FILES, this.addedDeleteFiles);
    setIf(this.removedDeleteFiles > 0, REMOVED_DELETE_FILES, this.removedDeleteFiles);
    setIf(this.addedDVs > 0, ADDED_DVS, this.addedDVs);
    setIf(this.removedDVs > 0, REMOVED_DVS, this.removedDVs);
    setIf(this.addedRecords > 0n, ADDED_RECORDS, this.addedRecords);
    setIf(this.deletedRecords > 0n, DELETED_RECORDS, this.deletedRecords);
    setIf(this.addedSize > 0n, ADDED_FILE_SIZE, this.addedSize);
    setIf(this.removedSize > 0n, REMOVED_FILE_SIZE, this.removedSize);
    setIf(this.addedPosDeletes > 0n, ADDED_POS_DELETES, this.addedPosDeletes);
    setIf(this.removedPosDeletes > 0n, REMOVED_POS_DELETES, this.removedPosDeletes);
    setIf(this.addedEqDeletes > 0n, ADDED_EQ_DELETES, this.addedEqDeletes);
    setIf(this.removedEqDeletes > 0n, REMOVED_EQ_DELETES, this.removedEqDeletes);
  }
}

/** A key per (spec, partition tuple), standing in for Java's `spec.partitionToPath(partition)`. */
function partitionKey(file: DataFile): string {
  const part = (v: Value): string => (v === null ? 'null' : v instanceof Uint8Array ? `0x${toHex(v)}` : `${typeof v}:${String(v)}`);
  return `${file.specId}|${file.partition.map(part).join('|')}`;
}

/** The change half of a summary: what one commit adds and removes. */
export class SnapshotSummaryBuilder {
  private readonly metrics = new UpdateMetrics();
  private readonly partitions = new Set<string>();

  addedFile(file: DataFile): void {
    this.metrics.added(file);
    this.partitions.add(partitionKey(file));
  }

  removedFile(file: DataFile): void {
    this.metrics.removed(file);
    this.partitions.add(partitionKey(file));
  }

  /** Change counts plus `changed-partition-count` (Java writes it whenever partition metrics are trusted). */
  build(): Record<string, string> {
    const out: Record<string, string> = {};
    this.metrics.addTo(out);
    out[CHANGED_PARTITION_COUNT] = String(this.partitions.size);
    return out;
  }
}

const TOTALS: readonly [total: string, added: string, removed: string][] = [
  [TOTAL_RECORDS, ADDED_RECORDS, DELETED_RECORDS],
  [TOTAL_FILE_SIZE, ADDED_FILE_SIZE, REMOVED_FILE_SIZE],
  [TOTAL_DATA_FILES, ADDED_DATA_FILES, DELETED_DATA_FILES],
  [TOTAL_DELETE_FILES, ADDED_DELETE_FILES, REMOVED_DELETE_FILES],
  [TOTAL_POS_DELETES, ADDED_POS_DELETES, REMOVED_POS_DELETES],
  [TOTAL_EQ_DELETES, ADDED_EQ_DELETES, REMOVED_EQ_DELETES],
];

/**
 * The full summary: `operation`, the caller's extra properties, this commit's changes, and the totals
 * carried from `parentSummary` (undefined = no parent: totals start at 0).
 */
export function snapshotSummary(
  operation: string,
  changes: Record<string, string>,
  parentSummary: Record<string, string> | undefined,
  extra: Record<string, string> = {},
): Record<string, string> {
  const out: Record<string, string> = { operation, ...extra, ...changes };
  const previous = parentSummary ?? Object.fromEntries(TOTALS.map(([t]) => [t, '0']));
  for (const [total, added, removed] of TOTALS) {
    const text = previous[total];
    if (text === undefined || !/^-?\d+$/.test(text.trim())) continue;
    let value = BigInt(text.trim());
    if (value >= 0n && changes[added] !== undefined) value += BigInt(changes[added]);
    if (value >= 0n && changes[removed] !== undefined) value -= BigInt(changes[removed]);
    if (value >= 0n) out[total] = String(value);
  }
  return out;
}
