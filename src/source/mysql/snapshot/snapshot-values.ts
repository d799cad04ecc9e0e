/**
 * Snapshot-path value conversion: what mysql2 returns for a `SELECT` over the text protocol, with
 * floe's session options (client.ts: dateStrings, bigNumberStrings, jsonStrings, time_zone '+00:00'),
 * turned into the value model of `src/model/values.ts`. The binlog path (binlog-values.ts) must produce
 * byte-identical values for the same row; it reuses these converters wherever the inputs coincide.
 *
 * Inputs per kind (text protocol): integers arrive as numbers (BIGINT as decimal strings), FLOAT and
 * DOUBLE as the server's text of the value (below), DECIMAL as exact strings, DATE/DATETIME/TIMESTAMP/
 * TIME as text, binary strings and BIT as Buffers, JSON as the server's own JSON text. Literal defaults
 * (default-values.ts) are fed through the same converters as text, so every converter also accepts the
 * text form of its value.
 *
 * FLOAT and DOUBLE columns are selected as `CAST(col * 1e0 AS CHAR)` (on MySQL, DOUBLE columns as
 * `CAST(CAST(col AS JSON) AS CHAR)`, below) and parsed with `Number`, so the value model holds the stored
 * IEEE value bit for bit, as the binlog path does:
 * - The server prints a DOUBLE without fixed decimals in the shortest digits that read back as the same
 *   double (`String::set_real` → `my_gcvt`, David Gay's `dtoa` in mode 4, in MariaDB and in MySQL), and
 *   `Number` rounds decimal text correctly. mysql2 does not: it parses DOUBLE/FLOAT columns of up to 17
 *   characters by accumulating the digits in a double (`Packet.parseFloat`), which rounds once they
 *   exceed 2^53, so 94.24777960769379 arrived as 94.2477796076938 and 939.3362034233481 as
 *   939.336203423348. As CHAR the text reaches `Number` untouched.
 * - `* 1e0` makes the value a DOUBLE whose decimals are not fixed: a FLOAT prints with 6 significant
 *   digits (3.140625 as 3.14062), and a DOUBLE(M,D) or FLOAT(M,D) prints D decimals (`my_fcvt`: a
 *   DOUBLE(10,2) holding 0.21999999999999997 prints 0.22). A float32 widened to a double is exact, and
 *   `Math.fround` takes it back. Multiplying keeps −0 (adding 0 would not).
 * - MySQL (8.0.31 measured) prints a real-valued expression in at most 22 characters, dropping digits to
 *   fit: `CAST(d * 1e0 AS CHAR)` of −2.2250738585072014e−308 is `-2.2250738585072e-308`, another
 *   double. MySQL's JSON prints a double in its shortest round-trip digits at any length
 *   (`-2.2250738585072014e-308`, −0 as `-0.0`), also for DOUBLE(M,D), so MySQL DOUBLEs go through
 *   JSON. A FLOAT keeps `* 1e0`: its double keeps 16 significant digits at worst (a sign, a point and
 *   a two-digit exponent take the other 6 characters), and 9 are enough for `Math.fround` to give the
 *   float32 back (test/source/mysql/schema/float-precision.test.ts covers every float exponent on MySQL 8).
 * Reading these columns through the binary protocol (8 / 4 IEEE bytes) would be exact too, but mysql2's
 * binary-row decoder formats DATETIME/TIMESTAMP values itself and nearly doubled the chunk read's CPU
 * time on a table with two DATETIME(6) columns.
 *
 * Zero dates ('0000-00-00', and dates with a zero month or day, which some sql_modes admit) become null
 * (docs/design.md §6), so date/datetime/timestamp columns are never `required` in Iceberg.
 */
import type { Value, Row } from '../../../model/values.js';
import { daysFromCivil, formatDecimal, parseDecimal, formatTime } from '../../../model/values.js';
import { FloeError } from '../../../util/errors.js';
import { quoteIdent } from '../client.js';
import type { ServerFlavor } from '../dialect.js';
import { tableKey } from '../schema/table-schema.js';
import type { MappedColumn, MappedTable, ValueKind } from '../schema/type-mapping.js';

export type ValueConverter = (raw: unknown) => Value;

/** Which reader a value came from (for error messages; 'default' = a literal column default). */
export type ValuePath = 'snapshot' | 'binlog' | 'default';

const MICROS_PER_SECOND = 1_000_000n;
const MICROS_PER_DAY = 86_400_000_000n;

