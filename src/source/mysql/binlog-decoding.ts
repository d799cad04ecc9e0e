/**
 * The binlog reader's decoding for captured tables: H5's binlog value converters
 * (`createBinlogRowConverter`, exact and identical to the snapshot path) per mapped table, and the
 * connection options zongji must use for them. After a DDL the pipeline re-captures the table and
 * calls `set()` with the new mapping; rows logged after the DDL are then decoded with it.
 */
import type { Row } from '../../model/values.js';
import { BINLOG_CONNECTION_OPTIONS, createBinlogRowConverter } from './binlog-values.js';
import type { BinlogDecoding, RowDecoder } from './binlog-transactions.js';
import type { TableRef } from './events.js';
import { tableKey } from './table-schema.js';
import type { MappedTable } from './type-mapping.js';

export class MappedTablesDecoding implements BinlogDecoding {
  readonly connectionOptions: Record<string, unknown> = { ...BINLOG_CONNECTION_OPTIONS };
  private readonly decoders = new Map<string, RowDecoder>();

  constructor(tables: Iterable<MappedTable> = []) {
    for (const t of tables) this.set(t);
  }

  /** Adds or replaces the mapping of a table. */
  set(table: MappedTable): void {
    const convert: (row: Record<string, unknown>) => Row = createBinlogRowConverter(table);
    this.decoders.set(tableKey(table.schema.id), convert);
  }

  delete(table: TableRef): void {
    this.decoders.delete(tableKey(table));
  }

  decoderFor(table: TableRef): RowDecoder | undefined {
    return this.decoders.get(tableKey(table));
  }
}
