/**
 * Removing rows written earlier in the same checkpoint, by position (format/spec.md "Position Delete
 * Files", "Deletion Vectors"; docs/iceberg-writer-checklist.md §4.3–4.5). An equality delete cannot do it: equality deletes
 * apply only to data with a strictly lower sequence number, and the data and deletes of one commit
 * share one.
 *
 * - Format v2: one position-delete Parquet file per partition (`file_path`, `pos`, sorted by path then
 *   position, no `row` column), in the partition of the data files it targets.
 * - Format v3: deletion vectors — one `deletion-vector-v1` blob per data file, all in one Puffin file
 *   per commit (as Java's `BaseDVFileWriter`), each manifest entry in its data file's partition. v3
 *   forbids new position-delete files (spec "Version 3"), so this path never writes one.
 *
 * At most one DV may exist per data file per snapshot: when the data file already has a DV in the
 * table (or file-scoped v2 position deletes from before an upgrade), the new DV is the union of old
 * and new positions and the old entries are returned as `removed`, to be marked DELETED in the new
 * delete manifest (spec "Deletion Vectors"; Java `BaseDVFileWriter` + `RowDelta.removeDeletes`).
 */
import type { FileIO } from '../../io/file-io.js';
import { mapConcurrently } from '../../util/concurrent.js';
import { FloeError } from '../../util/errors.js';
import type { Value } from '../../model/values.js';
import type { DataFile } from '../spec/data-file.js';
import { POSITION_DELETE_KEY_VALUE, POSITION_DELETE_SCHEMA, positionDeleteMetricsConfig, positionDeleteRows, type PositionDelete } from '../parquet/delete-schemas.js';
import type { ParquetWriterOptions } from '../parquet/file-writer-options.js';
import { RollingParquetWriter, type LocationProvider } from '../parquet/rolling-writer.js';
import { deletionVectorFile, readDeletionVector, writeDeletionVectorPuffin } from '../puffin/deletion-vector-file.js';
import { PositionBitmap } from '../puffin/position-bitmap.js';
import type { DataFileHandle } from './positional-data-writer.js';

const SUBSYSTEM = 'iceberg.writer';

/** Deleted positions of one data file. */
export interface PositionDeleteTarget {
  dataFilePath: string;
  specId: number;
  partition: readonly Value[];
  positions: PositionBitmap;
}

/** Deletes already in the table for a data file, which a new DV must absorb and replace. */
export interface ExistingDeletes {
  positions: PositionBitmap;
  /** The DV (or file-scoped position-delete) entries to mark DELETED. */
  replaces: DataFile[];
}

export interface WrittenDeletes {
  deleteFiles: DataFile[];
  removed: DataFile[];
  /** Objects written (for cleanup when the commit does not happen). */
  paths: string[];
}

/** v2: position-delete files, one group of targets (one partition) per call. */
async function writePositionDeleteFile(args: {
  io: FileIO;
  locations: LocationProvider;
  partitionPath: string;
  fileNamePrefix: string;
  targets: readonly PositionDeleteTarget[];
  targetFileSizeBytes?: number;
  parquet?: ParquetWriterOptions;
}): Promise<WrittenDeletes> {
  const { targets } = args;
  if (targets.length === 0) return { deleteFiles: [], removed: [], paths: [] };
  const { specId, partition } = targets[0]!;
  for (const t of targets) {
    if (t.specId !== specId || t.partition.length !== partition.length) {
      throw new FloeError(SUBSYSTEM, 'internal', `position deletes of one file must target one partition; ${t.dataFilePath} has spec ${t.specId}, expected ${specId}`);
    }
  }
  const deletes: PositionDelete[] = [];
  for (const t of targets) for (const pos of t.positions.positions()) deletes.push({ filePath: t.dataFilePath, pos });
  const writer = new RollingParquetWriter(POSITION_DELETE_SCHEMA, {
    ...args.parquet,
    io: args.io,
    locations: args.locations,
    content: 'position-deletes',
    specId,
    partition: [...partition],
    partitionPath: args.partitionPath,
    metrics: positionDeleteMetricsConfig(),
    keyValueMetadata: { ...args.parquet?.keyValueMetadata, ...POSITION_DELETE_KEY_VALUE },
    targetFileSizeBytes: args.targetFileSizeBytes,
    fileNamePrefix: args.fileNamePrefix,
  });
  try {
    await writer.write(positionDeleteRows(deletes));
    const files = await writer.close();
    return { deleteFiles: files, removed: [], paths: files.map((f) => f.filePath) };
  } catch (e) {
    await writer.abort();
    throw e;
  }
}

/** v3: one Puffin file with a DV per target, merged with the data file's existing deletes. */
export async function writeDeletionVectors(args: {
  io: FileIO;
  /** Absolute URI of the Puffin file to create. */
  puffinPath: string;
  targets: readonly PositionDeleteTarget[];
  existing?: ReadonlyMap<string, ExistingDeletes>;
}): Promise<WrittenDeletes> {
  const live = args.targets.filter((t) => !t.positions.isEmpty);
  if (live.length === 0) return { deleteFiles: [], removed: [], paths: [] };
  const removed: DataFile[] = [];
  const inputs = live.map((t) => {
    const prior = args.existing?.get(t.dataFilePath);
    if (!prior) return { referencedDataFile: t.dataFilePath, positions: t.positions };
    removed.push(...prior.replaces);
    return { referencedDataFile: t.dataFilePath, positions: t.positions.union(prior.positions) };
  });
  const puffin = writeDeletionVectorPuffin(inputs);
  await args.io.write(args.puffinPath, puffin.bytes);
  const deleteFiles = puffin.vectors.map((vector, i) =>
    deletionVectorFile({ puffinPath: args.puffinPath, fileSizeInBytes: puffin.fileSizeInBytes, vector, specId: live[i]!.specId, partition: [...live[i]!.partition] }),
  );
  return { deleteFiles, removed, paths: [args.puffinPath] };
}

