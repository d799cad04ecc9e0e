/**
 * The hand-over from snapshot to streaming (DBLog step 2, docs/seeds/seed-000.txt: Flink CDC
 * `BinlogSplitReader.shouldEmit`). Streaming starts at the LOWEST chunk high watermark; a change is
 * delivered only if it was committed after the high watermark of the chunk that holds its key —
 * earlier changes are already in that chunk's rows. Once the stream is past the HIGHEST high
 * watermark every change passes and the filter switches itself off.
 *
 * A key-changing UPDATE touches two keys that may live in two chunks: its delete half (old key) and
 * insert half (new key) are judged separately, and the change is narrowed to the half that is new
 * for its chunk (Flink CDC judges the whole update by one key, which can leave a stale old key).
 *
 * Tables without chunks (not snapshotted) pass unfiltered. Keyless tables are located by their chunk
 * column like any other; their rows carry no identity, so downstream appends them (at-least-once).
 *
 * Synthetic cascade deletes (`delete-matching`, cascade.ts) have no key to locate: one is dropped
 * when it is not after the high watermark of ANY chunk of its table (every chunk's rows already
 * reflect it) and passed otherwise, to apply to the whole table. Delivery note: when only some
 * chunks were read after the parent delete, a child row those chunks hold that was inserted after
 * the delete with the same FK values (parent key re-used inside the window) is deleted as well.
 */
import type { Row } from '../../../model/values.js';
import { ChunkLocator, type Chunk } from './chunk.js';
import type { RowChange, TableRef, TransactionChange, TransactionEvent } from '../events.js';
import type { KeyComparator, KeyTuple } from './key-compare.js';
import { isAfter, maxOffset, minOffset, type BinlogOffset, type EventPosition } from '../offset/offset.js';
import { tableKey } from '../schema/table-schema.js';
import type { MappedTable } from '../schema/type-mapping.js';

export interface HandoverTable {
  /** The table's mapping when the filter is made (its row layout may change with a DDL later: `mappingOf`). */
  readonly table: MappedTable;
  /** The complete chunk plan, in key order. */
  readonly chunks: readonly Chunk[];
  readonly comparator: KeyComparator;
  /** High watermark of every chunk, by chunk index. */
  readonly highWatermarks: ReadonlyMap<number, BinlogOffset>;
}

interface Prepared {
  locator: ChunkLocator;
  keyColumns: readonly string[];
  /** Key column indexes in the rows of `layout` (recomputed when a DDL replaces the mapping). */
  keyIdx: number[];
  layout: MappedTable;
  hw: ReadonlyMap<number, BinlogOffset>;
}

export interface HandoverOptions {
  /**
   * A catch-up pass before the remaining chunks are read: chunks without a high watermark are not
   * read yet, so every change of their keys is dropped (the chunk will be read later, after it),
   * and the filter never switches itself off.
   */
  readonly partial?: boolean;
  /** The table's current mapping (after a DDL the rows carry its layout); default: the one given. */
  readonly mappingOf?: (key: string) => MappedTable | undefined;
}

export class HandoverFilter {
  private readonly tables = new Map<string, Prepared>();
  private readonly bounds: { readonly start: BinlogOffset; readonly end: BinlogOffset } | undefined;

  /** Where streaming starts: the lowest chunk high watermark. */
  get start(): BinlogOffset {
    if (!this.bounds) throw new Error('hand-over: a filter without finished chunks has no start');
    return this.bounds.start;
  }

  /** Past this, everything passes. */
  get end(): BinlogOffset {
    if (!this.bounds) throw new Error('hand-over: a filter without finished chunks has no end');
    return this.bounds.end;
  }
  private passAll = false;

  constructor(
    tables: readonly HandoverTable[],
    private readonly options: HandoverOptions = {},
  ) {
    const all: BinlogOffset[] = [];
    for (const t of tables) {
      if (t.chunks.length === 0) continue;
      for (const c of t.chunks) {
        const hw = t.highWatermarks.get(c.index);
        if (hw) all.push(hw);
        else if (!options.partial) throw new Error(`hand-over: chunk ${c.index} of ${tableKey(t.table.schema.id)} has no high watermark: expected every chunk to be finished`);
      }
      const keyColumns = t.chunks[0]!.keyColumns;
      this.tables.set(tableKey(t.table.schema.id), {
        locator: new ChunkLocator(t.comparator, t.chunks),
        keyColumns,
        keyIdx: keyIndexes(t.table, keyColumns),
        layout: t.table,
        hw: t.highWatermarks,
      });
    }
    if (all.length === 0 && !options.partial) throw new Error('hand-over: expected at least one snapshotted chunk');
    // a partial filter with nothing finished yet drops every change of its tables and has no bounds
    this.bounds = all.length > 0 ? { start: minOffset(all), end: maxOffset(all) } : undefined;
  }

