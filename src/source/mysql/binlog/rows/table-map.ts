/**
 * TABLE_MAP_EVENT (type 19), parsed from the raw event bytes: the wire layout of one table's rows
 * (column type codes and their per-type metadata) and the optional metadata that
 * binlog_row_metadata=MINIMAL/FULL appends (column names, ENUM/SET labels).
 *
 * Layout (MySQL "Binary Log" internals, libbinlogevents Table_map_event; MariaDB
 * sql/log_event.h Table_map_log_event; read like mysql-binlog-connector-java's
 * TableMapEventDataDeserializer and go-mysql replication/row_event.go TableMapEvent.Decode):
 *   common header (19 bytes) | table_id (6) | flags (2)
 *   | db len (1) db NUL | table len (1) table NUL | column count (lenenc) | types (count bytes)
 *   | metadata length (lenenc) | metadata | nullability bitmap ((count+7)/8)
 *   | optional metadata: TLVs of type (1), length (lenenc), value — until the checksum.
 *
 * Only what the row decoder needs is kept; signedness and charsets come from floe's captured schema
 * (the MappedTable), which is the definition floe maps the values with anyway.
 */
import { FloeError } from '../../../../util/errors.js';

export const COMMON_HEADER_BYTES = 19;

// MySQL column type codes (include/field_types.h enum_field_types); 140/141 are MariaDB's
// COMPRESSED column wire types.
export const T = {
  DECIMAL: 0,
  TINY: 1,
  SHORT: 2,
  LONG: 3,
  FLOAT: 4,
  DOUBLE: 5,
  NULL: 6,
  TIMESTAMP: 7,
  LONGLONG: 8,
  INT24: 9,
  DATE: 10,
  TIME: 11,
  DATETIME: 12,
  YEAR: 13,
  NEWDATE: 14,
  VARCHAR: 15,
  BIT: 16,
  TIMESTAMP2: 17,
  DATETIME2: 18,
  TIME2: 19,
  BLOB_COMPRESSED: 140,
  VARCHAR_COMPRESSED: 141,
  JSON: 245,
  NEWDECIMAL: 246,
  ENUM: 247,
  SET: 248,
  TINY_BLOB: 249,
  MEDIUM_BLOB: 250,
  LONG_BLOB: 251,
  BLOB: 252,
  VAR_STRING: 253,
  STRING: 254,
  GEOMETRY: 255,
} as const;

// Optional metadata field types (libbinlogevents Table_map_event::Optional_metadata_field_type).
const OPT_COLUMN_NAME = 4;
const OPT_SET_STR_VALUE = 5;
const OPT_ENUM_STR_VALUE = 6;

export interface TableMapEvent {
  readonly tableId: number;
  readonly database: string;
  readonly table: string;
  /** Real type per column: STRING columns holding ENUM/SET carry ENUM/SET here (from the metadata). */
  readonly types: Uint8Array;
  /**
   * Per-column metadata, decoded: FLOAT/DOUBLE/BLOB/JSON/GEOMETRY length size; VARCHAR/STRING max byte
   * length; NEWDECIMAL precision; BIT total bits; ENUM/SET pack length; TIME2/DATETIME2/TIMESTAMP2 fsp.
   */
  readonly meta: Uint16Array;
  /** NEWDECIMAL scale (0 elsewhere). */
  readonly meta2: Uint8Array;
  /** COLUMN_NAME (binlog_row_metadata=FULL), else undefined. */
  readonly columnNames?: readonly string[];
  /** ENUM_STR_VALUE / SET_STR_VALUE (FULL): the labels' raw bytes per column index, else undefined. */
  readonly labels?: readonly (readonly Uint8Array[] | undefined)[];
}

/** Little reader over an event's bytes; `end` excludes the checksum. */
class Reader {
  constructor(
    readonly buf: Buffer,
    public pos: number,
    readonly end: number,
  ) {}

  need(n: number, what: string): void {
    if (this.pos + n > this.end) {
      throw new FloeError('source.mysql.binlog', 'invalid-data', `TABLE_MAP_EVENT is truncated: expected ${n} more bytes for ${what} at offset ${this.pos}, found ${this.end - this.pos}; the binlog event is corrupt or not a TABLE_MAP`);
    }
  }

  u8(what: string): number {
    this.need(1, what);
    return this.buf[this.pos++]!;
  }

  lenenc(what: string): number {
    const first = this.u8(what);
    if (first < 0xfb) return first;
    const n = first === 0xfc ? 2 : first === 0xfd ? 3 : first === 0xfe ? 8 : 0;
    if (n === 0) throw new FloeError('source.mysql.binlog', 'invalid-data', `TABLE_MAP_EVENT: expected a length-encoded integer for ${what}, found the byte 0x${first.toString(16)}`);
    this.need(n, what);
    const v = n === 8 ? Number(this.buf.readBigUInt64LE(this.pos)) : this.buf.readUIntLE(this.pos, n);
    this.pos += n;
    return v;
  }
}

