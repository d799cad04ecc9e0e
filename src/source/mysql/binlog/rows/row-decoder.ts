/**
 * floe's own row-event decoder: WRITE/UPDATE/DELETE_ROWS (v1 and v2, MySQL and MariaDB type codes,
 * MariaDB's zlib-compressed variants, MySQL's PARTIAL_UPDATE_ROWS of binlog_row_value_options=
 * PARTIAL_JSON — partial-update-rows.ts) decoded from the raw event bytes straight into value-model
 * rows, with a table compiled once per TABLE_MAP into an array of column readers (column-readers.ts).
 * The values are those zongji/binlog-values.ts makes of zongji's decoding (test/source/mysql/binlog/
 * rows/row-decoder.test.ts cross-checks the two on random tables and rows).
 *
 * Rows event layout (MySQL "Binary Log" internals, libbinlogevents Rows_event; MariaDB
 * sql/log_event.h Rows_log_event; mysql-binlog-connector-java AbstractRowsEventDataDeserializer,
 * go-mysql replication/row_event.go RowsEvent.Decode):
 *   common header (19) | table_id (6) | flags (2) | v2 only: extra-data length (2, counting itself)
 *   and extra data | column count (lenenc) | columns-present bitmap ((n+7)/8) | UPDATE: a second one
 *   for the after image | rows until the checksum, each: a NULL bitmap over the *present* columns
 *   ((present+7)/8 bytes, bit i = i-th present column) and the present non-NULL values in order.
 * Under binlog_row_image=MINIMAL/NOBLOB the bitmaps leave columns out: those read as null here, and
 * the event's bitmaps (`present`, `presentAfter`) say which columns the images really hold
 * (`requireFullImages` refuses such images where the writer would need the missing columns).
 * MariaDB's compressed rows events (log_bin_compress, types 166–171) keep the header and bitmaps and
 * wrap the rows in one envelope (sql/log_event.cc binlog_buf_uncompress): a byte 0x80 | length-size,
 * the big-endian uncompressed length, then a zlib stream.
 *
 * The streaming path's decoder: zongji stays the connection and hands over the rows events of the
 * captured tables as bytes (zongji-raw-events.ts); they are decoded when the consumer takes their
 * transaction (raw-transactions.ts `decodeTransaction`), with the table compiled for the mapping
 * current then (binlog-decoding.ts `compiledFor`). Text is read in every charset iconv-lite has
 * (text-decoders.ts), and MariaDB's COMPRESSED columns are inflated (column-readers.ts).
 */
import { inflateSync } from 'node:zlib';
import type { Row } from '../../../../model/values.js';
import { FloeError } from '../../../../util/errors.js';
import { tableKey } from '../../schema/table-schema.js';
import type { MappedTable } from '../../schema/type-mapping.js';
import { columnReader, columnSkipper } from './column-readers.js';
import { textDecoder } from './text-decoders.js';
import type { ColumnReader, Cursor } from './row-cursor.js';
import { COMMON_HEADER_BYTES, type TableMapEvent } from './table-map.js';
import { readPartialUpdateAfterImage } from './partial-update-rows.js';

type RowsEventKind = 'insert' | 'update' | 'delete';

/** Event type code → [kind, v2 post-header, compressed, partial JSON] (log_event.h Log_event_type). */
const ROWS_EVENTS = new Map<number, readonly [RowsEventKind, boolean, boolean, boolean]>([
  [23, ['insert', false, false, false]], // WRITE_ROWS_EVENT_V1 (MySQL 5.1–5.5, MariaDB)
  [24, ['update', false, false, false]],
  [25, ['delete', false, false, false]],
  [30, ['insert', true, false, false]], // WRITE_ROWS_EVENT (v2, MySQL 5.6+)
  [31, ['update', true, false, false]],
  [32, ['delete', true, false, false]],
  [39, ['update', true, false, true]], // PARTIAL_UPDATE_ROWS_EVENT (MySQL 8.0.3+, partial-update-rows.ts)
  [166, ['insert', false, true, false]], // MariaDB WRITE_ROWS_COMPRESSED_EVENT_V1
  [167, ['update', false, true, false]],
  [168, ['delete', false, true, false]],
  [169, ['insert', true, true, false]], // MariaDB WRITE_ROWS_COMPRESSED_EVENT (v2 layout)
  [170, ['update', true, true, false]],
  [171, ['delete', true, true, false]],
]);

