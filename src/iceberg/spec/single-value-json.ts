/**
 * JSON single values (format/spec.md Appendix D "JSON single-value serialization"): the form of
 * `initial-default` / `write-default` and of `floe scan` output. Written exactly as the docs/iceberg-writer-checklist.md §2
 * requires; read leniently, accepting what Java and PyIceberg write.
 */
import { RawJson, type JsonValue } from '../../util/json.js';
import { civilFromDays, formatDate, formatDecimal, fromHex, parseDate, toHex, type Value } from '../../model/values.js';
import { uuidFromBytes, uuidToBytes } from './single-value-binary.js';
import { asBytesValue, asIntValue, asLongValue, asNumberValue, decimalUnscaled, fail, requirePrimitive } from './single-value-checks.js';
import type { IcebergType, PrimitiveType } from './types.js';

const MICROS_PER_DAY = 86_400_000_000n;
const NANOS_PER_DAY = 86_400_000_000_000n;

// ---------------------------------------------------------------------------------------------------
// JSON single values (spec Appendix D "JSON single-value serialization")

/** Shortest decimal text that reads back as the same float32 (what Java's `Float.toString` aims at). */
function float32Text(v: number): string {
  for (let p = 1; p <= 9; p++) {
    const candidate = Number(v.toPrecision(p));
    if (Math.fround(candidate) === v) return String(candidate);
  }
  return String(v);
}

/**
 * JSON number text with a fraction or exponent, as Java `SingleValueParser` requires
 * (`isFloatingPointNumber()`; docs/iceberg-writer-checklist.md §2 mistake 4: `1` instead of `1.0` makes the table unloadable).
 */
function floatingText(text: string): string {
  if (text === '-0') return '-0.0';
  return /[.eE]/.test(text) ? text : text + '.0';
}

function pad(n: number | bigint, width: number): string {
  return String(n).padStart(width, '0');
}

/** "HH:MM:SS" plus a fraction of exactly `digits` digits when non-zero. */
function timeOfDayText(unitsOfDay: bigint, unitsPerSecond: bigint, digits: number): string {
  const secs = unitsOfDay / unitsPerSecond;
  const frac = unitsOfDay % unitsPerSecond;
  const hms = `${pad(secs / 3600n, 2)}:${pad((secs / 60n) % 60n, 2)}:${pad(secs % 60n, 2)}`;
  return frac === 0n ? hms : `${hms}.${pad(frac, digits)}`;
}

function timestampText(units: bigint, unitsPerDay: bigint, unitsPerSecond: bigint, digits: number): string {
  let days = units / unitsPerDay;
  let rem = units % unitsPerDay;
  if (rem < 0n) {
    rem += unitsPerDay;
    days -= 1n;
  }
  return `${formatDate(Number(days))}T${timeOfDayText(rem, unitsPerSecond, digits)}`;
}

/**
 * The JSON single-value form of a value. `null` for null. Floats and doubles become `RawJson` so that
 * `stringifyJson` writes `1.0`, not `1`; non-finite floats are written as the strings "NaN",
 * "Infinity", "-Infinity" (Jackson's default), which callers must keep out of defaults.
 */
export function toJsonSingleValue(type: IcebergType, value: Value): JsonValue {
  if (value === null) return null;
  const t = requirePrimitive(type, 'JSON single value');
  switch (t.kind) {
    case 'boolean':
      if (typeof value !== 'boolean') fail(t, 'a boolean', value);
      return value;
    case 'int':
      return asIntValue(t, value);
    case 'long':
      return asLongValue(t, value);
    case 'float':
    case 'double': {
      const v = asNumberValue(t, value);
      if (Number.isNaN(v)) return 'NaN';
      if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
      // a float value is stored as float32 (as toBinary does): 0.1 from a MySQL FLOAT default becomes 0.1f
      return new RawJson(floatingText(Object.is(v, -0) ? '-0' : t.kind === 'float' ? float32Text(Math.fround(v)) : String(v)));
    }
    case 'decimal': {
      const unscaled = decimalUnscaled(t, value);
      // Spec: negative scales use scientific notation whose exponent is the negated scale ("2E+20").
      return t.scale >= 0 ? formatDecimal(unscaled, t.scale) : `${unscaled}E+${-t.scale}`;
    }
    case 'date':
      return formatDate(asIntValue(t, value));
    case 'time': {
      const micros = asLongValue(t, value);
      if (micros < 0n || micros >= MICROS_PER_DAY) fail(t, 'microseconds in [0, 86400000000)', value);
      return timeOfDayText(micros, 1_000_000n, 6);
    }
    case 'timestamp':
      return timestampText(asLongValue(t, value), MICROS_PER_DAY, 1_000_000n, 6);
    case 'timestamptz':
      return timestampText(asLongValue(t, value), MICROS_PER_DAY, 1_000_000n, 6) + '+00:00';
    case 'timestamp_ns':
      return timestampText(asLongValue(t, value), NANOS_PER_DAY, 1_000_000_000n, 9);
    case 'timestamptz_ns':
      return timestampText(asLongValue(t, value), NANOS_PER_DAY, 1_000_000_000n, 9) + '+00:00';
    case 'string':
      if (typeof value !== 'string') fail(t, 'a string', value);
      return value;
    case 'uuid':
      if (typeof value !== 'string') fail(t, 'a uuid string', value);
      return uuidFromBytes(uuidToBytes(value));
    case 'fixed':
    case 'binary':
      return toHex(asBytesValue(t, value));
    case 'unknown':
      return fail(t, 'null (unknown values are always null)', value);
  }
}

const TIME_RE = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/;
const TIMESTAMP_RE = /^([+-]?\d{4,6}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:\d{2}(?::\d{2})?)?$/;

