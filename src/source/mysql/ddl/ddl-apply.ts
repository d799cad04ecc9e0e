/**
 * What a parsed DDL statement does to the captured tables, in MySQL terms: for each table it
 * touches, the table's new column list (the layout of the rows logged after the DDL — what the
 * source's binlog decoding must switch to) and the column-level changes that lead there (add, drop,
 * rename, modify), plus primary-key changes and actions floe does not model.
 *
 * Applying is tolerant of replays: after a restart the "before" schema is the server's current one
 * (information_schema), which may already contain the DDL's effect. An ADD of a column that exists
 * with the same type, a DROP of a missing column, or a RENAME whose target exists and source does
 * not, are taken as already applied and reported in `notes` — MySQL itself would have refused those
 * statements against the schema they were written for, so no other reading is possible.
 *
 * Column definitions come from the statement (ddl-columns.ts); `enrichFromCatalog` replaces a
 * derived column by the server's own description when information_schema shows the same column with
 * the same type (exact charset, collation, defaults as the server stored them — e.g. a TIMESTAMP
 * literal default interpreted in the DDL session's time zone). The binlog's table map (with
 * binlog_row_metadata=FULL) names the logged columns; the pipeline compares those names with the
 * result (`sameColumnNames`) to catch any drift.
 */
import { FloeError } from '../../../util/errors.js';
import type { ServerFlavor } from '../dialect.js';
import { columnDefault, columnFromDefinition } from './ddl-columns.js';
import { sameColumnName, type AlterAction, type ColumnDefinition, type ColumnPosition, type DdlStatement } from './ddl-statements.js';
import { tableKey, type ColumnSchema, type TableId, type TableSchema } from '../schema/table-schema.js';

const SUBSYSTEM = 'source.mysql.ddl';

export type ColumnChange =
  | { readonly kind: 'add'; readonly column: ColumnSchema; readonly definition?: ColumnDefinition }
  | { readonly kind: 'drop'; readonly column: ColumnSchema }
  | { readonly kind: 'rename'; readonly from: ColumnSchema; readonly to: ColumnSchema }
  /** Type, nullability, default or comment changed (name unchanged; a rename with a new type gives rename + modify). */
  | { readonly kind: 'modify'; readonly before: ColumnSchema; readonly after: ColumnSchema };

export type TableEffect =
  | {
      readonly kind: 'alter';
      readonly table: TableId;
      readonly before: TableSchema;
      readonly after: TableSchema;
      /** Drops first, then renames, modifies and adds (the order an Iceberg schema update can apply them). */
      readonly changes: readonly ColumnChange[];
      readonly primaryKeyChanged: boolean;
      /** The table's new name when the ALTER also renames it. */
      readonly renamedTo?: TableId;
      readonly unsupported: readonly { readonly text: string; readonly reason: string }[];
      readonly notes: readonly string[];
      /**
       * Every column name the statement's column actions name (old and new names): what a consumer
       * may reconcile against its own copy when `changes` is empty because the "before" schema
       * already had the effect (a replay after a restart).
       */
      readonly mentioned: readonly string[];
      /** Column renames the statement makes (RENAME COLUMN, CHANGE with a new name), in order. */
      readonly renames: readonly { readonly from: string; readonly to: string }[];
    }
  | { readonly kind: 'create'; readonly table: TableId; readonly schema: TableSchema | undefined; readonly like?: TableId; readonly asSelect: boolean; readonly orReplace: boolean }
  | { readonly kind: 'drop'; readonly table: TableId }
  | { readonly kind: 'rename'; readonly from: TableId; readonly to: TableId }
  | { readonly kind: 'truncate'; readonly table: TableId }
  | { readonly kind: 'no-schema-effect'; readonly table: TableId; readonly text: string }
  | { readonly kind: 'unsupported'; readonly table: TableId; readonly reason: string };

export interface ApplyContext {
  readonly flavor: ServerFlavor;
  /** The captured tables' current MySQL schemas, by `tableKey`. */
  readonly tables: ReadonlyMap<string, TableSchema>;
  /** Whether a table (possibly new) is captured by the configured include/exclude patterns. */
  readonly isCaptured: (table: TableId) => boolean;
  /** The DDL text, for messages. */
  readonly statement: string;
}

