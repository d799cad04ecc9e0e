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
import type { Row } from '../../../model/values.js';
import { FloeError } from '../../../util/errors.js';
import { BINLOG_CONNECTION_OPTIONS, createBinlogRowConverter, tableMapLabels, type ZongjiTableMapEntry } from './zongji/binlog-values.js';
import type { BinlogDecoding, RowDecoder } from './raw-transactions.js';
import type { CascadeExpander } from './cascade.js';
import type { TableRef, TransactionEvent } from '../events.js';
import { compareOffsets, isAfter, type BinlogOffset, type EventPosition } from '../offset/offset.js';
import { tableKey } from '../schema/table-schema.js';
import type { MappedTable } from '../schema/type-mapping.js';
import { compileTable, type CompiledTable } from './rows/row-decoder.js';
import type { TableMapEvent } from './rows/table-map.js';

export class MappedTablesDecoding implements BinlogDecoding {
  readonly connectionOptions: Record<string, unknown> = { ...BINLOG_CONNECTION_OPTIONS };
  private readonly decoders = new Map<string, RowDecoder>();
  /** Per table: the last compilation, valid for that TABLE_MAP, that mapping and that way of decoding before images. */
  private readonly compiled = new Map<string, { map: TableMapEvent; mapped: MappedTable; keyOnly: boolean; table: CompiledTable }>();
  /**
   * How floe's decoder reads the images of what was there before (an UPDATE's before images, a
   * DELETE's rows) of a table with a primary key: 'full', or 'key' — only the primary key's columns
   * and those `keepInBefore` names, the others read as null. The pipeline asks for 'key': its writer
   * uses nothing else of a before image (keyed-change-writer.ts: the old key, to delete the row), the
   * snapshot hand-over and chunk windows the chunk key (handover.ts, snapshot-reader.ts), which the
   * source keeps. Half of what a change stream decodes is before images; their strings, decimals,
   * timestamps and JSON are never made. Tables without a primary key (the whole row is the key) and
   * tables whose deletes cascade (the child rows are found by the parent's other columns,
   * cascade.ts) are decoded in full, and so is everything zongji decodes.
   */
  beforeImages: 'full' | 'key' = 'full';
  /** Per table: columns besides the primary key a before image is decoded for (lowercase). */
  private readonly beforeKept = new Map<string, readonly string[]>();
  /** Mapped tables with ENUM or SET columns, whose labels the binlog itself may correct. */
  private readonly labelled = new Map<string, MappedTable>();
  /** Per table: the decoder built with the binlog's labels, and those labels (joined) it was built for. */
  private readonly relabelled = new Map<string, { signature: string; decode: RowDecoder }>();
  /** Synthetic ON DELETE CASCADE deletes (source-stream.ts sets it from the discovered foreign keys). */
  cascades: CascadeExpander | undefined;

  constructor(
    tables: Iterable<MappedTable> = [],
    /**
     * The mapping every table is decoded with now ("db.table" → mapping): the source's one map of
     * its captured tables (opened-source.ts), which `set` and `delete` change.
     */
    private readonly mapped: Map<string, MappedTable> = new Map(),
  ) {
    for (const t of tables) this.set(t);
  }

  /** The mapping rows of `key` are decoded with now. */
  mappingOf(key: string): MappedTable | undefined {
    return this.mapped.get(key);
  }

  private readonly unverified = new Map<string, MappedTable>();
  /** Per table: rows at or before this offset are not decoded (`skipThrough`). */
  private readonly skipped = new Map<string, BinlogOffset>();

  /**
   * Rows of `key` logged at or before `offset` are dropped undecoded: the consumer holds them (it
   * resumes the table after them, or the snapshot hand-over drops them: its chunks hold them), and
   * they may have another layout than the table's mapping — the mapping is the definition valid at
   * `offset`, and an older DDL of the table lies before it. Of two offsets the later one holds.
   */
  skipThrough(key: string, offset: BinlogOffset): void {
    const now = this.skipped.get(key);
    if (!now || compareOffsets(offset, now) > 0) this.skipped.set(key, offset);
  }

  /** Adds or replaces the mapping of a table; `verify`: check it against the next logged layout. */
  set(table: MappedTable, options: { verify?: boolean } = {}): void {
    const convert: (row: Record<string, unknown>) => Row = createBinlogRowConverter(table);
    const key = tableKey(table.schema.id);
    this.decoders.set(key, convert);
    this.mapped.set(key, table);
    this.compiled.delete(key);
    this.relabelled.delete(key);
    if (table.columns.some((c) => c.kind === 'enum' || c.kind === 'set')) this.labelled.set(key, table);
    else this.labelled.delete(key);
    if (options.verify) this.unverified.set(key, table);
    else this.unverified.delete(key);
    this.cascades?.invalidate();
  }

  /** Keeps `columns` in the decoded before images of `key` too (the snapshot's chunk key). */
  keepInBefore(key: string, columns: readonly string[]): void {
    this.beforeKept.set(key, [...new Set([...(this.beforeKept.get(key) ?? []), ...columns.map((c) => c.toLowerCase())])]);
    this.compiled.delete(key);
  }