/** Whether a column of this kind can read as null even when the MySQL column is NOT NULL. */
function zeroDateKind(kind: ValueKind): boolean {
  return kind === 'date' || kind === 'datetime' || kind === 'timestamp';
}

/** Whether the Iceberg field for a mapped column can be `required`. */
export function isRequired(column: MappedColumn): boolean {
  return !column.column.nullable && !zeroDateKind(column.kind);
}

/**
 * The select-list expression that reads a column in the form the snapshot converter expects, on a
 * server of `flavor`.
 */
export function snapshotSelectExpression(column: MappedColumn, flavor: ServerFlavor): string {
  const id = quoteIdent(column.column.name);
  // exact FLOAT/DOUBLE text, parsed by `Number` instead of mysql2 (see the module header)
  if (column.kind === 'double' && flavor === 'mysql') return `CAST(CAST(${id} AS JSON) AS CHAR)`;
  return column.kind === 'float' || column.kind === 'double' ? `CAST(${id} * 1e0 AS CHAR)` : id;
}

/** Comma-separated select list for all columns of a mapped table, in column order. */
export function snapshotSelectList(table: MappedTable, flavor: ServerFlavor): string {
  return table.columns.map((c) => snapshotSelectExpression(c, flavor)).join(', ');
}

/** Converts rows read with `snapshotSelectList(table)` (rowsAsArray) into value-model rows. */
export function createSnapshotRowConverter(table: MappedTable): (raw: unknown[]) => Row {
  const converters = table.columns.map((c) => snapshotValueConverter(c));
  const n = converters.length;
  return (raw) => {
    if (raw.length !== n) {
      throw new FloeError('source.mysql', 'invalid-data', `snapshot row of ${tableKey(table.schema.id)} has ${raw.length} values: expected ${n}, one per captured column (was the table altered?)`);
    }
    const out: Row = new Array(n);
    for (let i = 0; i < n; i++) {
      const v = raw[i];
      out[i] = v === null || v === undefined ? null : converters[i]!(v);
    }
    return out;
  };
}

export function valueError(column: MappedColumn, expected: string, found: unknown, path: ValuePath): FloeError {
  return new FloeError('source.mysql', 'invalid-data', `column ${column.qualifiedName} (${column.column.columnType}): expected ${expected} from the ${path} reader, found ${describe(found)}`);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v instanceof Uint8Array) return `${v.length} bytes`;
  if (v instanceof Date) return 'a JavaScript Date';
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? v.slice(0, 60) + '…' : v);
  return `${typeof v} ${String(v)}`;
}

/** The converter for one column's snapshot values (non-null). */
export function snapshotValueConverter(column: MappedColumn, p: ValuePath = 'snapshot'): ValueConverter {
  switch (column.kind) {
    case 'boolean-int':
      return (raw) => tinyIntBoolean(column, toInteger(column, raw, p));
    case 'boolean-bit':
      return (raw) => {
        const b = toBytes(column, raw, p);
        return b[b.length - 1] === 1;
      };
    case 'int':
    case 'year':
      return (raw) => toInteger(column, raw, p);
    case 'long':
      return (raw) => toBigInt(column, raw, p);
    case 'unsigned-long':
      return (raw) => toBigInt(column, raw, p).toString();
    case 'float':
      return (raw) => Math.fround(toNumber(column, raw, p));
    case 'double':
      return (raw) => toNumber(column, raw, p);
    case 'decimal':
    case 'decimal-string':
      return (raw) => canonicalDecimal(column, raw, p);
    case 'string':
    case 'enum':
    case 'set':
    case 'json':
    case 'inet4':
    case 'inet6':
      return (raw) => toText(column, raw, p);
    case 'uuid':
      return (raw) => toText(column, raw, p).toLowerCase();
    case 'binary':
    case 'bit':
      return (raw) => toBytes(column, raw, p);
    case 'fixed-binary':
      return (raw) => padBytes(toBytes(column, raw, p), column.length);
    case 'date':
      return (raw) => parseMysqlDate(column, toText(column, raw, p), p);
    case 'datetime':
    case 'timestamp':
      return (raw) => parseMysqlDateTime(column, toText(column, raw, p), p);
    case 'time':
      return (raw) => timeOfDay(column, parseMysqlTime(column, toText(column, raw, p), p));
    case 'time-micros':
      return (raw) => parseMysqlTime(column, toText(column, raw, p), p);
  }
}

