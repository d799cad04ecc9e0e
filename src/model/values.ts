/**
 * How a column value is represented in memory between the MySQL source, the pipeline and the Iceberg
 * writer/reader. Both sides follow this contract; neither imports the other.
 *
 * | Iceberg type                    | JS value                                                        |
 * |---------------------------------|-----------------------------------------------------------------|
 * | boolean                         | boolean                                                         |
 * | int                             | number (32-bit integer)                                         |
 * | long                            | bigint (always, even when small)                                |
 * | float, double                   | number                                                          |
 * | decimal(P,S)                    | string, plain notation with exactly S fraction digits: "-12.50" |
 * | date                            | number: days since 1970-01-01                                    |
 * | time                            | bigint: microseconds since midnight                              |
 * | timestamp, timestamptz          | bigint: microseconds since 1970-01-01T00:00:00 (UTC for tz)      |
 * | timestamp_ns, timestamptz_ns    | bigint: nanoseconds since the epoch                              |
 * | string                          | string                                                          |
 * | uuid                            | string, lowercase 8-4-4-4-12                                     |
 * | fixed[L], binary                | Uint8Array (a Buffer is fine)                                    |
 * | null                            | null                                                            |
 *
 * A row is an array of values in the order of the top-level fields of the schema it is written with.
 * Nothing here ever passes through a JS `Date`: wall-clock values must not depend on the process zone.
 */
export type Value = boolean | number | bigint | string | Uint8Array | null;
export type Row = Value[];

const MICROS_PER_DAY = 86_400_000_000n;

/** Days since epoch for a proleptic Gregorian civil date (Howard Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Civil date of a day number since epoch. */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const y = yoe + era * 400;
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: month <= 2 ? y + 1 : y, month, day };
}

function pad(n: number, width: number): string {
  const s = String(Math.abs(n)).padStart(width, '0');
  return n < 0 ? '-' + s : s;
}

/** "2024-02-29" for a day number; years outside 0..9999 get a sign as ISO 8601 expanded years. */
export function formatDate(days: number): string {
  const { year, month, day } = civilFromDays(days);
  const y = year >= 0 && year <= 9999 ? pad(year, 4) : (year < 0 ? '-' : '+') + pad(Math.abs(year), 6);
  return `${y}-${pad(month, 2)}-${pad(day, 2)}`;
}

/** Day number of "YYYY-MM-DD". */
export function parseDate(text: string): number {
  const m = /^([+-]?\d{4,6})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) throw new RangeError(`not a date: ${JSON.stringify(text)}`);
  return daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** "HH:MM:SS[.ffffff]" for microseconds since midnight (fraction trimmed to what is needed, at most 6). */
export function formatTime(micros: bigint): string {
  const totalSeconds = micros / 1_000_000n;
  const frac = Number(micros % 1_000_000n);
  const h = Number(totalSeconds / 3600n);
  const m = Number((totalSeconds / 60n) % 60n);
  const s = Number(totalSeconds % 60n);
  return `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}${fraction(frac, 6)}`;
}

function fraction(value: number, digits: number): string {
  if (value === 0) return '';
  return '.' + String(value).padStart(digits, '0').replace(/0+$/, '');
}

