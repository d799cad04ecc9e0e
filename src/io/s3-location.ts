/**
 * `s3://bucket/key` locations. `s3a://` and `s3n://` (Hadoop's spellings, found in tables written by
 * Spark) are read as the same thing; floe itself writes `s3://`.
 */
import { FloeError } from '../util/errors.js';

export interface S3Location {
  bucket: string;
  /** Object key without a leading slash; '' for the bucket root. */
  key: string;
}

const S3_URI = /^s3[an]?:\/\/([^/?#]+)(?:\/(.*))?$/i;

export function isS3Uri(location: string): boolean {
  return /^s3[an]?:\/\//i.test(location);
}

export function parseS3Uri(location: string): S3Location {
  const m = S3_URI.exec(location);
  if (!m) {
    throw new FloeError('io.s3', 'invalid-argument', `expected an S3 location such as s3://bucket/path/to/object, found ${JSON.stringify(location)}`);
  }
  return { bucket: m[1]!, key: m[2] ?? '' };
}

export function formatS3Uri(bucket: string, key: string): string {
  return `s3://${bucket}/${key}`;
}

/** The key as a directory prefix: '' for the bucket root, otherwise ending in exactly one '/'. */
export function directoryPrefix(key: string): string {
  const trimmed = key.replace(/\/+$/, '');
  return trimmed === '' ? '' : `${trimmed}/`;
}
