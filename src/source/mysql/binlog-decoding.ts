/**
 * The binlog reader's decoding for captured tables: H5's binlog value converters
 * (`createBinlogRowConverter`, exact and identical to the snapshot path) per mapped table, and the
 * connection options zongji must use for them. After a DDL the pipeline re-captures the table and
 * calls `set()` with the new mapping; rows logged after the DDL are then decoded with it.
 * With `cascades` set, every decoded transaction gets the synthetic child deletes of ON DELETE
 * CASCADE constraints (cascade.ts).
 */
import type { Row } from '../../model/values.js';
import { BINLOG_CONNECTION_OPTIONS, createBinlogRowConverter } from './binlog-values.js';
import type { BinlogDecoding, RowDecoder } from './binlog-transactions.js';
import type { CascadeExpander } from './cascade.js';
import type { TableRef, TransactionEvent } from './events.js';
import { tableKey } from './table-schema.js';
import type { MappedTable } from './type-mapping.js';

export class MappedTablesDecoding implements BinlogDecoding {
  readonly connectionOptions: Record<string, unknown> = { ...BINLOG_CONNECTION_OPTIONS };
  private readonly decoders = new Map<string, RowDecoder>();
  /** Synthetic ON DELETE CASCADE deletes (source.ts sets it from the discovered foreign keys). */
  cascades: CascadeExpander | undefined;

  constructor(tables: Iterable<MappedTable> = []) {
    for (const t of tables) this.set(t);
  }

  /** Adds or replaces the mapping of a table. */
  set(table: MappedTable): void {
    const convert: (row: Record<string, unknown>) => Row = createBinlogRowConverter(table);
    this.decoders.set(tableKey(table.schema.id), convert);
    this.cascades?.invalidate();
  }

  delete(table: TableRef): void {
    this.decoders.delete(tableKey(table));
  }

  decoderFor(table: TableRef): RowDecoder | undefined {
    return this.decoders.get(tableKey(table));
  }

  expandTransaction(t: TransactionEvent): TransactionEvent {
    return this.cascades ? this.cascades.expand(t) : t;
  }
}
