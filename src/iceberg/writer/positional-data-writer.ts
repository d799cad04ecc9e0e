/**
 * Rolling data-file writer for one partition that tells, for every row it accepts, which file and
 * which row position the row will have — what a position delete or deletion vector needs to remove
 * that row later in the same checkpoint (Java `BaseEqualityDeltaWriter.insertedRowMap` keeps the same
 * `PathOffset`). Unlike `RollingParquetWriter`, the path of a file is fixed when the file is opened,
 * so a position is known before the file is finished.
 *
 * Files are rolled at a target size, checked every `sizeCheckRows` rows (Java `RollingFileWriter`
 * checks every 1000); each finished file is written through the FileIO at once, so memory holds at
 * most one file per open partition. Files are not visible to readers until a commit references them.
 */
import type { FileIO } from '../../io/file-io.js';
import { FloeError } from '../../util/errors.js';
import type { Row, Value } from '../../model/values.js';
import type { DataFile } from '../spec/data-file.js';
import { ParquetFileWriter } from '../parquet/file-writer.js';
import { type ParquetFileResult, type ParquetWriterOptions } from '../parquet/file-writer-options.js';
import type { LocationProvider } from '../parquet/rolling-writer.js';
import { PositionBitmap } from '../puffin/position-bitmap.js';
import type { Schema } from '../spec/schema.js';

const SUBSYSTEM = 'iceberg.writer';

/** One data file written in this checkpoint, open or finished, with the positions deleted from it. */
export class DataFileHandle {
  /** Set when the file is finished. */
  dataFile: DataFile | undefined;
  /** Rows of this file removed later in the same checkpoint. */
  deleted: PositionBitmap | undefined;
  recordCount = 0;
  /** The file's index in its table writer's list of files rows went to (-1: none yet); the table writer's own. */
  rowFileIndex = -1;

  constructor(
    readonly path: string,
    readonly specId: number,
    readonly partition: readonly Value[],
    readonly partitionPath: string,
  ) {}

  deletePosition(pos: number): void {
    (this.deleted ??= new PositionBitmap()).add(pos);
  }

  get deletedCount(): number {
    return this.deleted ? Number(this.deleted.cardinality) : 0;
  }
}

export interface RowLocation {
  file: DataFileHandle;
  pos: number;
}

export interface PositionalDataWriterOptions {
  io: FileIO;
  locations: LocationProvider;
  specId: number;
  partition: readonly Value[];
  partitionPath: string;
  /** File names are `<prefix>-<00001>.parquet`. */
  fileNamePrefix: string;
  targetFileSizeBytes: number;
  /** Rows between size checks (default 1000, as Java). */
  sizeCheckRows?: number;
  sortOrderId?: number;
  parquet?: ParquetWriterOptions;
  /** `ParquetWriterOptions.stageRows` of its files (a partitioned table's writer sets it). */
  stageRows?: number;
}

export class PositionalDataWriter {
  private current: ParquetFileWriter | undefined;
  private currentHandle: DataFileHandle | undefined;
  private fileCount = 0;
  private ratio: number | undefined;
  private closed = false;
  private readonly sizeCheckRows: number;
  /** Every file finished (written to storage), in order. */
  readonly files: DataFileHandle[] = [];

