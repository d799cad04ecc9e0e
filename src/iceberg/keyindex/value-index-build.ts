/**
 * Building a table's value indexes (value-index.ts) from the lake: one read of the columns they
 * need from the live rows of the current snapshot (deletes applied), each row at its position —
 * the row index of a keyless table (the whole row), the foreign-key indexes of a cascade child (its
 * FK columns, each row with its identity `owner`: the primary key, or the whole row of a keyless
 * child, which is how its copy is located again when a commit must be planned anew, dv-replan.ts).
 */
import type { Row, Value } from '../../model/values.js';
import { DeleteLoader } from '../scan/delete-loader.js';
import { planScan } from '../scan/scan-plan.js';
import { readTaskPositions } from '../scan/task-reader.js';
import { Schema } from '../spec/schema.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { BuildTable } from './key-index-build.js';
import { MemoryValueIndex } from './memory-value-index.js';
import { encodeKey } from './row-key.js';
import { TableKey, type KeyId } from './table-key.js';
import type { KeptValueIndex, ValueEntry } from './value-index.js';

/** One value index of a table: which columns it holds the value of, and how a value is encoded. */
export interface ValueIndexSpec {
  /** Its name among the table's value indexes (`ROW_INDEX`, or an FK column set's field ids joined). */
  readonly name: string;
  /** Field ids of the indexed columns, in schema order. */
  readonly fieldIds: readonly number[];
  /** The value of a row's columns (in `fieldIds` order); undefined: the row is not indexed. */
  encode(values: readonly Value[]): KeyId | undefined;
}

/** The name of a keyless table's row index. */
export const ROW_INDEX = 'row';

/** The row index of a keyless table: every column, nulls included (what `TableKey.wholeRow(schema).keyOfRow` gives). */
export function rowIndexSpec(schema: Schema): ValueIndexSpec {
  const key = TableKey.allColumns(schema);
  return { name: ROW_INDEX, fieldIds: key.fieldIds, encode: (values) => key.encode(values, 'indexed row') };
}

/** The FK indexes of a cascade child: per FK column set (field ids in schema order) its values (delete-matching.ts encodes them alike). */
export function fkIndexSpecs(schema: Schema, sets: readonly (readonly number[])[]): ValueIndexSpec[] {
  return sets.map((ids) => {
    const types = ids.map((id) => schema.findField(id)!.type);
    // a null FK references nothing: not indexed
    return { name: ids.join(','), fieldIds: ids, encode: (values) => (values.some((v) => v === null) ? undefined : encodeKey(types, values, 'foreign key')) };
  });
}

/** The identity of a cascade child's rows, as its writer records them: the primary key, or the whole row. */
export function ownerKey(schema: Schema): TableKey {
  return schema.identifierFieldIds.length > 0 ? TableKey.identifier(schema) : TableKey.allColumns(schema);
}

/**
 * Moves indexes that outgrew memory to disk, in place in the map, between two data files of a build
 * (value-index-lifecycle.ts), so that a build never holds more than the bound and one file's rows.
 */
export type ValueIndexSpill = (indexes: Map<string, KeptValueIndex>) => void;

/** How a build goes: each row's `owner` identity, the spill to disk, the snapshot (default: the current one). */
export interface ValueIndexBuild {
  readonly owner?: TableKey;
  readonly spill?: ValueIndexSpill;
  readonly snapshotId?: bigint;
}

/** Builds the value indexes `specs` of a snapshot of the table (`how`). */
export async function buildValueIndexes(table: BuildTable, schema: Schema, specs: readonly ValueIndexSpec[], how: ValueIndexBuild = {}): Promise<Map<string, KeptValueIndex>> {
  const m = table.metadata;
  const { owner, spill } = how;
  const snapshotId = how.snapshotId ?? currentSnapshot(m)?.snapshotId;
  const out = new Map<string, KeptValueIndex>(specs.map((s) => [s.name, new MemoryValueIndex(snapshotId)]));
  // only the columns needed, in schema order
  const ids = new Set([...specs.flatMap((s) => s.fieldIds), ...(owner?.fieldIds ?? [])]);
  const fields = schema.fields.filter((f) => ids.has(f.id));
  const at = (id: number) => fields.findIndex((f) => f.id === id);
  const reads = specs.map((s) => ({ spec: s, positions: s.fieldIds.map(at) }));
  const ownerAt = owner?.fieldIds.map(at);
  const ctx = { io: table.io, schema: new Schema(schema.schemaId, fields, []), schemas: m.schemas, specs: m.partitionSpecs, loader: new DeleteLoader(table.io, schema, m.schemas) };
  const plan = await planScan(table.io, m, snapshotId === undefined ? {} : { snapshotId });
  for (const task of plan.tasks) {
    const entries = reads.map(() => [] as ValueEntry[]);
    for await (const batch of readTaskPositions(task, ctx)) {
      const rows: Row[] = batch.rows;
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        const pos = batch.positions ? batch.positions[i]! : batch.firstPosition + i;
        const identity = owner && ownerAt ? owner.encode(ownerAt.map((p) => row[p] ?? null), 'indexed key') : undefined;
        reads.forEach((r, j) => {
          const value = r.spec.encode(r.positions.map((p) => row[p] ?? null));
          if (value !== undefined) entries[j]!.push({ value, file: task.file, pos, owner: identity });
        });
      }
    }
    reads.forEach((r, j) => out.get(r.spec.name)!.addRows(entries[j]!));
    spill?.(out);
  }
  return out;
}

/** The row index of a keyless table's current snapshot (also what a commit planned anew locates copies in). */
export async function buildRowIndex(table: BuildTable, schema: Schema): Promise<KeptValueIndex> {
  return (await buildValueIndexes(table, schema, [rowIndexSpec(schema)])).get(ROW_INDEX)!;
}
