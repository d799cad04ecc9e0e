/**
 * Some columns of committed rows named by their places (data file, position): what a cascade
 * child's removed rows carry when other tables reference columns outside its primary key
 * (cascade-removals.ts). Each file is read once for all of its places, with only those columns.
 */
import type { FileIO } from '../../io/file-io.js';
import type { Value } from '../../model/values.js';
import { DeleteLoader } from '../scan/delete-loader.js';
import { readTaskPositions } from '../scan/task-reader.js';
import type { DataFile } from '../spec/data-file.js';
import { Schema } from '../spec/schema.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import { FloeError } from '../../util/errors.js';

export interface RowsAtTable {
  readonly metadata: TableMetadata;
  readonly io: FileIO;
}

/** The values of fields `fieldIds` (current schema) of the rows at `places`, in the order of `places`. */
export async function readRowsAt(table: RowsAtTable, fieldIds: readonly number[], places: readonly { file: DataFile; pos: number }[]): Promise<Value[][]> {
  const m = table.metadata;
  const current = m.schemas.find((s) => s.schemaId === m.currentSchemaId)!;
  const schema = new Schema(current.schemaId, current.fields.filter((f) => fieldIds.includes(f.id)), []);
  const ctx = { io: table.io, schema, schemas: m.schemas, specs: m.partitionSpecs, loader: new DeleteLoader(table.io, schema, m.schemas) };
  const byFile = new Map<string, { file: DataFile; at: Map<number, number[]> }>();
  places.forEach(({ file, pos }, i) => {
    let f = byFile.get(file.filePath);
    if (!f) byFile.set(file.filePath, (f = { file, at: new Map() }));
    const list = f.at.get(pos);
    if (list) list.push(i);
    else f.at.set(pos, [i]);
  });
  const out: Value[][] = new Array(places.length);
  for (const { file, at } of byFile.values()) {
    // no deletes applied: the rows are live in the snapshot the caller found them in
    const task = { file, sequenceNumber: 0n, deletes: { equality: [], position: [], dv: undefined } };
    for await (const batch of readTaskPositions(task, ctx)) {
      batch.rows.forEach((row, j) => {
        const pos = batch.positions ? batch.positions[j]! : batch.firstPosition + j;
        for (const i of at.get(pos) ?? []) out[i] = [...row];
      });
    }
  }
  const missing = out.findIndex((r) => r === undefined);
  if (missing >= 0) throw new FloeError('iceberg.writer', 'invalid-data', `${places[missing]!.file.filePath} has no row at position ${places[missing]!.pos}, which the table's foreign-key index names; the index is out of step with the lake (restart floe: it is built again)`);
  return out;
}
