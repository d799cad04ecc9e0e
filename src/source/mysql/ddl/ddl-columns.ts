/**
 * A parsed column definition (ddl-statements.ts) as the `ColumnSchema` that information_schema would
 * report for it (table-schema.ts): the normalized data type (aliases resolved: BOOL → tinyint(1),
 * INTEGER → int, DEC/NUMERIC/FIXED → decimal, REAL → double, FLOAT(p > 24) → double, CHAR … CHARACTER
 * SET binary → binary, SERIAL → bigint unsigned …), precision/scale/length with the server's
 * defaults, ENUM/SET labels, nullability and the default in the form `parseColumnDefault` produces.
 *
 * What a DDL does not say — the table's default character set and collation, and the session's
 * `explicit_defaults_for_timestamp` / `sql_mode` effects — is left null or taken as the modern
 * default; `enrichFromCatalog` (ddl-apply.ts) replaces a derived column by the server's own
 * description whenever information_schema shows the same column with the same type.
 */
import { FloeError } from '../../../util/errors.js';
import type { ServerFlavor } from '../dialect.js';
import { bitsToBytes, type ColumnDefault } from '../schema/defaults.js';
import type { ColumnDefinition, DataTypeSpec, DefaultSpec } from './ddl-statements.js';
import type { ColumnSchema } from '../schema/table-schema.js';

const SUBSYSTEM = 'source.mysql.ddl';

interface NormalizedType {
  dataType: string;
  columnType: string;
  unsigned: boolean;
  precision: number | null;
  scale: number | null;
  datetimePrecision: number | null;
  maxLength: number | null;
  charset: string | null;
  collation: string | null;
  labels: string[] | null;
  json: boolean;
  /** SERIAL implies NOT NULL AUTO_INCREMENT UNIQUE. */
  serial: boolean;
}

const INTEGER_ALIASES: Record<string, string> = {
  tinyint: 'tinyint',
  int1: 'tinyint',
  smallint: 'smallint',
  int2: 'smallint',
  mediumint: 'mediumint',
  middleint: 'mediumint',
  int3: 'mediumint',
  int: 'int',
  integer: 'int',
  int4: 'int',
  bigint: 'bigint',
  int8: 'bigint',
};

/** NUMERIC_PRECISION information_schema reports for integer types (signed). */
const INTEGER_PRECISION: Record<string, number> = { tinyint: 3, smallint: 5, mediumint: 7, int: 10, bigint: 19 };
/** Display widths MariaDB / MySQL 5.7 print by default (signed, unsigned). */
const INTEGER_WIDTH: Record<string, [number, number]> = { tinyint: [4, 3], smallint: [6, 5], mediumint: [9, 8], int: [11, 10], bigint: [20, 20] };

const TEXT_SIZES: [string, number][] = [
  ['tinytext', 255],
  ['text', 65535],
  ['mediumtext', 16777215],
  ['longtext', 4294967295],
];
const BLOB_SIZES: [string, number][] = [
  ['tinyblob', 255],
  ['blob', 65535],
  ['mediumblob', 16777215],
  ['longblob', 4294967295],
];

