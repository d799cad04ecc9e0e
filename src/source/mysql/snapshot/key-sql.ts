/**
 * Key values (in the value model) written back into SQL, for chunk bounds and key-walking queries.
 *
 * Literals are rendered inline, never sent as string parameters: MySQL compares a DECIMAL or BIGINT
 * UNSIGNED column with a *string* as floating point (doubles lose exactness above 2^53), so numbers must
 * be numeric literals. Strings are rendered as `_utf8mb4 X'…'` (immune to sql_mode and escaping); a
 * literal has coercibility 4 and the column 2, so the comparison runs in the column's own collation
 * (MySQL "Collation Coercibility in Expressions"). ENUM and SET compare by index / bitmask in ORDER BY,
 * so their bounds are rendered as those numbers, not as labels (a label would compare as a string).
 */
import type { Value } from '../../../model/values.js';
import { formatDate, formatTimestamp, formatTime, toHex } from '../../../model/values.js';
import { FloeError } from '../../../util/errors.js';
import { quoteIdent } from '../client.js';
import type { MappedColumn } from '../schema/type-mapping.js';
import type { ServerFlavor } from '../dialect.js';
import { snapshotSelectExpression } from './snapshot-values.js';

/** Key kinds a chunk key may have (JSON cannot be indexed; spatial types are not mapped). */
export function assertKeyKind(column: MappedColumn): void {
  if (column.kind === 'json') {
    throw new FloeError('source.mysql', 'unsupported', `column ${column.qualifiedName} (${column.column.columnType}) cannot be a chunk key: expected an indexable scalar column; configure another chunk key column`);
  }
}

/** The SQL literal for one key value of a column. */
export function keyLiteral(column: MappedColumn, value: Value): string {
  if (value === null) {
    // In a NOT NULL temporal column, null is how a zero date reads (docs/design.md §6); it sorts first.
    if (!column.column.nullable && (column.kind === 'date' || column.kind === 'datetime' || column.kind === 'timestamp')) {
      return column.kind === 'date' ? "'0000-00-00'" : "'0000-00-00 00:00:00'";
    }
    return 'NULL';
  }
  switch (column.kind) {
    case 'boolean-int':
    case 'boolean-bit':
      return value === true ? '1' : '0';
    case 'int':
    case 'year':
      return String(value as number);
    case 'long':
      return (value as bigint).toString();
    case 'time-micros':
      return `'${signedTime(value as bigint)}'`;
    case 'unsigned-long':
    case 'decimal':
    case 'decimal-string':
      // canonical decimal text from the converters: digits, optional sign and point only
      if (!/^-?\d+(\.\d+)?$/.test(String(value))) throw literalError(column, value);
      return String(value);
    case 'float':
    case 'double':
      return doubleLiteral(value as number);
    case 'string':
    case 'uuid':
    case 'inet4':
    case 'inet6':
      return `_utf8mb4 X'${Buffer.from(value as string, 'utf8').toString('hex')}'`;
    case 'enum':
      return String(enumIndex(column, value as string));
    case 'set':
      return setBits(column, value as string).toString();
    case 'binary':
    case 'fixed-binary':
      return `X'${toHex(value as Uint8Array)}'`;
    case 'bit':
      return bytesToBigInt(value as Uint8Array).toString();
    case 'date':
      return `'${formatDate(value as number)}'`;
    case 'datetime':
    case 'timestamp':
      return `'${formatTimestamp(value as bigint).replace('T', ' ')}'`;
    case 'time':
      return `'${formatTime(value as bigint)}'`;
    case 'json':
      break;
  }
  throw literalError(column, value);
}

function literalError(column: MappedColumn, value: Value): FloeError {
  return new FloeError('source.mysql', 'unsupported', `cannot write ${String(value)} as a key literal of column ${column.qualifiedName} (${column.column.columnType})`);
}

