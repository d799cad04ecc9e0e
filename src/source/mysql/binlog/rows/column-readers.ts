/**
 * One table of per-column readers: for a column's wire type (TABLE_MAP) and floe value kind
 * (type-mapping.ts), a function that reads the column's value at the cursor and advances it,
 * producing exactly what binlog-values.ts makes of zongji's value for the same bytes (and so what the
 * snapshot path produces): bigint for 'long', decimal text for 'unsigned-long' and DECIMAL, days for
 * DATE, µs bigints for the temporal types, Buffers for binary kinds, null for zero dates.
 *
 * Readers are built once per TABLE_MAP (row-decoder.ts compiles a table into an array of them) and
 * close over the column's metadata; reading a value allocates nothing but the value itself.
 *
 * Value encodings (field.cc Field_*::pack / unpack; MySQL "Binary Log" internals, rows event
 * row images; mysql-binlog-connector-java AbstractRowsEventDataDeserializer; go-mysql
 * replication/row_event.go decodeValue):
 * - integers little-endian, 1/2/3/4/8 bytes; FLOAT / DOUBLE IEEE little-endian;
 * - NEWDECIMAL: decimal2bin (strings/decimal.cc), big-endian groups of 9 digits, sign bit flipped;
 * - YEAR one byte (0 or year − 1900); DATE 3 bytes little-endian day | month << 5 | year << 9;
 * - TIME2 / DATETIME2 / TIMESTAMP2 big-endian with the fraction after (my_time.cc *_from_binary);
 *   the pre-5.6 TIME / DATETIME / TIMESTAMP and MariaDB's hires variants (temporal-readers.ts);
 * - VARCHAR / CHAR: length (1 byte if the max byte length < 256, else 2) then bytes; BLOB / TEXT /
 *   JSON: length of `meta` bytes then bytes; BIT ceil(bits/8) bytes big-endian; ENUM / SET their
 *   pack length (1–2 / 1–8 bytes) of index / bitmask, little-endian.
 */
import { inflateRawSync, inflateSync } from 'node:zlib';
import { daysFromCivil } from '../../../../model/values.js';
import { FloeError } from '../../../../util/errors.js';
import { formatInet4, formatInet6, formatUuid } from './mariadb-binary-types.js';
import { mysqlJsonBinaryToText } from './mysql-json.js';
import { snapshotValueConverter, timeOfDay, valueError } from '../../snapshot/snapshot-values.js';
import type { MappedColumn } from '../../schema/type-mapping.js';
import { T } from './table-map.js';
import type { ColumnReader, Cursor } from './row-cursor.js';
import { decimalBytes, decimalReader } from './binary-decimal.js';
import { datetime2Reader, timestamp2Reader, time2Micros, classicTemporalBytes, classicTimestampReader, classicDatetimeReader, classicTimeMicros } from './temporal-readers.js';
import { textDecoder } from './text-decoders.js';

function unsupported(column: MappedColumn, what: string): FloeError {
  return new FloeError(
    'source.mysql.binlog',
    'unsupported',
    `column ${column.qualifiedName} (${column.column.columnType}): floe's row decoder does not read ${what}; expected a column type and charset it decodes (integers, FLOAT/DOUBLE, DECIMAL, BIT, YEAR, DATE, TIME/DATETIME/TIMESTAMP in every format, text in every charset iconv-lite decodes, binary strings, MariaDB's COMPRESSED columns, ENUM, SET, JSON) — exclude the table`,
  );
}

function mismatch(column: MappedColumn, wireType: number): FloeError {
  return new FloeError(
    'source.mysql.binlog',
    'invalid-data',
    `column ${column.qualifiedName} (${column.column.columnType}, mapped as ${column.kind}) is logged with the wire type ${wireType}, which does not carry that kind; the table changed after its schema was captured — re-capture the table`,
  );
}

// ---- length-prefixed byte strings -------------------------------------------------------------------

/** Reads a length prefix of `n` bytes (1–4), little-endian, and leaves the cursor on the data. */
function lengthPrefix(c: Cursor, n: number): number {
  const b = c.buf;
  const p = c.pos;
  let len: number;
  if (n === 1) len = b[p]!;
  else if (n === 2) len = b[p]! | (b[p + 1]! << 8);
  else if (n === 3) len = b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16);
  else len = b.readUInt32LE(p);
  c.pos = p + n;
  return len;
}

