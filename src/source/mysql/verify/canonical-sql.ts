/**
 * The MySQL side of `floe verify`'s row checksum (docs/verify.md): one SQL statement per chunk that
 * computes, on the server, the row count and an order-independent checksum of the chunk's rows in
 * ONE canonical text — the text the lake side (src/pipeline/verify/canonical-row.ts) computes from the
 * Iceberg values floe wrote. Rows never leave the server (pt-table-checksum's way).
 *
 * Canonical text of a row: its compared columns' parts joined by '#' (CONCAT_WS), each part
 * - `N` for NULL of a column whose text is never `N` — numbers, temporals, floats, hex (a zero date
 *   reads as NULL, as floe writes it: snapshot-values.ts);
 * - integers, booleans (0/1), BIGINT UNSIGNED and DECIMAL: the server's digits (a DECIMAL prints
 *   exactly its scale's digits, the lake's decimal text);
 * - FLOAT and DOUBLE: `CAST(col * 1e0 AS CHAR)`, the server's own text of the stored double
 *   (my_gcvt), which the lake side reproduces from the value (server-float-text.ts);
 * - DATE 'YYYY-MM-DD'; DATETIME / TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.fsp digits]' (TIMESTAMP in UTC: every
 *   floe session runs with time_zone '+00:00'); TIME '[-]HH:MM:SS[.fsp digits]';
 * - BINARY, VARBINARY, BLOB and BIT(n>1): lowercase hex (BIT: 2 digits per byte, leading zeros kept);
 * - text of any kind (CHAR…TEXT, ENUM and SET labels, JSON, MariaDB UUID / INET) and every hashed or
 *   masked column: the text itself in UTF-8 (a NULL is left out by CONCAT_WS), and after all parts
 *   one more: the text columns' UTF-8 byte lengths, `n` for NULL, joined by ',' — so NULL, '' and 'N'
 *   stay apart, and a '#' inside a text cannot shift where the parts begin (a length prefix on each
 *   text part would do the same, but copies every text once more on the server).
 * The parts are joined as binary strings (`_binary'#'`), so columns of different collations never
 * meet in a collation aggregation; text in a character set other than utf8mb3 / utf8mb4 / ascii is
 * converted to utf8mb4 first (what the client gets).
 *
 * Chunk checksum: `COUNT(*)` and `SUM` over the rows of the first 64 bits of MD5(row text) read as an
 * unsigned integer (`CONV(LEFT(MD5(…), 16), 16, 10)`). A sum, not BIT_XOR: two identical rows (a table
 * without a key may hold them) must not cancel out. The sum is a DECIMAL on the server (exact).
 *
 * Column transforms (config `transforms`) are compared in their transformed form, computed here in
 * SQL as pipeline/transforms.ts computes them (SHA-256 of salt ‖ canonical text; masking by code
 * point): the canonical text of the value's Iceberg type, which SQL can produce for every type but
 * FLOAT and DOUBLE (JavaScript's shortest text) — those are left out of the comparison, and the
 * caller says so.
 */
import { FloeError } from '../../../util/errors.js';
import { quoteIdent } from '../client.js';
import type { MappedColumn } from '../schema/type-mapping.js';

/** A column transform as the pipeline applies it (pipeline/transforms.ts), drop excluded. */
type SqlTransform = { readonly kind: 'hash'; readonly salt: string } | { readonly kind: 'mask'; readonly keepLast: number };

/** One compared column: the MySQL column and the transform its Iceberg values carry. */
export interface CanonicalColumn {
  readonly column: MappedColumn;
  readonly transform?: SqlTransform;
}

/** Text literal that no sql_mode or escaping rule can change. */
function textLiteral(text: string): string {
  return `_utf8mb4 X'${Buffer.from(text, 'utf8').toString('hex')}'`;
}

/** The column's value with a zero date (or a zero month / day) read as NULL, as floe writes it. */
function zeroDateAsNull(id: string): string {
  return `IF(MONTH(${id}) = 0 OR DAYOFMONTH(${id}) = 0, NULL, ${id})`;
}

