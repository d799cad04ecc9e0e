/**
 * A snapshot chunk: one key range of one table, the unit the DBLog snapshot reads, watermarks and
 * reports as done (Flink CDC's `SnapshotSplit`). Chunks are plain values: they are persisted as
 * progress (`serializeChunk` / `parseChunk`) and rebuilt on any machine.
 *
 * A table's chunks are numbered from 0 in key order and tile the key space: chunk i covers
 * [lower, upper) with chunk 0 open below (and holding NULL keys of a nullable chunk column) and the
 * last chunk open above; chunk i's upper is chunk i+1's lower. A table split with no key at all is one
 * chunk with no bounds.
 *
 * `keyless` chunks come from tables without a primary key: their rows have no identity, so they can be
 * appended but never upserted, and backfill / hand-over cannot deduplicate them (at-least-once).
 */
import type { Value } from '../../../model/values.js';
import { fromHex, toHex } from '../../../model/values.js';
import { FloeError } from '../../../util/errors.js';
import { parseJson, stringifyJson } from '../../../util/json.js';
import { quoteIdent } from '../client.js';
import type { ServerFlavor } from '../dialect.js';
import type { KeyComparator, KeyTuple } from './key-compare.js';
import { keyLowerCondition, keyUpperCondition } from './key-sql.js';
import type { TableId } from '../schema/table-schema.js';
import { qualifiedTable, tableKey } from '../schema/table-schema.js';
import type { MappedColumn, MappedTable } from '../schema/type-mapping.js';
import { snapshotSelectList } from './snapshot-values.js';

export interface Chunk {
  table: TableId;
  /** Position in the table's split, from 0, in key order. */
  index: number;
  /** Names of the chunk key columns, in key order (empty: the whole table is one chunk). */
  keyColumns: string[];
  /** Inclusive lower bound (key values in the value model); absent for the first chunk. */
  lower?: Value[];
  /** Exclusive upper bound; absent for the last chunk. */
  upper?: Value[];
  /** The table has no primary key (see the module header). */
  keyless?: boolean;
}

/** 'db.table#3' — a stable id for logs and progress records. */
export function chunkId(chunk: Chunk): string {
  return `${tableKey(chunk.table)}#${chunk.index}`;
}

// ---- persistence ----------------------------------------------------------------------------------

type EncodedValue = null | boolean | string | { n: string } | { l: string } | { x: string };

function encodeValue(v: Value): EncodedValue {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return { n: Object.is(v, -0) ? '-0' : String(v) };
  if (typeof v === 'bigint') return { l: v.toString() };
  return { x: toHex(v) };
}

function decodeValue(e: unknown): Value {
  if (e === null || typeof e === 'boolean' || typeof e === 'string') return e;
  if (typeof e === 'object' && e !== null) {
    const o = e as Record<string, unknown>;
    if (typeof o.n === 'string') return Number(o.n);
    if (typeof o.l === 'string') return BigInt(o.l);
    if (typeof o.x === 'string') return Buffer.from(fromHex(o.x)); // Buffer, like the converters' bytes
  }
  throw new FloeError('source.mysql', 'invalid-data', `chunk bound value ${JSON.stringify(e)} is not an encoded key value: expected null, boolean, string, {n}, {l} or {x}`);
}

/** Lossless JSON of a chunk (bigints, bytes and -0 survive). */
export function serializeChunk(chunk: Chunk): string {
  return stringifyJson({
    table: { database: chunk.table.database, table: chunk.table.table },
    index: chunk.index,
    keyColumns: chunk.keyColumns,
    lower: chunk.lower?.map(encodeValue),
    upper: chunk.upper?.map(encodeValue),
    keyless: chunk.keyless ? true : undefined,
  } as never);
}

export function parseChunk(text: string): Chunk {
  const o = parseJson(text) as Record<string, any>;
  if (!o || typeof o !== 'object' || !o.table || typeof o.table.database !== 'string' || typeof o.table.table !== 'string' || typeof o.index !== 'number' || !Array.isArray(o.keyColumns)) {
    throw new FloeError('source.mysql', 'invalid-data', `not a serialized chunk: expected {table:{database,table}, index, keyColumns, lower?, upper?}, found ${text.slice(0, 120)}`);
  }
  const chunk: Chunk = { table: { database: o.table.database, table: o.table.table }, index: o.index, keyColumns: o.keyColumns.map(String) };
  if (Array.isArray(o.lower)) chunk.lower = o.lower.map(decodeValue);
  if (Array.isArray(o.upper)) chunk.upper = o.upper.map(decodeValue);
  if (o.keyless === true) chunk.keyless = true;
  return chunk;
}