/** Prefix width of a column's length-prefixed value, or 0 if the wire type is not one. */
function prefixBytes(wireType: number, meta: number): number {
  switch (wireType) {
    case T.VARCHAR:
    case T.VAR_STRING:
    case T.STRING:
      return meta > 255 ? 2 : 1;
    case T.BLOB:
    case T.TINY_BLOB:
    case T.MEDIUM_BLOB:
    case T.LONG_BLOB:
    case T.JSON:
    case T.BLOB_COMPRESSED:
      return meta;
    case T.VARCHAR_COMPRESSED:
      return meta > 255 ? 2 : 1;
    default:
      return 0;
  }
}

function fixedWidth(bytes: Buffer, width: number): Buffer {
  // the binlog strips trailing zero bytes of BINARY(n) and of MariaDB's fixed binary types
  if (bytes.length >= width) return bytes;
  const out = Buffer.alloc(width);
  bytes.copy(out);
  return out;
}

// ---- the table -------------------------------------------------------------------------------------

/**
 * The reader for one column: `wireType` and `meta` / `meta2` from the TABLE_MAP (table-map.ts),
 * `labels` the ENUM/SET labels to decode with (the captured ones, or the binlog's own under FULL).
 */
export function columnReader(column: MappedColumn, wireType: number, meta: number, meta2: number, labels: readonly string[] | null): ColumnReader {
  const kind = column.kind;
  const unsigned = column.column.unsigned;
  // the existing converter, for the rare values that must fail with the existing message
  const slow = snapshotValueConverter(column, 'binlog');
  switch (wireType) {
    case T.TINY:
    case T.SHORT:
    case T.INT24:
    case T.LONG: {
      const width = wireType === T.TINY ? 1 : wireType === T.SHORT ? 2 : wireType === T.INT24 ? 3 : 4;
      const read = unsigned ? (c: Cursor): number => {
        const v = c.buf.readUIntLE(c.pos, width);
        c.pos += width;
        return v;
      } : (c: Cursor): number => {
        const v = c.buf.readIntLE(c.pos, width);
        c.pos += width;
        return v;
      };
      switch (kind) {
        case 'int':
          return read;
        case 'boolean-int':
          return (c) => {
            const v = read(c);
            return v === 0 ? false : v === 1 ? true : slow(v);
          };
        case 'long':
          return (c) => BigInt(read(c));
        default:
          throw mismatch(column, wireType);
      }
    }
    case T.LONGLONG:
      if (kind === 'long') {
        return unsigned ? (c) => {
          const v = c.buf.readBigUInt64LE(c.pos);
          c.pos += 8;
          return v;
        } : (c) => {
          const v = c.buf.readBigInt64LE(c.pos);
          c.pos += 8;
          return v;
        };
      }
      if (kind === 'unsigned-long') {
        return (c) => {
          const b = c.buf;
          const low = b.readUInt32LE(c.pos);
          const high = b.readUInt32LE(c.pos + 4);
          c.pos += 8;
          // below 2^53 the double is exact and String() avoids a BigInt
          return high < 0x200000 ? String(high * 4294967296 + low) : ((BigInt(high) << 32n) | BigInt(low)).toString();
        };
      }
      throw mismatch(column, wireType);
    case T.FLOAT:
      if (kind !== 'float') throw mismatch(column, wireType);
      return (c) => {
        const v = c.buf.readFloatLE(c.pos);
        c.pos += 4;
        return v;
      };
    case T.DOUBLE:
      if (kind !== 'double') throw mismatch(column, wireType);
      return (c) => {
        const v = c.buf.readDoubleLE(c.pos);
        c.pos += 8;
        return v;
      };
    case T.NEWDECIMAL:
      if (kind !== 'decimal' && kind !== 'decimal-string') throw mismatch(column, wireType);
      if (meta2 !== column.scale) throw mismatch(column, wireType);
      return decimalReader(meta, meta2);
    case T.YEAR:
      if (kind !== 'year') throw mismatch(column, wireType);
      return (c) => {
        const v = c.buf[c.pos++]!;
        return v === 0 ? 0 : v + 1900;
      };
    case T.DATE:
      if (kind !== 'date') throw mismatch(column, wireType);
      return (c) => {
        const b = c.buf;
        const p = c.pos;
        c.pos = p + 3;
        const v = b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16);
        const day = v & 31;
        const month = (v >> 5) & 15;
        return month === 0 || day === 0 ? null : daysFromCivil(v >>> 9, month, day);
      };
    case T.DATETIME2:
      if (kind !== 'datetime') throw mismatch(column, wireType);
      return datetime2Reader(meta);
    case T.TIMESTAMP2:
      if (kind !== 'timestamp') throw mismatch(column, wireType);
      return timestamp2Reader(meta);
    case T.TIMESTAMP:
      if (kind !== 'timestamp') throw mismatch(column, wireType);
      return classicTimestampReader(column.column.datetimePrecision ?? 0);
    case T.DATETIME:
      if (kind !== 'datetime') throw mismatch(column, wireType);
      return classicDatetimeReader(column.column.datetimePrecision ?? 0);
    case T.TIME: {
      const micros = classicTimeMicros(column.column.datetimePrecision ?? 0);
      if (kind === 'time-micros') return micros;
      if (kind === 'time') return (c) => timeOfDay(column, micros(c));
      throw mismatch(column, wireType);
    }
    case T.TIME2: {
      const micros = time2Micros(meta);
      if (kind === 'time-micros') return micros;
      if (kind === 'time') return (c) => timeOfDay(column, micros(c));
      throw mismatch(column, wireType);
    }
    case T.BIT: {
      const bytes = (meta + 7) >> 3;
      if (kind === 'boolean-bit') {
        return (c) => {
          c.pos += bytes;
          return c.buf[c.pos - 1] === 1;
        };
      }
      if (kind === 'bit') return (c) => c.buf.subarray(c.pos, (c.pos += bytes));
      throw mismatch(column, wireType);
    }
    case T.ENUM: {
      if (kind !== 'enum') throw mismatch(column, wireType);
      const all = labels ?? [];
      return (c) => {
        const index = meta === 1 ? c.buf[c.pos]! : c.buf.readUIntLE(c.pos, meta);
        c.pos += meta;
        if (index === 0) return '';
        const label = all[index - 1];
        if (label === undefined) throw valueError(column, `an ENUM index 0..${all.length}`, index, 'binlog');
        return label;
      };
    }
    case T.SET: {
      if (kind !== 'set') throw mismatch(column, wireType);
      const all = labels ?? [];
      return (c) => {
        const b = c.buf;
        const p = c.pos;
        c.pos = p + meta;
        const low = b.readUIntLE(p, Math.min(meta, 4));
        const high = meta > 4 ? b.readUIntLE(p + 4, meta - 4) : 0;
        if (low === 0 && high === 0) return '';
        let out = '';
        let first = true;
        for (let i = 0; i < meta * 8; i++) {
          const bit = i < 32 ? (low >>> i) & 1 : (high >>> (i - 32)) & 1;
          if (bit === 0) continue;
          const label = all[i];
          if (label === undefined) throw valueError(column, `a SET bitmask over ${all.length} labels`, (BigInt(high) << 32n) | BigInt(low), 'binlog');
          out = first ? label : out + ',' + label;
          first = false;
        }
        return out;
      };
    }
  }
  const prefix = prefixBytes(wireType, meta);
  if (prefix === 0) throw unsupported(column, wireType === T.GEOMETRY ? 'spatial columns' : `the wire type ${wireType}`);
  const compressed = wireType === T.BLOB_COMPRESSED || wireType === T.VARCHAR_COMPRESSED;
  const bytes = (c: Cursor): Buffer => {
    const len = lengthPrefix(c, prefix);
    const value = c.buf.subarray(c.pos, (c.pos += len));
    return compressed ? uncompressedValue(column, value) : value;
  };
  switch (kind) {
    case 'string':
    case 'json': {
      if (kind === 'json' && wireType === T.JSON) return (c) => mysqlJsonBinaryToText(bytes(c));
      const text = textDecoder(column.column.charset);
      if (!text) throw unsupported(column, `the character set ${column.column.charset ?? '(none)'}`);
      if (compressed) {
        return (c) => {
          const value = bytes(c);
          return text(value, 0, value.length);
        };
      }
      return (c) => {
        const len = lengthPrefix(c, prefix);
        const start = c.pos;
        c.pos = start + len;
        return text(c.buf, start, start + len);
      };
    }
    case 'binary':
      return bytes;
    case 'fixed-binary': {
      const width = column.length;
      return (c) => fixedWidth(bytes(c), width);
    }
    case 'uuid':
      return (c) => formatUuid(bytes(c));
    case 'inet4':
      return (c) => formatInet4(bytes(c));
    case 'inet6':
      return (c) => formatInet6(bytes(c));
    default:
      throw mismatch(column, wireType);
  }
}

