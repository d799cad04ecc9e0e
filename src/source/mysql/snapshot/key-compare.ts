/**
 * Comparing chunk keys (value-model tuples) in the order the server sorts them (`ORDER BY key`), so a
 * binlog row's key can be placed in the chunk whose [lower, upper) range holds it (DBLog backfill and
 * hand-over, docs/design.md §2).
 *
 * Exact in-process for: integers (BigInt), decimals (unscaled BigInt at the column's scale), floats,
 * dates and times (day numbers, microseconds), booleans, binary strings and BIT (unsigned bytes, shorter
 * first — VARBINARY does not pad), ENUM (by index) and SET (by bitmask), and text under the code-point
 * collations `*_bin` of utf8mb3/utf8mb4/ascii (PAD SPACE unless the collation is NO PAD).
 *
 * Text under any other collation (utf8mb4_general_ci, utf8mb4_0900_ai_ci, unicode, latin1, …): no
 * in-process table can match the server exactly across versions (UCA versions, contractions, ignorable
 * characters), so floe asks the server for each distinct value's sort key once — `WEIGHT_STRING(value
 * COLLATE <column collation>)`, batched per `prepare()` call and cached — and compares sort keys
 * bytewise. For PAD SPACE collations the shorter sort key is compared as if padded with the weight of
 * a space, which is how the server compares such strings ('a' = 'a  ', 'a\t' < 'a'). Callers therefore
 * `await comparator.prepare(keys)` for the keys they are about to compare (ChunkLocator does this).
 */
import type { Value } from '../../../model/values.js';
import { parseDecimal } from '../../../model/values.js';
import { FloeError } from '../../../util/errors.js';
import type { MysqlClient } from '../client.js';
import { quoteIdent, quoteString } from '../client.js';
import type { MappedColumn } from '../schema/type-mapping.js';
import { enumIndex, setBits } from './key-sql.js';

export type KeyTuple = readonly Value[];

export interface KeyComparator {
  readonly columns: readonly MappedColumn[];
  /** True when some key column needs server-provided sort keys (call `prepare` before `compare`). */
  readonly needsPrepare: boolean;
  /** Makes sure the sort keys of these tuples' collated text values are known (one round trip). */
  prepare(keys: readonly KeyTuple[]): Promise<void>;
  /** <0, 0, >0 as the server orders the two keys; NULL sorts first. */
  compare(a: KeyTuple, b: KeyTuple): number;
}

/** Where collation sort keys come from. */
export interface CollationWeigher {
  /** The collation's sort key of each value. */
  weigh(collation: string, charset: string, values: readonly string[]): Promise<Uint8Array[]>;
  /** The sort key of one space if the collation is PAD SPACE, or null for NO PAD. */
  padWeight(collation: string, charset: string): Promise<Uint8Array | null>;
}

/** Sort keys from the server's WEIGHT_STRING(), batched. */
export function serverCollationWeigher(client: MysqlClient, batchSize = 200): CollationWeigher {
  const pads = new Map<string, Promise<Uint8Array | null>>();
  const weigh = async (collation: string, charset: string, values: readonly string[]): Promise<Uint8Array[]> => {
    const out: Uint8Array[] = [];
    for (let i = 0; i < values.length; i += batchSize) {
      const batch = values.slice(i, i + batchSize);
      const exprs = batch.map((v, j) => `WEIGHT_STRING(CONVERT(_utf8mb4 X'${Buffer.from(v, 'utf8').toString('hex')}' USING ${charset}) COLLATE ${collation}) AS ${quoteIdent('w' + j)}`);
      const { rows } = await client.queryArrays(`SELECT ${exprs.join(', ')}`);
      const row = rows[0] ?? [];
      batch.forEach((_, j) => {
        const w = row[j];
        if (!(w instanceof Uint8Array)) throw new FloeError('source.mysql', 'source', `WEIGHT_STRING under ${collation} returned ${w === null ? 'NULL' : typeof w}: expected a binary sort key`);
        out.push(w);
      });
    }
    return out;
  };
  return {
    weigh,
    padWeight(collation, charset) {
      let p = pads.get(collation);
      if (!p) {
        p = (async () => {
          if (!(await isPadSpace(client, collation))) return null;
          // The space's weight is what ' a' has in front of 'a' (WEIGHT_STRING may strip trailing spaces).
          const [withSpace, bare] = (await weigh(collation, charset, [' a', 'a'])) as [Uint8Array, Uint8Array];
          return withSpace.subarray(0, withSpace.length - bare.length);
        })();
        pads.set(collation, p);
      }
      return p;
    },
  };
}

