/**
 * One Parquet file of an Iceberg table: rows or column batches of floe's value model in, the file's
 * bytes plus everything a manifest entry needs out (record count, exact size, column metrics, split
 * offsets). Format/spec.md Appendix A "Parquet" and docs/iceberg-writer-checklist.md §5:
 *
 * - the Arrow schema carries every field id (arrow-schema.ts);
 * - the `iceberg.schema` key-value entry holds the schema the file was written with, as Java's
 *   `SchemaParser.toJson` writes it (the table schema for data files, the delete schema for delete
 *   files; icebird needs it to resolve equality-delete columns);
 * - zstd by default.
 *
 * Memory is bounded: values are buffered in typed arrays until a batch is full (`batchRows` /
 * `batchBytes`), then handed to the encoder, which keeps only its row group in progress; the encoded
 * bytes are kept until `close` because `FileIO.write` takes whole objects.
 *
 * Per-file fixed costs are kept small, because a table partitioned by a fine transform (day, hour,
 * bucket of many buckets) writes one file per partition per checkpoint, most of them a few rows: the
 * Arrow schema and the `iceberg.schema` text are made once per schema, not per file, and a file
 * whose rows all fit in one batch reaches the encoder only at `close`, as that one batch
 * (`ParquetEncoder.finish(lastBatch)`: one-shot encoding, one worker message).
 */
import * as arrow from 'apache-arrow';
import { FloeError } from '../../util/errors.js';
import type { Row, Value } from '../../model/values.js';
import type { Schema } from '../spec/schema.js';
import type { PrimitiveType } from '../spec/types.js';
import { CachedSchemaStreamWriter, concatBytes, schemaPartsOf } from './arrow-ipc-schema.js';
import { createBuilder, type ColumnBuilder } from './column-builders.js';
import { wasmParquetEncoder, type ParquetEncoder, type ParquetEncoderFactory, type ParquetEncoderOptions } from './encoder.js';
import { FieldStats, metricsFromStats } from './field-stats.js';
import { summarizeFooter } from './footer.js';
import { DEFAULT_METRICS_CONFIG, metricsModeFor, type MetricsConfig } from './metrics-config.js';
import { DEFAULT_ROW_GROUP_BYTES, ICEBERG_SCHEMA_KEY, type ParquetFileResult, type ParquetWriterOptions } from './file-writer-options.js';

const SUBSYSTEM = 'iceberg.parquet';

const DEFAULT_BATCH_ROWS = 16_384;
/** Files of one batch of fewer rows are written without dictionaries and page index (`encoderFor`). */
const SMALL_FILE_ROWS = 1000;
const DEFAULT_BATCH_BYTES = 8 * 1024 * 1024;

export class ParquetFileWriter {
  readonly schema: Schema;
  private readonly arrowSchema: arrow.Schema;
  private readonly structType: arrow.Struct;
  private readonly schemaMessage: Uint8Array;
  /** Builders of the written (non-unknown) top-level fields, and their positions in a row. */
  private readonly builders: ColumnBuilder[] = [];
  private readonly positions: number[] = [];
  private readonly stats: FieldStats[] = [];
  /** Made at the first batch (`encoderFor`), so that a file of one small batch gets its own settings. */
  private encoder: ParquetEncoder | undefined;
  private readonly encoderFactory: ParquetEncoderFactory;
  private readonly encoderOptions: ParquetEncoderOptions;
  private readonly dictionaryOption: boolean | undefined;
  private readonly batchRows: number;
  private readonly batchBytes: number;
  private readonly metricsConfig: MetricsConfig;
  private readonly expectedRatio: number | undefined;
  private buffered = 0;
  private rowsWritten = 0;
  private readonly stageSize: number;
  private staged: Row[] = [];
  /** Arrow bytes handed to the encoder, and at the time of the last emitted row group. */
  private rawSent = 0;
  private rawAtLastChunk = 0;
  private chunksSeen = 0;
  private closed = false;
  /** Set when a value was rejected mid-row: the builders are then out of step and the file is lost. */
  private failure: unknown;