function int(text: string | undefined, what: string): number {
  if (text === undefined || !/^\d+$/.test(text)) throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: expected an integer, found ${JSON.stringify(text)}`);
  return Number(text);
}

function quoteLabel(label: string): string {
  return `'${label.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** Resolves aliases and fills in the server's defaults for a parsed data type. */
function normalizeDataType(t: DataTypeSpec, flavor: ServerFlavor, what: string): NormalizedType {
  const base: NormalizedType = {
    dataType: t.name,
    columnType: t.name,
    unsigned: t.unsigned,
    precision: null,
    scale: null,
    datetimePrecision: null,
    maxLength: null,
    charset: t.charset ?? null,
    collation: t.collation ?? null,
    labels: null,
    json: false,
    serial: false,
  };
  const suffix = (t.unsigned ? ' unsigned' : '') + (t.zerofill ? ' zerofill' : '');
  const binaryCharset = t.charset === 'binary';
  let name = t.name;
  if (name === 'bool' || name === 'boolean') return { ...base, dataType: 'tinyint', columnType: 'tinyint(1)' + suffix, precision: 3, scale: 0 };
  if (name === 'serial') {
    return { ...base, dataType: 'bigint', columnType: flavor === 'mariadb' ? 'bigint(20) unsigned' : 'bigint unsigned', unsigned: true, precision: 20, scale: 0, serial: true };
  }
  const dataType = INTEGER_ALIASES[name];
  if (dataType) {
    const precision = dataType === 'bigint' && t.unsigned ? 20 : INTEGER_PRECISION[dataType]!;
    let width: string;
    if (t.args.length > 0) width = `(${int(t.args[0], what)})`;
    else if (flavor === 'mariadb' || t.zerofill) width = `(${INTEGER_WIDTH[dataType]![t.unsigned ? 1 : 0]})`;
    else width = '';
    return { ...base, dataType, columnType: dataType + width + suffix, precision, scale: 0 };
  }
  if (name === 'real' || name === 'double precision') name = 'double';
  if (name === 'float' && t.args.length === 1 && int(t.args[0], what) > 24) name = 'double';
  if (name === 'float' || name === 'double') {
    const args = name === 'float' && t.args.length === 1 ? '' : t.args.length === 2 ? `(${t.args[0]},${t.args[1]})` : '';
    const scale = t.args.length === 2 ? int(t.args[1], what) : null;
    return { ...base, dataType: name, columnType: name + args + suffix, precision: name === 'float' ? 12 : 22, scale };
  }
  if (name === 'decimal' || name === 'dec' || name === 'numeric' || name === 'fixed') {
    const p = t.args.length > 0 ? int(t.args[0], what) : 10;
    const s = t.args.length > 1 ? int(t.args[1], what) : 0;
    if (p > 65 || s > 38 || s > p) throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: DECIMAL(${p},${s}) is out of MySQL's range (precision ≤ 65, scale ≤ 30 and ≤ precision)`);
    return { ...base, dataType: 'decimal', columnType: `decimal(${p},${s})${suffix}`, precision: p, scale: s };
  }
  if (name === 'bit') {
    const n = t.args.length > 0 ? int(t.args[0], what) : 1;
    return { ...base, dataType: 'bit', columnType: `bit(${n})`, precision: n, unsigned: false };
  }
  if (name === 'char' || name === 'character' || name === 'nchar') {
    const n = t.args.length > 0 ? int(t.args[0], what) : 1;
    if (binaryCharset) return { ...base, dataType: 'binary', columnType: `binary(${n})`, maxLength: n, charset: null, collation: null };
    return { ...base, dataType: 'char', columnType: `char(${n})`, maxLength: n, charset: name === 'nchar' ? 'utf8mb3' : base.charset };
  }
  if (name === 'varchar' || name === 'nvarchar' || name === 'varcharacter') {
    const n = int(t.args[0], `${what}: VARCHAR needs a length`);
    if (binaryCharset) return { ...base, dataType: 'varbinary', columnType: `varbinary(${n})`, maxLength: n, charset: null, collation: null };
    return { ...base, dataType: 'varchar', columnType: `varchar(${n})`, maxLength: n, charset: name === 'nvarchar' ? 'utf8mb3' : base.charset };
  }
  if (name === 'binary' || name === 'varbinary') {
    const n = name === 'binary' ? (t.args.length > 0 ? int(t.args[0], what) : 1) : int(t.args[0], `${what}: VARBINARY needs a length`);
    return { ...base, dataType: name, columnType: `${name}(${n})`, maxLength: n, charset: null, collation: null };
  }
  if (name === 'long' || name === 'long varchar') name = 'mediumtext';
  if (name === 'long varbinary') name = 'mediumblob';
  if (name === 'text' && t.args.length > 0) name = sizedType(TEXT_SIZES, int(t.args[0], what) * 4);
  if (name === 'blob' && t.args.length > 0) name = sizedType(BLOB_SIZES, int(t.args[0], what));
  const text = TEXT_SIZES.find(([n]) => n === name);
  if (text) {
    if (binaryCharset) {
      const blob = BLOB_SIZES[TEXT_SIZES.indexOf(text)]!;
      return { ...base, dataType: blob[0], columnType: blob[0], maxLength: blob[1], charset: null, collation: null };
    }
    return { ...base, dataType: text[0], columnType: text[0], maxLength: text[1] };
  }
  const blob = BLOB_SIZES.find(([n]) => n === name);
  if (blob) return { ...base, dataType: blob[0], columnType: blob[0], maxLength: blob[1], charset: null, collation: null };
  if (name === 'enum' || name === 'set') {
    const labels = [...t.args];
    return { ...base, dataType: name, columnType: `${name}(${labels.map(quoteLabel).join(',')})`, labels };
  }
  if (name === 'json') {
    // MariaDB: JSON is an alias of LONGTEXT with a json_valid() check (table-schema.ts recognises it)
    if (flavor === 'mariadb') return { ...base, dataType: 'longtext', columnType: 'longtext', maxLength: 4294967295, json: true, charset: base.charset ?? 'utf8mb4', collation: base.collation ?? 'utf8mb4_bin' };
    return { ...base, dataType: 'json', columnType: 'json', json: true };
  }
  if (name === 'date') return { ...base, dataType: 'date', columnType: 'date' };
  if (name === 'time' || name === 'datetime' || name === 'timestamp') {
    const fsp = t.args.length > 0 ? int(t.args[0], what) : 0;
    return { ...base, dataType: name, columnType: fsp > 0 ? `${name}(${fsp})` : name, datetimePrecision: fsp };
  }
  if (name === 'year') return { ...base, dataType: 'year', columnType: flavor === 'mariadb' ? 'year(4)' : 'year' };
  if (name === 'uuid' || name === 'inet4' || name === 'inet6') return { ...base, dataType: name, columnType: name };
  if (name === 'vector') return { ...base, dataType: 'vector', columnType: t.args.length ? `vector(${t.args[0]})` : 'vector' };
  // spatial and anything unknown: kept as written; the type mapping decides (and refuses spatial types)
  return { ...base, columnType: t.args.length ? `${name}(${t.args.join(',')})` : name };
}

function sizedType(sizes: [string, number][], bytes: number): string {
  for (const [n, max] of sizes) if (bytes <= max) return n;
  return sizes[sizes.length - 1]![0];
}

/** The ColumnSchema information_schema would report for a parsed column definition. */
export function columnFromDefinition(def: ColumnDefinition, ordinal: number, flavor: ServerFlavor, what: string): ColumnSchema {
  const t = normalizeDataType(def.type, flavor, `${what}: column ${def.name}`);
  const notNull = def.nullable === false || def.primaryKey || t.serial;
  // TIMESTAMP without NULL/NOT NULL: nullable under explicit_defaults_for_timestamp=ON (MySQL 8's
  // default); older settings make it NOT NULL — the catalog enrichment corrects that case.
  const nullable = !notNull;
  const generated = def.generated ? (def.generated.stored ? 'stored' : 'virtual') : null;
  const json = t.json || def.jsonCheck;
  const base: Omit<ColumnSchema, 'default'> = {
    name: def.name,
    ordinal,
    dataType: t.dataType,
    columnType: t.columnType,
    unsigned: t.unsigned,
    precision: t.precision,
    scale: t.scale,
    datetimePrecision: t.datetimePrecision,
    maxLength: t.maxLength,
    charset: t.charset,
    collation: t.collation,
    nullable,
    generated,
    generationExpression: def.generated?.expression ?? null,
    comment: def.comment ?? '',
    labels: t.labels,
    json,
    invisible: def.invisible,
    autoIncrement: def.autoIncrement || t.serial,
  };
  const dflt: ColumnDefault = generated || base.autoIncrement ? (nullable ? { kind: 'null' } : { kind: 'none' }) : columnDefault(def.default, base);
  return { ...base, default: dflt };
}

const NUMERIC = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'bigint', 'decimal', 'float', 'double', 'year']);
const BINARY = new Set(['binary', 'varbinary', 'tinyblob', 'blob', 'mediumblob', 'longblob', 'bit']);