/** Day number of "YYYY-MM-DD", rejecting impossible dates such as 2023-02-30 (Java LocalDate does). */
function parseIsoDate(t: PrimitiveType, text: string): number {
  const m = /^([+-]?\d{4,6})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return fail(t, 'an ISO-8601 date YYYY-MM-DD', text);
  const days = parseDate(text);
  const c = civilFromDays(days);
  if (c.year !== Number(m[1]) || c.month !== Number(m[2]) || c.day !== Number(m[3])) return fail(t, 'a valid calendar date', text);
  return days;
}

/** Units since midnight of an ISO time with up to 9 fraction digits; more precision than `digits` must be zero. */
function parseTimeOfDay(t: PrimitiveType, text: string, digits: number): bigint {
  const m = TIME_RE.exec(text);
  if (!m) return fail(t, 'an ISO-8601 time HH:MM[:SS[.fraction]]', text);
  const [h, mi, s] = [Number(m[1]), Number(m[2]), Number(m[3] ?? '0')];
  if (h > 23 || mi > 59 || s > 59) return fail(t, 'a time of day within 00:00:00–23:59:59', text);
  const frac = m[4] ?? '';
  if (frac.length > digits && /[^0]/.test(frac.slice(digits))) {
    return fail(t, `at most ${digits} fraction digits`, text);
  }
  const fracUnits = BigInt(frac.slice(0, digits).padEnd(digits, '0'));
  return BigInt(h * 3600 + mi * 60 + s) * 10n ** BigInt(digits) + fracUnits;
}

function parseTimestampText(t: PrimitiveType, text: string, withZone: boolean, digits: number): bigint {
  const m = TIMESTAMP_RE.exec(text);
  if (!m) return fail(t, 'an ISO-8601 timestamp YYYY-MM-DDTHH:MM:SS[.fraction]' + (withZone ? '+00:00' : ''), text);
  const zone = m[3];
  // Java parses timestamp with LocalDateTime (no offset allowed) and timestamptz with OffsetDateTime
  // (offset required); reading either the other way would shift values silently.
  if (withZone && !zone) return fail(t, 'a zone offset such as +00:00', text);
  if (!withZone && zone) return fail(t, 'no zone offset (timestamp without time zone)', text);
  const days = parseIsoDate(t, m[1]!);
  const unitsPerSecond = 10n ** BigInt(digits);
  let units = BigInt(days) * 86_400n * unitsPerSecond + parseTimeOfDay(t, m[2]!, digits);
  if (zone && zone !== 'Z') {
    const sign = zone[0] === '-' ? -1n : 1n;
    const [hh, mm, ss] = zone.slice(1).split(':').map(Number);
    units -= sign * BigInt(hh! * 3600 + mm! * 60 + (ss ?? 0)) * unitsPerSecond;
  }
  return units;
}

function jsonNumber(t: PrimitiveType, json: unknown): number {
  if (typeof json === 'number') return json;
  if (typeof json === 'bigint') return Number(json);
  if (json instanceof RawJson) return Number(json.text);
  if (json === 'NaN') return NaN;
  if (json === 'Infinity') return Infinity;
  if (json === '-Infinity') return -Infinity;
  return fail(t, 'a JSON number', json);
}

/**
 * The value of a JSON single value (as parsed by src/util/json.ts: integers may be number or bigint).
 * `null` reads as null for every type.
 */
export function fromJsonSingleValue(type: IcebergType, json: unknown): Value {
  if (json === null || json === undefined) return null;
  const t = requirePrimitive(type, 'JSON single value');
  switch (t.kind) {
    case 'boolean':
      if (typeof json !== 'boolean') fail(t, 'a JSON boolean', json);
      return json;
    case 'int':
      return asIntValue(t, json as Value);
    case 'long':
      if (typeof json !== 'number' && typeof json !== 'bigint') fail(t, 'a JSON integer', json);
      return asLongValue(t, json);
    case 'float':
      return Math.fround(jsonNumber(t, json));
    case 'double':
      return jsonNumber(t, json);
    case 'decimal': {
      if (typeof json !== 'string') fail(t, 'a JSON string such as "14.20"', json);
      return formatDecimal(decimalUnscaled(t, json), t.scale);
    }
    case 'date':
      if (typeof json !== 'string') fail(t, 'an ISO-8601 date string', json);
      return parseIsoDate(t, json);
    case 'time':
      if (typeof json !== 'string') fail(t, 'an ISO-8601 time string', json);
      return parseTimeOfDay(t, json, 6);
    case 'timestamp':
    case 'timestamptz':
      if (typeof json !== 'string') fail(t, 'an ISO-8601 timestamp string', json);
      return parseTimestampText(t, json, t.kind === 'timestamptz', 6);
    case 'timestamp_ns':
    case 'timestamptz_ns':
      if (typeof json !== 'string') fail(t, 'an ISO-8601 timestamp string', json);
      return parseTimestampText(t, json, t.kind === 'timestamptz_ns', 9);
    case 'string':
      if (typeof json !== 'string') fail(t, 'a JSON string', json);
      return json;
    case 'uuid':
      if (typeof json !== 'string') fail(t, 'a uuid string', json);
      return uuidFromBytes(uuidToBytes(json));
    case 'fixed':
    case 'binary': {
      if (typeof json !== 'string') fail(t, 'a hex string', json);
      let bytes: Uint8Array;
      try {
        bytes = fromHex(json);
      } catch {
        return fail(t, 'a hex string with an even number of digits', json);
      }
      return asBytesValue(t, bytes);
    }
    case 'unknown':
      return fail(t, 'null (unknown values are always null)', json);
  }
}