  constructor(schema: Schema, options: ParquetWriterOptions = {}) {
    this.schema = schema;
    const parts = schemaPartsOf(schema);
    this.arrowSchema = parts.arrowSchema;
    this.structType = parts.structType;
    this.schemaMessage = parts.schemaMessage;
    this.metricsConfig = options.metrics ?? DEFAULT_METRICS_CONFIG;
    this.expectedRatio = options.expectedCompressionRatio !== undefined && options.expectedCompressionRatio > 0 ? options.expectedCompressionRatio : undefined;
    this.batchRows = positive(options.batchRows ?? DEFAULT_BATCH_ROWS, 'batchRows');
    this.batchBytes = positive(options.batchBytes ?? DEFAULT_BATCH_BYTES, 'batchBytes');
    this.stageSize = Math.max(0, Math.floor(options.stageRows ?? 0));
    const statsFactory = (f: { id: number; type: PrimitiveType }): FieldStats | undefined => {
      const mode = metricsModeFor(this.metricsConfig, f.id);
      if (mode.kind === 'none') return undefined;
      const s = new FieldStats(f.id, f.type, mode);
      this.stats.push(s);
      return s;
    };
    schema.fields.forEach((f, i) => {
      if (f.type.kind === 'unknown') return;
      this.builders.push(createBuilder(f, statsFactory));
      this.positions.push(i);
    });
    const kv = new Map<string, string>(Object.entries(options.keyValueMetadata ?? {}));
    kv.set(ICEBERG_SCHEMA_KEY, parts.icebergSchemaJson);
    this.encoderFactory = options.encoderFactory ?? wasmParquetEncoder;
    this.dictionaryOption = options.dictionary;
    this.encoderOptions = {
      compression: options.compression ?? 'zstd',
      keyValueMetadata: kv,
      maxRowGroupBytes: positive(options.rowGroupBytes ?? DEFAULT_ROW_GROUP_BYTES, 'rowGroupBytes'),
      maxRowGroupRows: options.rowGroupRows === undefined ? undefined : positive(options.rowGroupRows, 'rowGroupRows'),
      dictionary: options.dictionary,
      writeTo: options.writeTo,
    };
  }

  /**
   * The file's encoder. A file that is one batch of fewer than SMALL_FILE_ROWS rows has one page per
   * column: page statistics and the page index would only repeat the column chunk's statistics, and
   * a dictionary page per column costs more than it saves (such files came out smaller without
   * dictionaries, and encoded a third faster, in floe's measurements) — so they are written without
   * both, unless the caller asked for dictionaries. Most files of a table partitioned by day or hour
   * are such files.
   */
  private encoderFor(oneSmallBatch: boolean): ParquetEncoder {
    if (!this.encoder) {
      this.encoder = this.encoderFactory(oneSmallBatch ? { ...this.encoderOptions, dictionary: this.dictionaryOption ?? false, pageIndex: false } : this.encoderOptions);
    }
    return this.encoder;
  }

  /** Rows accepted so far. */
  get recordCount(): number {
    return this.rowsWritten + this.buffered + this.staged.length;
  }

  /**
   * Estimated size of the file if it were closed now, for rolling. With `expectedCompressionRatio`
   * (the ratio a previous file of the same data achieved) it is all Arrow bytes at that ratio;
   * otherwise the bytes already emitted plus the rest at the ratio of the emitted row groups (1:1 until
   * the first one: conservative, as files compress).
   */
  estimatedSize(): number {
    const raw = this.rawSent + this.bufferedBytes();
    const emitted = this.encoder?.bytesEmitted ?? 0;
    if (this.expectedRatio !== undefined) return Math.max(emitted, Math.ceil(raw * this.expectedRatio));
    const pendingRaw = raw - this.rawAtLastChunk;
    const ratio = this.rawAtLastChunk > 0 ? emitted / this.rawAtLastChunk : 1;
    return emitted + Math.ceil(pendingRaw * ratio);
  }

  /** Rows accepted but not yet handed to the encoder. */
  get bufferedRows(): number {
    return this.buffered + this.staged.length;
  }

  /** Arrow bytes of the rows not yet handed to the encoder (what this writer holds in memory). */
  bufferedBytes(): number {
    let n = 0;
    for (const b of this.builders) n += b.byteSize();
    return n;
  }