/** A table compiled for decoding: built once per TABLE_MAP, reused for all its rows events. */
export interface CompiledTable {
  readonly tableId: number;
  readonly mapped: MappedTable;
  readonly readers: readonly ColumnReader[];
  /**
   * The readers of the images of what was there before — an UPDATE's before images, a DELETE's
   * rows: `readers`, or with `beforeColumns` those columns' readers and skippers for the rest (read
   * as null).
   */
  readonly beforeReaders: readonly ColumnReader[];
  /** Wire type per column (TABLE_MAP), for the after images of partial JSON updates. */
  readonly types: Uint8Array;
  /** 'db.table.column' per column, for messages. */
  readonly columnNames: readonly string[];
}

/** A decoded rows event. `rows`: the images in order; for updates before, after, before, after, … */
export interface DecodedRows {
  readonly kind: RowsEventKind;
  readonly tableId: number;
  /** Rows event flags (STMT_END_F 1, NO_FOREIGN_KEY_CHECKS_F 2, …). */
  readonly flags: number;
  readonly rows: Row[];
  /** Columns-present bitmap of the (before) images; undefined when every column is present. */
  readonly present?: Uint8Array;
  /** Columns-present bitmap of update after images; undefined when every column is present. */
  readonly presentAfter?: Uint8Array;
}

/**
 * Compiles the readers for a table as logged (`map`) and as floe mapped it (`mapped`). Throws a
 * FloeError 'invalid-data' if the two disagree (columns added or renamed since the capture), and
 * 'unsupported' for a column floe's decoder does not read.
 * `beforeColumns` (lowercase names): the only columns the before images are decoded for, the others
 * are stepped over and read as null (binlog-decoding.ts: a keyed table's writer uses only the key of
 * a before image).
 */
export function compileTable(map: TableMapEvent, mapped: MappedTable, beforeColumns?: ReadonlySet<string>): CompiledTable {
  const key = tableKey(mapped.schema.id);
  const columns = mapped.columns;
  const names = columns.map((c) => c.column.name);
  const logged = map.columnNames;
  if (map.types.length !== columns.length || (logged && logged.some((n, i) => n.toLowerCase() !== names[i]!.toLowerCase()))) {
    throw new FloeError(
      'source.mysql.binlog',
      'invalid-data',
      `table ${key}: expected the binlog rows to carry the ${columns.length} captured columns (${names.join(', ')}), but the TABLE_MAP has ${map.types.length}${logged ? ` (${logged.join(', ')})` : ''}; the table changed after its schema was captured — re-capture the table`,
    );
  }
  const readers = columns.map((c, i) => {
    let labels = c.column.labels;
    const fromBinlog = map.labels?.[i];
    // ENUM/SET labels: MariaDB renders COLUMN_TYPE in utf8mb3 ('?' for characters outside the BMP),
    // while binlog_row_metadata=FULL carries the labels' own bytes (as binlog-decoding.ts)
    if (fromBinlog && labels && fromBinlog.length === labels.length) {
      const text = textDecoder(c.column.charset);
      const decoded = fromBinlog.map((b) => (text ? text(Buffer.from(b.buffer, b.byteOffset, b.byteLength), 0, b.byteLength) : Buffer.from(b).toString('utf8')));
      if (decoded.some((l, j) => l !== labels![j])) labels = decoded;
    }
    return columnReader(c, map.types[i]!, map.meta[i]!, map.meta2[i]!, labels);
  });
  const beforeReaders = beforeColumns
    ? columns.map((c, i) => (beforeColumns.has(c.column.name.toLowerCase()) ? readers[i]! : columnSkipper(c, map.types[i]!, map.meta[i]!, map.meta2[i]!)))
    : readers;
  return { tableId: map.tableId, mapped, readers, beforeReaders, types: map.types, columnNames: columns.map((c) => c.qualifiedName) };
}

