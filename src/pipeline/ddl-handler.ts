/**
 * The runner's hook for DDL events. The source surfaces every DDL statement of the
 * captured databases at its binlog position; the runner asks a `DdlHandler` what to do with it,
 * BETWEEN transactions, with everything before the DDL routed but not necessarily committed:
 *
 * - `ignore`: the statement does not concern a captured table (another table of the database, a
 *   CREATE of a table the include patterns do not match, …);
 * - `applied`: the handler changed captured tables (evolved Iceberg schemas); it has called
 *   `ctx.checkpoint()` first when the writers had to be flushed with the old schema, and
 *   `ctx.refreshTable()` for each table whose schema changed, so later rows are mapped anew;
 * - `stop`: stop before the DDL — the runner commits everything before it and returns 'ddl-stop'
 *   with the DDL's position (schemaChanges: stop);
 * - `fail`: stop with the error.
 *
 * The policy module (schema-change.ts) implements `DdlHandler`; the runner builds it with
 * `createSchemaChangeHandler`. Before asking it, the runner takes the DDLs that bring a NEW table
 * into capture (`newTablesIn`): those it handles itself, by snapshotting the table in process.
 */
import type { FloeConfig } from '../config/schema.js';
import type { TableCommitKind } from './table-checkpoint.js';
import { parseDdl } from '../source/mysql/index.js';
import type { DdlStatement } from '../source/mysql/index.js';
import { tableKey, type DdlEvent, type TableRef } from '../source/mysql/index.js';
import { formatEventPosition } from '../source/mysql/index.js';
import type { MappedTable } from '../source/mysql/index.js';
import type { Logger } from './observe/logger.js';
import type { Notifier } from './observe/notifications.js';

export interface DdlContext {
  readonly config: FloeConfig;
  /** 'db.table' of every captured table the statement applies to (its data in the lake is from before it: ddl-relation.ts). */
  readonly capturedTables: ReadonlySet<string>;
  /** 'db.table' of every table the run captures, also those for which the statement is history. */
  readonly knownTables: ReadonlySet<string>;
  readonly logger: Logger;
  readonly notifier: Notifier;
  /** Commits everything routed before the DDL (one checkpoint). */
  checkpoint(): Promise<void>;
  /**
   * Commits what the DDL does to the Iceberg table of `table` — a schema change, or (TRUNCATE) the
   * removal of every row — together with the table's offset through this DDL (checkpoint.ts
   * `commitSchemaChange`); after `checkpoint()`.
   */
  commitThroughDdl(table: TableRef, how: TableCommitKind): Promise<void>;
  /**
   * Re-reads a captured table's mapping and its Iceberg table (after the handler evolved it), so
   * that later rows are decoded and projected with the new schema: buffered changes are committed
   * first (with the old schema). `mapped` is the table's definition as of the DDL (e.g. derived from
   * the statement); without it the server's current definition is captured.
   */
  refreshTable(table: TableRef, mapped?: MappedTable): Promise<void>;
}

export type DdlOutcome =
  | { readonly action: 'ignore' }
  | { readonly action: 'applied'; readonly tables: readonly string[] }
  /** Applied, and the run must start again from the lake to capture tables under new names. */
  | { readonly action: 'restart'; readonly why: string }
  | { readonly action: 'stop'; readonly table?: string }
  | { readonly action: 'fail'; readonly error: unknown };

export interface DdlHandler {
  onDdl(event: DdlEvent, ctx: DdlContext): Promise<DdlOutcome>;
  /** Whether a schema-changing statement at this event would be applied (`evolve`, or accepted by an operator). */
  applies(event: DdlEvent): boolean;
}

/** "gtid 0-1-42, binlog.000003:1234" — how a DDL's position is reported to operators. */
export function ddlPositionText(e: DdlEvent): string {
  const at = formatEventPosition(e.position).replace(/#\d+.*$/, '');
  return e.gtid ? `gtid ${e.gtid}, ${at}` : at;
}

/**
 * Tables a DDL brings into capture: a CREATE TABLE (or RENAME into a name) of a table that matches the
 * include patterns and is not captured yet. The runner snapshots them in process, without stopping
 * the others' streaming for longer than the snapshot (runner.ts). Unparsable statements bring none.
 */
export function newTablesIn(e: DdlEvent, captured: ReadonlySet<string>, matches: (t: TableRef) => boolean): TableRef[] {
  let ddl: DdlStatement;
  try {
    ddl = parseDdl(e.statement, e.database);
  } catch {
    return [];
  }
  const candidates: TableRef[] = [];
  if (ddl.kind === 'create-table' && !ddl.temporary) candidates.push(ddl.table);
  if (ddl.kind === 'rename-table') for (const r of ddl.renames) if (!captured.has(tableKey(r.from))) candidates.push(r.to);
  return candidates.filter((t) => !captured.has(tableKey(t)) && matches(t));
}

/**
 * The captured tables a statement may concern: every identifier (`name`, `` `name` ``, `db.name`)
 * in it that names one, unqualified names resolved in the statement's default database. Errs on the
 * side of "concerned" (a column that happens to share a captured table's name counts): a false
 * positive stops the pipeline, a false negative would corrupt a table.
 */
export function capturedTablesIn(statement: string, defaultDatabase: string, captured: ReadonlySet<string>): string[] {
  const text = statement.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/(--\s|#)[^\n]*/g, ' ');
  const ident = '(?:`((?:[^`]|``)+)`|([A-Za-z0-9_$\\u0080-\\uffff]+))';
  const re = new RegExp(`${ident}(?:\\s*\\.\\s*${ident})?`, 'g');
  const found = new Set<string>();
  for (const m of text.matchAll(re)) {
    const first = (m[1] ?? m[2]!).replace(/``/g, '`');
    const second = m[3] ?? m[4];
    const candidates = second !== undefined ? [`${first}.${second.replace(/``/g, '`')}`] : [`${defaultDatabase}.${first}`];
    // A qualified pair may also be table.column of an unqualified table.
    if (second !== undefined) candidates.push(`${defaultDatabase}.${first}`);
    for (const c of candidates) {
      for (const key of captured) if (key.toLowerCase() === c.toLowerCase()) found.add(key);
    }
  }
  return [...found];
}