/** Microseconds since midnight of "HH:MM:SS[.ffffff]". */
export function parseTime(text: string): bigint {
  const m = /^(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/.exec(text);
  if (!m) throw new RangeError(`not a time: ${JSON.stringify(text)}`);
  const frac = BigInt((m[4] ?? '').padEnd(6, '0') || '0');
  return (BigInt(m[1]!) * 3600n + BigInt(m[2]!) * 60n + BigInt(m[3]!)) * 1_000_000n + frac;
}

/** "2024-02-29T12:34:56.123456" for microseconds since the epoch (no zone suffix). */
export function formatTimestamp(micros: bigint): string {
  let days = micros / MICROS_PER_DAY;
  let rem = micros % MICROS_PER_DAY;
  if (rem < 0n) {
    rem += MICROS_PER_DAY;
    days -= 1n;
  }
  return `${formatDate(Number(days))}T${formatTime(rem)}`;
}

/** Same for nanoseconds (fraction up to 9 digits). */
export function formatTimestampNs(nanos: bigint): string {
  const perDay = MICROS_PER_DAY * 1000n;
  let days = nanos / perDay;
  let rem = nanos % perDay;
  if (rem < 0n) {
    rem += perDay;
    days -= 1n;
  }
  const secs = rem / 1_000_000_000n;
  const frac = Number(rem % 1_000_000_000n);
  const h = Number(secs / 3600n);
  const m = Number((secs / 60n) % 60n);
  const s = Number(secs % 60n);
  return `${formatDate(Number(days))}T${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}${fraction(frac, 9)}`;
}

/**
 * Microseconds since the epoch of "YYYY-MM-DD[T| ]HH:MM:SS[.ffffff]" with an optional zone suffix
 * ("Z", "+HH:MM", "-HH:MM"); without a suffix the text is read as UTC wall-clock.
 */
export function parseTimestamp(text: string): bigint {
  const m = /^([+-]?\d{4,6}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)(Z|[+-]\d{2}:\d{2})?$/.exec(text);
  if (!m) throw new RangeError(`not a timestamp: ${JSON.stringify(text)}`);
  let micros = BigInt(parseDate(m[1]!)) * MICROS_PER_DAY + parseTime(m[2]!);
  const zone = m[3];
  if (zone && zone !== 'Z') {
    const sign = zone[0] === '-' ? -1n : 1n;
    const offsetMinutes = BigInt(Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
    micros -= sign * offsetMinutes * 60_000_000n;
  }
  return micros;
}

/** Canonical decimal text with exactly `scale` fraction digits from an unscaled integer. */
export function formatDecimal(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n;
  let digits = (neg ? -unscaled : unscaled).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0');
    digits = digits.slice(0, digits.length - scale) + '.' + digits.slice(digits.length - scale);
  } else if (scale < 0) {
    digits = digits + '0'.repeat(-scale);
  }
  return (neg ? '-' : '') + digits;
}

/**
 * Unscaled integer of a decimal text at `scale`. Rejects values that need more fraction digits than
 * `scale` (no silent rounding).
 */
export function parseDecimal(text: string, scale: number): bigint {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new RangeError(`not a decimal: ${JSON.stringify(text)}`);
  let intPart = m[2] || '0';
  let fracPart = m[3] ?? '';
  const exp = m[4] ? Number(m[4]) : 0;
  // shift by the exponent
  if (exp > 0) {
    const move = fracPart.slice(0, exp).padEnd(exp, '0');
    intPart += move;
    fracPart = fracPart.slice(exp);
  } else if (exp < 0) {
    const k = -exp;
    const padded = intPart.padStart(k + 1, '0');
    fracPart = padded.slice(padded.length - k) + fracPart;
    intPart = padded.slice(0, padded.length - k);
  }
  const trimmedFrac = fracPart.replace(/0+$/, '');
  if (trimmedFrac.length > Math.max(scale, 0)) {
    throw new RangeError(`decimal ${JSON.stringify(text)} has more than ${scale} fraction digits`);
  }
  let unscaled = BigInt(intPart + trimmedFrac.padEnd(Math.max(scale, 0), '0'));
  if (scale < 0) {
    const div = 10n ** BigInt(-scale);
    if (unscaled % div !== 0n) throw new RangeError(`decimal ${JSON.stringify(text)} is not a multiple of 10^${-scale}`);
    unscaled /= div;
  }
  return m[1] === '-' ? -unscaled : unscaled;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]!]!;
  return s;
}

export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new RangeError(`not a hex string: ${JSON.stringify(hex.slice(0, 40))}`);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
