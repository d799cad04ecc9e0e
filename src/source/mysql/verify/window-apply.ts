/**
 * Bringing a chunk's rows from the point they were read at (read-point.ts) to the offset the lake
 * stands at, with the table's binlog changes in between (change-log.ts): so that the chunk is
 * compared with the lake at ONE point of the source's history, and lag is never taken for a
 * difference (docs/verify.md "A consistent point").
 *
 * Tables with a primary key, in two steps (rows keyed by primary key):
 * 1. forward, DBLog-style (snapshot-reader.ts backfill): from the first change the read may lack,
 *    every change up to P = max(read high watermark, lake offset) is applied in order — an insert or
 *    update sets its key's row, a delete (or the old key of a key-changing update) removes it, a
 *    synthetic cascade delete removes the rows it matches. Re-applying a change the read already
 *    holds is harmless (full row images; the last change of a key wins), so the rows are exactly the
 *    table's at P;
 * 2. backward, when the lake is behind P: every change after the lake's offset up to P is undone, in
 *    reverse order (the before image comes back, the after image goes) — the rows at the lake's
 *    offset. A cascade's deleted rows are not in the binlog: undoing one is impossible, and the
 *    chunk is reported as not comparable yet ('unresolvable').
 * Tables without a key (rows are a multiset) cannot absorb a change twice: their rows are brought
 * over only when the read point is exact for every change in between (no 'maybe', read-point.ts).
 *
 * Rows are not filtered by chunk here: rows that moved in or out of the chunk's range are the
 * caller's to keep or drop.
 */
import type { Row } from '../../../model/values.js';
import type { CascadeDeleteChange, RowChange } from '../events.js';
import { compareOffsets, isAfter, type BinlogOffset } from '../offset/offset.js';
import { keyText } from '../snapshot/snapshot-reader.js';
import type { MappedTable } from '../schema/type-mapping.js';
import type { LoggedChange } from './change-log.js';
import { readStatus, type ReadPoint } from './read-point.js';

export type Reconstructed = { readonly rows: Row[] } | { readonly unresolvable: string };

/**
 * The rows read at `point`, brought to `target` (the lake's offset) with `changes` — the table's
 * changes in binlog order, covering everything after min(point.low, target) up to max(point.high,
 * target) at least.
 */
export function rowsAtOffset(table: MappedTable, rows: readonly Row[], point: ReadPoint, target: BinlogOffset, changes: readonly LoggedChange[]): Reconstructed {
  const pk = table.schema.primaryKey.map((name) => table.columns.findIndex((c) => c.column.name === name));
  return pk.length > 0 ? keyedRows(table, pk, rows, point, target, changes) : keylessRows(table, rows, point, target, changes);
}

function keyedRows(table: MappedTable, pk: number[], rows: readonly Row[], point: ReadPoint, target: BinlogOffset, changes: readonly LoggedChange[]): Reconstructed {
  const key = (row: Row) => keyText(pk.map((i) => row[i]!));
  const byKey = new Map<string, Row>();
  for (const r of rows) byKey.set(key(r), r);
  const p = compareOffsets(point.high, target) >= 0 ? point.high : target;
  const upToP = (c: LoggedChange) => !isAfter(c.position, p);
  let replaying = false;
  for (const c of changes) {
    if (!upToP(c)) break;
    if (!replaying && readStatus(point, c.position) === 'yes') continue;
    replaying = true;
    if (c.op === 'delete-matching') {
      if (c.columns.length === 0) return { unresolvable: cascadeReason(c) };
      for (const [k] of matching(table, byKey, c)) byKey.delete(k);
      continue;
    }
    const before = c.before ? key(c.before) : undefined;
    const after = c.after ? key(c.after) : undefined;
    if (before !== undefined && before !== after) byKey.delete(before);
    if (after !== undefined) byKey.set(after, c.after!);
  }
  if (compareOffsets(target, p) < 0) {
    const undo = changes.filter((c) => isAfter(c.position, target) && upToP(c));
    for (let i = undo.length - 1; i >= 0; i--) {
      const c = undo[i]!;
      if (c.op === 'delete-matching') return { unresolvable: cascadeReason(c) };
      const before = c.before ? key(c.before) : undefined;
      const after = c.after ? key(c.after) : undefined;
      if (after !== undefined && after !== before) byKey.delete(after);
      if (before !== undefined) byKey.set(before, c.before!);
    }
  }
  return { rows: [...byKey.values()] };
}

function keylessRows(table: MappedTable, rows: readonly Row[], point: ReadPoint, target: BinlogOffset, changes: readonly LoggedChange[]): Reconstructed {
  const bag = new Map<string, { row: Row; n: number }>();
  const add = (r: Row) => {
    const k = keyText(r);
    const e = bag.get(k);
    if (e) e.n++;
    else bag.set(k, { row: r, n: 1 });
  };
  const remove = (r: Row): boolean => {
    const k = keyText(r);
    const e = bag.get(k);
    if (!e) return false;
    if (--e.n === 0) bag.delete(k);
    return true;
  };
  for (const r of rows) add(r);
  const p = compareOffsets(point.high, target) >= 0 ? point.high : target;
  const forward: RowChange[] = [];
  const backward: RowChange[] = [];
  for (const c of changes) {
    if (isAfter(c.position, p)) break;
    const status = readStatus(point, c.position);
    const inLake = !isAfter(c.position, target);
    if (status === 'maybe') return { unresolvable: 'the table has no primary key and changed while the chunk was read; its rows cannot be placed at one point of the binlog' };
    if ((status === 'yes') === inLake) continue;
    if (c.op === 'delete-matching') {
      if (status === 'yes' || c.columns.length === 0) return { unresolvable: cascadeReason(c) };
      for (const [k] of matching(table, bag, c, (e) => e.row)) bag.delete(k);
      continue;
    }
    (status === 'no' ? forward : backward).push(c);
  }
  for (const c of forward) {
    if (c.before && !remove(c.before)) return { unresolvable: 'a delete the chunk read should hold found no such row' };
    if (c.after) add(c.after);
  }
  for (let i = backward.length - 1; i >= 0; i--) {
    const c = backward[i]!;
    if (c.after && !remove(c.after)) return { unresolvable: 'a change the chunk read holds found no such row to undo' };
    if (c.before) add(c.before);
  }
  return { rows: [...bag.values()].flatMap((e) => Array.from({ length: e.n }, () => e.row)) };
}

function cascadeReason(c: CascadeDeleteChange): string {
  if (c.columns.length === 0) {
    return `an ON DELETE CASCADE from ${c.cause.table.database}.${c.cause.table.table} (via ${c.cause.constraints.join(' > ')}) may have removed rows between the read and the lake's offset; which rows, only the lake of its parent says, so the chunk cannot be compared until floe run has committed past it`;
  }
  return `an ON DELETE CASCADE from ${c.cause.table.database}.${c.cause.table.table} removed rows after the lake's offset; the rows it removed are not in the binlog, so the chunk cannot be compared at the lake's offset until floe run has committed past it`;
}

/** The entries whose `change.columns` equal `change.values` (keyText on both sides). */
function matching<V>(table: MappedTable, entries: Map<string, V>, change: CascadeDeleteChange, rowOf: (v: V) => Row = (v) => v as unknown as Row): [string, V][] {
  const idx = change.columns.map((name) => table.columns.findIndex((c) => c.column.name.toLowerCase() === name.toLowerCase()));
  if (idx.some((i) => i < 0)) return [];
  const wanted = keyText(change.values);
  return [...entries].filter(([, v]) => keyText(idx.map((i) => rowOf(v)[i]!)) === wanted);
}
