/**
 * The data sink of one table's checkpoint (iceberg-rust `DeltaWriter`'s data writer): rows in, one
 * `PositionalDataWriter` per partition the checkpoint touches, each row's location out — what a
 * later position delete of the row needs (docs/iceberg-writer-checklist.md §4.3).
 *
 * Each partition has one data writer for the whole checkpoint, so the rows of all its snapshot
 * chunks and transactions share one file per partition (more only at the target file size, or when
 * the memory bound finishes files early: see `balanceBuffers`); a chunk of keys spread over the
 * table touches nearly every partition, and a file per partition per chunk would be as many files
 * as chunks times partitions.
 */
import type { FileIO } from '../../io/file-io.js';
import { mapConcurrently } from '../../util/concurrent.js';
import type { Row } from '../../model/values.js';
import type { ParquetWriterOptions } from '../parquet/file-writer-options.js';
import type { LocationProvider } from '../parquet/rolling-writer.js';
import type { PartitionSpec } from '../spec/partition.js';
import type { Schema } from '../spec/schema.js';
import type { Partitioner, PartitionKey } from './partitioner.js';
import { PositionalDataWriter, type DataFileHandle, type RowLocation } from './positional-data-writer.js';
import type { WriterStats } from './writer-stats.js';

/** Partition files closed at the same time at a checkpoint (see `close`). */
const CLOSE_CONCURRENCY = 16;
/**
 * Rows between checks of what the open partition files buffer together (`balanceBuffers`): at least
 * this many, and at least `BUFFER_CHECK_ROWS_PER_PARTITION` per open partition — a check visits every
 * open file, so with a `day` transform's thousands of them a check every 4,096 rows cost a visit
 * per two rows. What the rows between two checks add (a few MiB) is small beside `encodeAfterBytes`.
 */
const BUFFER_CHECK_ROWS = 4096;
const BUFFER_CHECK_ROWS_PER_PARTITION = 8;
/**
 * A partition hands its rows to the encoder early only with at least this many: a batch of a few rows
 * would cost a streaming encoder (and its memory in the encoder thread) per partition.
 */
const MIN_EARLY_BATCH_ROWS = 2048;
/** Rows a partition file sets aside before appending them to its column builders (`ParquetWriterOptions.stageRows`). */
const STAGE_ROWS = 16;

export interface PartitionedDataSinkOptions {
  io: FileIO;
  locations: LocationProvider;
  /** Unique tag of the table writer (file names `<partition n>-<tag>-<00001>.parquet`). */
  tag: string;
  targetFileSizeBytes: number;
  sizeCheckRows?: number;
  sortOrderId?: number;
  parquet?: ParquetWriterOptions;
  /** Arrow bytes buffered in all before the larger files hand rows to their encoders. */
  encodeAfterBytes: number;
  /** Arrow bytes buffered in all beyond which the largest files are finished early. */
  maxBufferedBytes: number;
  /** Called with every row written and its location (the matching-delete index). */
  onRow: (row: Row, loc: RowLocation) => void;
}

export class PartitionedDataSink {
  private readonly partitions = new Map<PartitionKey, PositionalDataWriter>();
  private rowsSinceBufferCheck = 0;

  constructor(
    private readonly schema: Schema,
    private readonly spec: PartitionSpec,
    private readonly partitioner: Partitioner,
    private readonly stats: WriterStats,
    private readonly options: PartitionedDataSinkOptions,
  ) {}

  /** One row: its location at once, or a promise of it (await it before the next row). */
  write(row: Row): RowLocation | Promise<RowLocation> {
    const key = this.partitioner.keyOf(row);
    let writer = this.partitions.get(key);
    if (!writer) {
      const part = this.partitioner.partitionOf(row);
      const o = this.options;
      writer = new PositionalDataWriter(this.schema, {
        io: o.io,
        locations: o.locations,
        specId: this.spec.specId,
        partition: part.values,
        partitionPath: this.partitioner.pathOf(part.values),
        fileNamePrefix: `${String(this.partitions.size).padStart(5, '0')}-${o.tag}`,
        targetFileSizeBytes: o.targetFileSizeBytes,
        sizeCheckRows: o.sizeCheckRows,
        sortOrderId: o.sortOrderId,
        parquet: o.parquet,
        // consecutive rows go to different partitions: append them to each file's builders in runs
        stageRows: this.partitioner.isUnpartitioned ? undefined : STAGE_ROWS,
      });
      this.partitions.set(key, writer);
      this.stats.dataFilesOpened++;
    }
    this.stats.rowsWritten++;
    const loc = writer.writeOne(row);
    if (loc instanceof Promise) {
      return loc.then((l) => {
        this.options.onRow(row, l);
        return l;
      });
    }
    this.options.onRow(row, loc);
    if (++this.rowsSinceBufferCheck >= BUFFER_CHECK_ROWS && this.partitions.size > 1 && this.rowsSinceBufferCheck >= this.partitions.size * BUFFER_CHECK_ROWS_PER_PARTITION) {
      this.rowsSinceBufferCheck = 0;
      const balanced = this.balanceBuffers();
      if (balanced) return balanced.then(() => loc);
    }
    return loc;
  }

