/**
 * Binlog-path value conversion: what `@vlasky/zongji` decodes from a row event, turned into exactly
 * the value the snapshot path (snapshot-values.ts) produces for the same stored value.
 *
 * zongji follows mysql2's value options, so its connection must be created with
 * `BINLOG_CONNECTION_OPTIONS` (no decimalNumbers, bigNumberStrings, dateStrings, timezone 'Z'): DECIMAL
 * then arrives as exact text and 64-bit integers as numbers or exact decimal strings. The temporal
 * types of every current table format are decoded by floe from their bytes (below), so they never
 * depend on these options; only pre-MySQL-5.6 temporal formats still come through zongji's text, and
 * a JS Date reaching a converter (the options were not used) is an error, never a shifted value.
 *
 * Where zongji's decoding loses information, floe changes what zongji decodes instead of accepting a
 * wrong value (`adaptZongjiTableMap`, applied to every TABLE_MAP before its rows are parsed):
 * - MySQL JSON (binary): zongji parses it into JS objects (integer-like keys reorder, 1.0 becomes 1),
 *   so the column is read as a BLOB and floe prints MySQL's own text (mysql-json.ts).
 * - ENUM / SET: zongji maps indexes to labels from COLUMN_TYPE text, which breaks on labels with commas
 *   or quotes when the binlog carries no label metadata, and gives `undefined` for the empty ENUM value
 *   (index 0); the column is read as its unsigned index / bitmask and floe maps it with the captured
 *   labels (a SET of 7–8 bytes as its raw little-endian bytes: zongji gives 64-bit values ≥ 2^53 as
 *   decimal text, which the converter would take for a label).
 * - DATE, YEAR and the fractional-second formats TIME2 / DATETIME2 / TIMESTAMP2 (all MySQL 5.6.4+ and
 *   MariaDB 10.1+ tables): zongji decodes a negative TIME without fraction wrongly (it negates by
 *   flipping bits and adds one second without carrying: -01:00:00 comes out as -01:04:04), turns YEAR
 *   0000 into 1900, and without `dateStrings` builds JS Dates in the process zone. These columns are
 *   read as raw bytes (as BIT of the same width) and decoded here exactly as MySQL's
 *   my_time_packed_from_binary / my_datetime_packed_from_binary / my_timestamp_from_binary do.
 * MariaDB UUID/INET4/INET6 arrive as raw bytes under binlog_row_metadata=FULL and are formatted as the
 * server formats them.
 */
import type { Row, Value } from '../../../../model/values.js';
import { FloeError } from '../../../../util/errors.js';
import { VALUE_SHAPING_OPTIONS } from '../../client.js';
import { mysqlJsonBinaryToText } from '../rows/mysql-json.js';
import { formatInet4, formatInet6, formatUuid } from '../rows/mariadb-binary-types.js';
import { tableKey } from '../../schema/table-schema.js';
import type { MappedColumn, MappedTable } from '../../schema/type-mapping.js';
import { snapshotValueConverter, valueError, toInteger, toBigInt, timeOfDay, type ValueConverter } from '../../snapshot/snapshot-values.js';
import { daysFromCivil } from '../../../../model/values.js';

/** mysql2 options zongji's connection must be created with (spread them into its connection config). */
export const BINLOG_CONNECTION_OPTIONS = VALUE_SHAPING_OPTIONS;

// zongji column type codes (lib/common.js MysqlTypes) that floe rewrites.
const TYPE_TINY = 1;
const TYPE_DATE = 10;
const TYPE_YEAR = 13;
const TYPE_BIT = 16;
const TYPE_TIMESTAMP2 = 17;
const TYPE_DATETIME2 = 18;
const TYPE_TIME2 = 19;
const TYPE_SHORT = 2;
const TYPE_INT24 = 9;
const TYPE_LONG = 3;
const TYPE_LONGLONG = 8;
const TYPE_JSON = 245;
const TYPE_ENUM = 247;
const TYPE_SET = 248;
const TYPE_BLOB = 252;

/** The parts of a zongji table-map entry (`zongji.tableMap[tableId]`) floe touches. */
export interface ZongjiTableMapEntry {
  columns?: { name: string; type: number; charset: string | null; metadata?: Record<string, unknown>; floeOriginalType?: number }[];
  columnSchemas?: Record<string, unknown>[];
  parentSchema?: string;
  tableName?: string;
}

/**
 * The ENUM and SET labels a table map carries (binlog_row_metadata=FULL: ENUM_STR_VALUE and
 * SET_STR_VALUE, decoded by zongji from the column's charset), by lower-cased column name; empty
 * when the binlog carries no names or labels (MINIMAL metadata).
 */