async function isPadSpace(client: MysqlClient, collation: string): Promise<boolean> {
  try {
    const rows = await client.query(`SELECT PAD_ATTRIBUTE AS pad FROM information_schema.COLLATIONS WHERE COLLATION_NAME = ${quoteString(collation)}`);
    if (rows.length > 0) return !/no pad/i.test(String(rows[0]!.pad));
  } catch {
    // MariaDB and MySQL 5.7 have no PAD_ATTRIBUTE column; fall through to the naming convention.
  }
  return !/_nopad_/i.test(collation);
}

const CODE_POINT_CHARSETS = new Set(['utf8mb4', 'utf8mb3', 'utf8', 'ascii']);

type ColumnCompare = { sync: (a: Value, b: Value) => number } | { collation: string; charset: string };

export function createKeyComparator(columns: readonly MappedColumn[], weigher?: CollationWeigher): KeyComparator {
  const parts: ColumnCompare[] = columns.map((c) => columnCompare(c));
  const collated = parts.map((p, i) => ('collation' in p ? i : -1)).filter((i) => i >= 0);
  if (collated.length > 0 && !weigher) {
    const c = columns[collated[0]!]!;
    throw new FloeError('source.mysql', 'invalid-argument', `comparing keys of ${c.qualifiedName} (collation ${c.column.collation}) needs the server's sort keys: pass a CollationWeigher (serverCollationWeigher(client))`);
  }
  const cache = new Map<string, Map<string, Uint8Array>>();
  const pads = new Map<string, Uint8Array | null>();
  const CACHE_LIMIT = 200_000;

  const weightOf = (collation: string, value: string): Uint8Array => {
    const w = cache.get(collation)?.get(value);
    if (!w) throw new FloeError('source.mysql', 'internal', `no sort key for ${JSON.stringify(value.slice(0, 40))} under ${collation}: call prepare() with the keys before compare()`);
    return w;
  };

  return {
    columns,
    needsPrepare: collated.length > 0,
    async prepare(keys) {
      for (const i of collated) {
        const p = parts[i] as { collation: string; charset: string };
        let known = cache.get(p.collation);
        if (!known || known.size > CACHE_LIMIT) {
          known = new Map();
          cache.set(p.collation, known);
        }
        const missing = new Set<string>();
        for (const k of keys) {
          const v = k[i];
          if (typeof v === 'string' && !known.has(v)) missing.add(v);
        }
        if (!pads.has(p.collation)) pads.set(p.collation, await weigher!.padWeight(p.collation, p.charset));
        if (missing.size === 0) continue;
        const values = [...missing];
        const weights = await weigher!.weigh(p.collation, p.charset, values);
        values.forEach((v, j) => known!.set(v, weights[j]!));
      }
    },
    compare(a, b) {
      for (let i = 0; i < parts.length; i++) {
        const x = a[i];
        const y = b[i];
        if (x === null || y === null || x === undefined || y === undefined) {
          const nx = x === null || x === undefined;
          const ny = y === null || y === undefined;
          if (nx && ny) continue;
          return nx ? -1 : 1;
        }
        const p = parts[i]!;
        const r = 'sync' in p ? p.sync(x, y) : compareSortKeys(weightOf(p.collation, x as string), weightOf(p.collation, y as string), pads.get(p.collation) ?? null);
        if (r !== 0) return r;
      }
      return 0;
    },
  };
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

function cmpPrimitive(a: number | bigint, b: number | bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function columnCompare(column: MappedColumn): ColumnCompare {
  switch (column.kind) {
    case 'boolean-int':
    case 'boolean-bit':
      return { sync: (a, b) => cmpPrimitive(a ? 1 : 0, b ? 1 : 0) };
    case 'int':
    case 'year':
    case 'date':
    case 'float':
    case 'double':
    case 'long':
    case 'time':
    case 'time-micros':
    case 'datetime':
    case 'timestamp':
      return { sync: (a, b) => cmpPrimitive(a as number | bigint, b as number | bigint) };
    case 'unsigned-long':
    case 'decimal':
    case 'decimal-string': {
      const scale = column.scale;
      return { sync: (a, b) => cmpPrimitive(parseDecimal(String(a), scale), parseDecimal(String(b), scale)) };
    }
    case 'binary':
    case 'fixed-binary':
    case 'bit':
      return { sync: (a, b) => compareBytes(a as Uint8Array, b as Uint8Array) };
    case 'enum':
      return { sync: (a, b) => cmpPrimitive(enumIndex(column, a as string), enumIndex(column, b as string)) };
    case 'set':
      return { sync: (a, b) => cmpPrimitive(setBits(column, a as string), setBits(column, b as string)) };
    case 'string': {
      const collation = (column.column.collation ?? '').toLowerCase();
      const charset = (column.column.charset ?? '').toLowerCase();
      if (collation.endsWith('_bin') && CODE_POINT_CHARSETS.has(charset)) {
        const padSpace = !/_0900_bin$|_nopad_bin$/.test(collation);
        return { sync: (a, b) => compareCodePoints(a as string, b as string, padSpace) };
      }
      if (!collation || !charset) {
        throw new FloeError('source.mysql', 'unsupported', `column ${column.qualifiedName} has no collation in the captured schema: cannot compare its values as the server does`);
      }
      return { collation, charset };
    }
    default:
      throw new FloeError(
        'source.mysql',
        'unsupported',
        `column ${column.qualifiedName} (${column.column.columnType}) cannot be compared as a chunk key outside the server: configure a chunk key column of a numeric, temporal, binary or character type`,
      );
  }
}

/** Unsigned lexicographic byte order, shorter first on a common prefix (binary strings do not pad). */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return sign(a.length - b.length);
}

/** Code-point order; with PAD SPACE the shorter string is compared as if padded with spaces. */
export function compareCodePoints(a: string, b: string, padSpace: boolean): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done && y.done) return 0;
    if (x.done || y.done) {
      if (!padSpace) return x.done ? -1 : 1;
      // compare the rest of the longer one against spaces
      let rest = x.done ? y : x;
      const longerIsA = !x.done;
      while (!rest.done) {
        const cp = rest.value.codePointAt(0)!;
        if (cp !== 0x20) return (cp < 0x20 ? -1 : 1) * (longerIsA ? 1 : -1);
        rest = longerIsA ? ia.next() : ib.next();
      }
      return 0;
    }
    const cx = x.value.codePointAt(0)!;
    const cy = y.value.codePointAt(0)!;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

/** Bytewise sort-key order; with a pad weight the shorter key continues with repeated pad weights. */
function compareSortKeys(a: Uint8Array, b: Uint8Array, pad: Uint8Array | null): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]! < 0 ? -1 : 1;
  if (a.length === b.length) return 0;
  if (!pad || pad.length === 0) return a.length < b.length ? -1 : 1;
  const longer = a.length > b.length ? a : b;
  const direction = a.length > b.length ? 1 : -1;
  for (let i = n, j = 0; i < longer.length; i++, j = (j + 1) % pad.length) {
    if (longer[i] !== pad[j]) return (longer[i]! < pad[j]! ? -1 : 1) * direction;
  }
  return 0;
}
