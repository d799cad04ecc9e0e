/**
 * Rolling data-file writer for one partition that tells, for every row it accepts, which file and
 * which row position the row will have — what a position delete or deletion vector needs to remove
 * that row later in the same checkpoint (Java `BaseEqualityDeltaWriter.insertedRowMap` keeps the same
 * `PathOffset`). The rolling itself — files rolled at a target size, checked every `sizeCheckRows`
 * rows (Java `RollingFileWriter` checks every 1000), each finished file written through the FileIO
 * at once and described as a `DataFile` — is `RollingParquetWriter`'s (parquet/rolling-writer.ts);
 * this layer keeps a `DataFileHandle` per file, which collects the positions deleted from it. Memory
 * holds at most one file per open partition. Files are not visible to readers until a commit
 * references them.
 */
import type { FileIO } from '../../io/file-io.js';
import { FloeError } from '../../util/errors.js';
import type { Row, Value } from '../../model/values.js';
import type { DataFile } from '../spec/data-file.js';
import { DEFAULT_ROW_GROUP_BYTES, type ParquetWriterOptions } from '../parquet/file-writer-options.js';
import { RollingParquetWriter, type LocationProvider } from '../parquet/rolling-writer.js';
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

  /** Whether the row at `pos` was not deleted already. */
  deletePosition(pos: number): boolean {
    return (this.deleted ??= new PositionBitmap()).addIfAbsent(pos);
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
  private readonly rolling: RollingParquetWriter;
  private currentHandle: DataFileHandle | undefined;
  private closed = false;
  /** Every file finished (written to storage), in order. */
  readonly files: DataFileHandle[] = [];

  constructor(
    readonly schema: Schema,
    options: PositionalDataWriterOptions,
  ) {
    if (!Number.isInteger(options.targetFileSizeBytes) || options.targetFileSizeBytes <= 0) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `targetFileSizeBytes must be a positive integer, found ${options.targetFileSizeBytes}`);
    }
    const o = options;
    this.rolling = new RollingParquetWriter(schema, {
      ...o.parquet,
      // the file writer's own default, not the rolling writer's quarter of the target
      rowGroupBytes: o.parquet?.rowGroupBytes ?? DEFAULT_ROW_GROUP_BYTES,
      stageRows: o.stageRows ?? o.parquet?.stageRows,
      io: o.io,
      locations: o.locations,
      content: 'data',
      specId: o.specId,
      partition: [...o.partition],
      partitionPath: o.partitionPath,
      sortOrderId: o.sortOrderId,
      targetFileSizeBytes: o.targetFileSizeBytes,
      fileNamePrefix: o.fileNamePrefix,
      sizeCheckRows: o.sizeCheckRows,
      onFileOpened: (path) => {
        this.currentHandle = new DataFileHandle(path, o.specId, [...o.partition], o.partitionPath);
      },
      onFileWritten: (file) => {
        const handle = this.currentHandle!;
        handle.dataFile = file;
        this.files.push(handle);
      },
    });
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
    const pos = this.rolling.writeOne(row);
    // the handle of the row's file: a roll begins the next file only with the next row
    if (typeof pos === 'number') return this.located(pos);
    return pos.then((p) => this.located(p));
  }

  private located(pos: number): RowLocation {
    const file = this.currentHandle!;
    file.recordCount++;
    return { file, pos };
  }

  /** Rows of the open file not yet handed to its encoder, and their Arrow bytes. */
  get bufferedRows(): number {
    return this.rolling.bufferedRows;
  }

  bufferedBytes(): number {
    return this.rolling.bufferedBytes();
  }

  /** Hands the open file's buffered rows to its encoder (the file stays open). */
  async flush(): Promise<void> {
    await this.rolling.flush();
  }

  /**
   * Finishes the open file now (written to storage); the next row starts a new file. Positions
   * already handed out stay valid.
   */
  async finishFile(): Promise<void> {
    if (this.closed) throw new FloeError(SUBSYSTEM, 'internal', 'data writer used after close or abort');
    await this.rolling.finishFile();
  }

  /** Finishes the open file; returns every file written. */
  async close(): Promise<DataFileHandle[]> {
    if (this.closed) throw new FloeError(SUBSYSTEM, 'internal', 'data writer closed twice');
    this.closed = true;
    await this.rolling.close();
    return this.files;
  }

  /** Abandons the open file (finished files stay; the caller decides whether they may be deleted). */
  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.rolling.abandon();
    this.currentHandle = undefined;
  }
}
