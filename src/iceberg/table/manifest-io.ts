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

/**
 * Decoded entries of committed manifests, by file and by the manifest-list values they inherit
 * (spec "Sequence Number Inheritance", "First Row ID Inheritance"): a manifest file is immutable
 * once written — a change to a table writes new manifests — so a table's current manifests are read
 * and decoded once, not at every commit that reads them (the deletion vectors of each checkpoint
 * look their targets up in every delete manifest). Least recently used first out, bounded by the
 * entries held. The entries are frozen (and their data files): a caller builds new ones to change
 * anything, and one that tried to change a shared entry would throw rather than alter another
 * caller's view.
 */
class ManifestEntryCache {
  private readonly byKey = new Map<string, readonly ManifestEntry[]>();
  private held = 0;

  constructor(private readonly maxEntries: number) {}

  /** The key of a committed manifest read; undefined for one not yet in a written list (nothing inherited yet). */
  static keyOf(m: ManifestFile): string | undefined {
    if (m.sequenceNumber === undefined) return undefined;
    return `${m.path}\n${m.length}\n${m.sequenceNumber}\n${m.firstRowId ?? ''}\n${m.addedSnapshotId}\n${m.specId}\n${m.content}`;
  }

  get(key: string): readonly ManifestEntry[] | undefined {
    const entries = this.byKey.get(key);
    if (entries) {
      this.byKey.delete(key);
      this.byKey.set(key, entries);
    }
    return entries;
  }

  set(key: string, entries: ManifestEntry[]): void {
    if (entries.length > this.maxEntries) return;
    for (const e of entries) {
      Object.freeze(e.dataFile);
      Object.freeze(e);
    }
    this.byKey.set(key, entries);
    this.held += entries.length;
    for (const [k, v] of this.byKey) {
      if (this.held <= this.maxEntries) break;
      this.byKey.delete(k);
      this.held -= v.length;
    }
  }
}

/** 50–100 MB at most: an entry with its column statistics is 1–2 KB decoded. */
const manifestEntries = new ManifestEntryCache(50_000);

/**
 * Entries of a committed manifest (DELETED ones included) with inherited values filled in; frozen,
 * shared with every other reader of the same manifest (ManifestEntryCache). The array is the
 * caller's own.
 */
export async function readManifestEntries(io: FileIO, manifest: ManifestFile): Promise<ManifestEntry[]> {
  const key = ManifestEntryCache.keyOf(manifest);
  const cached = key === undefined ? undefined : manifestEntries.get(key);
  if (cached) return [...cached];
  const bytes = await readFile(io, manifest.path, 'manifest');
  const entries = readManifest(bytes, manifest).entries;
  if (key !== undefined) manifestEntries.set(key, entries);
  return [...entries];
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
