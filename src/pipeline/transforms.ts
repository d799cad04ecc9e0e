/**
 * Column transforms for sensitive columns (config `transforms`): applied to every value of a matching
 * column before it reaches the Iceberg writer, on the snapshot and the binlog path alike.
 *
 * - `hash`: the lowercase hex SHA-256 of `salt ‖ canonical text of the value` (UTF-8). Deterministic,
 *   so a hashed primary-key column still identifies its row: upserts and deletes keep working.
 * - `mask`: the canonical text with every character but the last `keepLast` replaced by `*`
 *   (characters are Unicode code points, so a 4-byte character is one `*`).
 * - `drop`: the column is not in the Iceberg table at all.
 * NULL stays NULL under hash and mask. Hashed and masked columns are Iceberg `string` columns.
 *
 * Canonical text of a value (what hash and mask see), by the column's Iceberg type — the text forms of
 * the Iceberg spec's JSON single values (Appendix D), so they do not depend on the process time zone:
 * boolean `true`/`false`; int/long decimal digits; float/double JavaScript's shortest round-trip text;
 * decimal the exact text with `scale` fraction digits; date `YYYY-MM-DD`; time `HH:MM:SS[.ffffff]`;
 * timestamp `YYYY-MM-DDTHH:MM:SS[.ffffff]`, timestamptz the same with `+00:00`; string and uuid as
 * they are; binary and fixed lowercase hex.
 *
 * Column patterns are `db.table.column` globs (`*` any run of characters except '.', `?` one
 * character) or a `/regex/` over `db.table.column`; the first matching rule wins.
 */
import { createHash } from 'node:crypto';
import { formatDate, formatTime, formatTimestamp, toHex, type Value } from '../model/values.js';
import { errorMessage, FloeError } from '../util/errors.js';
import { compilePattern } from '../source/mysql/index.js';
import type { FloeConfig } from '../config/schema.js';
import type { PrimitiveType } from '../iceberg/spec/types.js';

const SUBSYSTEM = 'pipeline.transforms';

export type ColumnTransform = { readonly kind: 'hash'; readonly salt: string } | { readonly kind: 'mask'; readonly keepLast: number } | { readonly kind: 'drop' };

export type TransformRules = FloeConfig['transforms'];

/** Finds the transform of a column: `lookup('db', 'table', 'column')`. */
export type TransformLookup = (database: string, table: string, column: string) => ColumnTransform | undefined;

/** Compiles the config's rules into a lookup (first matching rule wins). */
export function compileTransforms(rules: TransformRules): TransformLookup {
  const compiled = rules.map((r) => {
    const match = compileColumnPattern(r.column);
    const transform: ColumnTransform = r.type === 'hash' ? { kind: 'hash', salt: r.salt } : r.type === 'mask' ? { kind: 'mask', keepLast: r.keepLast } : { kind: 'drop' };
    return { match, transform };
  });
  return (database, table, column) => {
    const name = `${database}.${table}.${column}`;
    return compiled.find((c) => c.match(name))?.transform;
  };
}

/** A `db.table.column` glob or /regex/, compiled as the source's table patterns are. */
function compileColumnPattern(pattern: string): (name: string) => boolean {
  if (!/^\/.*\/i?$/s.test(pattern) && pattern.split('.').length !== 3) {
    throw new FloeError(SUBSYSTEM, 'config', `transforms: column pattern ${JSON.stringify(pattern)} must have the form 'database.table.column' (globs allowed, e.g. 'shop.*.email'), or be a /regular expression/`);
  }
  try {
    return compilePattern(pattern);
  } catch (e) {
    throw new FloeError(SUBSYSTEM, 'config', `transforms: ${errorMessage(e)}`, { cause: e });
  }
}

/** The Iceberg type a transformed column gets. */
export function transformedType(transform: ColumnTransform, sourceType: PrimitiveType): PrimitiveType {
  return transform.kind === 'drop' ? sourceType : { kind: 'string' };
}

/** A function applying `transform` to values of a column of Iceberg type `sourceType`. */
export function valueTransformer(transform: ColumnTransform, sourceType: PrimitiveType): (value: Value) => Value {
  switch (transform.kind) {
    case 'hash': {
      const salt = transform.salt;
      return (v) => (v === null ? null : createHash('sha256').update(salt, 'utf8').update(canonicalText(sourceType, v), 'utf8').digest('hex'));
    }
    case 'mask': {
      const keep = transform.keepLast;
      return (v) => (v === null ? null : maskText(canonicalText(sourceType, v), keep));
    }
    case 'drop':
      throw new FloeError(SUBSYSTEM, 'internal', 'a dropped column has no values to transform');
  }
}

/** `'*'` for every code point but the last `keepLast`. */
export function maskText(text: string, keepLast: number): string {
  const chars = Array.from(text);
  const hidden = Math.max(0, chars.length - keepLast);
  return '*'.repeat(hidden) + chars.slice(hidden).join('');
}

/** The canonical text of a value of an Iceberg primitive type (see the module header). */
export function canonicalText(type: PrimitiveType, value: Value): string {
  if (value === null) throw new FloeError(SUBSYSTEM, 'internal', 'canonicalText of null');
  switch (type.kind) {
    case 'date':
      return formatDate(value as number);
    case 'time':
      return formatTime(value as bigint);
    case 'timestamp':
      return formatTimestamp(value as bigint);
    case 'timestamptz':
      return formatTimestamp(value as bigint) + '+00:00';
    case 'binary':
    case 'fixed':
      return toHex(value as Uint8Array);
    default:
      if (value instanceof Uint8Array) return toHex(value);
      if (typeof value === 'number' && Object.is(value, -0)) return '-0';
      return String(value);
  }
}
