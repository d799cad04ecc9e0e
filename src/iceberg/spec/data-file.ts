/**
 * A content file as tracked by manifests (spec "Manifests" → data_file struct): a data file, a
 * position-delete file (including a v3 deletion vector in a Puffin file), or an equality-delete file,
 * with its partition tuple and column metrics. Domain names here; Avro names only in the manifest serde.
 */
import type { Value } from '../../model/values.js';

export type FileContent = 'data' | 'position-deletes' | 'equality-deletes';
export type FileFormat = 'PARQUET' | 'AVRO' | 'ORC' | 'PUFFIN';

export interface DataFile {
  content: FileContent;
  /** Absolute URI. */
  filePath: string;
  fileFormat: FileFormat;
  /** Spec id of the partition spec this file was written with. */
  specId: number;
  /** Partition tuple in the spec's field order, values in the model of src/model/values.ts. */
  partition: Value[];
  recordCount: bigint;
  fileSizeInBytes: bigint;
  /** Metrics keyed by field id (spec: value_counts include nulls and NaNs). */
  columnSizes?: Map<number, bigint>;
  valueCounts?: Map<number, bigint>;
  nullValueCounts?: Map<number, bigint>;
  nanValueCounts?: Map<number, bigint>;
  /** Bounds in the binary single-value encoding of each column's type. */
  lowerBounds?: Map<number, Uint8Array>;
  upperBounds?: Map<number, Uint8Array>;
  keyMetadata?: Uint8Array;
  splitOffsets?: bigint[];
  /** Required for equality deletes: field ids, in schema order. */
  equalityIds?: number[];
  sortOrderId?: number;
  /** v3 row lineage: null for newly added files (inherited from the manifest). */
  firstRowId?: bigint;
  /** The one data file a position-delete file / deletion vector applies to. */
  referencedDataFile?: string;
  /** Deletion vectors: blob offset and length inside the Puffin file. */
  contentOffset?: bigint;
  contentSizeInBytes?: bigint;
}

export type EntryStatus = 'existing' | 'added' | 'deleted';

/** One manifest entry (spec "manifest_entry"). Null sequence numbers / snapshot id mean "inherit". */
export interface ManifestEntry {
  status: EntryStatus;
  snapshotId?: bigint;
  sequenceNumber?: bigint;
  fileSequenceNumber?: bigint;
  dataFile: DataFile;
}