  constructor(
    readonly schema: Schema,
    private readonly options: PositionalDataWriterOptions,
  ) {
    if (!Number.isInteger(options.targetFileSizeBytes) || options.targetFileSizeBytes <= 0) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `targetFileSizeBytes must be a positive integer, found ${options.targetFileSizeBytes}`);
    }
    this.sizeCheckRows = Math.max(1, options.sizeCheckRows ?? 1000);
  }

  /** Appends one row; returns where it will be. */
  async write(row: Row): Promise<RowLocation> {
    return this.writeOne(row);
  }

  /**
   * `write` without a promise per row: the location at once, or a promise of it when the row made a
   * batch go to the encoder or the file roll (await it before the next call).
   */
  writeOne(row: Row): RowLocation | Promise<RowLocation> {
    if (this.closed) throw new FloeError(SUBSYSTEM, 'internal', 'data writer used after close or abort');
    const writer = this.open();
    const file = this.currentHandle!;
    const pos = file.recordCount;
    const sent = writer.appendOne(row);
    if (sent) return sent.then(() => this.written(writer, file, pos));
    return this.written(writer, file, pos);
  }

  private written(writer: ParquetFileWriter, file: DataFileHandle, pos: number): RowLocation | Promise<RowLocation> {
    file.recordCount++;
    if (file.recordCount % this.sizeCheckRows === 0 && writer.estimatedSize() >= this.options.targetFileSizeBytes) {
      return this.roll().then(() => ({ file, pos }));
    }
    return { file, pos };
  }

  /** Rows of the open file not yet handed to its encoder, and their Arrow bytes. */
  get bufferedRows(): number {
    return this.current?.bufferedRows ?? 0;
  }

  bufferedBytes(): number {
    return this.current?.bufferedBytes() ?? 0;
  }

  /** Hands the open file's buffered rows to its encoder (the file stays open). */
  async flush(): Promise<void> {
    await this.current?.flush();
  }

  /**
   * Finishes the open file now (written to storage); the next row starts a new file. Positions
   * already handed out stay valid.
   */
  async finishFile(): Promise<void> {
    if (this.closed) throw new FloeError(SUBSYSTEM, 'internal', 'data writer used after close or abort');
    await this.roll();
  }

  private open(): ParquetFileWriter {
    if (!this.current) {
      const o = this.options;
      this.current = new ParquetFileWriter(this.schema, { ...o.parquet, expectedCompressionRatio: this.ratio ?? o.parquet?.expectedCompressionRatio, stageRows: o.stageRows ?? o.parquet?.stageRows });
      this.fileCount++;
      const name = `${o.fileNamePrefix}-${String(this.fileCount).padStart(5, '0')}.parquet`;
      this.currentHandle = new DataFileHandle(o.locations.newDataLocation(name, o.partitionPath), o.specId, [...o.partition], o.partitionPath);
    }
    return this.current;
  }

  private async roll(): Promise<void> {
    const writer = this.current;
    const handle = this.currentHandle;
    this.current = undefined;
    this.currentHandle = undefined;
    if (!writer || !handle) return;
    if (handle.recordCount === 0) {
      await writer.abort();
      return;
    }
    const result = await writer.close();
    this.ratio = result.arrowBytes > 0 ? Number(result.fileSizeInBytes) / result.arrowBytes : undefined;
    await this.options.io.write(handle.path, result.bytes);
    handle.dataFile = this.describe(handle, result);
    this.files.push(handle);
  }

  private describe(handle: DataFileHandle, r: ParquetFileResult): DataFile {
    const m = r.metrics;
    const file: DataFile = {
      content: 'data',
      filePath: handle.path,
      fileFormat: 'PARQUET',
      specId: handle.specId,
      partition: [...handle.partition],
      recordCount: r.recordCount,
      fileSizeInBytes: r.fileSizeInBytes,
      columnSizes: m.columnSizes,
      valueCounts: m.valueCounts,
      nullValueCounts: m.nullValueCounts,
      nanValueCounts: m.nanValueCounts,
      lowerBounds: m.lowerBounds,
      upperBounds: m.upperBounds,
      splitOffsets: r.splitOffsets,
    };
    if (this.options.sortOrderId !== undefined) file.sortOrderId = this.options.sortOrderId;
    return file;
  }

  /** Finishes the open file; returns every file written. */
  async close(): Promise<DataFileHandle[]> {
    if (this.closed) throw new FloeError(SUBSYSTEM, 'internal', 'data writer closed twice');
    this.closed = true;
    await this.roll();
    return this.files;
  }

  /** Abandons the open file (finished files stay; the caller decides whether they may be deleted). */
  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.current?.abort();
    this.current = undefined;
    this.currentHandle = undefined;
  }
}
