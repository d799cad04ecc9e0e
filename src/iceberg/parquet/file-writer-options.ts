/**
 * What a Parquet file writer (file-writer.ts) takes and gives: its options, with Java's property
 * names where a table property sets them, and the written file with everything a manifest entry
 * needs.
 */
import type { ParquetCompression, ParquetEncoderFactory } from './encoder.js';
import type { ColumnMetrics } from './field-stats.js';
import type { MetricsConfig } from './metrics-config.js';

/** The key-value entry holding the schema the file was written with (Java's `SchemaParser.toJson` form). */
export const ICEBERG_SCHEMA_KEY = 'iceberg.schema';

export interface ParquetWriterOptions {
  /** Default zstd (Java's default since 1.4 is zstd as well, `write.parquet.compression-codec`). */
  compression?: ParquetCompression;
  /** Row-group size in encoded (uncompressed) bytes; default 128 MiB (Java `write.parquet.row-group-size-bytes`). */
  rowGroupBytes?: number;
  /** Optional cap on rows per row group. */
  rowGroupRows?: number;
  /** Dictionary encoding; default on (Java `write.parquet.dict-size-bytes` applies there). */
  dictionary?: boolean;
  /** Rows buffered in JS before a batch goes to the encoder (default 16384). */
  batchRows?: number;
  /** Buffered bytes before a batch goes to the encoder (default 8 MiB). */
  batchBytes?: number;
  /** Which metrics to keep; default truncate(16) for every column. */
  metrics?: MetricsConfig;
  /** Extra key-value metadata (e.g. Java's `delete-type`); `iceberg.schema` is always written. */
  keyValueMetadata?: Readonly<Record<string, string>>;
  /** Encoder implementation (default: parquet-wasm on this thread). */
  encoderFactory?: ParquetEncoderFactory;
  /**
   * The local file the finished file is to be stored at (`FileIO.localFilePath` of its location),
   * for an encoder in another thread to write it there itself (`ParquetFileResult.written`).
   */
  writeTo?: string;
  /**
   * Rows `appendOne` sets aside before appending them to the column builders together (default 0:
   * each at once). For a caller that spreads consecutive rows over many open files (a partitioned
   * checkpoint): the builders of all its files do not fit in the CPU's caches, and appending rows in
   * runs touches one file's builders for several rows instead of one row per file in turn. A value
   * the builders reject then fails the file up to that many rows later (the file is lost all the same).
   */
  stageRows?: number;
  /**
   * File bytes per Arrow byte, as a previous file of the same data achieved, for `estimatedSize`.
   * The rolling writer passes the ratio of its last file.
   */
  expectedCompressionRatio?: number;
}

export interface ParquetFileResult {
  /** The whole file. */
  bytes: Uint8Array;
  recordCount: bigint;
  fileSizeInBytes: bigint;
  /** Metrics keyed by field id, plus compressed column sizes from the footer. */
  metrics: ColumnMetrics & { columnSizes: Map<number, bigint> };
  /** Row-group start offsets, ascending. */
  splitOffsets: bigint[];
  /** Arrow bytes that went into the file (for compression-ratio estimates). */
  arrowBytes: number;
  /** Whether the encoder stored the file at `writeTo` already; otherwise storing `bytes` is the caller's. */
  written: boolean;
}

export const DEFAULT_ROW_GROUP_BYTES = 128 * 1024 * 1024;
