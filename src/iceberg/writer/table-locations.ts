/**
 * Where a table's new files go and how big they get, from the table properties Java honours
 * (`TableProperties`): `write.data.path` (default `<location>/data`), `write.target-file-size-bytes`
 * (default 512 MiB in Java; floe uses 128 MiB because it holds a file in memory until it is written)
 * and `write.delete.target-file-size-bytes` (default 64 MiB).
 */
import { FloeError } from '../../util/errors.js';
import type { LocationProvider } from '../parquet/rolling-writer.js';
import type { TableMetadata } from '../spec/table-metadata.js';

const DATA_PATH_PROPERTY = 'write.data.path';
export const TARGET_FILE_SIZE_PROPERTY = 'write.target-file-size-bytes';
const DELETE_TARGET_FILE_SIZE_PROPERTY = 'write.delete.target-file-size-bytes';

const DEFAULT_DATA_TARGET = 128 * 1024 * 1024;
const DEFAULT_DELETE_TARGET = 64 * 1024 * 1024;

export function tableLocations(metadata: TableMetadata): LocationProvider {
  const root = (metadata.properties[DATA_PATH_PROPERTY] ?? `${metadata.location.replace(/\/+$/, '')}/data`).replace(/\/+$/, '');
  return {
    newDataLocation(fileName: string, partitionPath: string): string {
      return partitionPath ? `${root}/${partitionPath}/${fileName}` : `${root}/${fileName}`;
    },
  };
}

export function targetFileSizes(metadata: TableMetadata): { data: number; deletes: number } {
  return {
    data: sizeProperty(metadata, TARGET_FILE_SIZE_PROPERTY, DEFAULT_DATA_TARGET),
    deletes: sizeProperty(metadata, DELETE_TARGET_FILE_SIZE_PROPERTY, DEFAULT_DELETE_TARGET),
  };
}

function sizeProperty(metadata: TableMetadata, name: string, fallback: number): number {
  const text = metadata.properties[name];
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new FloeError('iceberg.writer', 'config', `table ${metadata.location}: property ${name} is ${JSON.stringify(text)}; expected a positive integer number of bytes`);
  }
  return n;
}