  /** The table's key column indexes in the layout its rows are decoded with now. */
  private keyIdxOf(key: string, p: Prepared): number[] {
    const current = this.options.mappingOf?.(key);
    if (current && current !== p.layout) {
      const idx = keyIndexes(current, p.keyColumns);
      if (idx.some((i) => i < 0)) {
        throw new Error(`hand-over: table ${key} no longer has its chunk key column(s) ${p.keyColumns.join(', ')} after a DDL: re-snapshot the table (drop its Iceberg table)`);
      }
      p.layout = current;
      p.keyIdx = idx;
    }
    return p.keyIdx;
  }

  /** True once the stream has passed every chunk's high watermark. */
  get finished(): boolean {
    return this.passAll;
  }

  /** The transaction with the changes already contained in chunk rows removed. */
  async filter(t: TransactionEvent): Promise<TransactionEvent> {
    if (this.passAll) return t;
    if (!this.options.partial && isAfter(t.position, this.end)) {
      this.passAll = true;
      return t;
    }
    // locate all keys of the transaction per table in one go (collation sort keys in one round trip)
    const keysByTable = new Map<string, KeyTuple[]>();
    for (const c of t.changes) {
      const p = this.tables.get(tableKey(c.table));
      if (!p || c.op === 'delete-matching') continue;
      const list = keysByTable.get(tableKey(c.table)) ?? [];
      const keyIdx = this.keyIdxOf(tableKey(c.table), p);
      if (c.before) list.push(keyIdx.map((i) => c.before![i]!));
      if (c.after) list.push(keyIdx.map((i) => c.after![i]!));
      keysByTable.set(tableKey(c.table), list);
    }
    const located = new Map<string, number[]>();
    for (const [k, keys] of keysByTable) located.set(k, await this.tables.get(k)!.locator.locateMany(keys));
    const cursor = new Map<string, number>();
    const next = (table: TableRef) => {
      const k = tableKey(table);
      const i = cursor.get(k) ?? 0;
      cursor.set(k, i + 1);
      return located.get(k)![i]!;
    };
    const out: TransactionChange[] = [];
    for (const c of t.changes) {
      const p = this.tables.get(tableKey(c.table));
      if (!p) {
        out.push(c);
        continue;
      }
      if (c.op === 'delete-matching') {
        if ([...p.hw.values()].some((hw) => isAfter(c.position, hw))) out.push(c);
        continue;
      }
      // a chunk without a high watermark is read later (partial filter): its rows will hold this
      const newFor = (chunkIndex: number) => {
        const hw = p.hw.get(chunkIndex);
        return hw !== undefined && isAfter(c.position, hw);
      };
      const beforeNew = c.before ? newFor(next(c.table)) : false;
      const afterNew = c.after ? newFor(next(c.table)) : false;
      if (c.op === 'insert') {
        if (afterNew) out.push(c);
      } else if (c.op === 'delete') {
        if (beforeNew) out.push(c);
      } else if (beforeNew && afterNew) out.push(c);
      else if (beforeNew) out.push(narrow(c, 'delete', c.before!, c.position));
      else if (afterNew) out.push(narrow(c, 'insert', c.after!, c.position));
    }
    const unchanged = out.length === t.changes.length && out.every((c, i) => c === t.changes[i]);
    return unchanged ? t : { ...t, changes: out };
  }
}

function keyIndexes(table: MappedTable, keyColumns: readonly string[]): number[] {
  return keyColumns.map((name) => table.columns.findIndex((c) => c.column.name === name));
}

function narrow(c: RowChange, op: 'insert' | 'delete', row: Row, position: EventPosition): RowChange {
  return op === 'delete' ? { table: c.table, op, before: row, position } : { table: c.table, op, after: row, position };
}
