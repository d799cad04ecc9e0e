/**
 * Splitting a table into snapshot chunks (docs/design.md §2.1, Flink CDC's MySqlChunkSplitter), lazily: chunks
 * are yielded as they are found, and no step holds more than one key in memory.
 *
 * Chunk key: the configured `chunkKeyColumn`, else the primary key (all its columns, compared
 * lexicographically), else — for a table without one, whose chunks are `keyless` — the first column of
 * its first index (unique indexes first). A table with neither is read as a single chunk.
 *
 * Even split: a single integer key whose values are dense, i.e. whose distribution factor
 * (max − min + 1) / rowCount lies in [0.05, 1000] (Flink CDC's defaults), is cut arithmetically into
 * ranges of max(1, ⌊factor × chunkSize⌋) key values. Bounds are BigInt, so BIGINT UNSIGNED up to 2^64−1
 * neither overflows nor loops (Flink CDC FLINK-38247 did both with a long).
 *
 * Key walking otherwise: the next bound is the key `chunkSize` rows further in key order,
 * `SELECT k FROM t WHERE k >= <lower> ORDER BY k LIMIT 1 OFFSET <chunkSize>`, so every chunk has about
 * chunkSize rows whatever the key's type: VARBINARY and string keys are ordered by the server in the
 * column's collation (no single giant chunk, FLINK-35740), composite keys lexicographically. A
 * non-unique chunk column can repeat a bound; the walk then jumps to the next distinct value.
 *
 * Row counts for the density test come from the optimizer's estimate (EXPLAIN); below 100k estimated
 * rows an exact COUNT(*) is cheap and is used instead.
 */
import type { Value } from '../../../model/values.js';
import { FloeError } from '../../../util/errors.js';
import type { MysqlClient } from '../client.js';
import { quoteIdent } from '../client.js';
import type { ServerFlavor } from '../dialect.js';
import type { Chunk } from './chunk.js';
import { assertKeyKind, keyLiteral, keyLowerCondition, keyOrderBy, keySelectList } from './key-sql.js';
import { snapshotValueConverter } from './snapshot-values.js';
import { qualifiedTable, tableKey } from '../schema/table-schema.js';
import type { MappedColumn, MappedTable } from '../schema/type-mapping.js';

const DEFAULT_CHUNK_SIZE = 8096;
const DEFAULT_DISTRIBUTION_FACTOR_LOWER = 0.05;
const DEFAULT_DISTRIBUTION_FACTOR_UPPER = 1000;
const EXACT_COUNT_BELOW = 100_000;

export interface SplitOptions {
  /** Rows per chunk (default 8096). */
  chunkSize?: number;
  /** Split on this column instead of the primary key (FLINK-35740 allows any column). */
  chunkKeyColumn?: string;
  distributionFactorLower?: number;
  distributionFactorUpper?: number;
}

type SplitStrategy = 'even' | 'walk' | 'single';

export interface SplitPlan {
  table: MappedTable;
  keyColumns: MappedColumn[];
  keyless: boolean;
  strategy: SplitStrategy;
  /** Rows the plan was based on (estimate or exact count). */
  rowCount: number;
  /** Even split only: key values per chunk. */
  step?: bigint;
  min?: bigint;
  max?: bigint;
}

const INTEGER_KINDS = new Set(['int', 'long', 'unsigned-long', 'year']);

/** Picks the chunk key column(s) of a table (see the module header). */
function chooseChunkKey(table: MappedTable, chunkKeyColumn?: string): { keyColumns: MappedColumn[]; keyless: boolean } {
  const schema = table.schema;
  const keyless = schema.primaryKey.length === 0;
  const byName = (name: string): MappedColumn => {
    const c = table.columns.find((col) => col.column.name === name);
    if (!c) throw new FloeError('source.mysql', 'config', `chunk key column ${JSON.stringify(name)} is not a column of ${tableKey(schema.id)}: expected one of ${table.columns.map((x) => x.column.name).join(', ')}`);
    return c;
  };
  let keyColumns: MappedColumn[];
  if (chunkKeyColumn) keyColumns = [byName(chunkKeyColumn)];
  else if (!keyless) keyColumns = schema.primaryKey.map(byName);
  else {
    const index = schema.indexes.find((i) => i.unique && i.columns.length > 0) ?? schema.indexes.find((i) => i.columns.length > 0);
    keyColumns = index ? [byName(index.columns[0]!.name)] : [];
  }
  keyColumns.forEach(assertKeyKind);
  return { keyColumns, keyless };
}

