/**
 * The binlog's temporal encodings, read into floe's values (days for DATE is in column-readers.ts;
 * µs bigints here): the *2 formats of MySQL 5.6.4+ and MariaDB (TIME2, DATETIME2, TIMESTAMP2,
 * sql-common/my_time.cc), and the pre-5.6 TIME / DATETIME / TIMESTAMP with MariaDB's 5.3 "hires"
 * variants (sql/field.cc). One of the binlog column readers (column-readers.ts).
 */
import { daysFromCivil } from '../../../../model/values.js';
import type { ColumnReader, Cursor } from './row-cursor.js';

// ---- temporal *2 formats (sql-common/my_time.cc) -------------------------------------------------

function beUInt(b: Buffer, p: number, n: number): number {
  let v = 0;
  for (let k = 0; k < n; k++) v = v * 256 + b[p + k]!;
  return v;
}

/** Fraction bytes of the *2 formats → µs (1 byte: 1/100 s, 2 bytes: 1/10000 s, 3 bytes: µs). */
function fraction(b: Buffer, p: number, n: number): number {
  if (n === 0) return 0;
  const v = beUInt(b, p, n);
  return n === 1 ? v * 10000 : n === 2 ? v * 100 : v;
}

/** DATETIME2 (my_datetime_packed_from_binary): µs since the epoch as UTC wall clock; null for zero dates. */
export function datetime2Reader(fsp: number): ColumnReader {
  const fracBytes = (fsp + 1) >> 1;
  return (c) => {
    const b = c.buf;
    const p = c.pos;
    c.pos = p + 5 + fracBytes;
    const intPart = beUInt(b, p, 5) - 0x8000000000;
    const ymd = Math.floor(intPart / 131072);
    const hms = intPart % 131072;
    const ym = Math.floor(ymd / 32);
    const day = ymd % 32;
    const month = ym % 13;
    if (month === 0 || day === 0) return null;
    const seconds = daysFromCivil(Math.floor(ym / 13), month, day) * 86400 + (hms >> 12) * 3600 + ((hms >> 6) & 63) * 60 + (hms & 63);
    const frac = fraction(b, p + 5, fracBytes);
    // exact as a double while |seconds| < 9,007,199,254: one BigInt, not three (as binlog-values.ts)
    if (seconds > -9_007_199_254 && seconds < 9_007_199_254) return BigInt(seconds * 1_000_000 + frac);
    return BigInt(seconds) * 1_000_000n + BigInt(frac);
  };
}

/** TIMESTAMP2 (my_timestamp_from_binary): µs since the epoch; null for the zero timestamp. */
export function timestamp2Reader(fsp: number): ColumnReader {
  const fracBytes = (fsp + 1) >> 1;
  return (c) => {
    const b = c.buf;
    const p = c.pos;
    c.pos = p + 4 + fracBytes;
    const seconds = b.readUInt32BE(p);
    const frac = fraction(b, p + 4, fracBytes);
    if (seconds === 0 && frac === 0) return null;
    return BigInt(seconds * 1_000_000 + frac);
  };
}

/**
 * TIME2 (my_time_packed_from_binary): 3 bytes of intpart + 0x800000 (intpart = h << 12 | m << 6 | s,
 * negative for negative times), then the fraction, stored "reversed" for negative values so that the
 * bytes sort; signed µs.
 */
export function time2Micros(fsp: number): (c: Cursor) => bigint {
  const n = (fsp + 1) >> 1;
  return (c) => {
    const b = c.buf;
    const p = c.pos;
    c.pos = p + 3 + n;
    // MY_PACKED_TIME_MAKE(intpart, frac) = intpart << 24 + frac; |packed| < 2^47, exact as a double
    let packed: number;
    if (n === 3) {
      packed = beUInt(b, p, 6) - 0x800000000000;
    } else {
      let intPart = beUInt(b, p, 3) - 0x800000;
      let frac = n === 0 ? 0 : beUInt(b, p + 3, n);
      if (intPart < 0 && frac !== 0) {
        intPart += 1;
        frac -= n === 1 ? 0x100 : 0x10000;
      }
      packed = intPart * 16_777_216 + frac * (n === 1 ? 10000 : n === 2 ? 100 : 1);
    }
    const negative = packed < 0;
    const abs = negative ? -packed : packed;
    const hms = Math.floor(abs / 16_777_216);
    const micros = abs - hms * 16_777_216;
    const total = (((hms >> 12) % 1024) * 3600 + ((hms >> 6) % 64) * 60 + (hms % 64)) * 1_000_000 + micros;
    return BigInt(negative ? -total : total);
  };
}

