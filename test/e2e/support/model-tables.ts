/**
 * The model of the schema-change model test (schema-changes-model.test.ts): the MySQL tables a
 * command sequence has made, with their columns, and the SQL that changes them — DML, ALTERs of
 * several column changes at once, CREATE / DROP / TRUNCATE / RENAME TABLE. The model only knows what
 * a valid next statement is; MySQL holds the rows (the test compares the lake with MySQL, not with
 * the model).
 *
 * Tables named `t_…` match the floe config's include pattern, `o_…` do not. `t_p…` tables are
 * partitioned by day(created) (their `created` column is never altered or dropped); the others are
 * not. Every table has `id INT` as its primary key.
 */
import { prng } from '../../../src/util/prng.js';

/** The column types the model uses, and the widening each may take (a legal Iceberg promotion). */
const COLUMN_TYPES = {
  int: { sql: 'INT', widen: 'bigint' },
  bigint: { sql: 'BIGINT', widen: undefined },
  varchar20: { sql: 'VARCHAR(20)', widen: 'varchar40' },
  varchar40: { sql: 'VARCHAR(40)', widen: undefined },
  dec10: { sql: 'DECIMAL(10,2)', widen: 'dec14' },
  dec14: { sql: 'DECIMAL(14,2)', widen: undefined },
  datetime: { sql: 'DATETIME(3)', widen: undefined },
} as const;
type ColumnType = keyof typeof COLUMN_TYPES;
const TYPE_NAMES = Object.keys(COLUMN_TYPES) as ColumnType[];

interface ColumnModel {
  name: string;
  type: ColumnType;
  /** NOT NULL with this default (SQL literal), or nullable. */
  notNullDefault?: string;
}

export interface TableModel {
  name: string;
  columns: ColumnModel[];
  nextId: number;
}

export interface ShopModel {
  tables: TableModel[];
  /** For fresh table and column names. */
  counter: number;
  /** Every table name used so far (a fresh name is never given twice). */
  used: Set<string>;
  /** Captured names whose table was dropped or renamed away: a new table may take one (`createTable`'s `reuse`). */
  gone: string[];
}

export const isCaptured = (t: { name: string }) => t.name.startsWith('t_');
const isPartitioned = (name: string) => name.startsWith('t_p');
/** Partitioned names a sequence may create (the config declares day(created) for each). */
export const PARTITIONED_NAMES = Array.from({ length: 12 }, (_, i) => `t_p${i}`);

const FIXED = new Set(['id', 'created']);

function valueOf(type: ColumnType, random: () => number): string {
  const n = Math.floor(random() * 100_000);
  switch (type) {
    case 'int':
      return String(n - 50_000);
    case 'bigint':
      return String(BigInt(n) * 100_003n - 3_000_000_000n);
    case 'varchar20':
    case 'varchar40':
      return random() < 0.1 ? "''" : `'s${n}'`;
    case 'dec10':
    case 'dec14':
      return `${n - 50_000}.${String(n % 100).padStart(2, '0')}`;
    case 'datetime':
      return `'${day(n)}'`;
  }
}

/** A DATETIME(3) literal about `n` days into 2024 (partitions: one per day). */
function day(n: number): string {
  const d = new Date(Date.UTC(2024, 0, 1) + (n % 400) * 86_400_000 + (n % 86_400) * 1000 + (n % 1000));
  return d.toISOString().slice(0, 23).replace('T', ' ');
}

/**
 * A new table: CREATE and its first rows (`rows`). `reuse`: the name of a table that is gone (a new
 * MySQL table of an earlier one's name, whose lake table holds the earlier one's rows).
 */
export function createTable(m: ShopModel, captured: boolean, partitioned: boolean, seed: number, rows = 20, reuse?: string): { table: TableModel; statements: string[] } {
  const n = m.counter++;
  const name = reuse ?? freshName(m, captured, partitioned);
  if (reuse) m.gone.splice(m.gone.indexOf(reuse), 1);
  const columns: ColumnModel[] = [
    { name: 'id', type: 'int', notNullDefault: '0' },
    ...(isPartitioned(name) ? [{ name: 'created', type: 'datetime' as const, notNullDefault: "'2024-01-01 00:00:00.000'" }] : []),
    { name: `a${n}`, type: 'varchar20' },
    { name: `b${n}`, type: 'int' },
    { name: `c${n}`, type: 'dec10' },
  ];
  const table: TableModel = { name, columns, nextId: 0 };
  const defs = columns.map((c) => (c.name === 'id' ? 'id INT NOT NULL PRIMARY KEY' : columnDefinition(c)));
  const statements = [`CREATE TABLE ${name} (${defs.join(', ')})`, ...Array.from({ length: Math.ceil(rows / 100) }, (_, i) => insertRows(table, Math.min(100, rows - i * 100), seed + i))];
  return { table, statements };
}

function columnDefinition(c: ColumnModel): string {
  return `${c.name} ${COLUMN_TYPES[c.type].sql} ${c.notNullDefault !== undefined ? `NOT NULL DEFAULT ${c.notNullDefault}` : 'NULL'}`;
}

