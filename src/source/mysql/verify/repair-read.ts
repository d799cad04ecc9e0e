/**
 * `floe verify --repair` re-copies the chunks that differ exactly as the snapshot copies them: the
 * DBLog chunk read (snapshot-reader.ts) — low watermark, SELECT, high watermark, the binlog window
 * applied — so each chunk's rows are the table's at their high watermark, with the table's ON DELETE
 * CASCADE deletes in the window applied too. Its binlog readers use replica server ids of their own
 * (`serverIdBase` + worker), never floe run's.
 */
import type { Row } from '../../../model/values.js';
import type { MysqlConnectionConfig } from '../client.js';
import type { ServerDialect } from '../dialect.js';
import type { BinlogOffset, ServerIdentity } from '../offset/offset.js';
import { MappedTablesDecoding } from '../binlog/binlog-decoding.js';
import { CascadeExpander } from '../binlog/cascade.js';
import type { Chunk } from '../snapshot/chunk.js';
import type { KeyComparator } from '../snapshot/key-compare.js';
import { readSnapshot } from '../snapshot/snapshot-reader.js';
import type { CascadeRule } from '../schema/foreign-keys.js';
import { tableKey } from '../schema/table-schema.js';
import type { MappedTable } from '../schema/type-mapping.js';

export interface RepairReadOptions {
  readonly connection: MysqlConnectionConfig;
  readonly dialect: ServerDialect;
  readonly identity: ServerIdentity;
  readonly table: MappedTable;
  readonly captured: ReadonlyMap<string, MappedTable>;
  readonly cascades: readonly CascadeRule[];
  readonly chunks: readonly Chunk[];
  /** The chunk key's order (the source's comparator over the chunk key columns). */
  readonly comparator: KeyComparator;
  readonly parallelism: number;
  readonly serverIdBase: number;
}

export interface RepairedChunkRows {
  readonly chunk: Chunk;
  /** The chunk's rows at `highWatermark` (value model, column order of the table). */
  readonly rows: Row[];
  /** The chunk's window: the rows are the table's at `highWatermark`, read from `lowWatermark` on. */
  readonly lowWatermark: BinlogOffset;
  readonly highWatermark: BinlogOffset;
}

/** Reads the chunks DBLog-style; yields each once, in completion order. */
export async function* readChunksForRepair(o: RepairReadOptions): AsyncGenerator<RepairedChunkRows> {
  const key = tableKey(o.table.schema.id);
  const rules = o.cascades.filter((r) => tableKey(r.child) === key);
  const triggers = [...new Set(rules.map((r) => tableKey(r.trigger)))].filter((k) => k !== key && o.captured.has(k));
  const decoding = new MappedTablesDecoding([o.table, ...triggers.map((k) => o.captured.get(k)!)]);
  if (rules.length > 0) decoding.cascades = new CascadeExpander(rules, (k) => (k === key ? o.table : o.captured.get(k)));
  for await (const r of readSnapshot({
    connection: o.connection,
    dialect: o.dialect,
    identity: o.identity,
    tables: [{ table: o.table, chunks: o.chunks, comparator: o.comparator }],
    parallelism: o.parallelism,
    backfill: true,
    decoding,
    serverIdBase: o.serverIdBase,
    cascadeTriggers: () => rules.map((r) => r.trigger),
  })) {
    yield { chunk: r.chunk, rows: r.rows, lowWatermark: r.lowWatermark, highWatermark: r.highWatermark };
  }
}
