/**
 * The lake side of verification's row checksum: the canonical text of a row computed from the
 * Iceberg values floe wrote — exactly the text the server computes in SQL from the MySQL row
 * (src/source/mysql/verify/canonical-sql.ts has the rules; both must change together, and
 * test/pipeline/verify/canonical-row.test.ts holds them to each other on both servers) — its 64-bit
 * hash (the first 16 hex digits of its MD5, as `CONV(LEFT(MD5(…), 16), 16, 10)`) and the chunk sum.
 *
 * Values are in the model of src/model/values.ts; what each MySQL type became there is the column's
 * value kind (source/mysql/schema/type-mapping.ts). Hashed and masked columns hold text.
 */
import { hash } from 'node:crypto';
import { formatDate, toHex, type Row, type Value } from '../../model/values.js';
import type { MappedColumn } from '../../source/mysql/index.js';
import { FloeError } from '../../util/errors.js';
import { serverFloatText, type FloatTextStyle } from './server-float-text.js';

/** A non-null value's canonical part. */
type PartWriter = (value: Value) => string;

const MICROS_PER_DAY = 86_400_000_000n;

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

const POWERS_OF_TEN = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000];

/** `.ffffff` cut to `fsp` digits — unless a digit beyond `fsp` is set (then all six: the server's text cannot match). */
function fraction(micros: number, fsp: number): string {
  const cut = fsp >= 6 || micros % POWERS_OF_TEN[6 - Math.max(0, fsp)]! === 0 ? Math.max(0, Math.min(6, fsp)) : 6;
  if (cut === 0) return '';
  return `.${String(Math.floor(micros / POWERS_OF_TEN[6 - cut]!) + POWERS_OF_TEN[cut]!).slice(1)}`;
}

/** 'YYYY-MM-DD HH:MM:SS[.fsp]' of microseconds since the epoch (MySQL's DATETIME / TIMESTAMP text). */
function mysqlDateTimeText(micros: bigint, fsp: number): string {
  // within ±2^53 µs (years 1685–2255) a double holds the value exactly: no BigInt division
  if (micros > -9_007_199_254_740_991n && micros < 9_007_199_254_740_991n) {
    const m = Number(micros);
    const day = Math.floor(m / 86_400_000_000);
    const r = m - day * 86_400_000_000;
    const seconds = Math.floor(r / 1_000_000);
    return `${formatDate(day)} ${two(Math.floor(seconds / 3600))}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}${fraction(r % 1_000_000, fsp)}`;
  }
  let days = micros / MICROS_PER_DAY;
  let rem = micros % MICROS_PER_DAY;
  if (rem < 0n) {
    rem += MICROS_PER_DAY;
    days -= 1n;
  }
  const r = Number(rem);
  const seconds = Math.floor(r / 1_000_000);
  return `${formatDate(Number(days))} ${two(Math.floor(seconds / 3600))}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}${fraction(r % 1_000_000, fsp)}`;
}

/** '[-]HH:MM:SS[.fsp]' of signed microseconds (MySQL's TIME text; hours may pass 99). */
function mysqlTimeText(micros: bigint, fsp: number): string {
  const negative = micros < 0n;
  const abs = Number(negative ? -micros : micros);
  const seconds = Math.floor(abs / 1_000_000);
  return `${negative ? '-' : ''}${two(Math.floor(seconds / 3600))}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}${fraction(abs % 1_000_000, fsp)}`;
}

/** A column's part: how a non-null value is written, and whether it is free text (null mask) or never 'N'. */
export interface ColumnPart {
  readonly write: PartWriter;
  readonly text: boolean;
}

/**
 * The part of a column (see the module header); `transformed`: the value is the text a hash or mask
 * transform made. `floatStyle` is required for FLOAT and DOUBLE columns.
 */
export function columnPart(column: MappedColumn, transformed: boolean, floatStyle?: FloatTextStyle): ColumnPart {
  const write = partWriter(column, transformed, floatStyle);
  const k = column.kind;
  return { write, text: transformed || k === 'string' || k === 'enum' || k === 'set' || k === 'json' || k === 'uuid' || k === 'inet4' || k === 'inet6' };
}