function utf8(expression: string): string {
  return `CONVERT(${expression} USING utf8mb4)`;
}

const UTF8_CHARSETS = new Set(['utf8mb4', 'utf8mb3', 'utf8', 'ascii']);

/** A text column as UTF-8 bytes: converted unless its character set already is (a no-op costs the server too). */
function utf8Column(c: MappedColumn): string {
  const id = quoteIdent(c.column.name);
  return UTF8_CHARSETS.has((c.column.charset ?? '').toLowerCase()) ? id : utf8(id);
}


function bitBytes(column: MappedColumn): number {
  return Math.max(1, Math.ceil((column.column.precision ?? 1) / 8));
}

/** The canonical part of an untransformed column (NULL where the value is null). */
function plainPart(c: MappedColumn): string {
  const id = quoteIdent(c.column.name);
  switch (c.kind) {
    case 'boolean-int':
    case 'int':
    case 'long':
    case 'unsigned-long':
    case 'decimal':
    case 'decimal-string':
      return id;
    case 'boolean-bit':
    case 'year':
      return `(${id} + 0)`;
    case 'float':
    case 'double':
      // the snapshot path's expression (snapshot-values.ts): the stored double's own text
      return `CAST(${id} * 1e0 AS CHAR)`;
    case 'date':
    case 'datetime':
    case 'timestamp':
      return zeroDateAsNull(id);
    case 'time':
    case 'time-micros':
      return id;
    case 'binary':
    case 'fixed-binary':
      return `LOWER(HEX(${id}))`;
    case 'bit':
      return `LPAD(LOWER(HEX(${id} + 0)), ${2 * bitBytes(c)}, '0')`;
    case 'uuid':
      return `LOWER(${utf8Column(c)})`;
    case 'string':
    case 'enum':
    case 'set':
    case 'json':
    case 'inet4':
    case 'inet6':
      return utf8Column(c);
  }
}

/** Whether a column's part is free text (NULL left out and flagged in the null mask), or never 'N' (NULL as 'N'). */
function isTextPart(c: CanonicalColumn): boolean {
  if (c.transform) return true;
  const k = c.column.kind;
  return k === 'string' || k === 'enum' || k === 'set' || k === 'json' || k === 'uuid' || k === 'inet4' || k === 'inet6';
}

/**
 * The text pipeline/transforms.ts `canonicalText` gives a value of the column's Iceberg type, in SQL
 * (NULL for a null value); undefined where SQL cannot produce it (floats: JavaScript's text).
 */
function transformText(c: MappedColumn): string | undefined {
  const id = quoteIdent(c.column.name);
  const trimmedFraction = (format: string, value: string) => `TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM DATE_FORMAT(${value}, '${format}.%f')))`;
  switch (c.kind) {
    case 'boolean-int':
      return `CASE WHEN ${id} IS NULL THEN NULL WHEN ${id} <> 0 THEN 'true' ELSE 'false' END`;
    case 'boolean-bit':
      return `CASE WHEN ${id} IS NULL THEN NULL WHEN ${id} + 0 <> 0 THEN 'true' ELSE 'false' END`;
    case 'int':
    case 'long':
    case 'unsigned-long':
    case 'decimal':
    case 'decimal-string':
      return `CAST(${id} AS CHAR)`;
    case 'year':
      return `CAST(${id} + 0 AS CHAR)`;
    case 'float':
    case 'double':
      return undefined;
    case 'date':
      return `CAST(${zeroDateAsNull(id)} AS CHAR)`;
    case 'datetime':
      return trimmedFraction('%Y-%m-%dT%H:%i:%s', zeroDateAsNull(id));
    case 'timestamp':
      return `CONCAT(${trimmedFraction('%Y-%m-%dT%H:%i:%s', zeroDateAsNull(id))}, '+00:00')`;
    case 'time':
      // an Iceberg time: 00:00 ≤ t < 24:00 (floe refuses others), so TIME_FORMAT's %H is two digits
      return `TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM TIME_FORMAT(${id}, '%H:%i:%s.%f')))`;
    case 'time-micros':
      // long microseconds, signed (HOUR() of a negative TIME is its absolute hours)
      return `CAST(IF(${id} < 0, -1, 1) * ((HOUR(${id}) * 3600 + MINUTE(${id}) * 60 + SECOND(${id})) * 1000000 + MICROSECOND(${id})) AS CHAR)`;
    case 'binary':
    case 'fixed-binary':
      return `LOWER(HEX(${id}))`;
    case 'bit':
      return `LPAD(LOWER(HEX(${id} + 0)), ${2 * bitBytes(c)}, '0')`;
    case 'uuid':
      return `LOWER(${utf8(id)})`;
    case 'string':
    case 'enum':
    case 'set':
    case 'json':
    case 'inet4':
    case 'inet6':
      return utf8(id);
  }
}

