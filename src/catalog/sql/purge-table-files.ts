/**
 * Deleting a dropped table's files, as Java's `CatalogUtil.dropTableData` does for pointer-based
 * catalogs: every file the metadata reaches — content files named in the manifests (data and delete
 * files), the manifests, the manifest lists, statistics files, the previous metadata files of the
 * metadata-log and the current metadata file. Not "everything under the location": with a pointer
 * catalog several tables may share a directory (a renamed table keeps its location, and a new table
 * of the old name gets the same default location), and files outside any metadata are not the
 * table's to delete.
 *
 * Best effort, like Java: a file that cannot be read or deleted is reported through `warn` and the
 * purge goes on; the catalog entry is already gone when this runs.
 */
import type { FileIO } from '../../io/file-io.js';
import { readManifest } from '../../iceberg/manifest/manifest.js';
import { readManifestList } from '../../iceberg/manifest/manifest-list.js';
import type { TableMetadata } from '../../iceberg/spec/table-metadata.js';
import { errorMessage, isFloeError } from '../../util/errors.js';
import { mapConcurrently } from '../../util/concurrent.js';

const DELETE_CONCURRENCY = 8;

async function readOrWarn(io: FileIO, location: string, warn: (m: string) => void): Promise<Uint8Array | undefined> {
  try {
    return await io.read(location);
  } catch (e) {
    if (!isFloeError(e, 'not-found')) warn(`purge: cannot read ${location}: ${errorMessage(e)}; files it lists are kept`);
    return undefined;
  }
}

/** Every file the metadata reaches, in deletion order (content files first, metadata last). */
async function reachableFiles(io: FileIO, metadata: TableMetadata, metadataLocation: string, warn: (m: string) => void): Promise<string[]> {
  const content = new Set<string>();
  const manifests = new Set<string>();
  const manifestLists = new Set<string>();
  for (const snapshot of metadata.snapshots) manifestLists.add(snapshot.manifestList);
  for (const listLocation of manifestLists) {
    const bytes = await readOrWarn(io, listLocation, warn);
    if (bytes === undefined) continue;
    try {
      for (const m of readManifestList(bytes, listLocation).manifests) manifests.add(m.path);
    } catch (e) {
      warn(`purge: cannot decode manifest list ${listLocation}: ${errorMessage(e)}`);
    }
  }
  for (const manifestLocation of manifests) {
    const bytes = await readOrWarn(io, manifestLocation, warn);
    if (bytes === undefined) continue;
    try {
      for (const entry of readManifest(bytes).entries) content.add(entry.dataFile.filePath);
    } catch (e) {
      warn(`purge: cannot decode manifest ${manifestLocation}: ${errorMessage(e)}`);
    }
  }
  const statistics = [...(metadata.statistics ?? []), ...(metadata.partitionStatistics ?? [])]
    .map((s) => (s as { statisticsPath?: unknown; 'statistics-path'?: unknown }))
    .map((s) => s.statisticsPath ?? s['statistics-path'])
    .filter((p): p is string => typeof p === 'string');
  const metadataFiles = [...metadata.metadataLog.map((e) => e.metadataFile), metadataLocation];
  return [...content, ...manifests, ...manifestLists, ...statistics, ...metadataFiles];
}

export async function purgeTableFiles(io: FileIO, metadata: TableMetadata, metadataLocation: string, warn: (m: string) => void): Promise<void> {
  const files = await reachableFiles(io, metadata, metadataLocation, warn);
  await mapConcurrently(files, DELETE_CONCURRENCY, async (location) => {
    try {
      await io.delete(location);
    } catch (e) {
      warn(`purge: cannot delete ${location}: ${errorMessage(e)}`);
    }
  });
}
