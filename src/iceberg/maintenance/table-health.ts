/**
 * How healthy a table is for its readers and for floe's own commits — what `floe status` shows
 * beside where the job stands, and `floe run` exports as gauges: data files and their average size
 * (many small files slow every scan), delete files by kind and the deleted rows they still carry
 * (each one is applied at read time until a compaction removes it; equality deletes are the costly
 * kind and the one PyIceberg cannot read), snapshots retained and the size of the metadata file
 * (rewritten at every commit), read from the current snapshot's manifests — and those manifests
 * themselves: every scan plan reads each one, so their count is what manifest rewriting
 * (rewrite-manifests.ts) keeps down.
 */
import type { FileIO } from '../../io/file-io.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import { readManifestEntries, readSnapshotManifests } from '../table/manifest-io.js';
import type { TableMetadata } from '../spec/table-metadata.js';

export interface TableHealth {
  dataFiles: number;
  dataBytes: bigint;
  /** Average data file size in bytes (0 without data files). */
  averageDataFileBytes: number;
  deleteFiles: { equality: number; position: number; deletionVectors: number };
  /** Rows that live delete files remove: equality-delete records and position deletes (DVs included). */
  deletedRows: { equality: bigint; position: bigint };
  snapshots: number;
  /** Manifests of the current snapshot, data and delete ones. */
  manifests: { data: number; deletes: number };
  metadataBytes?: number;
  /** When floe last expired snapshots (ISO-8601), from its `floe.maintenance.last-expiry-ms` stamp. */
  lastExpiry?: string;
}

export async function tableHealth(io: FileIO, metadata: TableMetadata, metadataLocation: string): Promise<TableHealth> {
  const h: TableHealth = {
    dataFiles: 0,
    dataBytes: 0n,
    averageDataFileBytes: 0,
    deleteFiles: { equality: 0, position: 0, deletionVectors: 0 },
    deletedRows: { equality: 0n, position: 0n },
    snapshots: metadata.snapshots.length,
    manifests: { data: 0, deletes: 0 },
  };
  const current = currentSnapshot(metadata);
  if (current) {
    for (const mf of await readSnapshotManifests(io, current)) {
      h.manifests[mf.content]++;
      for (const e of await readManifestEntries(io, mf)) {
        if (e.status === 'deleted') continue;
        const f = e.dataFile;
        if (f.content === 'data') {
          h.dataFiles++;
          h.dataBytes += f.fileSizeInBytes;
        } else if (f.content === 'equality-deletes') {
          h.deleteFiles.equality++;
          h.deletedRows.equality += f.recordCount;
        } else {
          if (f.fileFormat === 'PUFFIN') h.deleteFiles.deletionVectors++;
          else h.deleteFiles.position++;
          h.deletedRows.position += f.recordCount;
        }
      }
    }
  }
  h.averageDataFileBytes = h.dataFiles > 0 ? Number(h.dataBytes / BigInt(h.dataFiles)) : 0;
  const expiredAt = Number(metadata.properties['floe.maintenance.last-expiry-ms']);
  if (Number.isFinite(expiredAt) && expiredAt > 0) h.lastExpiry = new Date(expiredAt).toISOString();
  h.metadataBytes = await io.size(metadataLocation);
  return h;
}