// ---- pre-5.6 temporal formats, and MariaDB's 5.3 "hires" ones (sql/field.cc) -------------------------
// MySQL < 5.6.4 and MariaDB with mysql56_temporal_format=OFF log TIME / DATETIME / TIMESTAMP under the
// classic codes 11 / 12 / 7 without metadata; a MariaDB column with fractional seconds is then in
// its hires format, told apart only by the column's precision (COLUMN_TYPE 'datetime(3) /* mariadb-5.3
// */'), which floe captured. Values as zongji's text of them parses in snapshot-values.ts.

/** Classic TIMESTAMP: epoch seconds, 4 bytes little-endian; hires: big-endian, then dec digits big-endian. */
export function classicTimestampReader(dec: number): ColumnReader {
  const fracBytes = classicTemporalBytes('timestamp', dec) - 4;
  const scale = 10 ** (6 - dec);
  return (c) => {
    const b = c.buf;
    const p = c.pos;
    c.pos = p + 4 + fracBytes;
    const seconds = dec === 0 ? b.readUInt32LE(p) : b.readUInt32BE(p);
    const frac = fracBytes === 0 ? 0 : beUInt(b, p + 4, fracBytes) * scale;
    if (seconds === 0 && frac === 0) return null;
    return BigInt(seconds * 1_000_000 + frac);
  };
}

const HIRES_DATETIME_BYTES = [5, 6, 6, 7, 7, 7, 8];
const HIRES_TIME_BYTES = [3, 4, 4, 5, 5, 5, 6];

/** The bytes of a classic (pre-5.6, or MariaDB hires) DATETIME / TIME / TIMESTAMP of precision `dec`. */
export function classicTemporalBytes(kind: 'datetime' | 'time' | 'timestamp', dec: number): number {
  if (kind === 'timestamp') return 4 + ((dec + 1) >> 1);
  if (kind === 'datetime') return dec === 0 ? 8 : HIRES_DATETIME_BYTES[dec]!;
  return dec === 0 ? 3 : HIRES_TIME_BYTES[dec]!;
}

/**
 * Classic DATETIME: YYYYMMDDhhmmss as an 8-byte little-endian integer; hires: a big-endian integer of
 * ((((year·13 + month)·32 + day)·24 + hour)·60 + minute)·60 + second, times 10^dec, plus the fraction.
 */
export function classicDatetimeReader(dec: number): ColumnReader {
  const bytes = classicTemporalBytes('datetime', dec);
  const scale = 10n ** BigInt(dec);
  return (c) => {
    const b = c.buf;
    const p = c.pos;
    c.pos = p + bytes;
    let year: number, month: number, day: number, hour: number, minute: number, second: number;
    let frac = 0;
    if (dec === 0) {
      const v = b.readBigUInt64LE(p);
      const date = Number(v / 1_000_000n);
      const time = Number(v % 1_000_000n);
      year = Math.floor(date / 10000);
      month = Math.floor(date / 100) % 100;
      day = date % 100;
      hour = Math.floor(time / 10000);
      minute = Math.floor(time / 100) % 100;
      second = time % 100;
    } else {
      let units = 0n;
      for (let k = 0; k < bytes; k++) units = (units << 8n) | BigInt(b[p + k]!);
      frac = Number(units % scale) * 10 ** (6 - dec);
      let rest = units / scale;
      second = Number(rest % 60n);
      rest /= 60n;
      minute = Number(rest % 60n);
      rest /= 60n;
      hour = Number(rest % 24n);
      rest /= 24n;
      day = Number(rest % 32n);
      rest /= 32n;
      month = Number(rest % 13n);
      year = Number(rest / 13n);
    }
    if (month === 0 || day === 0) return null;
    const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
    return BigInt(seconds) * 1_000_000n + BigInt(frac);
  };
}

/**
 * Classic TIME: ±(hh·10000 + mm·100 + ss) as a 3-byte little-endian two's complement; hires: a
 * big-endian unsigned of the signed total in 10^-dec seconds plus 3020400·10^dec (TIME_MAX + 1 s).
 * Signed µs. (zongji mis-decodes the classic negative form; floe's path rejects its text.)
 */
export function classicTimeMicros(dec: number): (c: Cursor) => bigint {
  const bytes = classicTemporalBytes('time', dec);
  return (c) => {
    const b = c.buf;
    const p = c.pos;
    c.pos = p + bytes;
    if (dec === 0) {
      const v = b.readIntLE(p, 3);
      const a = Math.abs(v);
      const micros = (Math.floor(a / 10000) * 3600 + (Math.floor(a / 100) % 100) * 60 + (a % 100)) * 1_000_000;
      return BigInt(v < 0 ? -micros : micros);
    }
    const scale = 10 ** dec;
    const total = beUInt(b, p, bytes) - 3020400 * scale;
    const a = Math.abs(total);
    const micros = Math.floor(a / scale) * 1_000_000 + (a % scale) * 10 ** (6 - dec);
    return BigInt(total < 0 ? -micros : micros);
  };
}
