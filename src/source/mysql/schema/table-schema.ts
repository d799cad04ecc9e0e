/**
 * A captured MySQL table definition: columns in ordinal order with everything the type mapping, the
 * value converters, the chunk splitter and (later) schema evolution need, read from
 * `information_schema` (COLUMNS, STATISTICS, TABLES, and on MariaDB CHECK_CONSTRAINTS to recognise its
 * JSON alias).
 *
 * The capture session runs with `time_zone = '+00:00'`, so literal TIMESTAMP defaults are reported as
 * UTC instants (MySQL and MariaDB print them in the session zone).
 *
 * Which columns a table has here is which columns its binlog rows carry, in the same order — the row
 * decoder reads them by position (checked on MySQL 8.0.31 and MariaDB 10.11, binlog_row_image=FULL):
 * - INVISIBLE columns (MySQL 8.0.23+, MariaDB 10.3+) are replicated. `SELECT *` leaves them out, but
 *   the binlog logs them in every row image and information_schema lists them (EXTRA 'INVISIBLE'); the
 *   snapshot names every column (chunk.ts), so both paths give them. Dropping them would also
 *   break the position-for-position match with the logged rows.
 * - Generated columns, VIRTUAL and STORED: a FULL row image holds the computed value of a VIRTUAL
 *   column too (the server evaluates it for the image), so they are columns like any other.
 * - The hidden virtual columns of functional and multi-valued index parts (MySQL 8.0.13+, named
 *   `!hidden!…`) are in neither information_schema.COLUMNS nor the TABLE_MAP's column list: they get
 *   no lake column and shift no other. STATISTICS lists such a key part with a NULL COLUMN_NAME
 *   (readIndexes leaves those indexes out of the chunk-key candidates).
 */
import type { MysqlClient } from '../client.js';
import { quoteIdent, quoteString } from '../client.js';
import type { ServerFlavor } from '../dialect.js';
import { parseColumnDefault, unescapeChar, type ColumnDefault } from './defaults.js';
import { FloeError } from '../../../util/errors.js';

export interface TableId {
  database: string;
  table: string;
}

/** 'db.table' — the key used in maps, patterns and messages. */
export function tableKey(id: TableId): string {
  return `${id.database}.${id.table}`;
}

/** `db`.`table` for SQL. */
export function qualifiedTable(id: TableId): string {
  return `${quoteIdent(id.database)}.${quoteIdent(id.table)}`;
}

export interface ColumnSchema {
  name: string;
  /** 1-based ORDINAL_POSITION. */
  ordinal: number;
  /** DATA_TYPE, lower case: 'int', 'varchar', 'decimal', 'json', 'longtext', … */
  dataType: string;
  /** COLUMN_TYPE, lower case: 'int(10) unsigned', "enum('a','b')", 'decimal(65,30)', 'tinyint(1)'. */
  columnType: string;
  unsigned: boolean;
  /** NUMERIC_PRECISION (integers, decimals; BIT width for bit columns). */
  precision: number | null;
  /** NUMERIC_SCALE. */
  scale: number | null;
  /** Fractional-second digits of time/datetime/timestamp. */
  datetimePrecision: number | null;
  /** CHARACTER_MAXIMUM_LENGTH (characters; bytes for binary types). */
  maxLength: number | null;
  charset: string | null;
  collation: string | null;
  nullable: boolean;
  generated: 'virtual' | 'stored' | null;
  generationExpression: string | null;
  comment: string;
  /** The column default as the server reports it (see defaults.ts). */
  default: ColumnDefault;
  /** ENUM / SET labels in definition order (index 1 = first label). */
  labels: string[] | null;
  /** MySQL JSON, or MariaDB's JSON alias (LONGTEXT with a json_valid() check). */
  json: boolean;
  invisible: boolean;
  autoIncrement: boolean;
}

interface IndexSchema {
  name: string;
  unique: boolean;
  /** Columns in index order; a prefix index part carries its prefix length. */
  columns: { name: string; prefixLength: number | null }[];
}

export interface TableSchema {
  id: TableId;
  columns: ColumnSchema[];
  /** Primary key column names in index order; empty for a table without one. */
  primaryKey: string[];
  /** Other indexes (unique first), in the server's order; functional key parts are left out. */
  indexes: IndexSchema[];
  comment: string;
  engine: string | null;
}

