/**
 * Binlog-path value conversion: what `@vlasky/zongji` decodes from a row event, turned into exactly
 * the value the snapshot path (snapshot-values.ts) produces for the same stored value.
 *
 * zongji follows mysql2's value options, so its connection must be created with
 * `BINLOG_CONNECTION_OPTIONS` (dateStrings, timezone 'Z', jsonStrings, no decimalNumbers): then
 * DATE/DATETIME arrive as their exact text, TIMESTAMP as UTC text built from the binlog's epoch seconds
 * (never a JS Date in the process zone), DECIMAL as exact text and 64-bit integers as numbers or exact
 * decimal strings. A JS Date reaching a converter means the connection was created without these
 * options; that is an error, never a silently shifted value.
 *
 * Where zongji's decoding loses information, floe changes what zongji decodes instead of accepting a
 * wrong value (`adaptZongjiTableMap`, applied to every TABLE_MAP before its rows are parsed):
 * - MySQL JSON (binary): zongji parses it into JS objects (integer-like keys reorder, 1.0 becomes 1),
 *   so the column is read as a BLOB and floe prints MySQL's own text (mysql-json.ts).
 * - ENUM / SET: zongji maps indexes to labels from COLUMN_TYPE text, which breaks on labels with commas
 *   or quotes when the binlog carries no label metadata, and gives `undefined` for the empty ENUM value
 *   (index 0); the column is read as its unsigned index / bitmask and floe maps it with the captured
 *   labels.
 * Two values are repaired here: YEAR 0000 (zongji returns 1900; YEAR's range is 1901–2155 and 0, so
 * 1900 can only mean 0000) and MariaDB UUID/INET4/INET6, which arrive as raw bytes under
 * binlog_row_metadata=FULL and are formatted as the server formats them.
 */
import type { Row, Value } from '../../model/values.js';
import { FloeError } from '../../util/errors.js';
import { VALUE_SHAPING_OPTIONS } from './client.js';
import { mysqlJsonBinaryToText } from './mysql-json.js';
import type { MappedColumn, MappedTable } from './type-mapping.js';
import { snapshotValueConverter, valueError, toInteger, toBigInt, type ValueConverter } from './snapshot-values.js';

/** mysql2 options zongji's connection must be created with (spread them into its connection config). */
export const BINLOG_CONNECTION_OPTIONS = VALUE_SHAPING_OPTIONS;

// zongji column type codes (lib/common.js MysqlTypes) that floe rewrites.
const TYPE_TINY = 1;
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
  columns?: { name: string; type: number; charset: string | null; metadata?: Record<string, number>; floeOriginalType?: number }[];
  columnSchemas?: Record<string, unknown>[];
  parentSchema?: string;
  tableName?: string;
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
export function adaptZongjiTableMap(entry: ZongjiTableMapEntry | undefined): void {
  if (!entry?.columns) return;
  entry.columns.forEach((column, i) => {
    if (column.floeOriginalType !== undefined) return;
    const original = column.type;
    const size = column.metadata?.size ?? 0;
    if (original === TYPE_JSON) {
      column.floeOriginalType = original;
      column.type = TYPE_BLOB; // same length-prefixed layout (metadata.length_size); raw Buffer out
      column.charset = null;
    } else if (original === TYPE_ENUM || original === TYPE_SET) {
      column.floeOriginalType = original;
      column.type = size === 1 ? TYPE_TINY : size === 2 ? TYPE_SHORT : size === 3 ? TYPE_INT24 : size === 4 ? TYPE_LONG : TYPE_LONGLONG;
      const schema = entry.columnSchemas?.[i];
      if (schema) schema.UNSIGNED = true; // indexes and bitmasks are unsigned
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
      const v = row[names[i]];
      if (v === undefined) {
        if (!(names[i] in row)) {
          throw new FloeError(
            'source.mysql',
            'invalid-data',
            `binlog row of ${table.columns[i].qualifiedName.split('.').slice(0, 2).join('.')} has no column ${JSON.stringify(names[i])}: expected the captured columns (${names.join(', ')}), found ${Object.keys(row).join(', ')}; the table changed after its schema was captured`,
          );
        }
        // zongji yields undefined for an ENUM's empty value when not adapted; fall through to the converter
        out[i] = converters[i](undefined);
        continue;
      }
      out[i] = v === null ? null : converters[i](v);
    }
    return out;
  };
}

/** The converter for one column's binlog values (non-null). */
export function binlogValueConverter(column: MappedColumn): ValueConverter {
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
        let bits = toBigInt(column, raw, p);
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
        const y = toInteger(column, raw, p);
        return y === 1900 ? 0 : y;
      };
    case 'uuid':
      return (raw) => (raw instanceof Uint8Array ? formatUuid(raw) : fromSnapshot(raw));
    case 'inet4':
      return (raw) => (raw instanceof Uint8Array ? formatInet4(raw) : fromSnapshot(raw));
    case 'inet6':
      return (raw) => (raw instanceof Uint8Array ? formatInet6(raw) : fromSnapshot(raw));
    case 'date':
    case 'datetime':
    case 'timestamp':
      return rejectDate;
    default:
      return (raw) => {
        if (raw === undefined) throw valueError(column, 'a value', raw, p);
        return fromSnapshot(raw);
      };
  }
}

function fixedWidth(bytes: Uint8Array, width: number): Uint8Array {
  // The binlog strips trailing zero bytes of fixed-width binary values; restore the width.
  if (bytes.length >= width) return bytes;
  const out = new Uint8Array(width);
  out.set(bytes);
  return out;
}

export function formatUuid(raw: Uint8Array): string {
  const hex = Buffer.from(fixedWidth(raw, 16)).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function formatInet4(raw: Uint8Array): string {
  const b = fixedWidth(raw, 4);
  return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
}

/** RFC 5952 text, with IPv4-mapped and IPv4-compatible forms dotted, as MariaDB prints INET6. */
export function formatInet6(raw: Uint8Array): string {
  const b = fixedWidth(raw, 16);
  if (b.subarray(0, 10).every((x) => x === 0)) {
    const v4 = formatInet4(b.subarray(12));
    if (b[10] === 0xff && b[11] === 0xff) return `::ffff:${v4}`;
    const low32 = ((b[12] << 24) >>> 0) + (b[13] << 16) + (b[14] << 8) + b[15];
    if (b[10] === 0 && b[11] === 0 && low32 > 1) return `::${v4}`;
  }
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i] << 8) | b[i + 1]);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (g: number): string => g.toString(16);
  if (bestStart < 0) return groups.map(hex).join(':');
  return `${groups.slice(0, bestStart).map(hex).join(':')}::${groups.slice(bestStart + bestLength).map(hex).join(':')}`;
}
