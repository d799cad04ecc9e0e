/**
 * Every file a table's current metadata reaches — each retained snapshot's manifest list, its
 * manifests and their data and delete files (DV puffins included) — with whether it exists and, for
 * files the manifests record a size of, whether the object has exactly that size. Fault tests use it
 * to check that no commit ever references a missing or partial object.
 */
import type { CatalogTable } from '../../src/iceberg/table/index.js';
import { readManifestEntries, readSnapshotManifests } from '../../src/iceberg/table/manifest-io.js';

export interface ReferencedFile {
  path: string;
  exists: boolean;
  /** false when the manifest records a size the object does not have */
  sizeMatches: boolean;
}

export async function referencedFiles(table: Pick<CatalogTable, 'io' | 'metadata'>): Promise<ReferencedFile[]> {
  const { io, metadata } = table;
  const expected = new Map<string, bigint | undefined>();
  for (const s of metadata.snapshots) {
    expected.set(s.manifestList, undefined);
    for (const mf of await readSnapshotManifests(io, s)) {
      expected.set(mf.path, BigInt(mf.length));
      for (const e of await readManifestEntries(io, mf)) {
        if (e.status === 'deleted') continue; // a removed file may be gone; only live entries must exist
        expected.set(e.dataFile.filePath, BigInt(e.dataFile.fileSizeInBytes));
      }
    }
  }
  const out: ReferencedFile[] = [];
  for (const [path, size] of expected) {
    const actual = await io.size(path);
    out.push({ path, exists: actual !== undefined, sizeMatches: size === undefined || (actual !== undefined && BigInt(actual) === size) });
  }
  return out;
}
