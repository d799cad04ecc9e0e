/**
 * The lake side of a verification pass: the live rows of some chunks at one snapshot of the Iceberg
 * table — deletion vectors, position and equality deletes applied (iceberg/scan) — each placed in its
 * chunk by its key (the source's chunk order, ChunkLocator) and folded into that chunk's checksum
 * (canonical-row.ts), or kept for a row-by-row comparison.
 *
 * Only the data files the chunks' key range can be in are read: a file whose bounds on the first
 * chunk key column (manifest lower / upper bounds) lie wholly below the first chunk or above the
 * last is skipped. That needs Iceberg's order of the column to be MySQL's: integers, decimals,
 * temporal types, booleans and binary strings (unsigned bytes, as VARBINARY compares). Text under a
 * collation, ENUM / SET (MySQL orders them by index) and floats (MySQL has no -0 < 0) are not pruned:
 * every file is read.
 */
import type { FileIO } from '../../io/file-io.js';
import { DeleteLoader } from '../../iceberg/scan/delete-loader.js';
import { planScan, type FileScanTask } from '../../iceberg/scan/scan-plan.js';
import { readTask } from '../../iceberg/scan/task-reader.js';
import type { Schema } from '../../iceberg/spec/schema.js';
import { fromBinary } from '../../iceberg/spec/single-value.js';
import type { PartitionSpec } from '../../iceberg/spec/partition.js';
import type { TableMetadata } from '../../iceberg/spec/table-metadata.js';
import { compareValues } from '../../iceberg/spec/value-compare.js';
import type { Row, Value } from '../../model/values.js';
import type { Chunk, ChunkLocator, MappedColumn } from '../../source/mysql/index.js';
import { ChunkSum } from './canonical-row.js';
import type { VerifyPlan } from './verify-plan.js';

/** The table as one pass reads it: its metadata at the snapshot to read, and its FileIO. */
export interface LakeSnapshot {
  readonly io: FileIO;
  readonly metadata: TableMetadata;
  readonly snapshotId: bigint | undefined;
}

/** Where lake rows go: their chunk (by key), or chunk 0 for a table compared as one chunk. */
export interface ChunkPlacement {
  readonly locator: ChunkLocator;
  /** Lake row indexes of the chunk key columns; undefined: every row is in chunk 0. */
  readonly keyFields: readonly number[] | undefined;
  /** The first chunk key column, when its files can be pruned by their bounds. */
  readonly prunable?: MappedColumn;
}

export interface LakePass {
  readonly sums: Map<number, ChunkSum>;
  /** Lake rows (current schema order) of the chunks asked to be collected. */
  readonly rows: Map<number, Row[]>;
  readonly filesRead: number;
  readonly bytesRead: number;
  readonly rowsRead: number;
}

const PRUNABLE_KINDS = new Set(['int', 'long', 'year', 'unsigned-long', 'decimal', 'date', 'datetime', 'timestamp', 'time', 'time-micros', 'boolean-int', 'boolean-bit', 'binary', 'fixed-binary', 'bit']);

/** The first chunk key column when files can be pruned on it (module header). */
export function prunableKey(plan: VerifyPlan, keyFields: readonly number[] | undefined): MappedColumn | undefined {
  const first = keyFields?.[0];
  if (first === undefined) return undefined;
  const c = plan.compared.find((x) => x.fieldIndex === first);
  return c && !c.transform && PRUNABLE_KINDS.has(c.mapped.kind) ? c.mapped : undefined;
}

/** Plans are cached per snapshot: a pass after the table moved on plans again. */
export class LakeReader {
  private cached: { snapshotId: bigint | undefined; tasks: FileScanTask[]; schema: Schema } | undefined;

  constructor(
    private readonly plan: VerifyPlan,
    private readonly placement: ChunkPlacement,
  ) {}

  private async tasks(lake: LakeSnapshot): Promise<{ tasks: FileScanTask[]; schema: Schema }> {
    if (!this.cached || this.cached.snapshotId !== lake.snapshotId) {
      const scan = await planScan(lake.io, lake.metadata, lake.snapshotId === undefined ? {} : { snapshotId: lake.snapshotId });
      this.cached = { snapshotId: lake.snapshotId, tasks: scan.tasks, schema: scan.schema };
    }
    return this.cached;
  }

