/**
 * The Parquet encoding seam: Arrow record batches (as Arrow IPC stream bytes) in, Parquet file bytes
 * out, one file per encoder. The default implementation runs parquet-wasm (arrow-rs' `AsyncArrowWriter`
 * behind `transformParquetStream`) on the calling thread; because its input is plain IPC bytes, an
 * implementation that encodes in a `worker_threads` pool can replace it through `ParquetEncoderFactory`
 * without touching the writers above it.
 *
 * Streaming, not one giant buffer: each batch is handed to arrow-rs as it is produced; arrow-rs keeps
 * only the row group in progress and emits its bytes when the row group is flushed (at
 * `maxRowGroupBytes` / `maxRowGroupRows`), so wasm memory stays bounded by the row-group size.
 *
 * A file of one batch (the usual case for the many small files of a partitioned table: a partition
 * that gets a few rows per checkpoint) skips the stream: `finish(lastBatch)` with no `write` before
 * encodes it with parquet-wasm's one-shot `writeParquet`, the same arrow-rs `ArrowWriter` with the same
 * properties. Setting up the stream (a ReadableStream pair, an async writer and its futures) costs
 * ~3 ms per file on this machine, the one-shot write ~0.3 ms for a small file.
 *
 * parquet-wasm's stream writer ignores the result of every `write` and of `close` (`writer_async.rs`):
 * a batch arrow-rs rejects is silently dropped. The file writer therefore validates every value before
 * it reaches Arrow and checks the footer's row count after `finish`.
 */
import * as pw from 'parquet-wasm';
import { FloeError } from '../../util/errors.js';

export type ParquetCompression = 'zstd' | 'snappy' | 'gzip' | 'lz4_raw' | 'brotli' | 'uncompressed';

export interface ParquetEncoderOptions {
  compression: ParquetCompression;
  /** File key-value metadata (`iceberg.schema`, …). */
  keyValueMetadata: ReadonlyMap<string, string>;
  /** Flush a row group once its encoded (uncompressed) size reaches this many bytes. */
  maxRowGroupBytes: number;
  /** Optional cap on rows per row group. */
  maxRowGroupRows?: number;
  /** Dictionary encoding (arrow-rs default: on, falling back to plain when a dictionary page fills). */
  dictionary?: boolean;
  /**
   * Page statistics and the page index (column and offset indexes), default on; off, statistics are
   * kept per column chunk only (arrow-rs `EnabledStatistics::Chunk`).
   */
  pageIndex?: boolean;
  /**
   * The local file the finished file is stored at (`FileIO.localFilePath`). An encoder running in
   * another thread may write it there itself (`ParquetEncoder.wroteFile`), sparing the caller's
   * thread the write; the one of this module, on the caller's thread, leaves that to the caller.
   */
  writeTo?: string;
}

export interface ParquetEncoder {
  /** Encodes one record batch given as an Arrow IPC stream; resolves when the next may be sent. */
  write(ipcBatch: Uint8Array): Promise<void>;
  /** Bytes of the file emitted so far (flushed row groups). */
  readonly bytesEmitted: number;
  /** Row groups flushed so far. */
  readonly chunksEmitted: number;
  /**
   * Ends the file, after writing `lastBatch` when given; resolves to its bytes in order (concatenate
   * them for the whole file). A file whose only batch is `lastBatch` is encoded in one step.
   */
  finish(lastBatch?: Uint8Array): Promise<Uint8Array[]>;
  /**
   * True once `finish` stored the file at `writeTo` (as `LocalFileIO.write` does: durably, whole or
   * not at all); otherwise storing the bytes `finish` returned is the caller's.
   */
  readonly wroteFile?: boolean;
  /** Abandons the file, releasing what it holds. */
  abort(): Promise<void>;
}

export type ParquetEncoderFactory = (options: ParquetEncoderOptions) => ParquetEncoder;

const SUBSYSTEM = 'iceberg.parquet';

const COMPRESSION: Record<ParquetCompression, pw.Compression> = {
  zstd: pw.Compression.ZSTD,
  snappy: pw.Compression.SNAPPY,
  gzip: pw.Compression.GZIP,
  lz4_raw: pw.Compression.LZ4_RAW,
  brotli: pw.Compression.BROTLI,
  uncompressed: pw.Compression.UNCOMPRESSED,
};

/**
 * The most a column chunk's dictionary may take before arrow-rs falls back to plain encoding for the
 * rest of the chunk (arrow-rs and parquet-mr default to 1 MiB). A column of mostly distinct values
 * (keys, timestamps, amounts) fills a 1 MiB dictionary before it gives up, and that costs more than
 * it saves: on the benchmark's orders table, 64 KiB encoded a third faster (1.1 against 1.7 CPU-s per
 * million rows) into files 7% smaller, while columns of few distinct values (a status, a quantity)
 * keep their dictionary.
 */
const DICTIONARY_PAGE_BYTES = 64 * 1024;

function writerProperties(options: ParquetEncoderOptions): pw.WriterProperties {
  let b = new pw.WriterPropertiesBuilder()
    .setCompression(COMPRESSION[options.compression])
    .setKeyValueMetadata(new Map(options.keyValueMetadata))
    .setMaxRowGroupBytes(options.maxRowGroupBytes)
    .setDictionaryPageSizeLimit(DICTIONARY_PAGE_BYTES);
  if (options.maxRowGroupRows !== undefined) b = b.setMaxRowGroupSize(options.maxRowGroupRows);
  if (options.dictionary !== undefined) b = b.setDictionaryEnabled(options.dictionary);
  if (options.pageIndex === false) b = b.setStatisticsEnabled(pw.EnabledStatistics.Chunk);
  return b.build();
}