  /**
   * Keeps the open partition files of a checkpoint within bounds. Each file hands a batch to its
   * encoder when the batch is full (16,384 rows or 8 MiB by default), which a table with many
   * partitions rarely reaches: all its rows would wait in memory, and be encoded only at the
   * checkpoint, one file after another, instead of alongside the source as an unpartitioned table's
   * are. So, checked every few thousand rows:
   * - past `encodeAfterBytes` buffered in all, the largest files holding enough rows for a batch of
   *   their own hand them to their encoders, until half of that is left;
   * - past `maxBufferedBytes` (many partitions, each with a few rows), the largest files are finished
   *   now, until half of that is left: more files than one per partition per checkpoint, but bounded
   *   memory. The rows stay where they are (finished files are committed with the checkpoint; the
   *   positions handed out stay valid).
   * Undefined when nothing had to be done.
   */
  private balanceBuffers(): Promise<void> | undefined {
    let total = 0;
    let batchWorthy = false;
    for (const w of this.partitions.values()) {
      total += w.bufferedBytes();
      if (w.bufferedRows >= MIN_EARLY_BATCH_ROWS) batchWorthy = true;
    }
    if (total <= this.options.encodeAfterBytes || (!batchWorthy && total <= this.options.maxBufferedBytes)) return undefined;
    return this.shrinkBuffers(total);
  }

  private async shrinkBuffers(total: number): Promise<void> {
    const { encodeAfterBytes, maxBufferedBytes } = this.options;
    const held = [...this.partitions.values()].map((w) => ({ w, bytes: w.bufferedBytes(), rows: w.bufferedRows })).filter((h) => h.rows > 0);
    held.sort((a, b) => b.bytes - a.bytes);
    const early = held.filter((h) => h.rows >= MIN_EARLY_BATCH_ROWS);
    for (const h of early) {
      if (total <= encodeAfterBytes / 2) break;
      await h.w.flush();
      total -= h.bytes;
      h.rows = 0;
    }
    if (total <= maxBufferedBytes) return;
    const finishing: PositionalDataWriter[] = [];
    for (const h of held) {
      if (total <= maxBufferedBytes / 2) break;
      if (h.rows === 0) continue;
      finishing.push(h.w);
      total -= h.bytes;
    }
    await mapConcurrently(finishing, CLOSE_CONCURRENCY, (w) => w.finishFile());
  }

  /**
   * Closes every partition's data writer, several at a time: a partitioned checkpoint holds one
   * open file per partition (thousands for a `day` transform), and closing one is an encoder round
   * trip and a durable write (fsync of the file and its directory); one after another, their
   * latencies add up, while side by side the encoder threads and the disk overlap them. Closing does
   * not add memory: each file's rows are already buffered (in its builders or its encoder). The files
   * come back in partition order, whatever order they finish in; each path is pushed to `written`
   * as soon as it exists, so that a failure part-way lets the caller remove it.
   */
  async close(written: string[]): Promise<DataFileHandle[]> {
    const writers = [...this.partitions.values()];
    const closed: DataFileHandle[][] = new Array(writers.length);
    await mapConcurrently(writers, CLOSE_CONCURRENCY, async (w, i) => {
      closed[i] = await w.close();
      for (const h of closed[i]) written.push(h.path);
    });
    return closed.flat();
  }

  /** Abandons the open files; returns the paths of every file finished (for the caller to delete). */
  async abort(): Promise<string[]> {
    const paths: string[] = [];
    for (const w of this.partitions.values()) {
      await w.abort();
      for (const h of w.files) paths.push(h.path);
    }
    return paths;
  }
}
