/**
 * The live rows of a compaction's data files written again (rewrite-data-files.ts, rewrite-beside.ts):
 * v2 through the table's change writer in append mode; v3 with each row's lineage kept
 * (`rewriteRowsWithLineage`). Both stop between two data files when `keepGoing` says so, and a
 * failure deletes what they wrote.
 */
import { FloeError } from '../../util/errors.js';
import type { DataFile } from '../spec/data-file.js';
import { DeleteLoader } from '../scan/delete-loader.js';
import type { FileScanTask, ScanPlan } from '../scan/scan-plan.js';
import { readTask } from '../scan/task-reader.js';
import type { CatalogTable } from '../table/catalog-table.js';
import { TableChangeWriter } from '../writer/table-change-writer.js';
import { Partitioner, type PartitionKey } from '../writer/partitioner.js';
import { parquetWriterOptions } from '../writer/parquet-codec.js';
import { tableLocations, targetFileSizes } from '../writer/table-locations.js';
import { RollingParquetWriter } from '../parquet/rolling-writer.js';
import type { ParquetWriterOptions } from '../parquet/file-writer-options.js';
import { schemaWithRowLineage } from '../spec/row-lineage.js';
import type { Row } from '../../model/values.js';
import { partitionOf } from './small-file-groups.js';
import type { FileIO } from '../../io/file-io.js';

const SUBSYSTEM = 'iceberg.maintenance';

/** What a rewrite wrote, and how many of its tasks (a prefix) it rewrote before `keepGoing` said stop. */
export interface RewrittenRows {
  dataFiles: DataFile[];
  paths: string[];
  rewritten: number;
}

/** Whether the rewrite stops before task `i`: at least one task is rewritten, and `keepGoing` says stop. */
function stopsAt(i: number, keepGoing: () => boolean): boolean {
  return i > 0 && !keepGoing();
}

export async function rewriteRows(table: CatalogTable, tasks: readonly FileScanTask[], plan: ScanPlan, keepGoing: () => boolean = () => true): Promise<RewrittenRows> {
  if (tasks.length === 0) return { dataFiles: [], paths: [], rewritten: 0 };
  // the current schema and default spec: rows land in the partitions the table has now
  const writer = new TableChangeWriter(table, { mode: 'append', fileNameTag: `rewrite-${globalThis.crypto.randomUUID()}` });
  const loader = new DeleteLoader(table.io, plan.schema, table.metadata.schemas);
  const ctx = { io: table.io, schema: plan.schema, schemas: table.metadata.schemas, specs: table.metadata.partitionSpecs, loader };
  try {
    let rewritten = 0;
    for (; rewritten < tasks.length && !stopsAt(rewritten, keepGoing); rewritten++) {
      for await (const rows of readTask(tasks[rewritten]!, ctx)) await writer.applyAll(rows.map((after) => ({ op: 'insert' as const, after })));
    }
    const prepared = await writer.prepare();
    if (prepared.deleteFiles.length > 0) throw new FloeError(SUBSYSTEM, 'internal', 'a rewrite of live rows produced delete files');
    return { dataFiles: prepared.dataFiles, paths: prepared.writtenPaths, rewritten };
  } catch (e) {
    await writer.abort();
    throw e;
  }
}

/**
 * v3: the live rows of `tasks` with their row lineage (task-reader.ts `rowLineage`: explicit or
 * inherited), written into new files of the current schema plus `_row_id` and
 * `_last_updated_sequence_number`, partitioned by the default spec, rolled at the target size.
 */
export async function rewriteRowsWithLineage(table: CatalogTable, tasks: readonly FileScanTask[], plan: ScanPlan, keepGoing: () => boolean = () => true, parquet?: ParquetWriterOptions, pause?: () => Promise<void>): Promise<RewrittenRows> {
  if (tasks.length === 0) return { dataFiles: [], paths: [], rewritten: 0 };
  const m = table.metadata;
  const spec = m.partitionSpecs.find((s) => s.specId === m.defaultSpecId);
  if (!spec) throw new FloeError(SUBSYSTEM, 'invalid-data', `table ${m.location}: default spec ${m.defaultSpecId} is missing from the metadata; expected it among specs [${m.partitionSpecs.map((s) => s.specId).join(', ')}]`);
  // rows read as plan.schema (the current schema) + the two lineage columns: the partitioner's
  // positions are those of plan.schema's top-level fields, which lead each row
  const partitioner = new Partitioner(plan.schema, spec);
  const writeSchema = schemaWithRowLineage(plan.schema);
  const locations = tableLocations(m);
  const target = targetFileSizes(m).data;
  const fileOptions = parquetWriterOptions(m, parquet).data;
  const tag = `rewrite-${globalThis.crypto.randomUUID()}`;
  const writers = new Map<PartitionKey, RollingParquetWriter>();
  let opened = 0;
  const loader = new DeleteLoader(table.io, plan.schema, m.schemas);
  const ctx = { io: table.io, schema: plan.schema, schemas: m.schemas, specs: m.partitionSpecs, loader, rowLineage: true };
  const dataFiles: DataFile[] = [];
  // Memory: each open file is held until it is finished, so the files of one source partition are
  // finished before the next partition's are read (the caller orders the tasks by partition): at
  // most one partition's output is in memory — not one file per partition of the whole table.
  const ordered = tasks;
  const finishAll = async (): Promise<void> => {
    for (const [key, w] of writers) {
      writers.delete(key);
      dataFiles.push(...(await w.close()));
    }
  };
  let rewritten = 0;
  try {
    for (; rewritten < ordered.length && !stopsAt(rewritten, keepGoing); rewritten++) {
      const i = rewritten;
      const task = ordered[i]!;
      if (i > 0 && partitionOf(task.file) !== partitionOf(ordered[i - 1]!.file)) await finishAll();
      for await (const rows of readTask(task, ctx)) {
        await pause?.();
        const byPartition = new Map<PartitionKey, Row[]>();
        for (const row of rows) {
          const key = partitioner.keyOf(row);
          let list = byPartition.get(key);
          if (!list) {
            byPartition.set(key, (list = []));
            if (!writers.has(key)) {
              const part = partitioner.partitionOf(row);
              writers.set(
                key,
                new RollingParquetWriter(writeSchema, {
                  ...fileOptions,
                  io: table.io,
                  locations,
                  specId: spec.specId,
                  partition: part.values,
                  partitionPath: partitioner.pathOf(part.values),
                  fileNamePrefix: `${String(++opened).padStart(5, '0')}-${tag}`,
                  targetFileSizeBytes: target,
                  sortOrderId: m.defaultSortOrderId,
                }),
              );
            }
          }
          list.push(row);
        }
        for (const [key, list] of byPartition) await writers.get(key)!.write(list);
      }
    }
    await finishAll();
    return { dataFiles, paths: dataFiles.map((f) => f.filePath), rewritten };
  } catch (e) {
    for (const w of writers.values()) await w.abort(); // deletes what an unclosed writer wrote
    await deleteQuietly(table.io, dataFiles.map((f) => f.filePath));
    throw e;
  }
}

export async function deleteQuietly(io: FileIO, paths: readonly string[]): Promise<void> {
  // best effort: a file left behind is unreferenced, and orphan removal deletes it once older than its window
  for (const p of paths) await io.delete(p).catch(() => undefined);
}