function insertRows(t: TableModel, count: number, seed: number): string {
  const random = prng(seed);
  const rows = Array.from({ length: count }, () => {
    const id = t.nextId++;
    return `(${t.columns.map((c) => (c.name === 'id' ? String(id) : c.notNullDefault === undefined && random() < 0.15 ? 'NULL' : valueOf(c.type, random))).join(', ')})`;
  });
  return `INSERT INTO ${t.name} (${t.columns.map((c) => c.name).join(', ')}) VALUES ${rows.join(', ')}`;
}

/** A few row changes of one table: inserts, updates of some columns (a partition move included), deletes. */
export function dml(t: TableModel, seed: number, count: number): string[] {
  const random = prng(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const op = random();
    const id = Math.floor(random() * Math.max(1, t.nextId));
    if (op < 0.35) out.push(insertRows(t, 1 + Math.floor(random() * 3), Math.floor(random() * 2 ** 31)));
    else if (op < 0.8) {
      const settable = t.columns.filter((c) => c.name !== 'id');
      const picked = settable.filter(() => random() < 0.5);
      const set = (picked.length ? picked : settable.slice(0, 1)).map((c) => `${c.name} = ${c.notNullDefault === undefined && random() < 0.15 ? 'NULL' : valueOf(c.type, random)}`);
      if (set.length) out.push(`UPDATE ${t.name} SET ${set.join(', ')} WHERE id ${random() < 0.2 ? `< ${id}` : `= ${id}`}`);
    } else out.push(`DELETE FROM ${t.name} WHERE id = ${id}`);
  }
  return out;
}

export type ColumnOp = { kind: 'add' | 'drop' | 'rename' | 'modify'; pick: number; type: number; after: boolean; notNull: boolean };

/**
 * One ALTER of several column changes (`ops` resolved against the table as it is): each change
 * touches a column no earlier change of the statement touched (MySQL refuses that), never `id` or
 * `created`; a change that cannot apply (nothing left to drop or widen) becomes an ADD. Updates `t`.
 */
export function alter(m: ShopModel, t: TableModel, ops: readonly ColumnOp[]): string {
  const parts: string[] = [];
  const touched = new Set<string>();
  for (const op of ops) {
    const free = t.columns.filter((c) => !FIXED.has(c.name) && !touched.has(c.name));
    const pick = <T>(list: T[]) => list[op.pick % list.length]!;
    const widenable = free.filter((c) => COLUMN_TYPES[c.type].widen !== undefined);
    let kind = op.kind;
    if ((kind === 'drop' || kind === 'rename') && free.length === 0) kind = 'add';
    if (kind === 'modify' && widenable.length === 0) kind = 'add';
    if (kind === 'drop' && t.columns.length <= 3) kind = 'add';
    switch (kind) {
      case 'add': {
        const type = TYPE_NAMES[op.type % TYPE_NAMES.length]!;
        const column: ColumnModel = { name: `n${m.counter++}`, type, ...(op.notNull ? { notNullDefault: valueOf(type, prng(op.pick)) } : {}) };
        const after = op.after && free.length > 0 ? pick(free) : undefined;
        parts.push(`ADD COLUMN ${columnDefinition(column)}${after ? ` AFTER ${after.name}` : ''}`);
        if (after) t.columns.splice(t.columns.indexOf(after) + 1, 0, column);
        else t.columns.push(column);
        touched.add(column.name);
        if (after) touched.add(after.name);
        break;
      }
      case 'drop': {
        const c = pick(free);
        parts.push(`DROP COLUMN ${c.name}`);
        t.columns.splice(t.columns.indexOf(c), 1);
        touched.add(c.name);
        break;
      }
      case 'rename': {
        const c = pick(free);
        const to = `r${m.counter++}`;
        parts.push(`RENAME COLUMN ${c.name} TO ${to}`);
        touched.add(c.name);
        c.name = to;
        touched.add(to);
        break;
      }
      case 'modify': {
        const c = pick(widenable);
        c.type = COLUMN_TYPES[c.type].widen!;
        parts.push(`MODIFY COLUMN ${columnDefinition(c)}`);
        touched.add(c.name);
        break;
      }
    }
  }
  return `ALTER TABLE ${t.name} ${parts.join(', ')}`;
}

/** A name never used: `t_p…` (partitioned, while one is left), `t_u…`, or `o_…` outside the pattern. */
function freshName(m: ShopModel, captured: boolean, partitioned: boolean): string {
  const partition = captured && partitioned ? PARTITIONED_NAMES.find((x) => !m.used.has(x)) : undefined;
  const name = partition ?? `${captured ? 't_u' : 'o_'}${m.counter++}`;
  m.used.add(name);
  return name;
}

/** A fresh name for `t` renamed into (`t_…`; `t_p…` when it has the `created` column) or out of (`o_…`) the pattern. */
export function renamedName(m: ShopModel, t: TableModel, captured: boolean): string {
  return freshName(m, captured, t.columns.some((c) => c.name === 'created'));
}