/** Puffin files read at once by `readExistingDeletionVectors`. */
const DV_FILES_AT_ONCE = 8;
/** A Puffin file's wanted DVs are read in one range when it is at most this long, or at most twice their size. */
const DV_SPAN_BYTES = 1 << 20;

/**
 * The positions of existing DV entries (each read and checked against its record_count), in the
 * order given. A checkpoint writes the DVs of all the files it touched into one Puffin file, so the
 * DVs a commit replaces come from a few files: each is opened once, read in one range where its
 * wanted blobs lie close together, and the files are read concurrently, not one after the other.
 */
export async function readExistingDeletionVectors(io: FileIO, dvs: readonly DataFile[]): Promise<PositionBitmap[]> {
  const byFile = new Map<string, { index: number; start: number; end: number }[]>();
  dvs.forEach((dv, index) => {
    if (dv.fileFormat !== 'PUFFIN' || dv.contentOffset === undefined || dv.contentSizeInBytes === undefined) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `${dv.filePath} is not a deletion vector entry (format ${dv.fileFormat}, content offset ${dv.contentOffset})`);
    }
    const start = Number(dv.contentOffset);
    const blob = { index, start, end: start + Number(dv.contentSizeInBytes) };
    const blobs = byFile.get(dv.filePath);
    if (blobs) blobs.push(blob);
    else byFile.set(dv.filePath, [blob]);
  });
  const out = new Array<PositionBitmap>(dvs.length);
  const decode = (bytes: Uint8Array, at: number, blob: { index: number; start: number; end: number }) => {
    const dv = dvs[blob.index]!;
    out[blob.index] = readDeletionVector(bytes, at, blob.end - blob.start, { expectedCardinality: dv.recordCount, what: `DV of ${dv.referencedDataFile} in ${dv.filePath}` });
  };
  await mapConcurrently([...byFile], DV_FILES_AT_ONCE, async ([path, blobs]) => {
    let lo = Infinity;
    let hi = 0;
    let wanted = 0;
    for (const b of blobs) {
      lo = Math.min(lo, b.start);
      hi = Math.max(hi, b.end);
      wanted += b.end - b.start;
    }
    if (hi - lo <= Math.max(DV_SPAN_BYTES, 2 * wanted)) {
      const bytes = await io.readRange(path, lo, hi);
      for (const b of blobs) decode(bytes, b.start - lo, b);
    } else {
      for (const b of blobs) decode(await io.readRange(path, b.start, b.end), 0, b);
    }
  });
  return out;
}

/**
 * The position deletes of one checkpoint's data files (those with deleted positions): v3 → one Puffin
 * file of DVs; v2 → one position-delete file per partition. Paths are pushed to `written` as soon as
 * they exist, so that a failure part-way can still remove them.
 */
export async function writeCheckpointPositionDeletes(args: {
  io: FileIO;
  formatVersion: number;
  locations: LocationProvider;
  /** Unique tag of the writer (file names). */
  tag: string;
  files: readonly DataFileHandle[];
  /**
   * v3 only: positions to delete in data files committed earlier (deletion-vector upserts, located
   * through the key index); merged with `existing` deletes of those files like any other target.
   */
  committedTargets?: readonly PositionDeleteTarget[];
  existing?: ReadonlyMap<string, ExistingDeletes>;
  targetFileSizeBytes?: number;
  parquet?: ParquetWriterOptions;
  written: string[];
}): Promise<{ deleteFiles: DataFile[]; removed: DataFile[] }> {
  const byPartition = new Map<string, PositionDeleteTarget[]>();
  for (const h of args.files) {
    if (!h.deleted || h.deleted.isEmpty) continue;
    const t = { dataFilePath: h.path, specId: h.specId, partition: h.partition, positions: h.deleted };
    const group = byPartition.get(h.partitionPath);
    if (group) group.push(t);
    else byPartition.set(h.partitionPath, [t]);
  }
  const committed = (args.committedTargets ?? []).filter((t) => !t.positions.isEmpty);
  if (committed.length > 0 && args.formatVersion < 3) {
    throw new FloeError(SUBSYSTEM, 'internal', `deletes of committed rows by position are for format v3 (deletion vectors); this table is v${args.formatVersion}`);
  }
  if (byPartition.size === 0 && committed.length === 0) return { deleteFiles: [], removed: [] };
  if (args.formatVersion >= 3) {
    // v3: deletion vectors only; a v3 table must never receive a position-delete file.
    const dvs = await writeDeletionVectors({
      io: args.io,
      puffinPath: args.locations.newDataLocation(`dv-${args.tag}.puffin`, ''),
      targets: [...[...byPartition.values()].flat(), ...committed],
      existing: args.existing,
    });
    args.written.push(...dvs.paths);
    return { deleteFiles: dvs.deleteFiles, removed: dvs.removed };
  }
  const deleteFiles: DataFile[] = [];
  let n = 0;
  for (const [partitionPath, group] of byPartition) {
    const pos = await writePositionDeleteFile({
      io: args.io,
      locations: args.locations,
      partitionPath,
      fileNamePrefix: `pos-${String(n++).padStart(5, '0')}-${args.tag}`,
      targets: group,
      targetFileSizeBytes: args.targetFileSizeBytes,
      parquet: args.parquet,
    });
    args.written.push(...pos.paths);
    deleteFiles.push(...pos.deleteFiles);
  }
  return { deleteFiles, removed: [] };
}
