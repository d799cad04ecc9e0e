/**
 * Reading an Iceberg table to rows: plan the snapshot's files (scan-plan.ts), then read them one data
 * file at a time applying deletes (task-reader.ts). What `floe scan`, verification, compaction and the
 * tests use. Rows are arrays in the order of the scan schema's top-level fields, values in the model of
 * src/model/values.ts.
 */
import type { FileIO } from '../../io/file-io.js';
import type { Row } from '../../model/values.js';
import type { Schema } from '../spec/schema.js';
import type { Snapshot, TableMetadata } from '../spec/table-metadata.js';
import { DeleteLoader } from './delete-loader.js';
import { planScan, type FileScanTask, type PlanOptions } from './scan-plan.js';
import { readTask } from './task-reader.js';

export interface ScanOptions extends PlanOptions {
  /** Stop after this many rows. */
  limit?: number;
  /**
   * Format v3: end every row with its `_row_id` and `_last_updated_sequence_number` (explicit or
   * inherited, spec "Row Lineage"; task-reader.ts).
   */
  rowLineage?: boolean;
}

/** Anything with the table's metadata and a FileIO that reads its files (a `LoadedTable`, a `CatalogTable`). */
export interface ReadableTable {
  io: FileIO;
  metadata: TableMetadata;
}

export interface TableScan {
  readonly snapshot: Snapshot | undefined;
  readonly schema: Schema;
  readonly tasks: readonly FileScanTask[];
  /** The live rows, in task order. */
  rows(): AsyncGenerator<Row>;
}

export async function scanTable(table: ReadableTable, options: ScanOptions = {}): Promise<TableScan> {
  const plan = await planScan(table.io, table.metadata, options);
  const limit = options.limit;
  return {
    snapshot: plan.snapshot,
    schema: plan.schema,
    tasks: plan.tasks,
    async *rows(): AsyncGenerator<Row> {
      if (limit !== undefined && limit <= 0) return;
      const loader = new DeleteLoader(table.io, plan.schema, table.metadata.schemas);
      const ctx = { io: table.io, schema: plan.schema, schemas: table.metadata.schemas, specs: table.metadata.partitionSpecs, loader, rowLineage: options.rowLineage };
      let emitted = 0;
      for (const task of plan.tasks) {
        for await (const rows of readTask(task, ctx)) {
          for (const row of rows) {
            yield row;
            if (limit !== undefined && ++emitted >= limit) return;
          }
        }
      }
    },
  };
}

/** All live rows of the table (current snapshot, or `options.snapshotId`). */
export async function readTableRows(table: ReadableTable, options: ScanOptions = {}): Promise<Row[]> {
  const scan = await scanTable(table, options);
  const out: Row[] = [];
  for await (const row of scan.rows()) out.push(row);
  return out;
}
