/**
 * Column defaults as `information_schema.COLUMNS.COLUMN_DEFAULT` reports them, sorted into literals
 * (which become Iceberg `write-default` / `initial-default`, docs/design.md §5) and everything else.
 *
 * The two servers print defaults differently:
 * - MySQL (5.7, 8.x): a literal is printed bare and unquoted (`abc`, `42`, `2020-01-02`), a BIT literal as
 *   `b'101'`, and on 8.0 binary-string literals as `0x616263`. An expression default (8.0.13+) is marked
 *   by `EXTRA` containing `DEFAULT_GENERATED`; `CURRENT_TIMESTAMP` on 5.7 is recognised by name on
 *   temporal columns. SQL NULL means "no default" or `DEFAULT NULL` (indistinguishable; both read as
 *   null for a nullable column).
 * - MariaDB (10.2.7+): string and temporal literals are quoted SQL literals (`'abc'`, `'it''s'`, with
 *   backslash escapes), numbers bare (`42`, `-1.500`), BIT as `b'101'`, `DEFAULT NULL` as the bare word
 *   `NULL`, and expressions bare (`current_timestamp()`, `uuid()`, `(1 + 2)`).
 *
 * Known limit: MariaDB's I_S column is utf8mb3, so a literal with 4-byte characters reads back with '?'
 * in their place; such a default is wrong in the server's own metadata and floe cannot recover it.
 */
import type { ServerFlavor } from '../dialect.js';

export type ColumnDefault =
  /** No DEFAULT clause: a NOT NULL column without default (inserts must name it). */
  | { kind: 'none' }
  /** DEFAULT NULL, explicit or implied by a nullable column without default. */
  | { kind: 'null' }
  /** A literal, as the text MySQL would return for the value (or raw bytes for BIT / binary literals). */
  | { kind: 'literal'; literal: string | Uint8Array }
  /** An expression evaluated per row (`CURRENT_TIMESTAMP`, `uuid()`, …): not a literal (docs/design.md §5). */
  | { kind: 'expression'; expression: string };

/** What parseColumnDefault needs to know about the column. */
export interface DefaultColumnInfo {
  dataType: string;
  nullable: boolean;
}

const TEMPORAL = new Set(['datetime', 'timestamp', 'date', 'time', 'year']);
const BINARY = new Set(['binary', 'varbinary', 'tinyblob', 'blob', 'mediumblob', 'longblob']);
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const BITS = /^b'([01]*)'$/i;
const CURRENT_TIMESTAMP = /^(current_timestamp|now|localtime|localtimestamp)(\(\d*\))?$/i;

export function parseColumnDefault(raw: string | null, extra: string, flavor: ServerFlavor, column: DefaultColumnInfo): ColumnDefault {
  const absent: ColumnDefault = column.nullable ? { kind: 'null' } : { kind: 'none' };
  if (raw === null) return absent;
  const bits = BITS.exec(raw);
  if (flavor === 'mysql') {
    if (/default_generated/i.test(extra)) return { kind: 'expression', expression: raw };
    if (TEMPORAL.has(column.dataType) && CURRENT_TIMESTAMP.test(raw)) return { kind: 'expression', expression: raw };
    if (column.dataType === 'bit' && bits) return { kind: 'literal', literal: bitsToBytes(bits[1]!) };
    if (BINARY.has(column.dataType) && /^0x[0-9a-f]*$/i.test(raw)) return { kind: 'literal', literal: Buffer.from(raw.slice(2), 'hex') };
    return { kind: 'literal', literal: raw };
  }
  // MariaDB
  if (raw === 'NULL') return { kind: 'null' };
  if (raw.length >= 2 && raw.startsWith("'") && raw.endsWith("'")) return { kind: 'literal', literal: unquoteSqlString(raw) };
  if (NUMBER.test(raw)) return { kind: 'literal', literal: raw };
  if (bits) return { kind: 'literal', literal: bitsToBytes(bits[1]!) };
  return { kind: 'expression', expression: raw };
}

/** `'it''s'` → `it's`; backslash escapes as the server reads them. */
function unquoteSqlString(quoted: string): string {
  let out = '';
  for (let i = 1; i < quoted.length - 1; i++) {
    const c = quoted[i];
    if (c === "'" && quoted[i + 1] === "'") {
      out += "'";
      i++;
    } else if (c === '\\' && i + 1 < quoted.length - 1) {
      out += unescapeChar(quoted[i + 1]!);
      i++;
    } else {
      out += c;
    }
  }
  return out;
}

/** b'101' → big-endian bytes, the shape BIT values have on the wire (1 byte per 8 bits, rounded up). */
export function bitsToBytes(bits: string): Uint8Array {
  let value = bits === '' ? 0n : BigInt('0b' + bits);
  const n = Math.max(1, Math.ceil(bits.length / 8));
  const out = Buffer.alloc(n); // a Buffer, like the bytes the converters produce
  for (let i = n - 1; i >= 0; i--) {
    out[i] = Number(value & 0xffn);
    value >>= 8n;
  }
  return out;
}

/** The character a MySQL backslash escape stands for. */
export function unescapeChar(c: string): string {
  switch (c) {
    case '0': return '\0';
    case 'b': return '\b';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'Z': return '\x1a';
    default: return c;
  }
}
