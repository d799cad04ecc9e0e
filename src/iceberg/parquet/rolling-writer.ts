/**
 * Rolling Parquet writer: rows of one partition in, a sequence of Parquet files out, a new file begun
 * whenever the current one reaches the target size (Java `RollingFileWriter`, which checks every 1000
 * rows; `write.target-file-size-bytes`). Each finished file is written through the FileIO and
 * described as a `DataFile` ready for a manifest: content, path, format, partition tuple, record
 * count, exact size, column metrics and split offsets.
 *
 * Stacks like iceberg-rust's `RollingFileWriter → ParquetWriter`: the data, equality-delete and
 * position-delete writers above it differ only in schema, content and metrics config. It is the one
 * place a finished Parquet file becomes a `DataFile` record: the upsert writer's per-row data files
 * (writer/positional-data-writer.ts) roll through it too, with `writeOne` and the file hooks.
 *
 * Delivery note: files are written before any commit refers to them (`FileIO.writeUnpublished`:
 * fresh names, durable before the commit). A crash or an `abort` leaves them — whole or, after a
 * crash mid-write, partial — as orphans, never visible to readers; `abort` deletes what it wrote,
 * best effort.
 */
import { randomUUID } from 'node:crypto';
import { writeUnpublished, type FileIO } from '../../io/file-io.js';
import { FloeError } from '../../util/errors.js';
import type { Row, Value } from '../../model/values.js';
import type { DataFile, FileContent } from '../spec/data-file.js';
import type { Schema } from '../spec/schema.js';
import { DELETE_FILE_PATH_ID } from './delete-schemas.js';
import { ParquetFileWriter } from './file-writer.js';
import { DEFAULT_ROW_GROUP_BYTES, type ParquetFileResult, type ParquetWriterOptions } from './file-writer-options.js';

const SUBSYSTEM = 'iceberg.parquet';
const utf8 = new TextDecoder();

/** Where new files go (Java `LocationProvider`). */
export interface LocationProvider {
  /** Absolute URI of a new file named `fileName`, under the partition directory `partitionPath` ('' if none). */
  newDataLocation(fileName: string, partitionPath: string): string;
}

/** `<table location>/data/<partition path>/<file name>` (Java `DefaultLocationProvider`). */
export function defaultLocationProvider(tableLocation: string, dataDirectory = 'data'): LocationProvider {
  const root = `${tableLocation.replace(/\/+$/, '')}/${dataDirectory}`;
  return {
    newDataLocation(fileName: string, partitionPath: string): string {
      return partitionPath ? `${root}/${partitionPath}/${fileName}` : `${root}/${fileName}`;
    },
  };
}

const DEFAULT_TARGET_FILE_SIZE_BYTES = 128 * 1024 * 1024;
/** Java checks the size every 1000 rows (`RollingFileWriter.ROWS_DIVISOR`). */
const ROWS_PER_SIZE_CHECK = 1000;

export interface RollingWriterOptions extends ParquetWriterOptions {
  io: FileIO;
  locations: LocationProvider;
  /** Default 'data'. */
  content?: FileContent;
  /** Spec id and partition tuple of every file written (one writer per partition). */
  specId: number;
  partition: Value[];
  /** Partition directory, e.g. `name=b` (from the partition spec's path form); '' when unpartitioned. */
  partitionPath?: string;
  /** Required for equality deletes. */
  equalityIds?: number[];
  /** Sort order of data files (null for position deletes, per spec). */
  sortOrderId?: number;
  targetFileSizeBytes?: number;
  /** File names are `<prefix>-<00001>.parquet`; default `00000-0-<uuid>` (Java `OutputFileFactory`). */
  fileNamePrefix?: string;
  /** `writeOne`: rows between size checks (default 1000, as Java). */
  sizeCheckRows?: number;
  /** Called when a new file is begun, before its first row (its path is fixed from then on). */
  onFileOpened?: (path: string) => void;
  /** Called when a file is finished and written to storage, with its record. */
  onFileWritten?: (file: DataFile) => void;
}

