/**
 * Scan planning (spec "Scan Planning"): the live data files of a snapshot, each with the delete files
 * that apply to it. Reads the snapshot's manifest list and every manifest with sequence-number and
 * first-row-id inheritance; DELETED entries are not live.
 *
 * The rows are projected to the current schema when scanning the current snapshot (Java
 * `table.newScan()`), and to the snapshot's own schema when a snapshot id is given (Java time travel,
 * `useSnapshot`).
 */
import type { FileIO } from '../../io/file-io.js';
import { mapConcurrently } from '../../util/concurrent.js';
import { FloeError } from '../../util/errors.js';
import type { DataFile } from '../spec/data-file.js';
import type { Schema } from '../spec/schema.js';
import { snapshotById } from '../spec/snapshot-ids.js';
import type { Snapshot, TableMetadata } from '../spec/table-metadata.js';
import { readManifestEntries, readSnapshotManifests } from '../table/manifest-io.js';
import { DeleteIndex, type DataFileDeletes } from './delete-index.js';

export interface FileScanTask {
  file: DataFile;
  /** The data file's data sequence number. */
  sequenceNumber: bigint;
  deletes: DataFileDeletes;
}

export interface ScanPlan {
  /** Undefined for a table without snapshots (no rows). */
  snapshot: Snapshot | undefined;
  /** The schema rows are read as. */
  schema: Schema;
  tasks: FileScanTask[];
}

export interface PlanOptions {
  /** A snapshot to read instead of the current one. */
  snapshotId?: bigint;
}

function schemaById(metadata: TableMetadata, id: number): Schema | undefined {
  return metadata.schemas.find((s) => s.schemaId === id);
}

/** Manifests read at once. */
const MANIFESTS_AT_ONCE = 8;

export async function planScan(io: FileIO, metadata: TableMetadata, options: PlanOptions = {}): Promise<ScanPlan> {
  const current = schemaById(metadata, metadata.currentSchemaId);
  if (!current) throw new FloeError('iceberg.scan', 'invalid-data', `table metadata has no current schema ${metadata.currentSchemaId}`);
  let snapshot: Snapshot | undefined;
  let schema = current;
  if (options.snapshotId !== undefined) {
    snapshot = snapshotById(metadata, options.snapshotId);
    if (!snapshot) {
      const known = metadata.snapshots.map((s) => String(s.snapshotId));
      throw new FloeError('iceberg.scan', 'not-found', `snapshot ${options.snapshotId} is not in the table (snapshots: ${known.length > 0 ? known.join(', ') : 'none'})`);
    }
    if (snapshot.schemaId !== undefined) schema = schemaById(metadata, snapshot.schemaId) ?? current;
  } else if (metadata.currentSnapshotId !== undefined) {
    snapshot = snapshotById(metadata, metadata.currentSnapshotId);
    if (!snapshot) throw new FloeError('iceberg.scan', 'invalid-data', `current snapshot ${metadata.currentSnapshotId} is not in the table's snapshots`);
  }
  if (!snapshot) return { snapshot, schema, tasks: [] };

  const index = new DeleteIndex(metadata.partitionSpecs, schema, metadata.schemas);
  const data: { file: DataFile; sequenceNumber: bigint }[] = [];
  const manifests = await readSnapshotManifests(io, snapshot);
  // read side by side, not one after another: beside a busy stream each read waits its turn on the thread
  const entries = await mapConcurrently(manifests, MANIFESTS_AT_ONCE, (manifest) => readManifestEntries(io, manifest));
  for (const [i, manifest] of manifests.entries()) {
    for (const entry of entries[i]!) {
      if (entry.status === 'deleted') continue;
      if (manifest.content === 'deletes') {
        index.add(entry);
      } else {
        if (entry.sequenceNumber === undefined) {
          throw new FloeError('iceberg.scan', 'invalid-data', `manifest ${manifest.path}: entry for ${entry.dataFile.filePath} has no data sequence number after inheritance`);
        }
        data.push({ file: entry.dataFile, sequenceNumber: entry.sequenceNumber });
      }
    }
  }
  const tasks = data.map((d) => ({ ...d, deletes: index.forDataFile(d.file, d.sequenceNumber) }));
  return { snapshot, schema, tasks };
}
