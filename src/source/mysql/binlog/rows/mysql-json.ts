/**
 * MySQL's binary JSON (the storage and binlog format of JSON columns, sql-common/json_binary.h) decoded
 * straight to the text MySQL itself prints for the value (Json_wrapper::to_string in
 * sql-common/json_dom.cc). That text is floe's canonical JSON: it is what a snapshot `SELECT` returns
 * for the column, so the binlog path can produce byte-identical values.
 *
 * Canonical text, as MySQL prints it:
 * - objects `{"k": v, "k2": v2}` (", " and ": " separators) with keys in storage order: sorted by
 *   length, then bytewise (the order MySQL normalises objects to);
 * - arrays `[1, 2]`;
 * - strings double-quoted; `"` `\` `\b` `\f` `\n` `\r` `\t` escaped, other controls as `\u00xx`;
 * - integers in decimal; doubles by `my_gcvt(d, DOUBLE, 34)` (shortest round-trip digits, 'f' format
 *   for decimal exponents −14…15, 'e' format without '+' or zero padding otherwise) plus ".0" when the
 *   result has neither '.' nor 'e';
 * - opaque DECIMAL as `decimal2string` (exactly the value's scale digits), opaque DATE / TIME /
 *   DATETIME / TIMESTAMP as quoted `my_TIME_to_str(.., 6)` text, other opaque values as
 *   `"base64:typeNN:<base64>"`.
 *
 * MariaDB stores JSON as LONGTEXT, so there the canonical text is simply the stored text and this
 * module is not involved. zongji's own decoder parses into JS objects (reordering integer-like keys and
 * turning 1.0 into 1), which is why floe reads the raw bytes instead (binlog-values.ts).
 */
import { FloeError } from '../../../../util/errors.js';

const SMALL_OBJECT = 0x00;
const LARGE_OBJECT = 0x01;
const SMALL_ARRAY = 0x02;
const LARGE_ARRAY = 0x03;
const LITERAL = 0x04;
const INT16 = 0x05;
const UINT16 = 0x06;
const INT32 = 0x07;
const UINT32 = 0x08;
const INT64 = 0x09;
const UINT64 = 0x0a;
const DOUBLE = 0x0b;
const STRING = 0x0c;
const OPAQUE = 0x0f;

const MYSQL_TYPE_NEWDECIMAL = 246;
const MYSQL_TYPE_DATE = 10;
const MYSQL_TYPE_TIME = 11;
const MYSQL_TYPE_DATETIME = 12;
const MYSQL_TYPE_TIMESTAMP = 7;
const MYSQL_TYPE_VAR_STRING = 253;

const utf8 = new TextDecoder('utf-8', { fatal: false });

function fail(what: string): never {
  throw new FloeError('source.mysql', 'invalid-data', `binary JSON value is malformed: ${what}`);
}

/** MySQL's text for a binary JSON document. An empty document is JSON null (what MySQL reads it as). */
export function mysqlJsonBinaryToText(bytes: Uint8Array): string {
  if (bytes.length === 0) return 'null';
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: string[] = [];
  writeValue(bytes, view, bytes[0]!, 1, bytes.length - 1, out);
  return out.join('');
}

/** Writes the value of `type` whose data starts at `pos` (for containers: the container body). */
function writeValue(bytes: Uint8Array, view: DataView, type: number, pos: number, available: number, out: string[]): void {
  switch (type) {
    case SMALL_OBJECT:
    case LARGE_OBJECT:
      writeContainer(bytes, view, pos, type === LARGE_OBJECT, true, out);
      return;
    case SMALL_ARRAY:
    case LARGE_ARRAY:
      writeContainer(bytes, view, pos, type === LARGE_ARRAY, false, out);
      return;
    case LITERAL:
      out.push(literal(bytes[pos]!));
      return;
    case INT16:
      out.push(String(view.getInt16(pos, true)));
      return;
    case UINT16:
      out.push(String(view.getUint16(pos, true)));
      return;
    case INT32:
      out.push(String(view.getInt32(pos, true)));
      return;
    case UINT32:
      out.push(String(view.getUint32(pos, true)));
      return;
    case INT64:
      out.push(view.getBigInt64(pos, true).toString());
      return;
    case UINT64:
      out.push(view.getBigUint64(pos, true).toString());
      return;
    case DOUBLE:
      out.push(formatJsonDouble(view.getFloat64(pos, true)));
      return;
    case STRING: {
      const [length, start] = readVarLength(bytes, pos);
      out.push(quoteJsonString(utf8.decode(bytes.subarray(start, start + length))));
      return;
    }
    case OPAQUE: {
      const fieldType = bytes[pos]!;
      const [length, start] = readVarLength(bytes, pos + 1);
      out.push(opaqueText(fieldType, bytes.subarray(start, start + length)));
      return;
    }
    default:
      fail(`unknown value type 0x${type.toString(16)} (${available} bytes left)`);
  }
}

