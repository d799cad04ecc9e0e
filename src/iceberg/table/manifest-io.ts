/**
 * Reading and writing a table's manifests and manifest lists through its FileIO: the snapshot's
 * manifest list, one manifest's entries with inheritance applied (spec "Sequence Number Inheritance",
 * "First Row ID Inheritance"), and new manifest files with Java's names
 * (`<commit uuid>-m<N>.avro`, `snap-<snapshot id>-<attempt>-<commit uuid>.avro`).
 */
import type { FileIO } from '../../io/file-io.js';
import { FloeError, isFloeError } from '../../util/errors.js';
import type { ManifestEntry } from '../spec/data-file.js';
import type { ManifestFile } from '../manifest/manifest-file.js';
import { readManifest, writeManifest, type WriteManifestOptions } from '../manifest/manifest.js';
import { readManifestList } from '../manifest/manifest-list.js';
import type { Snapshot } from '../spec/table-metadata.js';

async function readFile(io: FileIO, path: string, what: string): Promise<Uint8Array> {
  try {
    return await io.read(path);
  } catch (e) {
    if (isFloeError(e, 'not-found')) {
      throw new FloeError('iceberg.table', 'invalid-data', `${what} ${path} is missing; the table's metadata refers to a file that was deleted (expired or removed by hand)`, { cause: e });
    }
    throw e;
  }
}

/** The manifests of a snapshot, in list order. */
export async function readSnapshotManifests(io: FileIO, snapshot: Snapshot): Promise<ManifestFile[]> {
  const bytes = await readFile(io, snapshot.manifestList, `manifest list of snapshot ${snapshot.snapshotId}`);
  return readManifestList(bytes, snapshot.manifestList).manifests;
}

/** Entries of a committed manifest (DELETED ones included) with inherited values filled in. */
export async function readManifestEntries(io: FileIO, manifest: ManifestFile): Promise<ManifestEntry[]> {
  const bytes = await readFile(io, manifest.path, 'manifest');
  return readManifest(bytes, manifest).entries;
}

/** Writes a manifest (the options' `path`) and returns its manifest-list row. */
export async function writeManifestFile(io: FileIO, options: WriteManifestOptions): Promise<ManifestFile> {
  const written = writeManifest(options);
  await io.write(options.path, written.bytes);
  return written.manifest;
}

export function manifestPath(metadataDir: string, commitId: string, n: number): string {
  return `${metadataDir}/${commitId}-m${n}.avro`;
}

export function manifestListPath(metadataDir: string, snapshotId: bigint, attempt: number, commitId: string): string {
  return `${metadataDir}/snap-${snapshotId}-${attempt}-${commitId}.avro`;
}