  /** Appends rows (arrays of values in schema field order). */
  async write(rows: readonly Row[]): Promise<void> {
    this.ensureOpen();
    this.drainStaged();
    const width = this.schema.fields.length;
    for (const row of rows) {
      if (!Array.isArray(row) || row.length !== width) {
        throw new FloeError(SUBSYSTEM, 'invalid-argument', `row ${this.recordCount}: expected an array of ${width} values (schema ${this.schema.schemaId} field order), found ${Array.isArray(row) ? `${row.length} values` : typeof row}`);
      }
      this.appendRow(row);
      if (this.buffered >= this.batchRows || (this.buffered & 1023) === 0 && this.bufferedBytes() >= this.batchBytes) {
        await this.flushBatch();
      }
    }
  }

  /**
   * Appends one row, like `write([row])`, without a promise per row: returns undefined, or — when the
   * row completed a batch — the promise of handing the batch to the encoder, which must be awaited
   * before the next call (the upsert writer's per-row hot path).
   */
  appendOne(row: Row): Promise<void> | undefined {
    this.ensureOpen();
    const width = this.schema.fields.length;
    if (!Array.isArray(row) || row.length !== width) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `row ${this.recordCount}: expected an array of ${width} values (schema ${this.schema.schemaId} field order), found ${Array.isArray(row) ? `${row.length} values` : typeof row}`);
    }
    if (this.stageSize > 0) {
      if (this.staged.push(row) < this.stageSize) return undefined;
      this.drainStaged();
      if (this.buffered >= this.batchRows || this.bufferedBytes() >= this.batchBytes) return this.flushBatch();
      return undefined;
    }
    this.appendRow(row);
    if (this.buffered >= this.batchRows || ((this.buffered & 1023) === 0 && this.bufferedBytes() >= this.batchBytes)) return this.flushBatch();
    return undefined;
  }

  /** Appends the rows `appendOne` set aside. */
  private drainStaged(): void {
    if (this.staged.length === 0) return;
    const rows = this.staged;
    this.staged = [];
    for (let i = 0; i < rows.length; i++) this.appendRow(rows[i]!);
  }

  /**
   * Appends a column batch: one array of values per schema field (schema order), all of one length.
   * Faster than rows when the caller already holds columns.
   */
  async writeColumns(columns: readonly (readonly Value[])[]): Promise<void> {
    this.ensureOpen();
    this.drainStaged();
    if (columns.length !== this.schema.fields.length) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `column batch: expected ${this.schema.fields.length} columns (schema ${this.schema.schemaId} field order), found ${columns.length}`);
    }
    const n = columns[0]?.length ?? 0;
    for (const [i, c] of columns.entries()) {
      if (c.length !== n) {
        throw new FloeError(SUBSYSTEM, 'invalid-argument', `column batch: column ${this.schema.fields[i]!.name} has ${c.length} values, the first column ${n}`);
      }
    }
    let start = 0;
    while (start < n) {
      const room = this.batchRows - this.buffered;
      const end = Math.min(n, start + room);
      try {
        for (let b = 0; b < this.builders.length; b++) {
          const builder = this.builders[b]!;
          const column = columns[this.positions[b]!]!;
          for (let r = start; r < end; r++) builder.append(column[r]);
        }
      } catch (e) {
        this.failure = e;
        throw e;
      }
      this.buffered += end - start;
      start = end;
      if (this.buffered >= this.batchRows || this.bufferedBytes() >= this.batchBytes) await this.flushBatch();
    }
  }

  private appendRow(row: Row): void {
    const builders = this.builders;
    const positions = this.positions;
    try {
      for (let b = 0; b < builders.length; b++) builders[b]!.append(row[positions[b]!]);
    } catch (e) {
      this.failure = e;
      throw e;
    }
    this.buffered++;
  }

  /**
   * Hands the buffered rows to the encoder now, as one batch (they would go when the batch is full,
   * or at `close`): a caller keeping many files open uses it to bound what they hold together.
   */
  async flush(): Promise<void> {
    this.ensureOpen();
    this.drainStaged();
    if (this.buffered > 0) await this.flushBatch();
  }

  /** Sends the buffered rows to the encoder as one record batch. */
  private async flushBatch(): Promise<void> {
    if (this.buffered === 0 && this.rawSent > 0) return;
    const encoder = this.encoderFor(false);
    await encoder.write(this.takeBatch());
    this.afterBatch();
  }

  /** The buffered rows as one record batch (Arrow IPC stream bytes); counts them as written. */
  private takeBatch(last = false): Uint8Array {
    this.drainStaged();
    const n = this.buffered;
    const raw = this.bufferedBytes();
    const children = this.builders.map((b) => b.finish(last));
    this.buffered = 0;
    const data = arrow.makeData({ type: this.structType, length: n, nullCount: 0, children });
    const batch = new arrow.RecordBatch(this.arrowSchema, data);
    const ipc = new CachedSchemaStreamWriter(this.schemaMessage).writeAll([batch]).toUint8Array(true);
    this.rowsWritten += n;
    this.rawSent += Math.max(raw, 1);
    return ipc;
  }

  private afterBatch(): void {
    const chunksEmitted = this.encoder?.chunksEmitted ?? 0;
    if (chunksEmitted !== this.chunksSeen) {
      this.chunksSeen = chunksEmitted;
      // Rows sent since the last emitted row group are partly in it; good enough for an estimate.
      this.rawAtLastChunk = this.rawSent;
    }
  }

  /** Finishes the file and returns its bytes, size and metrics. */
  async close(): Promise<ParquetFileResult> {
    this.ensureOpen();
    this.closed = true;
    this.drainStaged();
    // A file with no rows still needs one (empty) batch: the encoder takes the schema from it.
    const oneSmallBatch = this.encoder === undefined && this.buffered < SMALL_FILE_ROWS;
    const encoder = this.encoderFor(oneSmallBatch);
    const last = this.buffered > 0 || this.rawSent === 0 ? this.takeBatch(true) : undefined;
    const chunks = await encoder.finish(last);
    if (last) this.afterBatch();
    const bytes = chunks.length === 1 ? chunks[0]! : concatBytes(chunks);
    const footer = summarizeFooter(bytes);
    if (footer.numRows !== BigInt(this.rowsWritten)) {
      // parquet-wasm drops batches arrow-rs rejects without reporting it (encoder.ts).
      throw new FloeError(SUBSYSTEM, 'internal', `Parquet encoder wrote ${footer.numRows} rows but ${this.rowsWritten} were given; a record batch was rejected by arrow-rs (check values against the schema)`);
    }
    const missingId = footer.leaves.find((l) => l.fieldId === undefined);
    if (missingId) {
      throw new FloeError(SUBSYSTEM, 'internal', `Parquet column ${missingId.path} was written without a field id; every column must carry PARQUET:field_id`);
    }
    const columnSizes = footer.columnSizes;
    for (const id of [...columnSizes.keys()]) {
      if (metricsModeFor(this.metricsConfig, id).kind === 'none') columnSizes.delete(id);
    }
    return {
      bytes,
      recordCount: BigInt(this.rowsWritten),
      fileSizeInBytes: BigInt(bytes.length),
      metrics: { ...metricsFromStats(this.stats), columnSizes },
      splitOffsets: footer.splitOffsets,
      arrowBytes: this.rawSent,
      written: encoder.wroteFile === true,
    };
  }

  /** Abandons the file (nothing is written anywhere). */
  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.staged = [];
    await this.encoder?.abort();
  }

  private ensureOpen(): void {
    if (this.closed) throw new FloeError(SUBSYSTEM, 'internal', 'Parquet writer used after close or abort');
    if (this.failure !== undefined) {
      throw new FloeError(SUBSYSTEM, 'internal', 'Parquet writer rejected a value earlier and its columns are out of step; abort it and write the file again', { cause: this.failure });
    }
  }
}

function positive(n: number, what: string): number {
  if (!Number.isInteger(n) || n <= 0) throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what} must be a positive integer, found ${n}`);
  return n;
}

/** One-shot convenience: the Parquet file of `rows`. */
export async function writeParquetFile(schema: Schema, rows: readonly Row[], options: ParquetWriterOptions = {}): Promise<ParquetFileResult> {
  const writer = new ParquetFileWriter(schema, options);
  try {
    await writer.write(rows);
    return await writer.close();
  } catch (e) {
    await writer.abort();
    throw e;
  }
}