function literal(code: number): string {
  if (code === 0x00) return 'null';
  if (code === 0x01) return 'true';
  if (code === 0x02) return 'false';
  fail(`unknown literal 0x${code.toString(16)}`);
}

/** Objects and arrays: count, size, [key entries], value entries; offsets relative to `base`. */
function writeContainer(bytes: Uint8Array, view: DataView, base: number, large: boolean, isObject: boolean, out: string[]): void {
  const word = large ? 4 : 2;
  const read = (at: number): number => (large ? view.getUint32(at, true) : view.getUint16(at, true));
  const count = read(base);
  const keyEntrySize = large ? 6 : 4;
  const valueEntrySize = large ? 5 : 3;
  const keysAt = base + 2 * word;
  const valuesAt = keysAt + (isObject ? count * keyEntrySize : 0);
  out.push(isObject ? '{' : '[');
  for (let i = 0; i < count; i++) {
    if (i > 0) out.push(', ');
    if (isObject) {
      const entry = keysAt + i * keyEntrySize;
      const keyOffset = read(entry);
      const keyLength = view.getUint16(entry + word, true);
      out.push(quoteJsonString(utf8.decode(bytes.subarray(base + keyOffset, base + keyOffset + keyLength))), ': ');
    }
    const entry = valuesAt + i * valueEntrySize;
    const type = bytes[entry]!;
    if (isInlined(type, large)) {
      writeValue(bytes, view, type, entry + 1, word, out);
    } else {
      const offset = read(entry + 1);
      writeValue(bytes, view, type, base + offset, bytes.length - base - offset, out);
    }
  }
  out.push(isObject ? '}' : ']');
}

function isInlined(type: number, large: boolean): boolean {
  return type === LITERAL || type === INT16 || type === UINT16 || (large && (type === INT32 || type === UINT32));
}

/** Variable-length length: 7 bits per byte, little-endian, high bit = more bytes follow. */
function readVarLength(bytes: Uint8Array, pos: number): [number, number] {
  let length = 0;
  for (let i = 0; i < 5; i++) {
    const b = bytes[pos + i];
    if (b === undefined) fail('truncated length');
    length += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) return [length, pos + i + 1];
  }
  fail('length longer than 5 bytes');
}

/** MySQL's `double_quote()`: the same escapes JSON.stringify uses for well-formed UTF-16. */
function quoteJsonString(s: string): string {
  return JSON.stringify(s);
}

/** MySQL's JSON text for a double (see the module header). */
export function formatJsonDouble(d: number): string {
  const text = mySqlGcvt(d);
  return text.includes('.') || text.includes('e') ? text : text + '.0';
}

const WIDTH = 34; // MY_GCVT_MAX_FIELD_WIDTH = DBL_DIG + 4 + max(5, MAX_DECPT_FOR_F_FORMAT)
const MAX_DECPT_FOR_F_FORMAT = 15; // DBL_DIG

/**
 * `my_gcvt(x, MY_GCVT_ARG_DOUBLE, 34)` (strings/dtoa.cc). dtoa mode 4 with 34 digits returns the
 * shortest digit string that rounds to x, which is what `Number#toExponential()` gives; with a width of
 * 34 no digit is ever truncated, so only the format choice remains.
 */
function mySqlGcvt(x: number): string {
  if (!Number.isFinite(x)) fail(`non-finite double ${x}`);
  const negative = x < 0 || Object.is(x, -0);
  let width = WIDTH;
  if (x < 0) width--; // as in my_gcvt: only a true negative narrows the field (−0 < 0 is false)
  const [mantissa, exponent] = Math.abs(x).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const len = x === 0 ? 1 : digits.length;
  let decpt = x === 0 ? 1 : Number(exponent) + 1;
  const expLen = 1 + (decpt >= 101 || decpt <= -99 ? 1 : 0) + (decpt >= 11 || decpt <= -9 ? 1 : 0);
  const haveSpace = (decpt <= 0 ? len - decpt + 2 : decpt > 0 && decpt < len ? len + 1 : decpt) <= width;
  const forceE = decpt <= 0 && width <= 2 - decpt && width >= 3 + expLen;
  const fFormat =
    (haveSpace || (decpt <= width && (decpt >= -1 || (decpt === -2 && (len > 1 || !forceE))) && !forceE)) &&
    (!haveSpace || (decpt >= -MAX_DECPT_FOR_F_FORMAT + 1 && (decpt <= MAX_DECPT_FOR_F_FORMAT || len > decpt)));
  let out = negative ? '-' : '';
  if (fFormat) {
    if (decpt <= 0) {
      out += '0.' + '0'.repeat(-decpt) + digits;
    } else if (decpt < len) {
      out += digits.slice(0, decpt) + '.' + digits.slice(decpt);
    } else {
      out += digits + '0'.repeat(decpt - len);
    }
    return out;
  }
  decpt -= 1;
  out += digits[0];
  if (len > 1) out += '.' + digits.slice(1);
  out += 'e' + (decpt < 0 ? '-' : '') + String(Math.abs(decpt));
  return out;
}