export function tableMapLabels(entry: ZongjiTableMapEntry): Map<string, string[]> {
  const out = new Map<string, string[]>();
  entry.columns?.forEach((column, i) => {
    const schema = entry.columnSchemas?.[i];
    const labels = schema?.ENUM_VALUES ?? schema?.SET_VALUES;
    if (column.name && Array.isArray(labels) && labels.every((l) => typeof l === 'string')) out.set(column.name.toLowerCase(), labels as string[]);
  });
  return out;
}

/** The parts of a ZongJi instance `attachExactValueDecoding` uses. */
export interface ZongjiLike {
  tableMap: Record<string, ZongjiTableMapEntry | undefined>;
  prependListener(event: 'binlog', listener: (event: { getTypeName(): string; tableId?: number | string }) => void): unknown;
}

/**
 * Rewrites a table map so zongji decodes JSON as raw bytes and ENUM/SET as integers (see the module
 * header). Idempotent; call it for every TableMap event before the following row events are parsed.
 */
function adaptZongjiTableMap(entry: ZongjiTableMapEntry | undefined): void {
  if (!entry?.columns) return;
  entry.columns.forEach((column, i) => {
    if (column.floeOriginalType !== undefined) return;
    const original = column.type;
    const size = Number(column.metadata?.size ?? 0);
    const asRawBytes = (bytes: number): void => {
      // zongji reads a BIT column as the raw Buffer of ceil(bits / 8) bytes
      column.floeOriginalType = original;
      column.type = TYPE_BIT;
      column.metadata = { ...(column.metadata ?? {}), bits: bytes * 8 };
    };
    const fractionBytes = Math.ceil(Number(column.metadata?.decimals ?? 0) / 2);
    switch (original) {
      case TYPE_JSON:
        column.floeOriginalType = original;
        column.type = TYPE_BLOB; // same length-prefixed layout (metadata.length_size); raw Buffer out
        column.charset = null;
        break;
      case TYPE_ENUM:
      case TYPE_SET: {
        if (original === TYPE_SET && size > 6) {
          // a 7- or 8-byte bitmask can exceed 2^53, which zongji's LONGLONG gives as decimal text (then
          // indistinguishable from a label): read the little-endian bytes instead
          asRawBytes(size);
          break;
        }
        column.floeOriginalType = original;
        column.type = size === 1 ? TYPE_TINY : size === 2 ? TYPE_SHORT : size === 3 ? TYPE_INT24 : size === 4 ? TYPE_LONG : TYPE_LONGLONG;
        const schema = entry.columnSchemas?.[i];
        if (schema) schema.UNSIGNED = true; // indexes and bitmasks are unsigned
        break;
      }
      case TYPE_DATE:
        asRawBytes(3);
        break;
      case TYPE_YEAR:
        asRawBytes(1);
        break;
      case TYPE_TIME2:
        asRawBytes(3 + fractionBytes);
        break;
      case TYPE_DATETIME2:
        asRawBytes(5 + fractionBytes);
        break;
      case TYPE_TIMESTAMP2:
        asRawBytes(4 + fractionBytes);
        break;
    }
  });
}

/**
 * Installs `adaptZongjiTableMap` as the first 'binlog' listener of a ZongJi instance. zongji emits a
 * TableMap event synchronously before it parses the next packet, so the rewrite is in place before the
 * rows that use the map are decoded.
 */
export function attachExactValueDecoding(zongji: ZongjiLike): void {
  zongji.prependListener('binlog', (event) => {
    if (event.getTypeName() === 'TableMap' && event.tableId !== undefined) adaptZongjiTableMap(zongji.tableMap[String(event.tableId)]);
  });
}

/** Converts one zongji row image (object keyed by column name) into a value-model row in column order. */
export function createBinlogRowConverter(table: MappedTable): (row: Record<string, unknown>) => Row {
  const names = table.columns.map((c) => c.column.name);
  const converters = table.columns.map((c) => binlogValueConverter(c));
  const n = names.length;
  return (row) => {
    const out: Row = new Array(n);
    for (let i = 0; i < n; i++) {
      const v = row[names[i]!];
      if (v === undefined) {
        if (!(names[i]! in row)) {
          throw new FloeError(
            'source.mysql',
            'invalid-data',
            `binlog row of ${tableKey(table.schema.id)} has no column ${JSON.stringify(names[i])}: expected the captured columns (${names.join(', ')}), found ${Object.keys(row).join(', ')}; the table changed after its schema was captured`,
          );
        }
        // zongji yields undefined for an ENUM's empty value when not adapted; fall through to the converter
        out[i] = converters[i]!(undefined);
        continue;
      }
      out[i] = v === null ? null : converters[i]!(v);
    }
    return out;
  };
}