/** The effects of `ddl` on captured tables (empty when it touches none). */
export function applyDdl(ddl: DdlStatement, ctx: ApplyContext): TableEffect[] {
  const captured = (t: TableId): boolean => ctx.tables.has(tableKey(t));
  switch (ddl.kind) {
    case 'alter-table': {
      const before = ctx.tables.get(tableKey(ddl.table));
      if (!before) return [];
      return [alterTable(before, ddl.actions, ctx)];
    }
    case 'create-table': {
      if (ddl.temporary || !ctx.isCaptured(ddl.table)) return [];
      if (captured(ddl.table) && ddl.ifNotExists && !ddl.orReplace) return []; // IF NOT EXISTS on an existing table: a no-op
      const schema: TableSchema | undefined = ddl.like
        ? likeSchema(ctx.tables.get(tableKey(ddl.like)), ddl.table)
        : {
            id: ddl.table,
            columns: ddl.columns.map((c, i) => columnFromDefinition(c, i + 1, ctx.flavor, `CREATE TABLE ${tableKey(ddl.table)}`)),
            primaryKey: ddl.primaryKey.map((name) => ddl.columns.find((c) => sameColumnName(c.name, name))?.name ?? name),
            indexes: [],
            comment: '',
            engine: null,
          };
      return [{ kind: 'create', table: ddl.table, schema, ...(ddl.like ? { like: ddl.like } : {}), asSelect: ddl.asSelect, orReplace: ddl.orReplace }];
    }
    case 'drop-table':
      if (ddl.temporary) return [];
      return ddl.tables.filter(captured).map((table) => ({ kind: 'drop' as const, table }));
    case 'rename-table': {
      const out: TableEffect[] = [];
      for (const r of ddl.renames) if (captured(r.from) || ctx.isCaptured(r.to)) out.push({ kind: 'rename', from: r.from, to: r.to });
      return out;
    }
    case 'truncate-table':
      return captured(ddl.table) ? [{ kind: 'truncate', table: ddl.table }] : [];
    case 'index':
      return captured(ddl.table) ? [{ kind: 'no-schema-effect', table: ddl.table, text: ddl.text }] : [];
    case 'drop-database':
      return [...ctx.tables.values()].filter((t) => t.id.database === ddl.database).map((t) => ({ kind: 'drop' as const, table: t.id }));
    case 'other':
      return ddl.tables.filter(captured).map((table) => ({ kind: 'no-schema-effect' as const, table, text: `${ddl.verb.toUpperCase()} statement` }));
  }
}

function likeSchema(source: TableSchema | undefined, id: TableId): TableSchema | undefined {
  return source ? { ...source, id, columns: source.columns.map((c) => ({ ...c })) } : undefined;
}

/** A column of the working list: its current description and its name in the "before" schema. */
interface Working {
  column: ColumnSchema;
  original?: ColumnSchema;
  definition?: ColumnDefinition;
}

