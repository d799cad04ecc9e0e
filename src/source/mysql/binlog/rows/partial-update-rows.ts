/**
 * The after image of a PARTIAL_UPDATE_ROWS_EVENT (type 39; MySQL 8.0.3+ writes it for the UPDATEs of
 * a session with binlog_row_value_options=PARTIAL_JSON — a session variable: any client allowed to set
 * it can, whatever the server's global setting). The event is an UPDATE_ROWS_EVENT (v2 layout) whose
 * after images start with two more fields (libbinlogevents rows_event.h, sql/log_event.cc
 * Rows_log_event::write_row / unpack_row; go-mysql RowsEvent.decodeImage):
 *
 *   value options (length-encoded; bit 0 PARTIAL_JSON_UPDATES)
 *   | with that bit: one bit per JSON column of the table map, in column order, present in the image
 *     or not — set when the column's value is a list of changes (mysql-json-diff.ts), not a document
 *   | the NULL bitmap and values as in any after image.
 *
 * A partial value is applied to the same column's document in the row's before image, which the
 * server logs whole under binlog_row_image=FULL (its default, and what floe's preflight requires).
 * When the before image lacks the document (a session with binlog_row_image=MINIMAL), MySQL logs the
 * new document whole instead (seen on 8.0.31: value options 0); a partial value without a document
 * to apply it to is refused.
 */
import type { Row, Value } from '../../../../model/values.js';
import { FloeError } from '../../../../util/errors.js';
import { applyJsonDiffs, readJsonDiffs } from './mysql-json-diff.js';
import type { ColumnReader, Cursor } from './row-cursor.js';
import { T } from './table-map.js';

const PARTIAL_JSON_UPDATES = 1;

/** What reading a partial after image needs of a compiled table. */
export interface PartialImageTable {
  /** 'db.table.column' per column, for messages. */
  readonly columnNames: readonly string[];
  /** Wire type per column (TABLE_MAP). */
  readonly types: Uint8Array;
  readonly readers: readonly ColumnReader[];
}

function lengthEncoded(c: Cursor): number {
  const first = c.buf[c.pos++]!;
  if (first < 0xfb) return first;
  const n = first === 0xfc ? 2 : first === 0xfd ? 3 : 8;
  const v = c.buf.readUIntLE(c.pos, Math.min(n, 6));
  c.pos += n;
  return v;
}

/**
 * Reads one after image of a PARTIAL_UPDATE_ROWS_EVENT: `present` / `count` the after image's
 * columns-present bitmap and its population, `before` the row's before image (decoded in full).
 */
export function readPartialUpdateAfterImage(c: Cursor, table: PartialImageTable, present: Uint8Array, count: number, before: Row): Row {
  const n = table.readers.length;
  const options = lengthEncoded(c);
  let partialBits: Uint8Array | undefined;
  if ((options & PARTIAL_JSON_UPDATES) !== 0) {
    let jsonColumns = 0;
    for (let i = 0; i < n; i++) if (table.types[i] === T.JSON) jsonColumns++;
    partialBits = c.buf.subarray(c.pos, c.pos + ((jsonColumns + 7) >> 3));
    c.pos += partialBits.length;
  }
  const nulls = c.pos;
  c.pos += (count + 7) >> 3;
  const row: Row = new Array(n);
  for (let i = 0, k = 0, j = 0; i < n; i++) {
    // the partial bits count every JSON column, in the image or not
    const partial = table.types[i] === T.JSON && partialBits !== undefined && (partialBits[j >> 3]! & (1 << (j & 7))) !== 0;
    if (table.types[i] === T.JSON) j++;
    if ((present[i >> 3]! & (1 << (i & 7))) === 0) {
      row[i] = null;
      continue;
    }
    if ((c.buf[nulls + (k >> 3)]! & (1 << (k & 7))) !== 0) row[i] = null;
    else row[i] = partial ? applyPartial(c, table.columnNames[i]!, before[i]) : table.readers[i]!(c);
    k++;
  }
  return row;
}

function applyPartial(c: Cursor, column: string, before: Value | undefined): string {
  const { diffs, size } = readJsonDiffs(c.buf.subarray(c.pos));
  c.pos += size;
  if (typeof before !== 'string') {
    throw new FloeError(
      'source.mysql.binlog',
      'unsupported',
      `partial JSON update of ${column}: expected the row's before image to hold the document the changes apply to, found ${before === null || before === undefined ? 'none' : typeof before}, so the new document is in no event. Set binlog_row_value_options='' and binlog_row_image=FULL for the client that wrote it, then re-snapshot the table`,
    );
  }
  return applyJsonDiffs(before, diffs, column);
}
