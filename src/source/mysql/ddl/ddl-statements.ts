/**
 * The parsed form of the DDL statements floe interprets (ddl-parser.ts builds them from a binlog
 * Query event's text). Only what changes the shape of a captured table is modelled in detail;
 * everything else that names a table is kept as `no-schema-effect` / `unsupported` actions or an
 * `other` statement so the schema-change policy can decide (docs/design.md §3).
 *
 * Names are as written (unquoted); column names compare case-insensitively (MySQL), table and
 * database names case-sensitively (Linux servers with lower_case_table_names=0).
 */
import type { TableId } from '../schema/table-schema.js';

/** A column's data type as written: `int(10) unsigned`, `varchar(20) character set latin1`, `enum('a','b')`. */
export interface DataTypeSpec {
  /** Base type name, lower-case, aliases kept as written (`integer`, `bool`, `double precision`). */
  readonly name: string;
  /** Parenthesised arguments: numbers as text (`['10', '2']`), enum/set labels as their values. */
  readonly args: readonly string[];
  readonly unsigned: boolean;
  readonly zerofill: boolean;
  readonly charset?: string;
  readonly collation?: string;
  /** `varchar(10) BINARY` (binary collation of the charset). */
  readonly binaryCollation?: boolean;
}

export type DefaultSpec =
  | { readonly kind: 'null' }
  /** A literal: number text, string value, or bytes (X'..' / 0x.. / B'..'). `negative` already applied to numbers. */
  | { readonly kind: 'literal'; readonly value: string | Uint8Array; readonly literalKind: 'number' | 'string' | 'hex' | 'bits' | 'boolean' }
  /** Anything evaluated per row: CURRENT_TIMESTAMP[(n)], NOW(), (expr), uuid()… */
  | { readonly kind: 'expression'; readonly expression: string };

export interface ColumnDefinition {
  readonly name: string;
  readonly type: DataTypeSpec;
  /** NOT NULL → false, NULL → true, unspecified → undefined (nullable unless PRIMARY KEY). */
  readonly nullable?: boolean;
  readonly default?: DefaultSpec;
  readonly autoIncrement: boolean;
  readonly comment?: string;
  /** Generated column: `AS (expr)` / `GENERATED ALWAYS AS (expr)`, VIRTUAL (default) or STORED/PERSISTENT. */
  readonly generated?: { readonly expression: string; readonly stored: boolean };
  /** Column-level PRIMARY KEY. */
  readonly primaryKey: boolean;
  readonly unique: boolean;
  readonly invisible: boolean;
  /** ON UPDATE CURRENT_TIMESTAMP (no effect on the lake; kept for completeness). */
  readonly onUpdate?: string;
  /** `CHECK (json_valid(col))` on the column (MariaDB's JSON alias), or the JSON type itself. */
  readonly jsonCheck: boolean;
}

/** Where ADD/CHANGE/MODIFY puts the column (MySQL column order; the Iceberg schema keeps its own order). */
export type ColumnPosition = { readonly kind: 'first' } | { readonly kind: 'after'; readonly column: string };

export type AlterAction =
  | { readonly kind: 'add-column'; readonly column: ColumnDefinition; readonly position?: ColumnPosition; readonly ifNotExists: boolean }
  | { readonly kind: 'drop-column'; readonly name: string; readonly ifExists: boolean }
  | { readonly kind: 'rename-column'; readonly from: string; readonly to: string; readonly ifExists: boolean }
  /** CHANGE [COLUMN] old new type… (a rename when the names differ, and a new definition). */
  | { readonly kind: 'change-column'; readonly from: string; readonly column: ColumnDefinition; readonly position?: ColumnPosition; readonly ifExists: boolean }
  | { readonly kind: 'modify-column'; readonly column: ColumnDefinition; readonly position?: ColumnPosition; readonly ifExists: boolean }
  /** ALTER [COLUMN] c SET DEFAULT x / DROP DEFAULT (`default` undefined = DROP DEFAULT). */
  | { readonly kind: 'alter-column-default'; readonly name: string; readonly default?: DefaultSpec }
  | { readonly kind: 'rename-table'; readonly to: TableId }
  | { readonly kind: 'add-primary-key'; readonly columns: readonly string[] }
  | { readonly kind: 'drop-primary-key' }
  /** Indexes, constraints, table options, ALGORITHM/LOCK, FORCE…: the columns and their values stay as they are. */
  | { readonly kind: 'no-schema-effect'; readonly text: string }
  /** Changes floe does not model (CONVERT TO CHARACTER SET, ORDER BY, system versioning, …). */
  | { readonly kind: 'unsupported'; readonly text: string; readonly reason: string };

export interface AlterTableStatement {
  readonly kind: 'alter-table';
  readonly table: TableId;
  readonly ifExists: boolean;
  readonly actions: readonly AlterAction[];
}

export interface CreateTableStatement {
  readonly kind: 'create-table';
  readonly table: TableId;
  readonly ifNotExists: boolean;
  readonly temporary: boolean;
  /** Columns in order (empty for LIKE). */
  readonly columns: readonly ColumnDefinition[];
  /** PRIMARY KEY columns (table- or column-level). */
  readonly primaryKey: readonly string[];
  /** CREATE TABLE … LIKE other. */
  readonly like?: TableId;
  /** CREATE TABLE … [AS] SELECT (the rows follow as row events in ROW format). */
  readonly asSelect: boolean;
  /** CREATE OR REPLACE TABLE (MariaDB): drops an existing table of that name first. */
  readonly orReplace: boolean;
}

interface DropTableStatement {
  readonly kind: 'drop-table';
  readonly tables: readonly TableId[];
  readonly ifExists: boolean;
  readonly temporary: boolean;
}

interface RenameTableStatement {
  readonly kind: 'rename-table';
  readonly renames: readonly { readonly from: TableId; readonly to: TableId }[];
}

interface TruncateTableStatement {
  readonly kind: 'truncate-table';
  readonly table: TableId;
}

/** CREATE/DROP INDEX, ANALYZE/OPTIMIZE…: name a table, change no column. */
interface IndexStatement {
  readonly kind: 'index';
  readonly table: TableId;
  readonly text: string;
}

interface DropDatabaseStatement {
  readonly kind: 'drop-database';
  readonly database: string;
}

/** Anything else (views, routines, grants, CREATE DATABASE…); `tables` lists qualified names seen, best effort. */
interface OtherStatement {
  readonly kind: 'other';
  readonly verb: string;
  readonly tables: readonly TableId[];
}

export type DdlStatement =
  | AlterTableStatement
  | CreateTableStatement
  | DropTableStatement
  | RenameTableStatement
  | TruncateTableStatement
  | IndexStatement
  | DropDatabaseStatement
  | OtherStatement;

/** Case-insensitive column name equality (MySQL column names are case-insensitive). */
export function sameColumnName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