/** The table id of a rows (or TABLE_MAP) event, to find its compiled table. */
export function eventTableId(event: Buffer): number {
  return event.readUIntLE(COMMON_HEADER_BYTES, 6);
}

function corrupt(table: CompiledTable, what: string): FloeError {
  return new FloeError('source.mysql.binlog', 'invalid-data', `rows event of ${tableKey(table.mapped.schema.id)}: ${what}; the event does not match its TABLE_MAP (corrupt binlog, or a table map of another table id)`);
}

/** Decodes one rows event; `event` is the whole event from its common header, `checksumBytes` 0 or 4. */
export function decodeRowsEvent(event: Buffer, table: CompiledTable, checksumBytes: number): DecodedRows {
  const type = event[4]!;
  const layout = ROWS_EVENTS.get(type);
  if (!layout) {
    throw new FloeError(
      'source.mysql.binlog',
      'unsupported',
      `expected a WRITE/UPDATE/DELETE_ROWS event (type 23–25, 30–32, MySQL's partial update 39 or MariaDB's compressed 166–171), found type ${type}`,
    );
  }
  const [kind, v2, compressed, partialJson] = layout;
  let end = event.length - checksumBytes;
  let p = COMMON_HEADER_BYTES;
  const tableId = event.readUIntLE(p, 6);
  if (tableId !== table.tableId) throw corrupt(table, `the event names table id ${tableId}, the compiled table is ${table.tableId}`);
  const flags = event.readUInt16LE(p + 6);
  p += 8;
  if (v2) p += event.readUInt16LE(p); // extra data, its length counting its own 2 bytes
  let width = event[p++]!;
  if (width >= 0xfb) {
    if (width !== 0xfc) throw corrupt(table, `column count prefix 0x${width.toString(16)}`);
    width = event.readUInt16LE(p);
    p += 2;
  }
  const readers = table.readers;
  // the images of what was there before: an UPDATE's before images, a DELETE's rows; in full for a
  // partial JSON update, whose after images apply changes to the before image's documents
  const beforeReaders = kind === 'insert' || partialJson ? readers : table.beforeReaders;
  const n = readers.length;
  if (width !== n) throw corrupt(table, `it has ${width} columns, the TABLE_MAP ${n}`);
  const bitmapBytes = (n + 7) >> 3;
  const present = event.subarray(p, p + bitmapBytes);
  p += bitmapBytes;
  const presentAfter = kind === 'update' ? event.subarray(p, p + bitmapBytes) : present;
  if (kind === 'update') p += bitmapBytes;
  let buf = event;
  if (compressed) {
    const header = event[p]!;
    const lengthBytes = header & 0x07;
    if ((header & 0xf0) !== 0x80 || lengthBytes < 1 || lengthBytes > 4) throw corrupt(table, `compressed rows header 0x${header.toString(16)}`);
    const expected = event.readUIntBE(p + 1, lengthBytes);
    buf = inflateSync(event.subarray(p + 1 + lengthBytes, end));
    if (buf.length !== expected) throw corrupt(table, `compressed rows inflate to ${buf.length} bytes, the header says ${expected}`);
    p = 0;
    end = buf.length;
  }
  const full = allSet(present, n);
  const fullAfter = presentAfter === present ? full : allSet(presentAfter, n);
  const count = full ? n : popCount(present);
  const countAfter = presentAfter === present ? count : fullAfter ? n : popCount(presentAfter);
  const c: Cursor = { buf, pos: p };
  const rows: Row[] = [];
  try {
    while (c.pos < end) {
      const before = full ? readFull(c, beforeReaders) : readPartial(c, beforeReaders, present, count);
      rows.push(before);
      if (partialJson) rows.push(readPartialUpdateAfterImage(c, table, presentAfter, countAfter, before));
      else if (kind === 'update') rows.push(fullAfter ? readFull(c, readers) : readPartial(c, readers, presentAfter, countAfter));
    }
  } catch (e) {
    if (e instanceof FloeError) throw e;
    throw corrupt(table, `a row image runs past the event end (${e instanceof Error ? e.message : String(e)})`);
  }
  if (c.pos !== end) throw corrupt(table, `the row images end at byte ${c.pos}, the event at ${end}`);
  return { kind, tableId, flags, rows, present: full ? undefined : Uint8Array.from(present), presentAfter: kind === 'update' && !fullAfter ? Uint8Array.from(presentAfter) : undefined };
}