/** Reads one record batch out of IPC bytes into wasm memory. */
function wasmBatch(ipc: Uint8Array): pw.RecordBatch {
  const table = pw.Table.fromIPCStream(ipc);
  try {
    const batch = table.recordBatch(0);
    if (!batch || table.numBatches !== 1) {
      throw new FloeError(SUBSYSTEM, 'internal', `expected one record batch per IPC message, found ${table.numBatches}`);
    }
    return batch;
  } finally {
    table.free();
  }
}

/** parquet-wasm on the calling thread. */
export const wasmParquetEncoder: ParquetEncoderFactory = (options) => new WasmParquetEncoder(options);

class WasmParquetEncoder implements ParquetEncoder {
  bytesEmitted = 0;
  chunksEmitted = 0;
  private readonly chunks: Uint8Array[] = [];
  private controller!: ReadableStreamDefaultController<pw.RecordBatch>;
  /** The stream arrow-rs reads batches from; made at the first `write` (a one-batch file needs none). */
  private input: ReadableStream<pw.RecordBatch> | undefined;
  private pullWaiter: (() => void) | undefined;
  private pullRequested = false;
  private started: Promise<void> | undefined;
  private draining: Promise<void> | undefined;
  private failure: unknown;
  private finished = false;

  constructor(private readonly options: ParquetEncoderOptions) {}

  private openInput(): ReadableStream<pw.RecordBatch> {
    this.input = new ReadableStream<pw.RecordBatch>(
      {
        start: (c) => {
          this.controller = c;
        },
        pull: () => {
          this.pullRequested = true;
          const w = this.pullWaiter;
          this.pullWaiter = undefined;
          w?.();
        },
      },
      { highWaterMark: 0 },
    );
    return this.input;
  }

  async write(ipcBatch: Uint8Array): Promise<void> {
    if (this.finished) throw new FloeError(SUBSYSTEM, 'internal', 'write after finish on a Parquet encoder');
    this.throwIfFailed();
    const batch = wasmBatch(ipcBatch);
    if (!this.started) {
      const input = this.openInput();
      // transformParquetStream peeks at the first batch (for the schema) before it resolves.
      this.controller.enqueue(batch);
      this.started = this.start(input);
      await this.started;
      return;
    }
    await this.started;
    // Back-pressure: hand over a batch only when arrow-rs asks for the next one, so at most one batch
    // waits in wasm memory besides the row group in progress.
    await this.waitForPull();
    this.throwIfFailed();
    this.pullRequested = false;
    this.controller.enqueue(batch);
  }

  private waitForPull(): Promise<void> {
    if (this.pullRequested) return Promise.resolve();
    return new Promise((resolve) => {
      this.pullWaiter = resolve;
      // The drain loop ending (error or close) must not leave a writer waiting forever.
      void this.draining?.then(resolve, resolve);
    });
  }

  private async start(input: ReadableStream<pw.RecordBatch>): Promise<void> {
    let output: ReadableStream<Uint8Array>;
    try {
      output = (await pw.transformParquetStream(input as ReadableStream, writerProperties(this.options))) as ReadableStream<Uint8Array>;
    } catch (e) {
      this.failure = e;
      throw new FloeError(SUBSYSTEM, 'internal', `parquet-wasm could not start a Parquet stream: ${String(e)}`, { cause: e });
    }
    this.draining = this.drain(output);
  }

  private async drain(output: ReadableStream<Uint8Array>): Promise<void> {
    const reader = output.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.chunks.push(value);
        this.bytesEmitted += value.length;
        this.chunksEmitted++;
      }
    } catch (e) {
      this.failure = e;
    } finally {
      reader.releaseLock();
    }
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) {
      throw new FloeError(SUBSYSTEM, 'internal', `parquet-wasm failed while encoding: ${String(this.failure)}`, { cause: this.failure });
    }
  }

  async finish(lastBatch?: Uint8Array): Promise<Uint8Array[]> {
    if (this.finished) throw new FloeError(SUBSYSTEM, 'internal', 'Parquet encoder finished twice');
    if (!this.started && lastBatch) {
      this.finished = true;
      return [encodeOnce(lastBatch, this.options)];
    }
    if (lastBatch) await this.write(lastBatch);
    if (!this.started) throw new FloeError(SUBSYSTEM, 'internal', 'a Parquet encoder needs at least one batch (an empty one will do) before finish');
    this.finished = true;
    await this.started;
    this.controller.close();
    await this.draining;
    this.throwIfFailed();
    return this.chunks;
  }

  async abort(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    if (this.started) {
      try {
        this.controller.close();
      } catch {
        // already closed
      }
      // the encoder's own failure reaches the caller through `draining` / the writes; here it only has to have stopped
      await this.started.catch(() => undefined);
      await this.draining;
    }
    this.chunks.length = 0;
  }
}

/**
 * A whole file from one record batch: parquet-wasm's `writeParquet` (which takes ownership of the
 * table and the properties). Unlike the stream writer it reports arrow-rs errors.
 */
function encodeOnce(ipcBatch: Uint8Array, options: ParquetEncoderOptions): Uint8Array {
  let table: pw.Table | undefined = pw.Table.fromIPCStream(ipcBatch);
  try {
    if (table.numBatches !== 1) throw new FloeError(SUBSYSTEM, 'internal', `expected one record batch per IPC message, found ${table.numBatches}`);
    const t = table;
    table = undefined; // writeParquet consumes it
    return pw.writeParquet(t, writerProperties(options));
  } catch (e) {
    if (e instanceof FloeError) throw e;
    throw new FloeError(SUBSYSTEM, 'internal', `parquet-wasm failed while encoding: ${String(e)}`, { cause: e });
  } finally {
    table?.free();
  }
}