// ---- shared conversions (also used by the binlog path) -------------------------------------------

function tinyIntBoolean(column: MappedColumn, n: number): boolean {
  if (n === 0) return false;
  if (n === 1) return true;
  throw new FloeError(
    'source.mysql',
    'invalid-data',
    `column ${column.qualifiedName} (${column.column.columnType}) holds ${n}, which is not a boolean: expected 0 or 1 because tinyint(1) maps to boolean; set the source option tinyInt1AsBoolean: false to map tinyint(1) to int (then re-snapshot the table)`,
  );
}

export function toInteger(column: MappedColumn, raw: unknown, path: ValuePath): number {
  if (typeof raw === 'number' && Number.isInteger(raw)) return raw;
  if (typeof raw === 'string' && /^[+-]?\d+$/.test(raw.trim())) return Number(raw);
  if (typeof raw === 'boolean') return raw ? 1 : 0;
  throw valueError(column, 'an integer', raw, path);
}

/** Whether `s` is a plain integer literal: an optional sign and 1–30 ASCII digits, nothing else. */
function plainInteger(s: string): boolean {
  const n = s.length;
  if (n === 0 || n > 31) return false;
  let i = s.charCodeAt(0) === 45 || s.charCodeAt(0) === 43 ? 1 : 0;
  if (i === n) return false;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

export function toBigInt(column: MappedColumn, raw: unknown, path: ValuePath): bigint {
  if (typeof raw === 'bigint') return raw;
  // hot path (BIGINT keys arrive as decimal text): no regex, no trim
  if (typeof raw === 'string' && plainInteger(raw)) return BigInt(raw);
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) return BigInt(raw);
  if (typeof raw === 'string' && /^[+-]?\d+$/.test(raw.trim())) return BigInt(raw.trim());
  throw valueError(column, 'an exact integer (number within 2^53 or decimal string)', raw, path);
}

function toNumber(column: MappedColumn, raw: unknown, path: ValuePath): number {
  if (typeof raw === 'number') return raw;
  if (typeof raw === 'string') {
    // Number() is correctly rounded (ECMAScript StringToNumber); '' and blanks also read as 0
    const n = Number(raw);
    if (!Number.isNaN(n) && (n !== 0 || raw.trim() !== '')) return n;
  }
  throw valueError(column, 'a floating-point number', raw, path);
}

function toText(column: MappedColumn, raw: unknown, path: ValuePath): string {
  if (typeof raw === 'string') return raw;
  throw valueError(column, 'text', raw, path);
}

function toBytes(column: MappedColumn, raw: unknown, path: ValuePath): Uint8Array {
  if (raw instanceof Uint8Array) return raw;
  if (typeof raw === 'string' && path === 'default') return Buffer.from(raw, 'utf8');
  throw valueError(column, 'bytes', raw, path);
}

function padBytes(bytes: Uint8Array, length: number): Uint8Array {
  if (bytes.length >= length) return bytes;
  const out = Buffer.alloc(length);
  out.set(bytes);
  return out;
}

/**
 * Whether `s` is already the value model's canonical decimal text at `scale` (what `formatDecimal`
 * prints: optional '-', integer digits without leading zeros, '.', exactly `scale` fraction digits,
 * never a negative zero). MySQL prints DECIMAL columns exactly so, which spares the BigInt round trip.
 */
function isCanonicalDecimal(s: string, scale: number): boolean {
  const n = s.length;
  let i = 0;
  const neg = s.charCodeAt(0) === 45;
  if (neg) i = 1;
  const intStart = i;
  let nonZero = false;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) break;
    if (c !== 48) nonZero = true;
  }
  const intDigits = i - intStart;
  if (intDigits === 0 || (intDigits > 1 && s.charCodeAt(intStart) === 48)) return false;
  if (scale === 0) return i === n && (!neg || nonZero);
  if (i !== n - scale - 1 || s.charCodeAt(i) !== 46) return false;
  for (i++; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
    if (c !== 48) nonZero = true;
  }
  return !neg || nonZero;
}

export function canonicalDecimal(column: MappedColumn, raw: unknown, path: ValuePath): string {
  const text = typeof raw === 'string' ? raw : typeof raw === 'number' || typeof raw === 'bigint' ? String(raw) : undefined;
  if (text === undefined) throw valueError(column, 'an exact decimal string', raw, path);
  if (column.scale >= 0 && isCanonicalDecimal(text, column.scale)) return text;
  try {
    return formatDecimal(parseDecimal(text, column.scale), column.scale);
  } catch (e) {
    throw new FloeError('source.mysql', 'invalid-data', `column ${column.qualifiedName} (${column.column.columnType}): cannot read ${describe(raw)} from the ${path} reader as a decimal with scale ${column.scale}`, { cause: e });
  }
}

