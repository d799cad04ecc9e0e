/**
 * What the binlog reader hands over between reading and decoding: transactions whose row changes are
 * still zongji's images or rows events kept as bytes (`RawTransaction`), and their decoding with the
 * table mappings current when the consumer takes them (`decodeTransaction`) — floe's row decoder
 * (row-decoder.ts) for rows events kept as bytes. The assembly of transactions is binlog-transactions.ts.
 */
import type { TableMapEntry } from '@vlasky/zongji';
import type { Row } from '../../../model/values.js';
import type { ChangeOp, DdlEvent, ProgressEvent, RowChange, TableRef, TransactionEvent } from '../events.js';
import type { EventPosition } from '../offset/offset.js';
import { decodeRowsEvent, requireFullImages, type CompiledTable } from './rows/row-decoder.js';
import type { TableMapEvent } from './rows/table-map.js';

/** Converts one zongji row image (column name → zongji value) into a floe Row. */
export type RowDecoder = (image: Record<string, unknown>) => Row;

/** the source's binlog value conversion, as the reader needs it. */
export interface BinlogDecoding {
  /** mysql2 options zongji's connections must use so that the decoder gets what it expects. */
  readonly connectionOptions?: Record<string, unknown>;
  /**
   * The decoder for a captured table, or undefined to skip the table. `tableMap` is zongji's
   * description of the table as logged (column names and types from the TableMap event).
   */
  decoderFor(table: TableRef, tableMap: TableMapEntry, logged?: readonly string[], position?: EventPosition): RowDecoder | undefined;
  /**
   * For a rows event kept as bytes (RawRowsEvent): floe's decoder compiled for the table as logged
   * (`map`) and as mapped now, or undefined to skip the table. Without it, zongji decodes the rows
   * (the reader keeps no bytes: binlog-reader.ts).
   */
  compiledFor?(table: TableRef, map: TableMapEvent, logged?: readonly string[], position?: EventPosition): CompiledTable | undefined;
  /**
   * Optional: adds synthetic changes to a decoded transaction (cascade.ts: the child deletes of
   * ON DELETE CASCADE, which the server does not log). Called for every transaction handed out.
   */
  expandTransaction?(t: TransactionEvent): TransactionEvent;
}

/** A row change as zongji decoded it (column name → zongji value), not yet converted. */
export interface RawChange {
  readonly table: TableRef;
  readonly op: ChangeOp;
  readonly before?: Record<string, unknown>;
  readonly after?: Record<string, unknown>;
  /** The rows event carried NO_FOREIGN_KEY_CHECKS_F (the session ran with foreign_key_checks=0). */
  readonly noForeignKeyChecks?: true;
  /** Column names of the table map the rows were logged with (binlog_row_metadata=FULL). */
  readonly logged?: readonly string[];
}

/**
 * A rows event kept as bytes for floe's own decoder (zongji-raw-events.ts): its row images are
 * decoded when the consumer takes the transaction, like zongji's images are converted then.
 */
export interface RawRowsEvent {
  readonly table: TableRef;
  readonly op: ChangeOp;
  /** The whole event, from its common header (checksum included). */
  readonly event: Buffer;
  readonly checksumBytes: number;
  /** The TABLE_MAP the rows were logged with. */
  readonly map: TableMapEvent;
  readonly noForeignKeyChecks?: true;
  readonly logged?: readonly string[];
}
export type PendingChange = RawChange | RawRowsEvent;

/**
 * A complete transaction whose row images are still zongji's (or still bytes): they are converted
 * when the consumer takes the transaction (`decodeTransaction`), so that a DDL handled by the
 * consumer (which updates the table mappings) applies to every row logged after it, however far the
 * reader has read ahead.
 */
export interface RawTransaction extends Omit<TransactionEvent, 'changes'> {
  readonly raw: readonly PendingChange[];
}

export type AssembledEvent = RawTransaction | DdlEvent | ProgressEvent;

