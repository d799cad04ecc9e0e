/**
 * The position-delete / deletion-vector sink of one table's checkpoint (iceberg-rust `DeltaWriter`'s
 * position-delete writer; docs/iceberg-writer-checklist.md §4.3–4.5): the rows this checkpoint
 * removes by position, and at prepare the files that say so (position-delete-writers.ts: v2
 * position-delete files, v3 deletion vectors).
 *
 * Two kinds of target: rows written earlier in this checkpoint (their positions collect on their
 * `DataFileHandle`), and — deletion-vector upserts, format v3 — rows committed earlier, located
 * through the key index (collected here per data file).
 */
import type { FileIO } from '../../io/file-io.js';
import type { DataFile } from '../spec/data-file.js';
import type { ParquetWriterOptions } from '../parquet/file-writer-options.js';
import type { LocationProvider } from '../parquet/rolling-writer.js';
import { PositionBitmap } from '../puffin/position-bitmap.js';
import type { IndexedRow } from '../keyindex/key-index.js';
import type { DataFileHandle, RowLocation } from './positional-data-writer.js';
import { writeCheckpointPositionDeletes, type ExistingDeletes, type PositionDeleteTarget } from './position-delete-writers.js';
import type { WriterStats } from './writer-stats.js';

export interface PositionDeleteSinkOptions {
  io: FileIO;
  formatVersion: number;
  locations: LocationProvider;
  /** Unique tag of the table writer (file names). */
  tag: string;
  targetFileSizeBytes: number;
  parquet?: ParquetWriterOptions;
}

export class PositionDeleteSink {
  /** DV mode: data files committed earlier → the positions this checkpoint deletes in them. */
  private readonly committed = new Map<string, { file: DataFile; positions: PositionBitmap }>();

  constructor(
    private readonly stats: WriterStats,
    private readonly options: PositionDeleteSinkOptions,
  ) {}

  /** Removes a row written in this checkpoint (nothing when a matching delete already removed it). */
  deleteAt(loc: RowLocation): void {
    if (loc.file.deletePosition(loc.pos)) this.stats.positionDeletes++;
  }

  /** DV mode: removes a row committed earlier; whether it was not removed already. */
  deleteCommitted(at: IndexedRow): boolean {
    return this.deleteCommittedAt(at.file, at.pos);
  }

  /** `deleteCommitted` of the row at `pos` of `file`. */
  deleteCommittedAt(file: DataFile, pos: number): boolean {
    // the last target is the likely one: a checkpoint's deletes land in a few large files
    let target = this.lastTarget;
    if (target?.file !== file) {
      target = this.committed.get(file.filePath);
      if (!target) this.committed.set(file.filePath, (target = { file, positions: new PositionBitmap() }));
      this.lastTarget = target;
    }
    if (!target.positions.addIfAbsent(pos)) return false;
    this.stats.positionDeletes++;
    return true;
  }

  private lastTarget: { file: DataFile; positions: PositionBitmap } | undefined;

  /** DV mode: whether this checkpoint removed the committed row at `pos` of `file` already. */
  removedCommitted(file: DataFile, pos: number): boolean {
    return this.committed.get(file.filePath)?.positions.has(pos) ?? false;
  }

  /** DV mode: the data files committed earlier whose rows this checkpoint deletes so far. */
  committedTargetPaths(): string[] {
    return [...this.committed.keys()];
  }

  /** The committed rows deleted, per data file. */
  committedTargets(): PositionDeleteTarget[] {
    return [...this.committed.values()].map((t) => ({ dataFilePath: t.file.filePath, specId: t.file.specId, partition: t.file.partition, positions: t.positions }));
  }

  /**
   * Writes the position deletes of `files` (this checkpoint's data files) and of `committedTargets`
   * (tag suffix: a relocation's files get names of their own); paths go to `written` at once.
   */
  write(args: {
    files: readonly DataFileHandle[];
    committedTargets: readonly PositionDeleteTarget[];
    existing: ReadonlyMap<string, ExistingDeletes> | undefined;
    written: string[];
    tagSuffix?: string;
  }): Promise<{ deleteFiles: DataFile[]; removed: DataFile[] }> {
    const o = this.options;
    return writeCheckpointPositionDeletes({
      io: o.io,
      formatVersion: o.formatVersion,
      locations: o.locations,
      tag: `${o.tag}${args.tagSuffix ?? ''}`,
      files: args.files,
      committedTargets: args.committedTargets,
      existing: args.existing,
      targetFileSizeBytes: o.targetFileSizeBytes,
      parquet: o.parquet,
      written: args.written,
    });
  }

  clear(): void {
    this.committed.clear();
    this.lastTarget = undefined;
  }
}