function opaqueText(fieldType: number, data: Uint8Array): string {
  switch (fieldType) {
    case MYSQL_TYPE_VAR_STRING:
      // Json_wrapper::to_string treats strings saved as opaque as plain JSON strings.
      return quoteJsonString(utf8.decode(data));
    case MYSQL_TYPE_NEWDECIMAL:
      return decimalFromJsonOpaque(data);
    case MYSQL_TYPE_DATE:
    case MYSQL_TYPE_TIME:
    case MYSQL_TYPE_DATETIME:
    case MYSQL_TYPE_TIMESTAMP:
      return '"' + packedTemporalText(fieldType, data) + '"';
    default:
      return `"base64:type${fieldType}:${Buffer.from(data).toString('base64')}"`;
  }
}

/** Opaque DECIMAL: precision byte, scale byte, then MySQL's binary decimal (decimal2bin). */
function decimalFromJsonOpaque(data: Uint8Array): string {
  if (data.length < 2) fail('opaque decimal shorter than 2 bytes');
  return binaryDecimalToString(data.subarray(2), data[0]!, data[1]!);
}

const DIG_PER_DEC = 9;
const DIG_TO_BYTES = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];

/** MySQL's binary DECIMAL (strings/decimal.cc decimal2bin) → decimal2string text with `scale` digits. */
export function binaryDecimalToString(bin: Uint8Array, precision: number, scale: number): string {
  const intg = precision - scale;
  const intg0 = Math.floor(intg / DIG_PER_DEC);
  const frac0 = Math.floor(scale / DIG_PER_DEC);
  const intg0x = intg - intg0 * DIG_PER_DEC;
  const frac0x = scale - frac0 * DIG_PER_DEC;
  const size = intg0 * 4 + DIG_TO_BYTES[intg0x]! + frac0 * 4 + DIG_TO_BYTES[frac0x]!;
  if (bin.length < size) fail(`decimal(${precision},${scale}) needs ${size} bytes, found ${bin.length}`);
  const buf = Buffer.from(bin.subarray(0, size));
  const positive = (buf[0]! & 0x80) !== 0;
  buf[0]! ^= 0x80;
  const mask = positive ? 0 : 0xff;
  if (mask) for (let i = 0; i < size; i++) buf[i]! ^= mask;
  let pos = 0;
  const readUInt = (n: number): number => {
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 256 + buf[pos + i]!;
    pos += n;
    return v;
  };
  let intDigits = '';
  if (intg0x > 0) intDigits += String(readUInt(DIG_TO_BYTES[intg0x]!));
  for (let i = 0; i < intg0; i++) intDigits += String(readUInt(4)).padStart(9, '0');
  let fracDigits = '';
  for (let i = 0; i < frac0; i++) fracDigits += String(readUInt(4)).padStart(9, '0');
  if (frac0x > 0) fracDigits += String(readUInt(DIG_TO_BYTES[frac0x]!)).padStart(frac0x, '0');
  intDigits = intDigits.replace(/^0+/, '') || '0';
  const negative = !positive && (/[1-9]/.test(intDigits) || /[1-9]/.test(fracDigits));
  return (negative ? '-' : '') + intDigits + (scale > 0 ? '.' + fracDigits : '');
}

/** my_TIME_to_str(t, 6) of a packed temporal (TIME_to_longlong_packed) value. */
function packedTemporalText(fieldType: number, data: Uint8Array): string {
  if (data.length < 8) fail('opaque temporal shorter than 8 bytes');
  const packed = Buffer.from(data).readBigInt64LE(0);
  const pad = (n: bigint | number, w: number): string => String(n).padStart(w, '0');
  if (fieldType === MYSQL_TYPE_TIME) {
    const negative = packed < 0n;
    const abs = negative ? -packed : packed;
    const intPart = abs >> 24n;
    const frac = abs % (1n << 24n);
    const hour = (intPart >> 12n) % (1n << 10n);
    const minute = (intPart >> 6n) % (1n << 6n);
    const second = intPart % (1n << 6n);
    return `${negative ? '-' : ''}${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}.${pad(frac, 6)}`;
  }
  const intPart = packed >> 24n;
  const frac = packed % (1n << 24n);
  const ymd = intPart >> 17n;
  const ym = ymd >> 5n;
  const hms = intPart % (1n << 17n);
  const day = ymd % (1n << 5n);
  const month = ym % 13n;
  const year = ym / 13n;
  const date = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
  if (fieldType === MYSQL_TYPE_DATE) return date;
  const second = hms % (1n << 6n);
  const minute = (hms >> 6n) % (1n << 6n);
  const hour = hms >> 12n;
  return `${date} ${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}.${pad(frac, 6)}`;
}
