/**
 * The Parquet codec of a table's new files, from the table properties Java honours
 * (`TableProperties`): `write.parquet.compression-codec` for data files (default zstd, Java's since
 * 1.4 and what floe sets on the tables it creates) and `write.delete.parquet.compression-codec` for
 * delete files (default: the data files' codec). Names as Parquet's `CompressionCodecName` reads
 * them, in any case.
 *
 * Only the codecs every engine floe is tested with reads (test/engines): Trino refuses a table
 * whose codec property is lz4_raw or brotli (INVALID_TABLE_PROPERTY: "Unsupported compression
 * codec"), whatever its files hold, and Spark and Iceberg Java have no brotli codec; arrow-rs
 * writes neither lzo nor Hadoop-framed lz4. A table with another codec is refused at the start,
 * not left for a reader to fail on.
 *
 * `write.parquet.compression-level` is not applied: parquet-wasm's writer properties take a codec
 * without a level, so each codec is written at arrow-rs's default level (zstd 1, gzip 6).
 */
import { FloeError } from '../../util/errors.js';
import type { ParquetCompression } from '../parquet/encoder.js';
import type { ParquetWriterOptions } from '../parquet/file-writer-options.js';
import type { TableMetadata } from '../spec/table-metadata.js';

const DATA_CODEC_PROPERTY = 'write.parquet.compression-codec';
const DELETE_CODEC_PROPERTY = 'write.delete.parquet.compression-codec';
const DEFAULT_CODEC: ParquetCompression = 'zstd';

const WRITTEN: ReadonlySet<string> = new Set<ParquetCompression>(['zstd', 'snappy', 'gzip', 'uncompressed']);

export interface ParquetCodecs {
  data: ParquetCompression;
  deletes: ParquetCompression;
}

/** The writer options of the table's data and delete files: `given`, its codec (when it names one) over the table's. */
export function parquetWriterOptions(metadata: TableMetadata, given: ParquetWriterOptions | undefined): { data: ParquetWriterOptions; deletes: ParquetWriterOptions } {
  const codecs = parquetCodecsOf(metadata.properties, `table ${metadata.location}`);
  return { data: { ...given, compression: given?.compression ?? codecs.data }, deletes: { ...given, compression: given?.compression ?? codecs.deletes } };
}

/** The codecs of table properties `properties` (of `what`, for the error): also the check of properties a table is to be created with. */
export function parquetCodecsOf(properties: Readonly<Record<string, string>>, what: string): ParquetCodecs {
  const data = codecProperty(properties, DATA_CODEC_PROPERTY, what) ?? DEFAULT_CODEC;
  return { data, deletes: codecProperty(properties, DELETE_CODEC_PROPERTY, what) ?? data };
}

function codecProperty(properties: Readonly<Record<string, string>>, name: string, what: string): ParquetCompression | undefined {
  const text = properties[name];
  if (text === undefined) return undefined;
  const codec = text.trim().toLowerCase();
  if (WRITTEN.has(codec)) return codec as ParquetCompression;
  throw new FloeError(
    'iceberg.writer',
    'config',
    `${what}: property ${name} is ${JSON.stringify(text)}; floe writes Parquet with zstd, snappy, gzip or uncompressed, the codecs Spark, Trino, DuckDB, PyIceberg and Iceberg Java all read (Trino refuses a table whose codec is lz4_raw or brotli) — set the property to one of them`,
  );
}