function digits(text: string, start: number, length: number): number {
  let n = 0;
  for (let i = start; i < start + length; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** Day number of MySQL 'YYYY-MM-DD', or null for a zero date or a date with a zero month/day. */
function parseMysqlDate(column: MappedColumn, text: string, path: ValuePath): number | null {
  const y = digits(text, 0, 4);
  const m = digits(text, 5, 2);
  const d = digits(text, 8, 2);
  if (text.length !== 10 || y < 0 || m < 0 || d < 0 || text[4] !== '-' || text[7] !== '-') throw valueError(column, "a date 'YYYY-MM-DD'", text, path);
  if (m === 0 || d === 0) return null;
  return daysFromCivil(y, m, d);
}

/**
 * Microseconds since the epoch of MySQL 'YYYY-MM-DD HH:MM:SS[.ffffff]' read as UTC wall-clock (DATETIME
 * is zone-less; TIMESTAMP text is UTC because the session / binlog decoding runs in '+00:00'). Null for
 * zero dates.
 */
export function parseMysqlDateTime(column: MappedColumn, text: string, path: ValuePath): bigint | null {
  const y = digits(text, 0, 4);
  const mo = digits(text, 5, 2);
  const d = digits(text, 8, 2);
  const h = digits(text, 11, 2);
  const mi = digits(text, 14, 2);
  const s = digits(text, 17, 2);
  const ok =
    text.length >= 19 && y >= 0 && mo >= 0 && d >= 0 && h >= 0 && mi >= 0 && s >= 0 &&
    text[4] === '-' && text[7] === '-' && (text[10] === ' ' || text[10] === 'T') && text[13] === ':' && text[16] === ':' &&
    (text.length === 19 || (text[19] === '.' && text.length <= 26 && digits(text, 20, text.length - 20) >= 0));
  if (!ok) throw valueError(column, "a date-time 'YYYY-MM-DD HH:MM:SS[.ffffff]'", text, path);
  if (mo === 0 || d === 0) return null;
  let frac = 0;
  if (text.length > 20) {
    frac = digits(text, 20, text.length - 20);
    for (let k = text.length - 20; k < 6; k++) frac *= 10;
  }
  const seconds = daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
  // |seconds| < 9,007,199,254 (years 1684–2255): seconds·10⁶ + frac stays below 2^53, exact as a
  // double, so one BigInt is made instead of three
  if (seconds > -9_007_199_254 && seconds < 9_007_199_254) return BigInt(seconds * 1_000_000 + frac);
  return BigInt(seconds) * MICROS_PER_SECOND + BigInt(frac);
}

/** Signed microseconds of MySQL TIME text '[-]H…H:MM:SS[.ffffff]' (−838:59:59 … 838:59:59). */
function parseMysqlTime(column: MappedColumn, text: string, path: ValuePath): bigint {
  const m = /^(-?)(\d{1,3}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/.exec(text);
  if (!m) throw valueError(column, "a time '[-]HH:MM:SS[.ffffff]'", text, path);
  const micros =
    (BigInt(m[2]!) * 3600n + BigInt(m[3]!) * 60n + BigInt(m[4]!)) * MICROS_PER_SECOND + BigInt((m[5] ?? '').padEnd(6, '0') || '0');
  return m[1] === '-' ? -micros : micros;
}

/** A TIME value as an Iceberg `time` (00:00 ≤ t < 24:00), or the error docs/design.md §6 asks for. */
export function timeOfDay(column: MappedColumn, micros: bigint): bigint {
  if (micros >= 0n && micros < MICROS_PER_DAY) return micros;
  const text = (micros < 0n ? '-' : '') + formatTime(micros < 0n ? -micros : micros);
  throw new FloeError(
    'source.mysql',
    'invalid-data',
    `column ${column.qualifiedName} (${column.column.columnType}) holds ${text}, outside 00:00:00–24:00:00 that an Iceberg time can hold (MySQL TIME is also a duration): set source.timeAs: micros (every TIME column) or add "${column.qualifiedName}" to source.timeAsMicros to store the column as long microseconds, then re-snapshot the table`,
  );
}
