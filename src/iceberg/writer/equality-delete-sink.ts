/**
 * The key equality deletes of one table for one checkpoint: rows of the key columns (schema order)
 * batched into a rolling Parquet writer of the delete schema, which carries the `iceberg.schema`
 * key-value entry of that schema and Java's `delete-type` / `delete-field-ids` entries (checklist
 * §4.2). The spec id is only known at the end — a partitioned table's global deletes need an
 * unpartitioned spec that may be added just before the commit — so it is set on the finished files.
 */
import type { FileIO } from '../../io/file-io.js';
import { FloeError } from '../../util/errors.js';
import type { Row, Value } from '../../model/values.js';
import type { DataFile } from '../spec/data-file.js';
import { equalityDeleteKeyValue, equalityDeleteSchema } from '../parquet/delete-schemas.js';
import type { ParquetWriterOptions } from '../parquet/file-writer-options.js';
import { RollingParquetWriter, type LocationProvider } from '../parquet/rolling-writer.js';
import { isUnpartitioned, type PartitionSpec } from '../spec/partition.js';
import type { Schema } from '../spec/schema.js';
import type { TableMetadata } from '../spec/table-metadata.js';

const BATCH = 1000;

export class EqualityDeleteSink {
  private writer: RollingParquetWriter | undefined;
  private pending: Row[] = [];
  count = 0;

  constructor(
    private readonly schema: Schema,
    private readonly equalityIds: readonly number[],
    private readonly options: { io: FileIO; locations: LocationProvider; fileNamePrefix: string; targetFileSizeBytes: number; parquet?: ParquetWriterOptions },
  ) {}

  /** One deleted key: the values of the equality columns, schema order. */
  async add(values: Value[]): Promise<void> {
    await this.addOne(values);
  }

  /** `add` without a promise per key: a promise only when a batch goes to the writer (await it). */
  addOne(values: Value[]): Promise<void> | undefined {
    this.pending.push(values);
    this.count++;
    return this.pending.length >= BATCH ? this.flush() : undefined;
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    if (!this.writer) {
      const o = this.options;
      const ids = [...this.equalityIds];
      this.writer = new RollingParquetWriter(equalityDeleteSchema(this.schema, ids), {
        ...o.parquet,
        io: o.io,
        locations: o.locations,
        content: 'equality-deletes',
        equalityIds: ids,
        specId: -1, // set by close()
        partition: [],
        partitionPath: '',
        keyValueMetadata: { ...o.parquet?.keyValueMetadata, ...equalityDeleteKeyValue(ids) },
        targetFileSizeBytes: o.targetFileSizeBytes,
        fileNamePrefix: o.fileNamePrefix,
      });
    }
    const rows = this.pending;
    this.pending = [];
    await this.writer.write(rows);
  }

  /** Finishes the files; each gets `specId` and the empty partition tuple. */
  async close(specId: number): Promise<DataFile[]> {
    await this.flush();
    if (!this.writer) return [];
    const files = await this.writer.close();
    this.writer = undefined;
    return files.map((f) => ({ ...f, specId, partition: [] }));
  }

  /** Deletes what was written (only when nothing can reference it). */
  async abort(): Promise<void> {
    this.pending = [];
    await this.writer?.abort();
    this.writer = undefined;
  }
}

/**
 * The spec id for a table's equality deletes: the table's own (unpartitioned) spec, or for a
 * partitioned table an unpartitioned spec present in its specs — global deletes (spec "Scan
 * Planning"), so that a delete reaches the old row whatever partition it is in.
 */
export function equalityDeleteSpecId(metadata: TableMetadata, writeSpec: PartitionSpec, given: number | undefined): number {
  if (isUnpartitioned(writeSpec)) return given ?? writeSpec.specId;
  if (given !== undefined) {
    const spec = metadata.partitionSpecs.find((s) => s.specId === given);
    if (spec && !isUnpartitioned(spec)) {
      throw new FloeError('iceberg.writer', 'invalid-argument', `equality deletes of a partitioned table must use an unpartitioned spec; spec ${given} is partitioned`);
    }
    return given;
  }
  const unpartitioned = metadata.partitionSpecs.find((s) => isUnpartitioned(s));
  if (!unpartitioned) {
    throw new FloeError('iceberg.writer', 'invalid-argument', `table ${metadata.location} is partitioned and has no unpartitioned spec for global equality deletes; add one (ensureUnpartitionedSpec) and pass its id`);
  }
  return unpartitioned.specId;
}