function partWriter(column: MappedColumn, transformed: boolean, floatStyle?: FloatTextStyle): PartWriter {
  if (transformed) return (v) => v as string;
  const fsp = column.column.datetimePrecision ?? 0;
  switch (column.kind) {
    case 'boolean-int':
    case 'boolean-bit':
      return (v) => (v ? '1' : '0');
    case 'int':
    case 'year':
      return (v) => String(v);
    case 'long':
      return (v) => (v as bigint).toString();
    case 'unsigned-long':
    case 'decimal':
    case 'decimal-string':
      return (v) => v as string;
    case 'float':
    case 'double': {
      if (!floatStyle) throw new FloeError('pipeline.verify', 'internal', `column ${column.qualifiedName}: a float column needs the server's float text style`);
      return (v) => serverFloatText(v as number, floatStyle);
    }
    case 'date':
      return (v) => formatDate(v as number);
    case 'datetime':
    case 'timestamp':
      return (v) => mysqlDateTimeText(v as bigint, fsp);
    case 'time':
    case 'time-micros':
      return (v) => mysqlTimeText(v as bigint, fsp);
    case 'binary':
    case 'fixed-binary':
    case 'bit':
      return (v) => toHex(v as Uint8Array);
    case 'string':
    case 'enum':
    case 'set':
    case 'json':
    case 'uuid':
    case 'inet4':
    case 'inet6':
      return (v) => v as string;
  }
}

/** Canonical text and 64-bit hash of rows, over the values at `indexes` written by `parts`. */
export class RowHasher {
  constructor(
    private readonly indexes: readonly number[],
    private readonly parts: readonly ColumnPart[],
  ) {}

  /** The row's canonical parts, a NULL of a text column as null (for naming the columns that differ). */
  partsOf(row: Row): (string | null)[] {
    const out = new Array<string | null>(this.indexes.length);
    for (let i = 0; i < this.indexes.length; i++) {
      const v = row[this.indexes[i]!];
      const p = this.parts[i]!;
      out[i] = v === null || v === undefined ? (p.text ? null : 'N') : p.write(v);
    }
    return out;
  }

  /** The parts (NULL text parts left out, as CONCAT_WS does) and the text parts' byte lengths, joined by '#'. */
  text(row: Row): string {
    let out = '';
    let lengths = '';
    let first = true;
    let anyText = false;
    for (let i = 0; i < this.indexes.length; i++) {
      const v = row[this.indexes[i]!];
      const p = this.parts[i]!;
      const part = v === null || v === undefined ? (p.text ? null : 'N') : p.write(v);
      if (part !== null) {
        out = first ? part : `${out}#${part}`;
        first = false;
      }
      if (p.text) {
        const length = part === null ? 'n' : String(Buffer.byteLength(part, 'utf8'));
        lengths = anyText ? `${lengths},${length}` : length;
        anyText = true;
      }
    }
    return anyText ? (first ? lengths : `${out}#${lengths}`) : out;
  }

  /** The first 64 bits of MD5(text) as two unsigned 32-bit halves. */
  hash(row: Row): [number, number] {
    const hex = hash('md5', this.text(row), 'hex');
    return [parseInt(hex.slice(0, 8), 16), parseInt(hex.slice(8, 16), 16)];
  }
}

/** A chunk's row count and exact sum of 64-bit row hashes, added up in doubles and carried to a bigint. */
export class ChunkSum {
  rows = 0n;
  private pending = 0;
  private high = 0;
  private low = 0;
  private carried = 0n;

  add(hi: number, lo: number): void {
    this.high += hi;
    this.low += lo;
    // 2^20 halves below 2^32 each stay below 2^52: exact in a double
    if (++this.pending === 1 << 20) this.flush();
  }

  private flush(): void {
    this.carried += (BigInt(this.high) << 32n) + BigInt(this.low);
    this.rows += BigInt(this.pending);
    this.high = 0;
    this.low = 0;
    this.pending = 0;
  }

  /** The row count and sum so far. */
  total(): { rows: bigint; sum: bigint } {
    this.flush();
    return { rows: this.rows, sum: this.carried };
  }
}
