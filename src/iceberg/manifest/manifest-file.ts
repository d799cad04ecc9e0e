/**
 * One row of a manifest list (spec "Manifest Lists" → `manifest_file`): where a manifest is, which
 * spec and content it holds, the sequence numbers and row-id range it hands to its entries by
 * inheritance, its entry counts, and per partition field a summary used to prune it.
 *
 * Domain names here; the Avro names (`manifest_path`, `added_files_count`, …) appear only in
 * `manifest-list.ts`.
 */
export type ManifestContent = 'data' | 'deletes';

/** Spec `field_summary` (ids 509/518/510/511): bounds in the partition field's binary single-value form. */
export interface PartitionFieldSummary {
  containsNull: boolean;
  /** Undefined when unknown (old writers); floe always writes it. */
  containsNan?: boolean;
  lowerBound?: Uint8Array;
  upperBound?: Uint8Array;
}

export interface ManifestFile {
  /** Absolute URI of the manifest. */
  path: string;
  /** Exact byte size of the manifest file (Trino reads its tail using it; docs/iceberg-writer-checklist.md §3.1). */
  length: bigint;
  specId: number;
  content: ManifestContent;
  /**
   * Sequence number of the snapshot that added the manifest. Undefined for a manifest written in the
   * commit being prepared: the manifest-list writer assigns the snapshot's sequence number, so a
   * retried commit only rewrites the list (spec "Sequence Number Inheritance").
   */
  sequenceNumber?: bigint;
  /** Lowest data sequence number of live entries; undefined = the snapshot's sequence number. */
  minSequenceNumber?: bigint;
  addedSnapshotId: bigint;
  addedFilesCount: number;
  existingFilesCount: number;
  deletedFilesCount: number;
  addedRowsCount: bigint;
  existingRowsCount: bigint;
  deletedRowsCount: bigint;
  /** One summary per partition field, in spec order; undefined when not written. */
  partitions?: PartitionFieldSummary[];
  keyMetadata?: Uint8Array;
  /**
   * v3: first row id handed to the manifest's data files that have none. Undefined for a new data
   * manifest (assigned by the manifest-list writer) and always for delete manifests.
   */
  firstRowId?: bigint;
}