// ---- SQL ---------------------------------------------------------------------------------------------

/** The mapped columns of a chunk's key, in key order. */
export function chunkKeyColumns(table: MappedTable, chunk: Pick<Chunk, 'keyColumns'>): MappedColumn[] {
  return chunk.keyColumns.map((name) => {
    const c = table.columns.find((col) => col.column.name === name);
    if (!c) throw new FloeError('source.mysql', 'invalid-data', `chunk key column ${JSON.stringify(name)} is not a column of ${tableKey(table.schema.id)}: the table changed since it was split; re-snapshot it`);
    return c;
  });
}

/** The WHERE condition selecting exactly a chunk's rows ('' for a whole-table chunk). */
export function chunkCondition(table: MappedTable, chunk: Chunk): string {
  const columns = chunkKeyColumns(table, chunk);
  const parts: string[] = [];
  if (chunk.lower) parts.push(keyLowerCondition(columns, chunk.lower, true));
  if (chunk.upper) {
    const upper = keyUpperCondition(columns, chunk.upper, false);
    // The first chunk also holds the NULL keys of a nullable (single) chunk column.
    parts.push(!chunk.lower && columns.length === 1 && columns[0]!.column.nullable ? `(${upper} OR ${quoteIdent(columns[0]!.column.name)} IS NULL)` : upper);
  }
  return parts.map((p) => `(${p})`).join(' AND ');
}

/**
 * `SELECT <all columns> FROM db.t WHERE <chunk range>`: the chunk's rows, in the column order and form
 * `createSnapshotRowConverter(table)` reads (stream it with `MysqlClient.stream`), on a server of `flavor`.
 */
export function chunkSql(table: MappedTable, chunk: Chunk, flavor: ServerFlavor): string {
  const where = chunkCondition(table, chunk);
  return `SELECT ${snapshotSelectList(table, flavor)} FROM ${qualifiedTable(table.schema.id)}${where ? ' WHERE ' + where : ''}`;
}

// ---- locating keys ---------------------------------------------------------------------------------

/** Whether `key` lies in [lower, upper) of the chunk (comparator must be prepared for these values). */
export function chunkContainsKey(comparator: KeyComparator, chunk: Chunk, key: KeyTuple): boolean {
  if (chunk.lower && comparator.compare(key, chunk.lower) < 0) return false;
  if (chunk.upper && comparator.compare(key, chunk.upper) >= 0) return false;
  return true;
}

/**
 * Finds which of a table's chunks holds a key (binary search over the tiling). Build it once per table
 * with the complete, ordered chunk list; `locate` prepares collation sort keys as needed.
 */
export class ChunkLocator {
  private boundsPrepared = false;

  constructor(
    readonly comparator: KeyComparator,
    readonly chunks: readonly Chunk[],
  ) {
    chunks.forEach((c, i) => {
      if (c.index !== i) throw new FloeError('source.mysql', 'invalid-argument', `ChunkLocator needs the table's chunks in order from 0: position ${i} holds chunk ${c.index}`);
    });
  }

  /** Index of the chunk holding each key (-1 when there are no chunks). */
  async locateMany(keys: readonly KeyTuple[]): Promise<number[]> {
    if (this.comparator.needsPrepare) {
      const tuples: KeyTuple[] = [...keys];
      if (!this.boundsPrepared) {
        for (const c of this.chunks) if (c.upper) tuples.push(c.upper);
      }
      await this.comparator.prepare(tuples);
      this.boundsPrepared = true;
    }
    return keys.map((k) => this.locatePrepared(k));
  }

  async locate(key: KeyTuple): Promise<number> {
    return (await this.locateMany([key]))[0]!;
  }

  /** Synchronous lookup; the keys' sort keys must already be prepared (or none are needed). */
  locatePrepared(key: KeyTuple): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    if (hi < 0) return -1;
    // first chunk whose upper bound is above the key
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const upper = this.chunks[mid]!.upper;
      if (upper && this.comparator.compare(key, upper) >= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
