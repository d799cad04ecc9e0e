/**
 * MySQL column types → Iceberg primitive types (docs/design.md §6), and the value kind that tells the snapshot
 * and binlog converters how to produce the value model of `src/model/values.ts` for a column.
 *
 * | MySQL                                         | Iceberg          | kind                |
 * |-----------------------------------------------|------------------|---------------------|
 * | tinyint/smallint/mediumint/int (signed)       | int              | int                 |
 * | tinyint/smallint/mediumint unsigned           | int              | int                 |
 * | int unsigned, bigint                          | long             | long                |
 * | bigint unsigned                               | decimal(20, 0)   | unsigned-long       |
 * | tinyint(1) (unless tinyInt1AsBoolean: false)  | boolean          | boolean-int         |
 * | float / double                                | float / double   | float / double      |
 * | decimal(p,s), p ≤ 38                          | decimal(p, s)    | decimal             |
 * | decimal(p,s), p > 38                          | string           | decimal-string      |
 * | char/varchar/*text, MariaDB uuid/inet4/inet6  | string           | string / uuid / inet|
 * | enum / set                                    | string           | enum / set          |
 * | json (and MariaDB's JSON alias)               | string           | json                |
 * | binary(n)                                     | binary           | fixed-binary        |
 * | varbinary / *blob, vector                     | binary           | binary              |
 * | bit(1) / bit(n>1)                             | boolean / binary | boolean-bit / bit   |
 * | date / datetime(n) / timestamp(n)             | date / timestamp / timestamptz | date / datetime / timestamp |
 * | time                                          | time (long µs: timeAs micros, timeAsMicros) | time / time-micros |
 * | year                                          | int              | year                |
 *
 * Spatial types are not mapped: they stop the table with an error that says so.
 */
import type { ColumnSchema, TableId, TableSchema } from './table-schema.js';
import { tableKey } from './table-schema.js';
import { FloeError } from '../../../util/errors.js';
import { iconvEncoding } from './charsets.js';

export type ValueKind =
  | 'boolean-int'
  | 'boolean-bit'
  | 'int'
  | 'long'
  | 'unsigned-long'
  | 'float'
  | 'double'
  | 'decimal'
  | 'decimal-string'
  | 'string'
  | 'uuid'
  | 'inet4'
  | 'inet6'
  | 'enum'
  | 'set'
  | 'json'
  | 'binary'
  | 'fixed-binary'
  | 'bit'
  | 'date'
  | 'datetime'
  | 'timestamp'
  | 'time'
  | 'time-micros'
  | 'year';

export interface TypeMappingOptions {
  /** Map tinyint(1) to boolean (default true, as MySQL's own BOOL alias intends). */
  tinyInt1AsBoolean?: boolean;
  /**
   * How every TIME column maps: Iceberg `time` (default) or long microseconds. MySQL TIME also holds
   * durations (−838:59:59 … 838:59:59), which an Iceberg time cannot; and Spark has no type for an
   * Iceberg time (Iceberg's TypeToSparkType: "Spark does not support time fields"), so one `time`
   * column makes the whole table unreadable there.
   */
  timeAs?: 'time' | 'micros';
  /**
   * TIME columns that map to long microseconds whatever `timeAs` says ('db.table.column' names, or a
   * predicate).
   */
  timeAsMicros?: readonly string[] | ((table: TableId, column: string) => boolean);
}

export interface MappedColumn {
  /** The captured MySQL column. */
  column: ColumnSchema;
  /** 'db.table.column', for messages. */
  qualifiedName: string;
  /** Iceberg primitive type string ('long', 'decimal(20, 0)', 'timestamptz', …). */
  icebergType: string;
  kind: ValueKind;
  /** Fraction digits of decimal kinds. */
  scale: number;
  /** Byte length of fixed-binary. */
  length: number;
}

export interface MappedTable {
  schema: TableSchema;
  columns: MappedColumn[];
}

const SPATIAL = new Set(['geometry', 'point', 'linestring', 'polygon', 'multipoint', 'multilinestring', 'multipolygon', 'geometrycollection', 'geomcollection']);

