/**
 * Building a table's key index from the lake: the key columns of its live data files, deletes
 * applied, each row's key at its position — into a memory index (memory-key-index.ts: a file's keys
 * by position become runs where they ascend, hash entries elsewhere) or a disk index being filled
 * (sqlite-key-index.ts). And `keyReader`, the reading of key columns the builds, the catch-up from
 * the lake (key-index-catch-up.ts) and the following of floe's compaction share.
 */
import type { Row } from '../../model/values.js';
import type { FileIO } from '../../io/file-io.js';
import type { DataFile } from '../spec/data-file.js';
import { DeleteLoader } from '../scan/delete-loader.js';
import { planScan, type FileScanTask } from '../scan/scan-plan.js';
import { readTaskIntegers, readTaskPositions, sortedDeletedPositions } from '../scan/task-reader.js';
import { Schema } from '../spec/schema.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import type { KeyColumnRead, KeyColumnReader } from './key-column-reader.js';
import { MemoryKeyIndex } from './memory-key-index.js';
import type { KeyId, TableKey } from './table-key.js';

/** Where a build into a disk index goes (sqlite-key-index.ts). */
export interface KeyIndexSink {
  set(k: KeyId, file: DataFile, pos: number): void;
  /** Called before a file's rows are set: the deletes it is read with. */
  fileRead?(task: FileScanTask): void;
}

/** A table as a build reads it. */
export type BuildTable = { io: FileIO; metadata: TableMetadata };

/**
 * Builds the index of the table's current snapshot — into a memory index, or into `into` (a disk
 * index being filled). `progress` hears about every file read. `offThread`: the key column of a
 * single integer key is decoded by it (key-column-reader.ts), this thread only reading the files
 * and their deletes; a file it cannot decode (see `KeyColumnRead.read`) is read here.
 */
export async function buildKeyIndex(
  table: BuildTable,
  key: TableKey,
  options: { into?: KeyIndexSink; progress?: (filesDone: number, filesTotal: number, rows: number) => void; offThread?: KeyColumnReader } = {},
): Promise<MemoryKeyIndex> {
  const m = table.metadata;
  const index = new MemoryKeyIndex(currentSnapshot(m)?.snapshotId);
  const plan = await planScan(table.io, m);
  if (plan.tasks.length === 0) return index;
  const reader = keyReader(table, key, plan.schema);
  let rows = 0;
  let done = 0;
  if (options.into) {
    const sink = options.into;
    for (const task of plan.tasks) {
      sink.fileRead?.(task);
      await reader.live(task, (k, pos) => {
        sink.set(k, task.file, pos);
        rows++;
      });
      options.progress?.(++done, plan.tasks.length, rows);
    }
    return index;
  }
  const field = key.integerField;
  const decoder = options.offThread && field && (field.type.kind === 'int' || field.type.kind === 'long') ? options.offThread({ id: field.id, name: field.name, kind: field.type.kind }) : undefined;
  try {
    // Up to two files decode in the other thread while this one reads the next (its bytes, its deletes).
    const pending: { task: FileScanTask; keys: Promise<Float64Array | undefined> }[] = [];
    const settle = async (): Promise<void> => {
      const { task, keys } = pending.shift()!;
      const decoded = await keys;
      if (decoded) index.addFileRows(task.file, decoded);
      else await readHere(task);
      rows = index.size;
      options.progress?.(++done, plan.tasks.length, rows);
    };
    const readHere = async (task: FileScanTask): Promise<void> => {
      const numbers = new Float64Array(Number(task.file.recordCount)).fill(Number.NaN);
      const strings: [string, number][] = [];
      await reader.live(task, (k, pos) => {
        if (typeof k === 'number') numbers[pos] = k;
        else strings.push([k, pos]);
      });
      index.addFileRows(task.file, numbers, strings);
    };
    for (const task of plan.tasks) {
      if (decoder && task.file.fileFormat === 'PARQUET' && task.deletes.equality.length === 0) {
        pending.push({ task, keys: decodeElsewhere(decoder, table.io, task, reader.loader) });
        if (pending.length >= 2) await settle();
      } else {
        while (pending.length > 0) await settle();
        await readHere(task);
        rows = index.size;
        options.progress?.(++done, plan.tasks.length, rows);
      }
    }
    while (pending.length > 0) await settle();
  } finally {
    decoder?.close();
  }
  return index;
}

/** The keys of one file decoded by `decoder` (its bytes and deletes read here). */
async function decodeElsewhere(decoder: KeyColumnRead, io: FileIO, task: FileScanTask, loader: DeleteLoader): Promise<Float64Array | undefined> {
  const deleted = await sortedDeletedPositions(task, loader);
  return decoder.read(await io.read(task.file.filePath), Number(task.file.recordCount), deleted);
}

/** Reads the key columns of data files: the live rows of a task, or every row of its file. */
export function keyReader(table: BuildTable, key: TableKey, schema: Schema) {
  const m = table.metadata;
  // only the key columns, in schema order: each read row is then the key's values (TableKey.encode)
  const keySchema = new Schema(schema.schemaId, key.fieldIds.map((id) => schema.findField(id)!), []);
  const loader = new DeleteLoader(table.io, schema, m.schemas);
  const ctx = { io: table.io, schema: keySchema, schemas: m.schemas, specs: m.partitionSpecs, loader };
  // a single integer key column is read from its Arrow buffers (no row, no BigInt per row);
  // a value that is not a number there (null, beyond 2^53) gets the key's own encoding
  const integer = key.integerField;
  // a callback per row, not an async generator: a build reads millions of rows
  async function read(task: FileScanTask, each: (k: KeyId, pos: number) => void): Promise<void> {
    if (integer && (await readTaskIntegers(task, ctx, integer, (v, pos) => each(typeof v === 'number' ? v : key.encode([v], 'indexed key'), pos)))) return;
    for await (const batch of readTaskPositions(task, ctx)) {
      const rows: Row[] = batch.rows;
      for (let i = 0; i < rows.length; i++) each(key.encode(rows[i]!, 'indexed key'), batch.positions ? batch.positions[i]! : batch.firstPosition + i);
    }
  }
  return {
    live: read,
    /** Every row of the file, deleted or not (to learn the keys of the positions deletes removed). */
    all: (task: FileScanTask, each: (k: KeyId, pos: number) => void) => read({ ...task, deletes: { equality: [], position: [], dv: undefined } }, each),
    /** The deletes loader the reads use (its files are read once). */
    loader,
  };
}