function signedTime(micros: bigint): string {
  return micros < 0n ? '-' + formatTime(-micros) : formatTime(micros);
}

/** A double literal that MySQL parses to exactly `n` (shortest round-trip digits, exponent form). */
export function doubleLiteral(n: number): string {
  if (!Number.isFinite(n)) throw new FloeError('source.mysql', 'invalid-data', `cannot write ${n} as a MySQL double literal`);
  if (Object.is(n, -0)) return '-0e0';
  return n.toExponential().replace('e+', 'e');
}

export function enumIndex(column: MappedColumn, label: string): number {
  if (label === '') return 0;
  const i = (column.column.labels ?? []).indexOf(label);
  if (i < 0) throw new FloeError('source.mysql', 'invalid-data', `column ${column.qualifiedName}: ${JSON.stringify(label)} is not one of its ENUM labels`);
  return i + 1;
}

export function setBits(column: MappedColumn, value: string): bigint {
  if (value === '') return 0n;
  const labels = column.column.labels ?? [];
  let bits = 0n;
  for (const part of value.split(',')) {
    const i = labels.indexOf(part);
    if (i < 0) throw new FloeError('source.mysql', 'invalid-data', `column ${column.qualifiedName}: ${JSON.stringify(part)} is not one of its SET labels`);
    bits |= 1n << BigInt(i);
  }
  return bits;
}

function bytesToBigInt(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

/** `col1, col2` as select expressions that the snapshot converters read (on a server of `flavor`). */
export function keySelectList(columns: readonly MappedColumn[], flavor: ServerFlavor): string {
  return columns.map((c) => snapshotSelectExpression(c, flavor)).join(', ');
}

/** `ORDER BY col1, col2` (ascending: the order chunks are cut in). */
export function keyOrderBy(columns: readonly MappedColumn[]): string {
  return 'ORDER BY ' + columns.map((c) => quoteIdent(c.column.name)).join(', ');
}

/**
 * `key >= lower` (inclusive) or `key > lower` (exclusive) over a composite key, lexicographically:
 * `(a > x) OR (a = x AND (b > y OR (b = y AND c >= z)))`, with a redundant `a >= x` in front so that
 * every optimizer sees a range on the first key column. This expanded form lets MariaDB, which does
 * not use row constructors for range access, scan the index instead of the table.
 */
export function keyLowerCondition(columns: readonly MappedColumn[], lower: readonly Value[], inclusive: boolean): string {
  return boundCondition(columns, lower, inclusive ? '>=' : '>', '>');
}

/** `key < upper` (exclusive) or `key <= upper` (inclusive), lexicographically (see keyLowerCondition). */
export function keyUpperCondition(columns: readonly MappedColumn[], upper: readonly Value[], inclusive: boolean): string {
  return boundCondition(columns, upper, inclusive ? '<=' : '<', '<');
}

function boundCondition(columns: readonly MappedColumn[], bound: readonly Value[], lastOp: string, strictOp: string): string {
  if (bound.length !== columns.length) {
    throw new FloeError('source.mysql', 'invalid-argument', `key bound has ${bound.length} values: expected ${columns.length} (${columns.map((c) => c.column.name).join(', ')})`);
  }
  const ids = columns.map((c) => quoteIdent(c.column.name));
  const lits = columns.map((c, i) => keyLiteral(c, bound[i]!));
  if (columns.length === 1) return `${ids[0]} ${lastOp} ${lits[0]}`;
  let expr = `${ids[ids.length - 1]} ${lastOp} ${lits[lits.length - 1]}`;
  for (let i = ids.length - 2; i >= 0; i--) {
    expr = `${ids[i]} ${strictOp} ${lits[i]} OR (${ids[i]} = ${lits[i]} AND (${expr}))`;
  }
  const firstOp = strictOp === '>' ? '>=' : '<=';
  return `${ids[0]} ${firstOp} ${lits[0]} AND (${expr})`;
}
