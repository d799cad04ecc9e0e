/**
 * Finding a Hadoop-layout table's current metadata file, as Java `HadoopTableOperations` does
 * (`findVersion` + `refresh`): read `version-hint.text`, then probe `v<N+1>`, `v<N+2>`, … until one is
 * absent, because the hint is written after the commit and only best effort, so it may lag. When the
 * hint is missing, unreadable, or names a file that does not exist, list the metadata directory and
 * take the highest version (Java lists too when the hint is unreadable; it refuses a hint naming a
 * missing file, floe falls back to the listing instead).
 *
 * Also reads (and decompresses) metadata files, for this catalog and for tools given a table
 * directory.
 */
import type { FileIO } from '../../io/file-io.js';
import { gunzipIfCompressed } from '../../io/gzip.js';
import { parseTableMetadata } from '../../iceberg/spec/table-metadata-json.js';
import type { TableMetadata } from '../../iceberg/spec/table-metadata.js';
import { FloeError, isFloeError } from '../../util/errors.js';
import { joinLocation, METADATA_DIR, metadataFileLocation, metadataFileVersion, normalizeWarehouse, versionHintLocation } from './filesystem-layout.js';

export interface CurrentVersion {
  version: number;
  /** Location of `v<version>.metadata.json` (or its `.gz` form). */
  metadataLocation: string;
}

const decoder = new TextDecoder();

/** The hint's number, or undefined when the file is absent or does not hold a positive integer. */
async function readVersionHint(io: FileIO, metadataDir: string): Promise<number | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await io.read(versionHintLocation(metadataDir));
  } catch (e) {
    if (isFloeError(e, 'not-found')) return undefined;
    throw e;
  }
  // Java parses the first line; tolerate a newline written by other tools, never write one.
  const text = decoder.decode(bytes).split('\n')[0]!.trim();
  if (!/^[1-9][0-9]*$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Every `v<N>[.gz].metadata.json` directly in the directory, by version. `metadataDir` must be spelled
 * as the FileIO lists (a `file:///abs` or `s3://` URI; see `normalizeWarehouse`).
 */
export async function listMetadataVersions(io: FileIO, metadataDir: string): Promise<Map<number, string>> {
  const versions = new Map<number, string>();
  const prefix = `${metadataDir}/`;
  for (const location of await io.list(`${prefix}v`)) {
    if (!location.startsWith(prefix)) continue;
    const name = location.slice(prefix.length);
    const v = metadataFileVersion(name); // also rejects names with a '/', i.e. deeper files
    // Prefer the plain name when both spellings exist (Java checks the plain one first).
    if (v !== undefined && (!versions.has(v) || !name.includes('.gz.'))) versions.set(v, location);
  }
  return versions;
}

/** The location of version `n` if it exists (plain or gzip name). */
async function versionLocation(io: FileIO, metadataDir: string, n: number): Promise<string | undefined> {
  const plain = metadataFileLocation(metadataDir, n);
  if (await io.exists(plain)) return plain;
  const gz = joinLocation(metadataDir, `v${n}.gz.metadata.json`);
  if (await io.exists(gz)) return gz;
  return undefined;
}

/**
 * The current version of the table whose metadata directory is `metadataDir`, or undefined when it
 * holds no metadata file (no table there).
 */
export async function findCurrentVersion(io: FileIO, metadataDir: string): Promise<CurrentVersion | undefined> {
  let version = await readVersionHint(io, metadataDir);
  let location = version === undefined ? undefined : await versionLocation(io, metadataDir, version);
  if (version === undefined || location === undefined) {
    const listed = await listMetadataVersions(io, metadataDir);
    if (listed.size === 0) return undefined;
    version = Math.max(...listed.keys());
    location = listed.get(version)!;
  }
  // The hint may lag behind commits that landed after it was written: walk forward.
  for (;;) {
    const next = await versionLocation(io, metadataDir, version + 1);
    if (next === undefined) break;
    version += 1;
    location = next;
  }
  return { version, metadataLocation: location };
}

/** Reads and parses a metadata file (gzip or plain). */
export async function readTableMetadataFile(io: FileIO, location: string): Promise<TableMetadata> {
  return parseTableMetadataFile(await io.read(location), location);
}

/** Parses the bytes of the metadata file at `location` (gzip or plain). */
export function parseTableMetadataFile(fileBytes: Uint8Array, location: string): TableMetadata {
  const bytes = gunzipIfCompressed(fileBytes, location);
  try {
    return parseTableMetadata(decoder.decode(bytes));
  } catch (e) {
    if (e instanceof FloeError && (e.kind === 'invalid-data' || e.kind === 'unsupported')) {
      throw new FloeError(e.subsystem, e.kind, `${location}: ${e.message}`, { cause: e });
    }
    throw e;
  }
}

/**
 * The current metadata file of a table directory written by any engine: the Hadoop layout first
 * (hint, probe, listing), else the newest metastore-style `<NNNNN>-<uuid>.metadata.json` (spec "File
 * System Tables" vs "Metastore Tables"; Spark/PyIceberg with a JDBC or Hive catalog write these). For
 * tools given a bare table directory (`floe scan <dir>`); catalogs use `findCurrentVersion`. A local
 * relative `tableDir` resolves against the working directory.
 */
export async function findCurrentMetadataFile(io: FileIO, tableDir: string): Promise<string | undefined> {
  const metadataDir = joinLocation(normalizeWarehouse(tableDir), METADATA_DIR);
  const hadoop = await findCurrentVersion(io, metadataDir);
  if (hadoop) return hadoop.metadataLocation;
  const prefix = `${metadataDir}/`;
  let best: { n: number; location: string } | undefined;
  for (const location of await io.list(prefix)) {
    if (!location.startsWith(prefix)) continue;
    const m = /^(\d+)-[0-9a-fA-F-]+(?:\.gz)?\.metadata\.json$/.exec(location.slice(prefix.length));
    if (!m) continue;
    const n = Number(m[1]);
    if (!best || n > best.n) best = { n, location };
  }
  return best?.location;
}