/** A parsed DEFAULT clause in `parseColumnDefault`'s form (literal text as MySQL returns the value, or bytes). */
export function columnDefault(spec: DefaultSpec | undefined, column: Pick<ColumnSchema, 'dataType' | 'nullable'>): ColumnDefault {
  if (spec === undefined) return column.nullable ? { kind: 'null' } : { kind: 'none' };
  switch (spec.kind) {
    case 'null':
      return { kind: 'null' };
    case 'expression':
      return { kind: 'expression', expression: spec.expression };
    case 'literal': {
      const dt = column.dataType;
      let bytes: Uint8Array | undefined;
      if (spec.literalKind === 'hex') bytes = spec.value as Uint8Array;
      else if (spec.literalKind === 'bits') bytes = bitsToBytes(spec.value as string);
      if (bytes) {
        if (BINARY.has(dt)) return { kind: 'literal', literal: bytes };
        if (NUMERIC.has(dt)) return { kind: 'literal', literal: bytesToUnsigned(bytes) };
        return { kind: 'literal', literal: Buffer.from(bytes).toString('utf8') };
      }
      const text = spec.value as string;
      if (dt === 'bit') return { kind: 'literal', literal: bitsToBytes(BigInt(text).toString(2)) };
      if (BINARY.has(dt)) return { kind: 'literal', literal: Uint8Array.from(Buffer.from(text, 'utf8')) };
      return { kind: 'literal', literal: text };
    }
  }
}

function bytesToUnsigned(bytes: Uint8Array): string {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v.toString();
}

/**
 * The value MySQL gives existing rows when a NOT NULL column without a DEFAULT clause is added (the
 * type's implicit default: 0, '', the first ENUM label, zero bytes, the zero date…), as default text
 * for the value converters. Undefined for JSON (MySQL refuses implicit JSON defaults on non-empty
 * tables in strict mode) and generated columns.
 */
export function implicitDefaultText(column: ColumnSchema): string | Uint8Array | undefined {
  if (column.generated) return undefined;
  switch (column.dataType) {
    case 'tinyint':
    case 'smallint':
    case 'mediumint':
    case 'int':
    case 'bigint':
    case 'float':
    case 'double':
    case 'year':
      return '0';
    case 'decimal':
      return column.scale ? '0.' + '0'.repeat(column.scale) : '0';
    case 'bit':
      return new Uint8Array(Math.max(1, Math.ceil((column.precision ?? 1) / 8)));
    case 'char':
    case 'varchar':
    case 'tinytext':
    case 'text':
    case 'mediumtext':
    case 'longtext':
      return column.json ? undefined : '';
    case 'set':
      return '';
    case 'enum':
      return column.labels?.[0] ?? '';
    case 'binary':
      return new Uint8Array(column.maxLength ?? 0);
    case 'varbinary':
    case 'tinyblob':
    case 'blob':
    case 'mediumblob':
    case 'longblob':
      return new Uint8Array(0);
    case 'date':
      return '0000-00-00';
    case 'datetime':
    case 'timestamp':
      return '0000-00-00 00:00:00';
    case 'time':
      return '00:00:00';
    default:
      return undefined;
  }
}