/**
 * Where a run of written rows landed: rows `firstPosition … firstPosition + rowCount - 1` of the file
 * at `filePath`. Upsert writers record these to position-delete rows written twice in one commit
 * (Java `BaseEqualityDeltaWriter`).
 */
export interface RowLocation {
  filePath: string;
  firstPosition: number;
  rowCount: number;
}

export class RollingParquetWriter {
  private readonly options: RollingWriterOptions;
  private readonly target: number;
  private current: ParquetFileWriter | undefined;
  private currentPath = '';
  private fileCount = 0;
  private readonly prefix: string;
  private readonly done: DataFile[] = [];
  private readonly written: string[] = [];
  private ratio: number | undefined;
  private closed = false;
  private readonly sizeCheckRows: number;

  constructor(
    readonly schema: Schema,
    options: RollingWriterOptions,
  ) {
    const content = options.content ?? 'data';
    if (content === 'equality-deletes' && (!options.equalityIds || options.equalityIds.length === 0)) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', 'an equality-delete writer needs equalityIds');
    }
    this.target = options.targetFileSizeBytes ?? DEFAULT_TARGET_FILE_SIZE_BYTES;
    if (!Number.isInteger(this.target) || this.target <= 0) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `targetFileSizeBytes must be a positive integer, found ${options.targetFileSizeBytes}`);
    }
    // Row groups of a quarter of the target (Java's defaults: 128 MiB groups in 512 MiB files), so the
    // first file learns its compression ratio from an emitted row group before it must decide to roll.
    this.options = { ...options, content, rowGroupBytes: options.rowGroupBytes ?? Math.min(DEFAULT_ROW_GROUP_BYTES, Math.max(64 * 1024, Math.floor(this.target / 4))) };
    this.prefix = options.fileNamePrefix ?? `00000-0-${randomUUID()}`;
    this.sizeCheckRows = Math.max(1, options.sizeCheckRows ?? ROWS_PER_SIZE_CHECK);
  }

  /** Files finished so far. */
  get dataFiles(): readonly DataFile[] {
    return this.done;
  }

  /**
   * Appends rows (arrays in schema field order); returns where they went, in order. The size check
   * runs every 1000 rows, so one call may span files.
   */
  async write(rows: readonly Row[]): Promise<RowLocation[]> {
    this.ensureOpen();
    const locations: RowLocation[] = [];
    for (let start = 0; start < rows.length; start += ROWS_PER_SIZE_CHECK) {
      const writer = this.open();
      const chunk = rows.slice(start, start + ROWS_PER_SIZE_CHECK);
      addLocation(locations, this.currentPath, writer.recordCount, chunk.length);
      await writer.write(chunk);
      if (writer.estimatedSize() >= this.target) await this.rollCurrent();
    }
    return locations;
  }

  /** Column batch (one array per schema field), as `ParquetFileWriter.writeColumns`. */
  async writeColumns(columns: readonly (readonly Value[])[]): Promise<RowLocation[]> {
    this.ensureOpen();
    const locations: RowLocation[] = [];
    const n = columns[0]?.length ?? 0;
    for (let start = 0; start < n; start += ROWS_PER_SIZE_CHECK) {
      const writer = this.open();
      const end = Math.min(n, start + ROWS_PER_SIZE_CHECK);
      addLocation(locations, this.currentPath, writer.recordCount, end - start);
      await writer.writeColumns(columns.map((c) => c.slice(start, end)));
      if (writer.estimatedSize() >= this.target) await this.rollCurrent();
    }
    return locations;
  }

  /**
   * Appends one row without a promise per row: its position in the current file (whose path
   * `onFileOpened` gave), or — when the row made a batch go to the encoder or the file roll — a
   * promise of it, to await before the next call. The size is checked every `sizeCheckRows` rows of
   * a file; a roll begins the next file only with the next row.
   */
  writeOne(row: Row): number | Promise<number> {
    this.ensureOpen();
    const writer = this.open();
    const pos = writer.recordCount;
    const sent = writer.appendOne(row);
    if (sent) return sent.then(() => this.afterOne(writer, pos));
    return this.afterOne(writer, pos);
  }

  private afterOne(writer: ParquetFileWriter, pos: number): number | Promise<number> {
    if ((pos + 1) % this.sizeCheckRows === 0 && writer.estimatedSize() >= this.target) return this.rollCurrent().then(() => pos);
    return pos;
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

  /** Finishes the open file now; the next row begins a new one. */
  async finishFile(): Promise<void> {
    this.ensureOpen();
    await this.rollCurrent();
  }

  /** Path of the file being written and the position the next row will get (Java `currentPath`/`currentRows`). */
  nextRowLocation(): { filePath: string; position: number } {
    this.ensureOpen();
    const writer = this.open();
    return { filePath: this.currentPath, position: writer.recordCount };
  }

  private open(): ParquetFileWriter {
    if (!this.current) {
      this.fileCount++;
      const fileName = `${this.prefix}-${String(this.fileCount).padStart(5, '0')}.parquet`;
      this.currentPath = this.options.locations.newDataLocation(fileName, this.options.partitionPath ?? '');
      this.current = new ParquetFileWriter(this.schema, {
        ...this.options,
        expectedCompressionRatio: this.ratio ?? this.options.expectedCompressionRatio,
        writeTo: this.options.io.localFilePath?.(this.currentPath),
      });
      this.options.onFileOpened?.(this.currentPath);
    }
    return this.current;
  }

  private async rollCurrent(): Promise<void> {
    const writer = this.current;
    this.current = undefined;
    if (!writer || writer.recordCount === 0) {
      await writer?.abort();
      return;
    }
    const path = this.currentPath;
    // listed before it exists: the encoder's thread may store it while finishing (`writeTo`)
    this.written.push(path);
    const result = await writer.close();
    this.ratio = result.arrowBytes > 0 ? Number(result.fileSizeInBytes) / result.arrowBytes : undefined;
    if (!result.written) await writeUnpublished(this.options.io, path, result.bytes);
    const file = this.describe(path, result);
    this.done.push(file);
    this.options.onFileWritten?.(file);
  }

  private describe(path: string, r: ParquetFileResult): DataFile {
    const o = this.options;
    const m = r.metrics;
    const file: DataFile = {
      content: o.content!,
      filePath: path,
      fileFormat: 'PARQUET',
      specId: o.specId,
      partition: [...o.partition],
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
    if (o.content === 'equality-deletes') file.equalityIds = [...o.equalityIds!];
    if (o.content !== 'position-deletes' && o.sortOrderId !== undefined) file.sortOrderId = o.sortOrderId;
    if (o.content === 'position-deletes') {
      // Java sets referenced_data_file when every delete in the file targets one data file.
      const lower = m.lowerBounds.get(DELETE_FILE_PATH_ID);
      const upper = m.upperBounds.get(DELETE_FILE_PATH_ID);
      if (lower && upper && lower.length === upper.length && lower.every((b, i) => b === upper[i])) {
        file.referencedDataFile = utf8.decode(lower);
      }
    }
    return file;
  }

  /** Finishes the current file and returns every file written, in order. */
  async close(): Promise<DataFile[]> {
    this.ensureOpen();
    this.closed = true;
    await this.rollCurrent();
    return [...this.done];
  }

  /** Abandons the writer and deletes the files it wrote (best effort). */
  async abort(): Promise<void> {
    if (this.closed) return;
    await this.abandon();
    for (const path of this.written) {
      try {
        await this.options.io.delete(path);
      } catch {
        // Orphan files are invisible to readers; leaving one behind is harmless.
      }
    }
  }

  /** Abandons the open file only; the files finished stay (the caller decides about them). */
  async abandon(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.current?.abort();
    this.current = undefined;
  }

  private ensureOpen(): void {
    if (this.closed) throw new FloeError(SUBSYSTEM, 'internal', 'rolling Parquet writer used after close or abort');
  }
}

function addLocation(out: RowLocation[], filePath: string, firstPosition: number, rowCount: number): void {
  const last = out[out.length - 1];
  if (last && last.filePath === filePath && last.firstPosition + last.rowCount === firstPosition) last.rowCount += rowCount;
  else out.push({ filePath, firstPosition, rowCount });
}
