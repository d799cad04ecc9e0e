/**
 * Local locations: `file:` URIs and plain paths, as Hadoop and Iceberg Java write them.
 *
 * Deliberately NOT percent-decoded: Hadoop's `Path` keeps `%` sequences literally in file names
 * (Iceberg partition directories such as `name=a%20b` exist on disk under exactly that name), so
 * `file:///w/name=a%20b/f.parquet` is the file `/w/name=a%20b/f.parquet`.
 */
import path from 'node:path';
import { FloeError } from '../util/errors.js';

/** `file:/abs`, `file:///abs` and `file://localhost/abs`; any other authority is refused. */
const FILE_URI = /^file:(?:\/\/([^/]*))?(\/.*)?$/i;

export function isFileUri(location: string): boolean {
  return /^file:/i.test(location);
}

/** True for locations with a URI scheme other than `file:` (s3://, gs://, http://, …). */
export function hasNonFileScheme(location: string): boolean {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(location);
  // A single letter before ':' would be a Windows drive; floe runs on POSIX, but do not call it a scheme.
  return m !== null && m[1]!.length > 1 && m[1]!.toLowerCase() !== 'file';
}

/**
 * The absolute file-system path of a local location. Plain relative paths resolve against `baseDir`
 * (default: the working directory), as the golden fixtures' relative paths require.
 */
export function localPathOf(location: string, baseDir: string = process.cwd()): string {
  if (isFileUri(location)) {
    const m = FILE_URI.exec(location);
    const authority = m?.[1];
    if (!m || (authority !== undefined && authority !== '' && authority.toLowerCase() !== 'localhost')) {
      throw new FloeError('io.local', 'invalid-argument', `expected a local URI such as file:///abs/path, found ${JSON.stringify(location)}`);
    }
    return path.normalize(m[2] ?? '/');
  }
  if (hasNonFileScheme(location)) {
    throw new FloeError('io.local', 'invalid-argument', `expected a local path or file: URI, found ${JSON.stringify(location)}; use the S3 FileIO (fileIOFor) for object-store locations`);
  }
  if (location === '') {
    throw new FloeError('io.local', 'invalid-argument', 'expected a local path, found an empty string');
  }
  return path.resolve(baseDir, location);
}

/** `file:///abs/path` for an absolute path (no percent-encoding, see the module header). */
export function fileUriOf(absolutePath: string): string {
  if (!path.isAbsolute(absolutePath)) {
    throw new FloeError('io.local', 'internal', `expected an absolute path, found ${JSON.stringify(absolutePath)}`);
  }
  return `file://${absolutePath}`;
}

/** Normalizes any local location to its `file:///abs` URI. */
export function toFileUri(location: string, baseDir?: string): string {
  return fileUriOf(localPathOf(location, baseDir));
}