/**
 * A value of a MariaDB COMPRESSED column (VARCHAR / VARBINARY / TEXT / BLOB … COMPRESSED) as stored:
 * sql/field_comp.cc wraps each value in an envelope whose header byte holds the method in bits 4–7
 * (0: stored as is, 8: zlib); for zlib, bits 0–2 give the size of the big-endian original length that
 * follows, and bit 3 marks a raw deflate stream (no zlib wrapper). An empty value has no header.
 */
function uncompressedValue(column: MappedColumn, value: Buffer): Buffer {
  if (value.length === 0) return value;
  const header = value[0]!;
  const method = header >> 4;
  if (method === 0) return value.subarray(1);
  if (method !== 8) throw valueError(column, 'a COMPRESSED value of method 0 (stored) or 8 (zlib)', `method ${method}`, 'binlog');
  const deflated = value.subarray(1 + (header & 0x07));
  try {
    return header & 0x08 ? inflateRawSync(deflated) : inflateSync(deflated);
  } catch (e) {
    throw valueError(column, 'a COMPRESSED value whose zlib stream inflates', (e as Error).message, 'binlog');
  }
}

// ---- stepping over a value ---------------------------------------------------------------------------

/**
 * A reader that steps over a column's value without making it, and reads it as null: for the
 * columns of a row image floe does not use (row-decoder.ts `compileTable`, the before images of a
 * keyed table). The widths are those the readers above advance by; a width that disagrees with the
 * event shows as the decoder's "the row images end at byte …" error.
 */