/** The converter for one column's binlog values (non-null). */
function binlogValueConverter(column: MappedColumn): ValueConverter {
  const p = 'binlog' as const;
  const fromSnapshot = snapshotValueConverter(column, p);
  const rejectDate = (raw: unknown): Value => {
    if (raw instanceof Date) {
      throw new FloeError(
        'source.mysql',
        'config',
        `column ${column.qualifiedName}: the binlog reader returned a JavaScript Date, which depends on the process time zone; create zongji's connection with BINLOG_CONNECTION_OPTIONS (dateStrings: true, timezone: 'Z')`,
      );
    }
    return fromSnapshot(raw);
  };
  switch (column.kind) {
    case 'enum': {
      const labels = column.column.labels ?? [];
      return (raw) => {
        if (raw === undefined) return ''; // unadapted zongji: index 0, the empty error value
        if (typeof raw === 'string') return raw;
        const index = toInteger(column, raw, p);
        if (index === 0) return '';
        const label = labels[index - 1];
        if (label === undefined) throw valueError(column, `an ENUM index 0..${labels.length}`, raw, p);
        return label;
      };
    }
    case 'set': {
      const labels = column.column.labels ?? [];
      return (raw) => {
        if (typeof raw === 'string') return raw;
        let bits = 0n;
        if (raw instanceof Uint8Array) for (let i = raw.length - 1; i >= 0; i--) bits = (bits << 8n) | BigInt(raw[i]!);
        else bits = toBigInt(column, raw, p);
        const parts: string[] = [];
        for (let i = 0; bits > 0n; i++, bits >>= 1n) {
          if (bits & 1n) {
            const label = labels[i];
            if (label === undefined) throw valueError(column, `a SET bitmask over ${labels.length} labels`, raw, p);
            parts.push(label);
          }
        }
        return parts.join(',');
      };
    }
    case 'json':
      return (raw) => (raw instanceof Uint8Array ? mysqlJsonBinaryToText(raw) : fromSnapshot(raw));
    case 'year':
      return (raw) => {
        if (raw instanceof Uint8Array) return raw[0] === 0 ? 0 : raw[0]! + 1900;
        const y = toInteger(column, raw, p);
        return y === 1900 ? 0 : y; // unadapted zongji reads YEAR 0000 as 1900 (not a valid YEAR)
      };
    case 'uuid':
      return (raw) => (raw instanceof Uint8Array ? formatUuid(raw) : fromSnapshot(raw));
    case 'inet4':
      return (raw) => (raw instanceof Uint8Array ? formatInet4(raw) : fromSnapshot(raw));
    case 'inet6':
      return (raw) => (raw instanceof Uint8Array ? formatInet6(raw) : fromSnapshot(raw));
    case 'date':
      return (raw) => (raw instanceof Uint8Array ? decodeBinlogDate(column, raw) : rejectDate(raw));
    case 'datetime':
      return (raw) => (raw instanceof Uint8Array ? decodeDatetime2(column, raw) : rejectDate(raw));
    case 'timestamp':
      return (raw) => (raw instanceof Uint8Array ? decodeTimestamp2(column, raw) : rejectDate(raw));
    case 'time':
      return (raw) => (raw instanceof Uint8Array ? timeOfDay(column, decodeTime2(column, raw)) : fromSnapshot(raw));
    case 'time-micros':
      return (raw) => (raw instanceof Uint8Array ? decodeTime2(column, raw) : fromSnapshot(raw));
    default:
      return (raw) => {
        if (raw === undefined) throw valueError(column, 'a value', raw, p);
        return fromSnapshot(raw);
      };
  }
}

// ---- MySQL binary temporal formats (sql-common/my_time.cc) -----------------------------------------

function readUIntBE(bytes: Uint8Array, start: number, length: number): number {
  let v = 0;
  for (let i = start; i < start + length; i++) v = v * 256 + bytes[i]!;
  return v;
}

/** Fraction bytes of the *2 formats → microseconds (1 byte: 1/100 s, 2 bytes: 1/10000 s, 3 bytes: µs). */
function fraction(bytes: Uint8Array, start: number): number {
  const n = bytes.length - start;
  if (n === 0) return 0;
  const v = readUIntBE(bytes, start, n);
  return n === 1 ? v * 10000 : n === 2 ? v * 100 : v;
}

