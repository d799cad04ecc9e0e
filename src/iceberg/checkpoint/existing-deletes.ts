/**
 * The deletes a table already holds for given data files, in the form a new deletion vector must
 * absorb (spec "Deletion Vectors": at most one DV per data file per snapshot; a writer adding one
 * merges the previous DV and any position deletes of that file and removes the old DV entry).
 *
 * Reads the current snapshot's delete manifests: live DVs referencing a target file are read and
 * replaced; Parquet position-delete files scoped to exactly one target (`referenced_data_file`, as
 * written before a v2→v3 upgrade) are read and replaced too. Position-delete files covering several
 * data files stay: once a DV exists, readers ignore position-delete files for that data file (spec
 * "Scan Planning"), so their positions for the target are merged and the file is left for compaction.
 *
 * floe's deletion-vector upserts need this for every committed data file a checkpoint deletes rows
 * of (table-committer.ts; such a file has a DV from an earlier checkpoint more often than not), and
 * again for the files found when the deletes are located anew (dv-replan.ts).
 */
import { FloeError } from '../../util/errors.js';
import type { DataFile } from '../spec/data-file.js';
import { DELETE_FILE_PATH_ID, DELETE_FILE_POS_ID, POSITION_DELETE_SCHEMA } from '../parquet/delete-schemas.js';
import { readParquetRows } from '../parquet/reader.js';
import { PositionBitmap } from '../puffin/position-bitmap.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { CatalogTable } from '../table/index.js';
import { ManifestReads } from '../table/manifest-reads.js';
import { readExistingDeletionVectors, type ExistingDeletes } from '../writer/position-delete-writers.js';

/**
 * `reads`: the commit's (manifest-reads.ts), so that the head's manifest list and delete manifests
 * read here are not read again by the commit that carries them over.
 */
export async function findExistingDeletes(table: Pick<CatalogTable, 'io' | 'metadata'>, dataFilePaths: Iterable<string>, reads = new ManifestReads(table.io)): Promise<Map<string, ExistingDeletes>> {
  const targets = new Set(dataFilePaths);
  const out = new Map<string, ExistingDeletes>();
  const snapshot = currentSnapshot(table.metadata);
  if (!snapshot || targets.size === 0) return out;
  const entry = (path: string): ExistingDeletes => {
    let e = out.get(path);
    if (!e) {
      e = { positions: new PositionBitmap(), replaces: [] };
      out.set(path, e);
    }
    return e;
  };
  const multiFile: DataFile[] = [];
  const dvs: DataFile[] = [];
  for (const manifest of await reads.manifestsOf(snapshot)) {
    if (manifest.content !== 'deletes') continue;
    for (const e of await reads.entriesOf(manifest)) {
      const f = e.dataFile;
      if (e.status === 'deleted' || f.content !== 'position-deletes') continue;
      if (f.fileFormat === 'PUFFIN') {
        if (!f.referencedDataFile || !targets.has(f.referencedDataFile)) continue;
        const existing = entry(f.referencedDataFile);
        if (existing.replaces.some((r) => r.fileFormat === 'PUFFIN')) {
          throw new FloeError('iceberg.writer', 'invalid-data', `table ${table.metadata.location} has two live deletion vectors for ${f.referencedDataFile}; the spec allows one per data file`);
        }
        dvs.push(f);
        existing.replaces.push(f);
      } else if (f.referencedDataFile !== undefined) {
        if (!targets.has(f.referencedDataFile)) continue;
        const existing = entry(f.referencedDataFile);
        existing.positions = existing.positions.union(await positionsIn(table, f, f.referencedDataFile));
        existing.replaces.push(f);
      } else {
        multiFile.push(f);
      }
    }
  }
  const dvPositions = await readExistingDeletionVectors(table.io, dvs);
  dvs.forEach((f, i) => {
    const existing = entry(f.referencedDataFile!);
    existing.positions = existing.positions.union(dvPositions[i]!);
  });
  for (const f of multiFile) {
    for (const path of targets) {
      const positions = await positionsIn(table, f, path);
      if (!positions.isEmpty) entry(path).positions = entry(path).positions.union(positions);
    }
  }
  return out;
}

async function positionsIn(table: Pick<CatalogTable, 'io'>, deleteFile: DataFile, dataFilePath: string): Promise<PositionBitmap> {
  const rows = await readParquetRows({ io: table.io, path: deleteFile.filePath }, { projection: POSITION_DELETE_SCHEMA });
  const out = new PositionBitmap();
  const pathIndex = POSITION_DELETE_SCHEMA.indexOfTopLevel(DELETE_FILE_PATH_ID);
  const posIndex = POSITION_DELETE_SCHEMA.indexOfTopLevel(DELETE_FILE_POS_ID);
  for (const r of rows) if (r[pathIndex] === dataFilePath) out.add(r[posIndex] as bigint);
  return out;
}