/** Whether the column's transform can be computed in SQL (else the column is not compared). */
export function transformComputable(c: CanonicalColumn): boolean {
  return c.transform === undefined || transformText(c.column) !== undefined;
}

function transformedPart(c: MappedColumn, transform: SqlTransform): string {
  const text = transformText(c);
  if (text === undefined) {
    throw new FloeError('source.mysql.verify', 'invalid-argument', `column ${c.qualifiedName} (${c.column.columnType}): its ${transform.kind} transform cannot be computed in SQL; leave it out of the comparison (transformComputable)`);
  }
  const t = utf8(text);
  if (transform.kind === 'hash') return `SHA2(CONCAT(${textLiteral(transform.salt)}, ${t}), 256)`;
  const keep = transform.keepLast;
  // '*' for every code point but the last `keepLast` (pipeline/transforms.ts maskText)
  return `CONCAT(REPEAT('*', GREATEST(CHAR_LENGTH(${t}) - ${keep}, 0)), ${keep === 0 ? "''" : `RIGHT(${t}, ${keep})`})`;
}

/** The canonical part of one compared column (module header). */
function part(c: CanonicalColumn): string {
  const expression = c.transform ? transformedPart(c.column, c.transform) : plainPart(c.column);
  return isTextPart(c) ? expression : `COALESCE(${expression}, 'N')`;
}

/** The UTF-8 byte length of a text part, 'n' for NULL (module header). */
function textLength(c: CanonicalColumn): string {
  if (c.transform?.kind === 'hash') {
    // a transform keeps NULL (a zero date is NULL before it is hashed); a SHA-256 is 64 hex digits
    const k = c.column.kind;
    const id = quoteIdent(c.column.column.name);
    return `IF(${k === 'date' || k === 'datetime' || k === 'timestamp' ? zeroDateAsNull(id) : id} IS NULL, 'n', 64)`;
  }
  const expression = c.transform ? transformedPart(c.column, c.transform) : plainPart(c.column);
  return `COALESCE(OCTET_LENGTH(${expression}), 'n')`;
}

/** The canonical text of a row as a SQL expression over the table's columns (see the module header). */
export function canonicalRowSql(columns: readonly CanonicalColumn[]): string {
  if (columns.length === 0) return "_binary''";
  const text = columns.filter(isTextPart);
  const lengths = text.length > 0 ? [`CONCAT_WS(',', ${text.map(textLength).join(', ')})`] : [];
  return `CONCAT_WS(_binary'#', ${[...columns.map(part), ...lengths].join(', ')})`;
}

/** The 64-bit row hash as an unsigned integer expression. */
function rowHashSql(columns: readonly CanonicalColumn[]): string {
  return `CAST(CONV(LEFT(MD5(${canonicalRowSql(columns)}), 16), 16, 10) AS UNSIGNED)`;
}

/** `SELECT COUNT(*), SUM(<row hash>) FROM <from> [WHERE <where>]` (the chunk checksum). */
export function checksumSql(columns: readonly CanonicalColumn[], from: string, where: string): string {
  return `SELECT COUNT(*), COALESCE(SUM(${rowHashSql(columns)}), 0) FROM ${from}${where ? ` WHERE ${where}` : ''}`;
}