/** Decides how a table will be split (one or two cheap queries). */
export async function planSplit(client: MysqlClient, table: MappedTable, options: SplitOptions = {}): Promise<SplitPlan> {
  const chunkSize = chunkSizeOf(options);
  const { keyColumns, keyless } = chooseChunkKey(table, options.chunkKeyColumn);
  if (keyColumns.length === 0) return { table, keyColumns, keyless, strategy: 'single', rowCount: await countRows(client, table) };
  const rowCount = await countRows(client, table);
  if (keyColumns.length === 1 && INTEGER_KINDS.has(keyColumns[0]!.kind) && rowCount > 0) {
    const k = keyColumns[0]!;
    const id = quoteIdent(k.column.name);
    const { rows } = await client.queryArrays(`SELECT MIN(${id}), MAX(${id}) FROM ${qualifiedTable(table.schema.id)}`);
    const [minRaw, maxRaw] = rows[0] ?? [null, null];
    if (minRaw !== null && maxRaw !== null) {
      const min = BigInt(String(minRaw));
      const max = BigInt(String(maxRaw));
      const factor = Number(max - min + 1n) / rowCount;
      const lower = options.distributionFactorLower ?? DEFAULT_DISTRIBUTION_FACTOR_LOWER;
      const upper = options.distributionFactorUpper ?? DEFAULT_DISTRIBUTION_FACTOR_UPPER;
      if (factor >= lower && factor <= upper) {
        const step = BigInt(Math.max(1, Math.floor(factor * chunkSize)));
        return { table, keyColumns, keyless, strategy: 'even', rowCount, step, min, max };
      }
    }
  }
  return { table, keyColumns, keyless, strategy: 'walk', rowCount };
}

/** Yields the table's chunks in key order (see the module header), on a server of `flavor`. */
export async function* splitTable(client: MysqlClient, table: MappedTable, flavor: ServerFlavor, options: SplitOptions = {}): AsyncGenerator<Chunk> {
  const plan = await planSplit(client, table, options);
  yield* chunksOf(client, plan, flavor, options);
}

/** Yields the chunks of a plan. */
async function* chunksOf(client: MysqlClient, plan: SplitPlan, flavor: ServerFlavor, options: SplitOptions = {}): AsyncGenerator<Chunk> {
  const id = plan.table.schema.id;
  const keyNames = plan.keyColumns.map((c) => c.column.name);
  let index = 0;
  const chunk = (lower: Value[] | undefined, upper: Value[] | undefined): Chunk => ({
    table: id,
    index: index++,
    keyColumns: keyNames,
    ...(lower ? { lower } : {}),
    ...(upper ? { upper } : {}),
    ...(plan.keyless ? { keyless: true } : {}),
  });

  if (plan.strategy === 'single') {
    yield chunk(undefined, undefined);
    return;
  }
  if (plan.strategy === 'even') {
    const k = plan.keyColumns[0]!;
    const toValue = (b: bigint): Value => (k.kind === 'long' ? b : k.kind === 'unsigned-long' ? b.toString() : Number(b));
    let lower: Value[] | undefined;
    // max - min + 1 can be 2^64: BigInt throughout, and the loop ends when the bound passes max.
    for (let bound = plan.min! + plan.step!; bound <= plan.max!; bound += plan.step!) {
      const upper = [toValue(bound)];
      yield chunk(lower, upper);
      lower = upper;
    }
    yield chunk(lower, undefined);
    return;
  }
  yield* walk(client, plan, chunkSizeOf(options), flavor, chunk);
}