export function mapTable(schema: TableSchema, options: TypeMappingOptions = {}): MappedTable {
  return { schema, columns: schema.columns.map((c) => mapColumn(schema.id, c, options)) };
}

export function mapColumn(table: TableId, column: ColumnSchema, options: TypeMappingOptions = {}): MappedColumn {
  const qualifiedName = `${tableKey(table)}.${column.name}`;
  const mapped = (icebergType: string, kind: ValueKind, scale = 0, length = 0): MappedColumn => ({ column, qualifiedName, icebergType, kind, scale, length });
  const t = column.dataType;
  switch (t) {
    case 'tinyint':
      if (options.tinyInt1AsBoolean !== false && /^tinyint\(1\)/.test(column.columnType)) return mapped('boolean', 'boolean-int');
      return mapped('int', 'int');
    case 'smallint':
    case 'mediumint':
      return mapped('int', 'int');
    case 'int':
    case 'integer':
      return column.unsigned ? mapped('long', 'long') : mapped('int', 'int');
    case 'bigint':
      return column.unsigned ? mapped('decimal(20, 0)', 'unsigned-long', 0) : mapped('long', 'long');
    case 'float':
      return mapped('float', 'float');
    case 'double':
    case 'real':
      return mapped('double', 'double');
    case 'decimal':
    case 'numeric': {
      const p = column.precision ?? 10;
      const s = column.scale ?? 0;
      return p <= 38 ? mapped(`decimal(${p}, ${s})`, 'decimal', s) : mapped('string', 'decimal-string', s);
    }
    case 'bit':
      return (column.precision ?? 1) === 1 ? mapped('boolean', 'boolean-bit') : mapped('binary', 'bit');
    case 'char':
    case 'varchar':
    case 'tinytext':
    case 'text':
    case 'mediumtext':
    case 'longtext':
      if (iconvEncoding(column.charset) === undefined) {
        // the binlog carries the column's bytes in its own charset, which nothing here decodes
        throw new FloeError(
          'source.mysql',
          'unsupported',
          `column ${qualifiedName} (${column.columnType}) has the character set ${column.charset}, which floe cannot decode from the binlog (dec8, geostd8, hp8, keybcs2 and swe7 have no decoder); convert the column to utf8mb4 (ALTER TABLE … MODIFY … CHARACTER SET utf8mb4), or exclude the table (source.exclude)`,
        );
      }
      return column.json ? mapped('string', 'json') : mapped('string', 'string');
    case 'json':
      return mapped('string', 'json');
    case 'enum':
      return mapped('string', 'enum');
    case 'set':
      return mapped('string', 'set');
    case 'uuid':
      return mapped('string', 'uuid');
    case 'inet4':
      return mapped('string', 'inet4');
    case 'inet6':
      return mapped('string', 'inet6');
    case 'binary':
      return mapped('binary', 'fixed-binary', 0, column.maxLength ?? 0);
    case 'varbinary':
    case 'tinyblob':
    case 'blob':
    case 'mediumblob':
    case 'longblob':
    case 'vector':
      return mapped('binary', 'binary');
    case 'date':
      return mapped('date', 'date');
    case 'datetime':
      return mapped('timestamp', 'datetime');
    case 'timestamp':
      return mapped('timestamptz', 'timestamp');
    case 'time':
      return isTimeAsMicros(table, column.name, options) ? mapped('long', 'time-micros') : mapped('time', 'time');
    case 'year':
      return mapped('int', 'year');
  }
  if (SPATIAL.has(t)) {
    throw new FloeError(
      'source.mysql',
      'unsupported',
      `column ${qualifiedName} has the spatial type ${column.columnType}: floe does not map spatial types to Iceberg; exclude the table (source.exclude)`,
    );
  }
  throw new FloeError('source.mysql', 'unsupported', `column ${qualifiedName} has the type ${column.columnType}, which floe does not know how to map to Iceberg: exclude the table (source.exclude)`);
}

function isTimeAsMicros(table: TableId, column: string, options: TypeMappingOptions): boolean {
  if (options.timeAs === 'micros') return true;
  const t = options.timeAsMicros;
  if (!t) return false;
  if (typeof t === 'function') return t(table, column);
  return t.includes(`${tableKey(table)}.${column}`);
}