/**
 * Refuses images floe cannot write whole rows from: binlog_row_image=FULL logs every column, but
 * MINIMAL and NOBLOB (MariaDB also FULL_NODUP) — a session variable too, which any client allowed
 * to set it can — leave out columns an UPDATE did not change (NOBLOB: unchanged BLOB/TEXT ones).
 * So the after image of an insert or update must hold every column, and a before image the primary
 * key (every column for a table without one), which is all the writer uses of it. Reading the
 * missing columns as null would write wrong rows without a trace.
 */
export function requireFullImages(decoded: DecodedRows, table: CompiledTable): void {
  const columns = table.mapped.columns;
  const missing = (bitmap: Uint8Array | undefined, which: readonly number[]): string[] =>
    bitmap ? which.filter((i) => (bitmap[i >> 3]! & (1 << (i & 7))) === 0).map((i) => columns[i]!.column.name) : [];
  const all = columns.map((_, i) => i);
  const key = table.mapped.schema.primaryKey.length > 0 ? table.mapped.schema.primaryKey.map((k) => columns.findIndex((c) => c.column.name === k)) : all;
  const lacking =
    decoded.kind === 'insert'
      ? missing(decoded.present, all)
      : decoded.kind === 'update'
        ? [...new Set([...missing(decoded.present, key), ...missing(decoded.presentAfter, all)])]
        : missing(decoded.present, key);
  if (lacking.length === 0) return;
  throw new FloeError(
    'source.mysql.binlog',
    'unsupported',
    `rows event of ${tableKey(table.mapped.schema.id)}: expected full row images, found ${decoded.kind} images without the columns ${lacking.join(', ')} — the session that wrote them ran with binlog_row_image=MINIMAL or NOBLOB (or MariaDB's FULL_NODUP), and the rows cannot be rebuilt from the binlog. Set binlog_row_image=FULL for that client (and globally), then re-snapshot the table`,
  );
}

function allSet(bitmap: Uint8Array, n: number): boolean {
  for (let i = 0; i < n; i++) if ((bitmap[i >> 3]! & (1 << (i & 7))) === 0) return false;
  return true;
}

function popCount(bitmap: Uint8Array): number {
  let k = 0;
  for (let i = 0; i < bitmap.length; i++) for (let v = bitmap[i]!; v !== 0; v &= v - 1) k++;
  return k;
}

/** One image with every column present: NULL bitmap over all columns, then the values. */
function readFull(c: Cursor, readers: readonly ColumnReader[]): Row {
  const n = readers.length;
  const buf = c.buf;
  const nulls = c.pos;
  c.pos += (n + 7) >> 3;
  const row: Row = new Array(n);
  for (let i = 0; i < n; i++) row[i] = (buf[nulls + (i >> 3)]! & (1 << (i & 7))) !== 0 ? null : readers[i]!(c);
  if (c.pos > buf.length) throw new RangeError(`offset ${c.pos} beyond ${buf.length}`);
  return row;
}

/** One partial image: absent columns read as null; the NULL bitmap counts present columns only. */
function readPartial(c: Cursor, readers: readonly ColumnReader[], present: Uint8Array, count: number): Row {
  const n = readers.length;
  const buf = c.buf;
  const nulls = c.pos;
  c.pos += (count + 7) >> 3;
  const row: Row = new Array(n);
  for (let i = 0, k = 0; i < n; i++) {
    if ((present[i >> 3]! & (1 << (i & 7))) === 0) {
      row[i] = null;
      continue;
    }
    row[i] = (buf[nulls + (k >> 3)]! & (1 << (k & 7))) !== 0 ? null : readers[i]!(c);
    k++;
  }
  if (c.pos > buf.length) throw new RangeError(`offset ${c.pos} beyond ${buf.length}`);
  return row;
}