  /** Bytes of data files the batches would read, summed over the batches, and the table's. */
  async plannedBytes(lake: LakeSnapshot, batches: readonly (readonly Chunk[])[]): Promise<{ total: number; table: number }> {
    const { tasks, schema } = await this.tasks(lake);
    const size = (t: FileScanTask) => Number(t.file.fileSizeInBytes);
    let total = 0;
    for (const b of batches) for (const t of tasks) if (this.overlaps(t, schema, b)) total += size(t);
    return { total, table: tasks.reduce((n, t) => n + size(t), 0) };
  }

  /** Reads the rows of `chunks` (ascending by index); collects the rows of those in `collect`. */
  async read(lake: LakeSnapshot, chunks: readonly Chunk[], collect: ReadonlySet<number>): Promise<LakePass> {
    const wanted = new Set(chunks.map((c) => c.index));
    const sums = new Map(chunks.map((c) => [c.index, new ChunkSum()] as const));
    const rows = new Map<number, Row[]>([...collect].map((i) => [i, []] as const));
    const { tasks, schema } = await this.tasks(lake);
    const files = tasks.filter((t) => this.overlaps(t, schema, chunks));
    const loader = new DeleteLoader(lake.io, schema, lake.metadata.schemas);
    const ctx = { io: lake.io, schema, schemas: lake.metadata.schemas, specs: lake.metadata.partitionSpecs as readonly PartitionSpec[], loader };
    const { locator, keyFields } = this.placement;
    const hasher = this.plan.hasher;
    let bytesRead = 0;
    let rowsRead = 0;
    for (const task of files) {
      bytesRead += Number(task.file.fileSizeInBytes) + [...task.deletes.equality, ...task.deletes.position, ...(task.deletes.dv ? [task.deletes.dv] : [])].reduce((n, d) => n + Number(d.file.contentSizeInBytes ?? d.file.fileSizeInBytes), 0);
      for await (const batch of readTask(task, ctx)) {
        rowsRead += batch.length;
        const located = keyFields === undefined ? undefined : await locator.locateMany(batch.map((r) => keyFields.map((i) => r[i] as Value)));
        for (let i = 0; i < batch.length; i++) {
          const index = located ? located[i]! : 0;
          if (!wanted.has(index)) continue;
          const row = batch[i]!;
          const [hi, lo] = hasher.hash(row);
          sums.get(index)!.add(hi, lo);
          rows.get(index)?.push(row);
        }
      }
    }
    return { sums, rows, filesRead: files.length, bytesRead, rowsRead };
  }

  /** Whether a data file may hold rows of `chunks` (its bounds on the first key column; module header). */
  private overlaps(task: FileScanTask, schema: Schema, chunks: readonly Chunk[]): boolean {
    const column = this.placement.prunable;
    const first = chunks[0];
    const last = chunks[chunks.length - 1];
    if (!column || !first || !last) return true;
    const field = schema.fields[this.placement.keyFields![0]!];
    if (!field) return true;
    const file = task.file;
    const lowerBytes = file.lowerBounds?.get(field.id);
    const upperBytes = file.upperBounds?.get(field.id);
    // NULL keys belong to the first chunk of the table
    if (first.index === 0 && (file.nullValueCounts?.get(field.id) ?? 1n) > 0n) return true;
    const low = first.lower?.[0];
    const high = last.upper?.[0];
    if (low !== undefined && low !== null && upperBytes && compareValues(field.type, fromBinary(field.type, upperBytes), low) < 0) return false;
    if (high !== undefined && high !== null && lowerBytes) {
      const c = compareValues(field.type, fromBinary(field.type, lowerBytes), high);
      // with a composite key, rows whose first column equals the bound's may still lie below it
      if (c > 0 || (c === 0 && first.keyColumns.length === 1)) return false;
    }
    return true;
  }
}