function alterTable(before: TableSchema, actions: readonly AlterAction[], ctx: ApplyContext): TableEffect {
  const what = `ALTER TABLE ${tableKey(before.id)}`;
  const list: Working[] = before.columns.map((c) => ({ column: c, original: c }));
  let primaryKey = [...before.primaryKey];
  let primaryKeyChanged = false;
  let renamedTo: TableId | undefined;
  const unsupported: { text: string; reason: string }[] = [];
  const notes: string[] = [];
  const mentioned = new Set<string>();
  const renames: { from: string; to: string }[] = [];
  for (const a of actions) {
    if (a.kind === 'add-column' || a.kind === 'modify-column') mentioned.add(a.column.name);
    else if (a.kind === 'drop-column' || a.kind === 'alter-column-default') mentioned.add(a.name);
    else if (a.kind === 'rename-column') {
      mentioned.add(a.from).add(a.to);
      renames.push({ from: a.from, to: a.to });
    } else if (a.kind === 'change-column') {
      mentioned.add(a.from).add(a.column.name);
      if (!sameColumnName(a.from, a.column.name)) renames.push({ from: a.from, to: a.column.name });
    }
  }
  const find = (name: string): number => list.findIndex((w) => sameColumnName(w.column.name, name));
  const place = (w: Working, position: ColumnPosition | undefined, fallback: number): void => {
    if (!position) list.splice(fallback, 0, w);
    else if (position.kind === 'first') list.unshift(w);
    else {
      const at = find(position.column);
      if (at < 0) throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: AFTER ${position.column} names no column of the table (columns: ${list.map((x) => x.column.name).join(', ')})`);
      list.splice(at + 1, 0, w);
    }
  };
  const derive = (def: ColumnDefinition): ColumnSchema => columnFromDefinition(def, 0, ctx.flavor, what);

  for (const a of actions) {
    switch (a.kind) {
      case 'add-column': {
        const at = find(a.column.name);
        const column = derive(a.column);
        if (at >= 0) {
          if (a.ifNotExists) notes.push(`ADD COLUMN IF NOT EXISTS ${a.column.name}: the column exists, nothing to do`);
          else if (list[at]!.column.columnType === column.columnType) notes.push(`ADD COLUMN ${a.column.name}: the column already exists with type ${column.columnType} (the DDL was applied before; replay)`);
          else throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: ADD COLUMN ${a.column.name} ${column.columnType}, but the table already has ${a.column.name} ${list[at]!.column.columnType}; the captured schema does not match the binlog: re-snapshot the table`);
          break;
        }
        place({ column, definition: a.column }, a.position, list.length);
        if (a.column.primaryKey) {
          primaryKey = [a.column.name];
          primaryKeyChanged = true;
        }
        break;
      }
      case 'drop-column': {
        const at = find(a.name);
        if (at < 0) {
          notes.push(`DROP COLUMN ${a.name}: no such column (${a.ifExists ? 'IF EXISTS' : 'already dropped; replay'})`);
          break;
        }
        const gone = list.splice(at, 1)[0]!;
        if (primaryKey.some((k) => sameColumnName(k, gone.column.name))) {
          primaryKey = primaryKey.filter((k) => !sameColumnName(k, gone.column.name));
          primaryKeyChanged = true;
        }
        break;
      }
      case 'rename-column': {
        const at = find(a.from);
        if (at < 0) {
          if (find(a.to) >= 0 || a.ifExists) {
            notes.push(`RENAME COLUMN ${a.from} TO ${a.to}: ${a.from} does not exist${find(a.to) >= 0 ? ` and ${a.to} does (replay)` : ''}`);
            break;
          }
          throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: RENAME COLUMN ${a.from}, but the table has no such column (columns: ${list.map((x) => x.column.name).join(', ')}); re-snapshot the table`);
        }
        primaryKey = primaryKey.map((k) => (sameColumnName(k, a.from) ? a.to : k));
        list[at] = { ...list[at]!, column: { ...list[at]!.column, name: a.to } };
        break;
      }
      case 'change-column':
      case 'modify-column': {
        const from = a.kind === 'change-column' ? a.from : a.column.name;
        let at = find(from);
        if (at < 0 && a.kind === 'change-column' && find(a.column.name) >= 0) {
          notes.push(`CHANGE COLUMN ${from} ${a.column.name}: ${from} is already renamed (replay)`);
          at = find(a.column.name);
        }
        if (at < 0) {
          if (a.ifExists) {
            notes.push(`${a.kind === 'change-column' ? 'CHANGE' : 'MODIFY'} COLUMN IF EXISTS ${from}: no such column`);
            break;
          }
          throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: ${a.kind === 'change-column' ? 'CHANGE' : 'MODIFY'} COLUMN ${from}, but the table has no such column (columns: ${list.map((x) => x.column.name).join(', ')}); re-snapshot the table`);
        }
        const old = list[at]!;
        const column = derive(a.column);
        const nextPk = primaryKey.map((k) => (sameColumnName(k, old.column.name) ? a.column.name : k));
        const inPk = nextPk.some((k) => sameColumnName(k, a.column.name));
        // the key stays NOT NULL whatever the definition says
        const fixed: ColumnSchema = inPk ? { ...column, nullable: false, default: column.default.kind === 'null' ? { kind: 'none' } : column.default } : column;
        if (a.column.primaryKey && !(primaryKey.length === 1 && sameColumnName(primaryKey[0]!, old.column.name))) {
          primaryKeyChanged = true;
          primaryKey = [a.column.name];
        } else primaryKey = nextPk;
        const next: Working = { ...old, column: fixed, definition: a.column };
        list.splice(at, 1);
        place(next, a.position, at);
        break;
      }
      case 'alter-column-default': {
        const at = find(a.name);
        if (at < 0) throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: ALTER COLUMN ${a.name}, but the table has no such column; re-snapshot the table`);
        const c = list[at]!.column;
        const dflt = a.default === undefined ? { kind: 'none' as const } : columnDefault(a.default, c);
        list[at] = { ...list[at], column: { ...c, default: dflt } };
        break;
      }
      case 'rename-table':
        renamedTo = a.to;
        break;
      case 'add-primary-key':
        primaryKey = a.columns.map((n) => list[find(n)]?.column.name ?? n);
        primaryKeyChanged = true;
        for (const k of primaryKey) {
          const at = find(k);
          if (at >= 0) list[at] = { ...list[at]!, column: { ...list[at]!.column, nullable: false } };
        }
        break;
      case 'drop-primary-key':
        primaryKey = [];
        primaryKeyChanged = true;
        break;
      case 'no-schema-effect':
        break;
      case 'unsupported':
        unsupported.push({ text: a.text, reason: a.reason });
        break;
    }
  }
  if (primaryKeyChanged && sameNames(primaryKey, before.primaryKey)) primaryKeyChanged = false;

  const columns = list.map((w, i) => ({ ...w.column, ordinal: i + 1 }));
  const after: TableSchema = { ...before, ...(renamedTo ? { id: renamedTo } : {}), columns, primaryKey };
  const changes: ColumnChange[] = [];
  for (const c of before.columns) if (!list.some((w) => w.original === c)) changes.push({ kind: 'drop', column: c });
  for (const w of list) {
    if (!w.original) continue;
    const now = columns[list.indexOf(w)]!;
    if (w.original.name !== now.name) changes.push({ kind: 'rename', from: w.original, to: now });
  }
  for (const w of list) {
    if (!w.original) continue;
    const now = columns[list.indexOf(w)]!;
    if (columnDiffers(w.original, now)) changes.push({ kind: 'modify', before: w.original, after: now });
  }
  for (const w of list) if (!w.original) changes.push({ kind: 'add', column: columns[list.indexOf(w)]!, ...(w.definition ? { definition: w.definition } : {}) });
  return { kind: 'alter', table: before.id, before, after, changes, primaryKeyChanged, ...(renamedTo ? { renamedTo } : {}), unsupported, notes, mentioned: [...mentioned], renames };
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => sameColumnName(x, b[i]!));
}

/** Whether anything but the name and ordinal differs. */
function columnDiffers(a: ColumnSchema, b: ColumnSchema): boolean {
  return (
    a.columnType !== b.columnType ||
    a.dataType !== b.dataType ||
    a.nullable !== b.nullable ||
    a.json !== b.json ||
    a.generated !== b.generated ||
    a.comment !== b.comment ||
    JSON.stringify(defaultKey(a)) !== JSON.stringify(defaultKey(b))
  );
}

function defaultKey(c: ColumnSchema): unknown {
  const d = c.default;
  if (d.kind === 'literal') return { kind: d.kind, literal: typeof d.literal === 'string' ? d.literal : Buffer.from(d.literal).toString('hex') };
  return d;
}

/**
 * Replaces derived columns of `schema` by the server's own description (`catalog`, from
 * information_schema now) where the catalog has a column of the same name and the same column type:
 * the server's charset, collation, default literal and nullability are exact where the DDL text
 * leaves them to session settings. Columns the catalog lacks or describes differently (a later DDL
 * changed them) keep their derived description.
 */
export function enrichFromCatalog(schema: TableSchema, catalog: TableSchema | undefined, derived: ReadonlySet<string>): TableSchema {
  if (!catalog) return schema;
  const columns = schema.columns.map((c) => {
    if (!derived.has(c.name.toLowerCase())) return c;
    const server = catalog.columns.find((s) => sameColumnName(s.name, c.name));
    if (!server || !sameBaseType(server, c)) return c;
    return { ...server, name: c.name, ordinal: c.ordinal };
  });
  return { ...schema, columns };
}

/**
 * A TIMESTAMP literal default is written in the DDL session's time zone, which the statement text
 * does not carry; information_schema (read with time_zone '+00:00') shows it as the instant the
 * server stored. For the columns the statement derived, take the server's literal when the server
 * has the same column with the same type and a literal default too. Returns the columns whose
 * default stays uncertain (no such server column).
 */
export function preferServerTimestampDefaults(schema: TableSchema, catalog: TableSchema | undefined, derived: ReadonlySet<string>): { schema: TableSchema; uncertain: string[] } {
  const uncertain: string[] = [];
  const columns = schema.columns.map((c) => {
    if (!derived.has(c.name.toLowerCase()) || c.dataType !== 'timestamp' || c.default.kind !== 'literal') return c;
    const server = catalog?.columns.find((s) => sameColumnName(s.name, c.name));
    if (server && sameBaseType(server, c) && server.default.kind === 'literal') return { ...c, default: server.default };
    uncertain.push(c.name);
    return c;
  });
  return { schema: { ...schema, columns }, uncertain };
}

/** Same type apart from integer display widths (MySQL 8 drops them; MariaDB prints them). */
function sameBaseType(a: ColumnSchema, b: ColumnSchema): boolean {
  const strip = (t: string): string => (/^(tinyint|smallint|mediumint|int|bigint)\(\d+\)/.test(t) && !/^tinyint\(1\)/.test(t) ? t.replace(/\(\d+\)/, '') : t);
  return a.dataType === b.dataType && strip(a.columnType) === strip(b.columnType) && a.json === b.json;
}
