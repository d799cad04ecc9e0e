/**
 * Choosing a FileIO by a location's scheme: `s3://` (also `s3a://`, `s3n://`) → S3FileIO;
 * `file:` URIs and plain paths → LocalFileIO. The catalogs and the CLI call this with the warehouse
 * or table location and the storage part of floe's config.
 */
import { FloeError } from '../util/errors.js';
import type { FileIO } from './file-io.js';
import { LocalFileIO, type LocalFileIOOptions } from './local-file-io.js';
import { hasNonFileScheme } from './local-path.js';
import { S3FileIO, type S3Config } from './s3-file-io.js';
import { isS3Uri } from './s3-location.js';

export interface StorageConfig {
  s3?: S3Config;
  local?: LocalFileIOOptions;
}

export type StorageScheme = 's3' | 'local';

export function storageSchemeOf(location: string): StorageScheme {
  if (isS3Uri(location)) return 's3';
  if (hasNonFileScheme(location)) {
    const scheme = location.slice(0, location.indexOf(':'));
    throw new FloeError('io', 'unsupported', `no FileIO for ${scheme}:// locations (${JSON.stringify(location)}); floe supports s3:// (any S3-compatible store) and local paths / file:// URIs`);
  }
  return 'local';
}

/**
 * A FileIO able to read and write `location` (and everything else in the same store). For S3, the
 * location also becomes the default place where `supportsAtomicCreate()` probes.
 */
export function fileIOFor(location: string, config: StorageConfig = {}): FileIO {
  switch (storageSchemeOf(location)) {
    case 's3':
      return new S3FileIO({ ...config.s3, probeLocation: config.s3?.probeLocation ?? location });
    case 'local':
      return new LocalFileIO(config.local);
  }
}