/** DATE: 3 bytes little-endian, day | month << 5 | year << 9. Null for zero dates. */
function decodeBinlogDate(column: MappedColumn, bytes: Uint8Array): number | null {
  if (bytes.length !== 3) throw valueError(column, 'a 3-byte binlog DATE', bytes, 'binlog');
  const v = bytes[0]! | (bytes[1]! << 8) | (bytes[2]! << 16);
  const day = v & 31;
  const month = (v >> 5) & 15;
  const year = v >>> 9;
  return month === 0 || day === 0 ? null : daysFromCivil(year, month, day);
}

/**
 * DATETIME2: 5 bytes big-endian of (packed + 0x8000000000), packed = ((year*13+month) << 5 | day) << 17
 * | hour << 12 | minute << 6 | second, then the fraction. Microseconds since the epoch as UTC
 * wall-clock; null for zero dates.
 */
function decodeDatetime2(column: MappedColumn, bytes: Uint8Array): bigint | null {
  if (bytes.length < 5 || bytes.length > 8) throw valueError(column, 'a 5..8-byte binlog DATETIME2', bytes, 'binlog');
  const intPart = readUIntBE(bytes, 0, 5) - 0x8000000000;
  const ymd = Math.floor(intPart / 2 ** 17);
  const hms = intPart % 2 ** 17;
  const ym = Math.floor(ymd / 32);
  const day = ymd % 32;
  const month = ym % 13;
  const year = Math.floor(ym / 13);
  if (month === 0 || day === 0) return null;
  const seconds = daysFromCivil(year, month, day) * 86400 + (hms >> 12) * 3600 + ((hms >> 6) & 63) * 60 + (hms & 63);
  const frac = fraction(bytes, 5);
  // exact as a double while |seconds| < 9,007,199,254 (as parseMysqlDateTime): one BigInt, not three
  if (seconds > -9_007_199_254 && seconds < 9_007_199_254) return BigInt(seconds * 1_000_000 + frac);
  return BigInt(seconds) * 1_000_000n + BigInt(frac);
}

/** TIMESTAMP2: 4 bytes big-endian epoch seconds, then the fraction. Null for the zero timestamp. */
function decodeTimestamp2(column: MappedColumn, bytes: Uint8Array): bigint | null {
  if (bytes.length < 4 || bytes.length > 7) throw valueError(column, 'a 4..7-byte binlog TIMESTAMP2', bytes, 'binlog');
  const seconds = readUIntBE(bytes, 0, 4);
  const frac = fraction(bytes, 4);
  if (seconds === 0 && frac === 0) return null;
  // seconds < 2^32 and frac < 10^6: seconds·10⁶ + frac < 2^53, exact as a double (one BigInt)
  return BigInt(seconds * 1_000_000 + frac);
}

/**
 * TIME2 (my_time_packed_from_binary): 3 bytes big-endian of (intpart + 0x800000) with intpart =
 * hour << 12 | minute << 6 | second (negative for negative times), then the fraction; negative values
 * store the fraction reversed ("0x100 - frac") for binary sort order. Signed microseconds.
 */
function decodeTime2(column: MappedColumn, bytes: Uint8Array): bigint {
  let packed: bigint; // MY_PACKED_TIME_MAKE(intpart, frac) = intpart << 24 + frac
  const n = bytes.length - 3;
  if (n < 0 || n > 3) throw valueError(column, 'a 3..6-byte binlog TIME2', bytes, 'binlog');
  if (n === 3) {
    packed = BigInt(readUIntBE(bytes, 0, 6)) - 0x800000000000n;
  } else {
    let intPart = readUIntBE(bytes, 0, 3) - 0x800000;
    let frac = n === 0 ? 0 : readUIntBE(bytes, 3, n);
    if (intPart < 0 && frac !== 0) {
      intPart += 1;
      frac -= n === 1 ? 0x100 : 0x10000;
    }
    packed = BigInt(intPart) * 16_777_216n + BigInt(frac * (n === 1 ? 10000 : n === 2 ? 100 : 1));
  }
  const negative = packed < 0n;
  const abs = negative ? -packed : packed;
  const hms = abs >> 24n;
  const micros = abs & 0xffffffn;
  const hour = (hms >> 12n) % 1024n;
  const minute = (hms >> 6n) % 64n;
  const second = hms % 64n;
  const total = (hour * 3600n + minute * 60n + second) * 1_000_000n + micros;
  return negative ? -total : total;
}
