/**
 * Parquet data and delete files for Iceberg tables: the public surface of src/iceberg/parquet.
 *
 * Writing: `ParquetFileWriter` (one file, bytes + metrics) and `RollingParquetWriter` (files of a
 * target size through a FileIO, as `DataFile`s). Reading: `readParquetBatches` / `readParquetRows`
 * (projection by field id, defaults, promotions) and `readParquetFileInfo`.
 */
export { FIELD_ID_KEY, toArrowSchema, arrowType, arrowPrimitiveType } from './arrow-schema.js';
export { makeCompatibleName } from './compatible-name.js';
export { truncateStringMin, truncateStringMax, truncateBinaryMin, truncateBinaryMax } from './bound-truncation.js';
export {
  MetricsModes,
  DEFAULT_METRICS_CONFIG,
  DEFAULT_METRICS_MODE,
  parseMetricsMode,
  metricsModeFor,
  metricsConfigFromProperties,
  type MetricsMode,
  type MetricsConfig,
} from './metrics-config.js';
export type { ColumnMetrics } from './field-stats.js';
export {
  wasmParquetEncoder,
  parseCompression,
  type ParquetCompression,
  type ParquetEncoder,
  type ParquetEncoderFactory,
  type ParquetEncoderOptions,
} from './encoder.js';
export {
  ParquetFileWriter,
  writeParquetFile,
  ICEBERG_SCHEMA_KEY,
  DEFAULT_ROW_GROUP_BYTES,
  type ParquetWriterOptions,
  type ParquetFileResult,
} from './file-writer.js';
export { readFooter, columnSizesById, splitOffsets, summarizeFooter, type ParquetFooter, type FooterSummary } from './footer.js';
export {
  RollingParquetWriter,
  defaultLocationProvider,
  DEFAULT_TARGET_FILE_SIZE_BYTES,
  type LocationProvider,
  type RowLocation,
  type RollingWriterOptions,
} from './rolling-writer.js';
export {
  POSITION_DELETE_SCHEMA,
  DELETE_FILE_PATH_ID,
  DELETE_FILE_POS_ID,
  POSITION_DELETE_KEY_VALUE,
  positionDeleteMetricsConfig,
  positionDeleteRows,
  equalityDeleteSchema,
  equalityDeleteKeyValue,
  type PositionDelete,
} from './delete-schemas.js';
export {
  readParquetBatches,
  readParquetRows,
  readParquetFileInfo,
  type ParquetSource,
  type ParquetReadOptions,
  type ParquetRowBatch,
  type ParquetFileInfo,
} from './reader.js';