async function* walk(client: MysqlClient, plan: SplitPlan, chunkSize: number, flavor: ServerFlavor, chunk: (lower: Value[] | undefined, upper: Value[] | undefined) => Chunk): AsyncGenerator<Chunk> {
  const columns = plan.keyColumns;
  const table = qualifiedTable(plan.table.schema.id);
  const convert = columns.map((c) => snapshotValueConverter(c));
  const select = keySelectList(columns, flavor);
  const order = keyOrderBy(columns);
  const readKey = (row: unknown[]): Value[] => row.slice(0, columns.length).map((v, i) => (v === null || v === undefined ? null : convert[i]!(v)));
  const single = columns.length === 1 ? columns[0] : undefined;
  const unique = isUniqueKey(plan);

  let lower: Value[] | undefined;
  for (;;) {
    const where = lower ? ` WHERE ${keyLowerCondition(columns, lower, true)}` : '';
    // For a non-unique column, also ask whether the found key equals the lower bound (in the
    // column's collation), which would make an empty range and never advance.
    const same = lower && single && !unique ? `, ${quoteIdent(single.column.name)} <=> ${keyLiteral(single, lower[0]!)}` : '';
    const { rows } = await client.queryArrays(`SELECT ${select}${same} FROM ${table}${where} ${order} LIMIT 1 OFFSET ${chunkSize}`);
    if (rows.length === 0) {
      yield chunk(lower, undefined);
      return;
    }
    let next: Value[] | undefined = readKey(rows[0]!);
    if (same && Number(rows[0]![columns.length]) === 1) {
      // chunkSize+ rows share the lower value: the chunk is that value alone, the next starts after it
      next = await firstKey(client, `SELECT ${select} FROM ${table} WHERE ${keyLowerCondition(columns, lower!, false)} ${order} LIMIT 1`, readKey);
    } else if (single && next[0] === null) {
      // more than chunkSize NULL keys: they all belong to the first chunk, which ends at the first value
      next = await firstKey(client, `SELECT ${select} FROM ${table} WHERE ${quoteIdent(single.column.name)} IS NOT NULL ${order} LIMIT 1`, readKey);
    }
    if (!next) {
      yield chunk(lower, undefined);
      return;
    }
    yield chunk(lower, next);
    lower = next;
  }
}

async function firstKey(client: MysqlClient, sql: string, readKey: (row: unknown[]) => Value[]): Promise<Value[] | undefined> {
  const { rows } = await client.queryArrays(sql);
  return rows.length === 0 ? undefined : readKey(rows[0]!);
}

function isUniqueKey(plan: SplitPlan): boolean {
  const names = plan.keyColumns.map((c) => c.column.name);
  const schema = plan.table.schema;
  const same = (cols: string[]): boolean => cols.length === names.length && cols.every((c, i) => c === names[i]);
  if (same(schema.primaryKey)) return true;
  return schema.indexes.some((i) => i.unique && same(i.columns.map((c) => c.name)) && plan.keyColumns.every((c) => !c.column.nullable));
}

function chunkSizeOf(options: SplitOptions): number {
  const size = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  if (!Number.isInteger(size) || size < 1) throw new FloeError('source.mysql', 'config', `chunk size ${size} is invalid: expected a positive integer (default ${DEFAULT_CHUNK_SIZE})`);
  return size;
}

/** Estimated row count (EXPLAIN), replaced by COUNT(*) for small tables. */
async function countRows(client: MysqlClient, table: MappedTable): Promise<number> {
  const name = qualifiedTable(table.schema.id);
  let estimate = 0;
  try {
    const rows = await client.query(`EXPLAIN SELECT * FROM ${name}`);
    estimate = Number(rows[0]?.rows ?? 0) || 0;
  } catch {
    estimate = 0;
  }
  if (estimate >= EXACT_COUNT_BELOW) return estimate;
  const { rows } = await client.queryArrays(`SELECT COUNT(*) FROM ${name}`);
  return Number(rows[0]?.[0] ?? 0);
}