export function columnSkipper(column: MappedColumn, wireType: number, meta: number, meta2: number): ColumnReader {
  const prefix = prefixBytes(wireType, meta);
  if (prefix > 0) {
    return (c) => {
      const len = lengthPrefix(c, prefix);
      c.pos += len;
      return null;
    };
  }
  const width = fixedBytes(column, wireType, meta, meta2);
  return (c) => {
    c.pos += width;
    return null;
  };
}

/** The bytes of a fixed-width value of `wireType` (field.cc Field_*::pack_length_from_metadata). */
function fixedBytes(column: MappedColumn, wireType: number, meta: number, meta2: number): number {
  switch (wireType) {
    case T.TINY:
    case T.YEAR:
      return 1;
    case T.SHORT:
      return 2;
    case T.INT24:
    case T.DATE:
      return 3;
    case T.LONG:
    case T.FLOAT:
      return 4;
    case T.LONGLONG:
    case T.DOUBLE:
      return 8;
    case T.NEWDECIMAL:
      return decimalBytes(meta, meta2);
    case T.DATETIME2:
      return 5 + ((meta + 1) >> 1);
    case T.TIMESTAMP2:
      return 4 + ((meta + 1) >> 1);
    case T.TIME2:
      return 3 + ((meta + 1) >> 1);
    case T.TIMESTAMP:
      return classicTemporalBytes('timestamp', column.column.datetimePrecision ?? 0);
    case T.DATETIME:
      return classicTemporalBytes('datetime', column.column.datetimePrecision ?? 0);
    case T.TIME:
      return classicTemporalBytes('time', column.column.datetimePrecision ?? 0);
    case T.BIT:
      return (meta + 7) >> 3;
    case T.ENUM:
    case T.SET:
      return meta;
    default:
      throw unsupported(column, `the wire type ${wireType}`);
  }
}