/** Captures one table. */
export async function captureTableSchema(client: MysqlClient, id: TableId, flavor: ServerFlavor): Promise<TableSchema> {
  const map = await captureTableSchemas(client, [id], flavor);
  const schema = map.get(tableKey(id));
  if (!schema) {
    throw new FloeError('source.mysql', 'not-found', `table ${tableKey(id)} not found: expected a base table readable by the configured user (check the name and the user's SELECT grant)`);
  }
  return schema;
}

/** Captures several tables with three metadata queries per database. Missing tables are absent from the map. */
export async function captureTableSchemas(client: MysqlClient, ids: readonly TableId[], flavor: ServerFlavor): Promise<Map<string, TableSchema>> {
  const byDb = new Map<string, string[]>();
  for (const id of ids) {
    const list = byDb.get(id.database) ?? [];
    list.push(id.table);
    byDb.set(id.database, list);
  }
  const out = new Map<string, TableSchema>();
  for (const [database, tables] of byDb) {
    for (let i = 0; i < tables.length; i += 500) {
      const batch = tables.slice(i, i + 500);
      for (const schema of await captureBatch(client, database, batch, flavor)) out.set(tableKey(schema.id), schema);
    }
  }
  return out;
}

async function captureBatch(client: MysqlClient, database: string, tables: string[], flavor: ServerFlavor): Promise<TableSchema[]> {
  const inList = tables.map(quoteString).join(', ');
  const where = `TABLE_SCHEMA = ${quoteString(database)} AND TABLE_NAME IN (${inList})`;
  const tableRows = await client.query(
    `SELECT TABLE_NAME AS t, ENGINE AS engine, TABLE_COMMENT AS comment FROM information_schema.TABLES WHERE ${where} AND TABLE_TYPE = 'BASE TABLE'`,
  );
  if (tableRows.length === 0) return [];
  const columnRows = await client.query(
    `SELECT TABLE_NAME AS t, COLUMN_NAME AS name, ORDINAL_POSITION AS ord, COLUMN_DEFAULT AS dflt, IS_NULLABLE AS nullable,
            DATA_TYPE AS data_type, COLUMN_TYPE AS column_type, CHARACTER_MAXIMUM_LENGTH AS max_len,
            NUMERIC_PRECISION AS num_prec, NUMERIC_SCALE AS num_scale, DATETIME_PRECISION AS dt_prec,
            CHARACTER_SET_NAME AS charset, COLLATION_NAME AS collation, EXTRA AS extra, COLUMN_COMMENT AS comment,
            GENERATION_EXPRESSION AS gen_expr
       FROM information_schema.COLUMNS WHERE ${where} ORDER BY TABLE_NAME, ORDINAL_POSITION`,
  );
  const indexRows = await client.query(
    `SELECT TABLE_NAME AS t, INDEX_NAME AS idx, NON_UNIQUE AS non_unique, SEQ_IN_INDEX AS seq, COLUMN_NAME AS col, SUB_PART AS sub_part
       FROM information_schema.STATISTICS WHERE ${where} ORDER BY TABLE_NAME, INDEX_NAME = 'PRIMARY' DESC, NON_UNIQUE, INDEX_NAME, SEQ_IN_INDEX`,
  );
  const jsonColumns = new Set<string>();
  if (flavor === 'mariadb') {
    // MariaDB's JSON is LONGTEXT plus a column-level CHECK (json_valid(`col`)) named after the column.
    const checks = await client.query(
      `SELECT TABLE_NAME AS t, CONSTRAINT_NAME AS name, CHECK_CLAUSE AS clause FROM information_schema.CHECK_CONSTRAINTS
        WHERE CONSTRAINT_SCHEMA = ${quoteString(database)} AND TABLE_NAME IN (${inList})`,
    );
    for (const c of checks) {
      const name = String(c.name);
      if (String(c.clause).replace(/\s+/g, '').toLowerCase() === `json_valid(${quoteIdent(name)})`.toLowerCase()) jsonColumns.add(`${c.t}\u0000${name}`);
    }
  }

  const schemas: TableSchema[] = [];
  for (const tr of tableRows) {
    const table = String(tr.t);
    const id: TableId = { database, table };
    const columns = columnRows.filter((r) => String(r.t) === table).map((r) => readColumn(r, flavor, jsonColumns.has(`${table}\u0000${r.name}`)));
    const { primaryKey, indexes } = readIndexes(indexRows.filter((r) => String(r.t) === table));
    schemas.push({ id, columns, primaryKey, indexes, comment: String(tr.comment ?? ''), engine: tr.engine === null || tr.engine === undefined ? null : String(tr.engine) });
  }
  return schemas;
}