  delete(table: TableRef): void {
    const key = tableKey(table);
    this.decoders.delete(key);
    this.mapped.delete(key);
    this.compiled.delete(key);
  }

  decoderFor(table: TableRef, tableMap?: unknown, logged?: readonly string[], position?: EventPosition): RowDecoder | undefined {
    const key = tableKey(table);
    if (!this.admits(key, logged, position)) return undefined;
    const labelled = this.labelled.get(key);
    if (labelled && tableMap) return this.withBinlogLabels(key, labelled, tableMap as ZongjiTableMapEntry);
    return this.decoders.get(key);
  }

  /**
   * floe's decoder for a rows event kept as bytes: the table compiled for its TABLE_MAP and the
   * mapping current now (once per TABLE_MAP and mapping), undefined to skip it. A column the decoder
   * cannot read throws (type-mapping.ts refuses such columns when the table is captured).
   */
  compiledFor(table: TableRef, map: TableMapEvent, logged?: readonly string[], position?: EventPosition): CompiledTable | undefined {
    const key = tableKey(table);
    if (!this.admits(key, logged, position)) return undefined;
    const mapped = this.mapped.get(key);
    if (!mapped) return undefined;
    // the cascade plan may change under a compilation (source-stream.ts replanCascades)
    const keyOnly = this.beforeImages === 'key' && mapped.schema.primaryKey.length > 0 && !this.cascades?.triggers(key);
    const cached = this.compiled.get(key);
    if (cached && cached.map === map && cached.mapped === mapped && cached.keyOnly === keyOnly) return cached.table;
    const before = keyOnly ? new Set([...mapped.schema.primaryKey.map((c) => c.toLowerCase()), ...(this.beforeKept.get(key) ?? [])]) : undefined;
    const compiled = compileTable(map, mapped, before);
    this.compiled.set(key, { map, mapped, keyOnly, table: compiled });
    return compiled;
  }

  /** Whether rows of `key` at `position` are decoded at all (skipThrough), after checking a DDL's mapping (`verify`). */
  private admits(key: string, logged: readonly string[] | undefined, position: EventPosition | undefined): boolean {
    if (this.skipped.size > 0 && position) {
      const through = this.skipped.get(key);
      // A table whose deletes cascade to other captured tables is decoded all the same: the child's
      // offset may lie before the delete (it then needs the synthetic child delete), and the router
      // drops the table's own replayed changes by its offset anyway. (So a schema change of such a
      // parent made while floe was stopped still stops floe when a child's offset lags behind it.)
      if (through && this.cascades?.triggers(key)) {
        this.skipped.delete(key);
      } else if (through) {
        if (!isAfter(position, through)) return false;
        this.skipped.delete(key); // the stream is in order: everything from here on is new
      }
    }
    if (logged && this.unverified.size > 0) {
      const expected = this.unverified.get(key);
      if (expected) {
        const names = expected.columns.map((c) => c.column.name);
        if (names.length !== logged.length || names.some((n, i) => n.toLowerCase() !== logged[i]!.toLowerCase())) {
          throw new FloeError(
            'source.mysql',
            'invalid-data',
            `table ${key}: after the last DDL floe expected the binlog rows to carry the columns (${names.join(', ')}), but they carry (${logged.join(', ')}); the DDL was not understood as the server applied it — re-snapshot the table (drop its Iceberg table and restart floe)`,
          );
        }
        this.unverified.delete(key);
      }
    }
    return true;
  }

  /**
   * ENUM and SET values arrive as indexes; their labels come from the captured COLUMN_TYPE — which
   * MariaDB renders in utf8mb3, so a label with a character outside the BMP reads as '?' there
   * (information_schema and SHOW CREATE TABLE alike), while the table map of binlog_row_metadata=FULL
   * carries the labels' own bytes. Where those differ the binlog's labels decode the rows.
   */
  private withBinlogLabels(key: string, table: MappedTable, tableMap: ZongjiTableMapEntry): RowDecoder | undefined {
    const fromBinlog = tableMapLabels(tableMap);
    const columns = table.columns.map((c) => {
      const labels = c.kind === 'enum' || c.kind === 'set' ? fromBinlog.get(c.column.name.toLowerCase()) : undefined;
      return labels && labels.length === (c.column.labels ?? []).length && labels.some((l, i) => l !== c.column.labels![i]) ? { ...c, column: { ...c.column, labels } } : c;
    });
    if (columns.every((c, i) => c === table.columns[i])) return this.decoders.get(key);
    const signature = JSON.stringify(columns.map((c) => c.column.labels));
    const cached = this.relabelled.get(key);
    if (cached?.signature === signature) return cached.decode;
    const decode = createBinlogRowConverter({ ...table, columns });
    this.relabelled.set(key, { signature, decode });
    return decode;
  }

  expandTransaction(t: TransactionEvent): TransactionEvent {
    return this.cascades ? this.cascades.expand(t) : t;
  }
}