/**
 * A decoded row change. Its position (the transaction's, with the change's index in it) is made
 * when asked: a change stream of half a million changes asks it of none but the changes a restarted
 * table skips (router.ts) and the deletes that cascade (cascade.ts), and one object per change was
 * a ninth of what the CDC path allocated. The position's parts are private fields, so the change
 * shows only what a RowChange has.
 */
class DecodedChange implements RowChange {
  readonly before?: Row;
  readonly after?: Row;
  readonly noForeignKeyChecks?: true;
  readonly #base: Omit<EventPosition, 'eventIndex'>;
  readonly #index: number;

  constructor(
    readonly table: TableRef,
    readonly op: ChangeOp,
    before: Row | undefined,
    after: Row | undefined,
    base: Omit<EventPosition, 'eventIndex'>,
    index: number,
    noForeignKeyChecks: true | undefined,
  ) {
    if (before) this.before = before;
    if (after) this.after = after;
    if (noForeignKeyChecks) this.noForeignKeyChecks = true;
    this.#base = base;
    this.#index = index;
  }

  get position(): EventPosition {
    return { ...this.#base, eventIndex: this.#index };
  }
}

/**
 * Converts a raw transaction with the decoders current now; changes of tables without one are
 * dropped. `eventIndex` numbers the changes in log order (rows events kept as bytes count their
 * rows once decoded; their undecoded rows, of tables skipped, are not counted).
 */
export function decodeTransaction(t: RawTransaction, decoding: BinlogDecoding, tableMaps: ReadonlyMap<string, TableMapEntry>): TransactionEvent {
  const changes: RowChange[] = [];
  const base = t.position;
  // consecutive changes of one table share its TableRef object: look its decoder up once per run
  let lastTable: TableRef | undefined;
  let lastLogged: readonly string[] | undefined;
  let decode: ReturnType<BinlogDecoding['decoderFor']>;
  let index = 0;
  const emit = (c: RawChange | RawRowsEvent, before: Row | undefined, after: Row | undefined): void => {
    changes.push(new DecodedChange(c.table, c.op, before, after, base, index++, c.noForeignKeyChecks));
  };
  for (const c of t.raw) {
    if ('event' in c) {
      lastTable = undefined;
      decodeRowsEventInto(c, decoding, { ...base, eventIndex: index }, emit);
      continue;
    }
    if (c.table !== lastTable || c.logged !== lastLogged) {
      decode = decoding.decoderFor(c.table, tableMaps.get(`${c.table.database}.${c.table.table}`) as TableMapEntry, c.logged, { ...base, eventIndex: index });
      lastTable = c.table;
      lastLogged = c.logged;
    }
    if (!decode) {
      index++;
      continue;
    }
    emit(c, c.before ? decode(c.before) : undefined, c.after ? decode(c.after) : undefined);
  }
  const { raw: _raw, ...rest } = t;
  // the transaction's own index follows its changes (rows events kept as bytes are counted as decoded)
  const decoded: TransactionEvent = { ...rest, position: { ...rest.position, eventIndex: index }, changes };
  return decoding.expandTransaction ? decoding.expandTransaction(decoded) : decoded;
}

/** One rows event kept as bytes: floe's decoder with the table compiled for the mapping current now. */
function decodeRowsEventInto(c: RawRowsEvent, decoding: BinlogDecoding, position: EventPosition, emit: (c: RawRowsEvent, before: Row | undefined, after: Row | undefined) => void): void {
  const compiled = decoding.compiledFor?.(c.table, c.map, c.logged, position);
  if (compiled === undefined) return;
  const decoded = decodeRowsEvent(c.event, compiled, c.checksumBytes);
  requireFullImages(decoded, compiled);
  const rows = decoded.rows;
  // the images in order; for updates before, after, before, after, … (row-decoder.ts DecodedRows)
  if (c.op === 'update') for (let i = 0; i < rows.length; i += 2) emit(c, rows[i], rows[i + 1]);
  else if (c.op === 'insert') for (const r of rows) emit(c, undefined, r);
  else for (const r of rows) emit(c, r, undefined);
}