function num(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  return Number(v);
}

function readColumn(r: Record<string, unknown>, flavor: ServerFlavor, mariaJson: boolean): ColumnSchema {
  const dataType = String(r.data_type).toLowerCase();
  const columnType = String(r.column_type).toLowerCase();
  const extra = String(r.extra ?? '');
  const extraLower = extra.toLowerCase();
  const nullable = String(r.nullable).toUpperCase() === 'YES';
  const generated = /virtual generated/.test(extraLower) ? 'virtual' : /(stored|persistent) generated/.test(extraLower) ? 'stored' : null;
  const base = {
    name: String(r.name),
    ordinal: Number(r.ord),
    dataType,
    columnType,
    unsigned: /\bunsigned\b/.test(columnType),
    precision: num(r.num_prec),
    scale: num(r.num_scale),
    datetimePrecision: num(r.dt_prec),
    maxLength: num(r.max_len),
    charset: r.charset === null || r.charset === undefined ? null : String(r.charset),
    collation: r.collation === null || r.collation === undefined ? null : String(r.collation),
    nullable,
    generated,
    generationExpression: r.gen_expr === null || r.gen_expr === undefined || r.gen_expr === '' ? null : String(r.gen_expr),
    comment: String(r.comment ?? ''),
    labels: dataType === 'enum' || dataType === 'set' ? parseLabels(String(r.column_type)) : null,
    json: dataType === 'json' || mariaJson,
    invisible: /\binvisible\b/.test(extraLower),
    autoIncrement: /auto_increment/.test(extraLower),
  } satisfies Omit<ColumnSchema, 'default'>;
  // Generated columns have no default of their own.
  const dflt: ColumnDefault = generated
    ? { kind: 'none' }
    : parseColumnDefault(r.dflt === null || r.dflt === undefined ? null : String(r.dflt), extra, flavor, base);
  return { ...base, default: dflt };
}

/**
 * Labels of `enum('a','b,c','d''e')` / `set(...)`: SQL string literals separated by commas, a quote
 * inside doubled (I_S prints them so on MySQL and MariaDB), backslash escapes honoured.
 */
export function parseLabels(columnType: string): string[] {
  const open = columnType.indexOf('(');
  const labels: string[] = [];
  let i = open + 1;
  while (i < columnType.length) {
    const c = columnType[i];
    if (c === "'") {
      let label = '';
      i++;
      for (;;) {
        if (i >= columnType.length) throw new FloeError('source.mysql', 'invalid-data', `cannot read the labels of ${columnType}: unterminated quote`);
        const ch = columnType[i];
        if (ch === "'" && columnType[i + 1] === "'") {
          label += "'";
          i += 2;
        } else if (ch === "'") {
          i++;
          break;
        } else if (ch === '\\' && i + 1 < columnType.length) {
          label += unescapeChar(columnType[i + 1]!);
          i += 2;
        } else {
          label += ch;
          i++;
        }
      }
      labels.push(label);
    } else if (c === ')') {
      break;
    } else {
      i++;
    }
  }
  return labels;
}

function readIndexes(rows: Record<string, unknown>[]): { primaryKey: string[]; indexes: IndexSchema[] } {
  const byName = new Map<string, IndexSchema & { functional: boolean }>();
  for (const r of rows) {
    const name = String(r.idx);
    let idx = byName.get(name);
    if (!idx) {
      idx = { name, unique: Number(r.non_unique) === 0, columns: [], functional: false };
      byName.set(name, idx);
    }
    if (r.col === null || r.col === undefined) idx.functional = true; // MySQL 8 functional key part
    else idx.columns.push({ name: String(r.col), prefixLength: num(r.sub_part) });
  }
  const primary = byName.get('PRIMARY');
  const indexes = [...byName.values()].filter((i) => i.name !== 'PRIMARY' && !i.functional).map(({ functional: _f, ...i }) => i);
  return { primaryKey: primary ? primary.columns.map((c) => c.name) : [], indexes };
}