/** Parses a TABLE_MAP_EVENT; `event` is the whole event from its common header, `checksumBytes` 0 or 4. */
export function parseTableMap(event: Buffer, checksumBytes: number): TableMapEvent {
  const r = new Reader(event, COMMON_HEADER_BYTES, event.length - checksumBytes);
  r.need(8, 'the post-header');
  const tableId = event.readUIntLE(r.pos, 6);
  r.pos += 8; // table id, flags
  const dbLength = r.u8('the database name length');
  r.need(dbLength + 1, 'the database name');
  const database = event.toString('utf8', r.pos, r.pos + dbLength);
  r.pos += dbLength + 1;
  const tableLength = r.u8('the table name length');
  r.need(tableLength + 1, 'the table name');
  const table = event.toString('utf8', r.pos, r.pos + tableLength);
  r.pos += tableLength + 1;
  const count = r.lenenc('the column count');
  r.need(count, 'the column types');
  const types = Uint8Array.from(event.subarray(r.pos, r.pos + count));
  r.pos += count;
  const metaLength = r.lenenc('the metadata length');
  r.need(metaLength, 'the column metadata');
  const metaEnd = r.pos + metaLength;
  const meta = new Uint16Array(count);
  const meta2 = new Uint8Array(count);
  for (let i = 0; i < count; i++) {
    // per-type metadata widths: libbinlogevents Table_map_event / log_event.cc save_field_metadata
    switch (types[i]) {
      case T.FLOAT:
      case T.DOUBLE:
      case T.BLOB:
      case T.TINY_BLOB:
      case T.MEDIUM_BLOB:
      case T.LONG_BLOB:
      case T.BLOB_COMPRESSED:
      case T.JSON:
      case T.GEOMETRY:
      case T.TIMESTAMP2:
      case T.DATETIME2:
      case T.TIME2:
        meta[i] = r.u8('column metadata');
        break;
      case T.VARCHAR:
      case T.VARCHAR_COMPRESSED:
        r.need(2, 'VARCHAR metadata');
        meta[i] = event.readUInt16LE(r.pos);
        r.pos += 2;
        break;
      case T.BIT: {
        const bits = r.u8('BIT metadata');
        const bytes = r.u8('BIT metadata');
        meta[i] = bytes * 8 + bits;
        break;
      }
      case T.NEWDECIMAL:
        meta[i] = r.u8('DECIMAL precision');
        meta2[i] = r.u8('DECIMAL scale');
        break;
      case T.STRING:
      case T.VAR_STRING:
      case T.ENUM:
      case T.SET: {
        // two bytes: real type, then the pack length; CHAR lengths above 255 fold their two high bits
        // into the real-type byte (Field_string::save_field_metadata)
        const b0 = r.u8('STRING metadata');
        const b1 = r.u8('STRING metadata');
        if (b0 === T.ENUM || b0 === T.SET) {
          types[i] = b0;
          meta[i] = b1;
        } else {
          meta[i] = (((b0 << 4) & 0x300) ^ 0x300) + b1;
        }
        break;
      }
    }
  }
  if (r.pos !== metaEnd) {
    throw new FloeError('source.mysql.binlog', 'invalid-data', `TABLE_MAP_EVENT of ${database}.${table}: the column metadata is ${metaLength} bytes, but the column types account for ${r.pos - (metaEnd - metaLength)}; a column type floe does not know is in the table`);
  }
  r.pos += (count + 7) >> 3; // nullability bitmap
  let columnNames: string[] | undefined;
  let labels: (Uint8Array[] | undefined)[] | undefined;
  while (r.pos < r.end) {
    const type = r.u8('an optional metadata type');
    const length = r.lenenc('an optional metadata length');
    r.need(length, 'an optional metadata field');
    const fieldEnd = r.pos + length;
    if (type === OPT_COLUMN_NAME) {
      columnNames = [];
      while (r.pos < fieldEnd) {
        const n = r.lenenc('a column name length');
        columnNames.push(event.toString('utf8', r.pos, r.pos + n));
        r.pos += n;
      }
    } else if (type === OPT_ENUM_STR_VALUE || type === OPT_SET_STR_VALUE) {
      // one entry per ENUM (resp. SET) column, in column order: label count, then the labels
      const want = type === OPT_ENUM_STR_VALUE ? T.ENUM : T.SET;
      labels ??= new Array<Uint8Array[] | undefined>(count);
      let column = 0;
      while (r.pos < fieldEnd) {
        while (column < count && types[column] !== want) column++;
        const n = r.lenenc('a label count');
        const values: Uint8Array[] = [];
        for (let j = 0; j < n; j++) {
          const len = r.lenenc('a label length');
          values.push(event.subarray(r.pos, r.pos + len));
          r.pos += len;
        }
        if (column < count) labels[column++] = values;
      }
    }
    r.pos = fieldEnd;
  }
  return { tableId, database, table, types, meta, meta2, columnNames, labels };
}
