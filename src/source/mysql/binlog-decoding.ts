/**
 * The binlog reader's decoding for captured tables: the source's binlog value converters
 * (`createBinlogRowConverter`, exact and identical to the snapshot path) per mapped table, and the
 * connection options zongji must use for them. After a DDL the pipeline re-captures the table and
 * calls `set()` with the new mapping; rows logged after the DDL are then decoded with it.
 * With `cascades` set, every decoded transaction gets the synthetic child deletes of ON DELETE
 * CASCADE constraints (cascade.ts).
 *
 * Cross-check after a DDL: a mapping replaced with `set(table, {verify: true})` is compared with the
 * column names of the first rows logged for the table afterwards (the table map carries them under
 * binlog_row_metadata=FULL). Rows are decoded by name, so a logged column the mapping lacks would
 * otherwise be dropped silently; a difference stops the stream with both lists instead.
 */
import type { Row } from '../../model/values.js';
import { FloeError } from '../../util/errors.js';
import { BINLOG_CONNECTION_OPTIONS, createBinlogRowConverter } from './binlog-values.js';
import type { BinlogDecoding, RowDecoder } from './binlog-transactions.js';
import type { CascadeExpander } from './cascade.js';
import type { TableRef, TransactionEvent } from './events.js';
import { isAfter, type BinlogOffset, type EventPosition } from './offset.js';
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

  private readonly unverified = new Map<string, MappedTable>();
  /** Per table: rows at or before this offset are not decoded (`skipThrough`). */
  private readonly skipped = new Map<string, BinlogOffset>();

  /**
   * Rows of `key` logged at or before `offset` are dropped undecoded: the consumer holds them (it
   * resumes the table after them), and they may have another layout than the table's mapping —
   * the mapping is the definition valid at `offset`, and an older DDL of the table lies before it.
   */
  skipThrough(key: string, offset: BinlogOffset): void {
    this.skipped.set(key, offset);
  }

  /** Adds or replaces the mapping of a table; `verify`: check it against the next logged layout. */
  set(table: MappedTable, options: { verify?: boolean } = {}): void {
    const convert: (row: Record<string, unknown>) => Row = createBinlogRowConverter(table);
    const key = tableKey(table.schema.id);
    this.decoders.set(key, convert);
    if (options.verify) this.unverified.set(key, table);
    else this.unverified.delete(key);
    this.cascades?.invalidate();
  }

  delete(table: TableRef): void {
    this.decoders.delete(tableKey(table));
  }

  decoderFor(table: TableRef, _tableMap?: unknown, logged?: readonly string[], position?: EventPosition): RowDecoder | undefined {
    const key = tableKey(table);
    if (this.skipped.size > 0 && position) {
      const through = this.skipped.get(key);
      // A table whose deletes cascade to other captured tables is decoded all the same: the child's
      // offset may lie before the delete (it then needs the synthetic child delete), and the router
      // drops the table's own replayed changes by its offset anyway. (So a schema change of such a
      // parent made while floe was stopped still stops floe when a child's offset lags behind it.)
      if (through && this.cascades?.triggers(key)) {
        this.skipped.delete(key);
      } else if (through) {
        if (!isAfter(position, through)) return undefined;
        this.skipped.delete(key); // the stream is in order: everything from here on is new
      }
    }
    if (logged && this.unverified.size > 0) {
      const expected = this.unverified.get(key);
      if (expected) {
        const names = expected.columns.map((c) => c.column.name);
        if (names.length !== logged.length || names.some((n, i) => n.toLowerCase() !== logged[i].toLowerCase())) {
          throw new FloeError(
            'source.mysql',
            'invalid-data',
            `table ${key}: after the last DDL floe expected the binlog rows to carry the columns (${names.join(', ')}), but they carry (${logged.join(', ')}); the DDL was not understood as the server applied it — re-snapshot the table (drop its Iceberg table and restart floe)`,
          );
        }
        this.unverified.delete(key);
      }
    }
    return this.decoders.get(key);
  }

  expandTransaction(t: TransactionEvent): TransactionEvent {
    return this.cascades ? this.cascades.expand(t) : t;
  }
}
