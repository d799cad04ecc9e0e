/**
 * Applying a DDL under `schemaChanges: evolve` (schema-change.ts decides that it applies). Order:
 *
 * 1. plan every ALTER's Iceberg schema update first (schema-change-plan.ts) — a refusal leaves
 *    everything untouched;
 * 2. `ctx.checkpoint()`: everything routed before the DDL is committed with the OLD schema (a writer
 *    has one schema per checkpoint; the tables' offsets now stand right before the statement);
 * 3. per table: commit the schema update (`add-schema` + `set-current-schema`), the MySQL definition
 *    it matches and the table's offset through the DDL in ONE snapshot (`ctx.commitThroughDdl`,
 *    checkpoint.ts), switch the source's decoding to the column list the DDL produced (from the
 *    statement, enriched with the server's own description of the same columns — see ddl-apply.ts),
 *    and refresh the table's mapping and writer; TRUNCATE commits a snapshot that removes every live
 *    file; DROP TABLE stops routing the table (its lake table keeps its last state).
 *
 * Crash safety: a crash between 2 and 3 replays the DDL from the offset 2 committed, with the
 * definition recorded there (the one before the DDL). After 3 the table resumes past the DDL with
 * the definition after it: the definition and the offset land together, so no restart meets a row
 * of one layout with the definition of the other. TRUNCATE empties the table in the commit that
 * carries its offset through the statement; DROP forgets the table (a replay forgets it again). A
 * replayed ALTER (a table whose offset lies before it for another reason) finds the change already
 * in the lake and commits none.
 *
 * Renames: a captured table renamed to a captured name (RENAME TABLE, ALTER … RENAME) gets its
 * offset through the statement committed, its lake table renamed, and the run starts again from the
 * lake ('restart'): the binlog reader's table filter is fixed for a run, so the new name is picked up
 * by the next one, which streams the table on from that offset. Renamed out of the include patterns,
 * the table is no longer captured (its lake table keeps its last state). A table created or renamed
 * INTO the patterns joins the running session (runner.ts); a statement about a table whose rows in
 * the lake all came after it is history and changes nothing (ddl-relation.ts).
 */
import type { FloeConfig } from '../../config/schema.js';
import { loadCatalogTable } from '../../iceberg/table/index.js';
import { enrichFromCatalog, preferServerTimestampDefaults, type ColumnChange, type TableEffect } from '../../source/mysql/index.js';
import { tableMatcher } from '../../source/mysql/index.js';
import type { DdlEvent } from '../../source/mysql/index.js';
import { tableKey, type TableId, type TableSchema } from '../../source/mysql/index.js';
import { FloeError } from '../../util/errors.js';
import { failpoint } from '../../util/failpoints.js';
import { typeMappingOptions } from '../config-options.js';
import { ddlPositionText, type DdlContext, type DdlOutcome } from '../ddl-handler.js';
import type { SchemaChangeRuntime } from './schema-change-runtime.js';
import { planIcebergSchemaChange, type IcebergSchemaPlan } from './schema-change-plan.js';
import { sourceSchemaProperty } from './source-schema-record.js';
import { icebergIdentifier } from '../table-mapping.js';
import { compileTransforms } from '../transforms.js';

const SUBSYSTEM = 'pipeline.schema-change';

export interface ApplyDeps {
  readonly ctx: DdlContext;
  readonly rt: SchemaChangeRuntime;
  readonly config: FloeConfig;
  readonly refuse: (tables: readonly string[], reason: string) => DdlOutcome;
}

type AlterEffect = Extract<TableEffect, { kind: 'alter' }>;

export async function applyEvolve(event: DdlEvent, effects: readonly TableEffect[], deps: ApplyDeps): Promise<DdlOutcome> {
  const { ctx, rt, config } = deps;
  const position = ddlPositionText(event);
  const statement = event.statement.replace(/\s+/g, ' ').trim().slice(0, 500);
  const transforms = compileTransforms(config.transforms);
  const typeMapping = config.source ? typeMappingOptions(config.source) : undefined;

  // 1. plan (no side effects)
  const plans = new Map<AlterEffect, IcebergSchemaPlan>();
  const servers = new Map<AlterEffect, TableSchema | undefined>();
  for (const e0 of effects) {
    if (e0.kind !== 'alter') continue;
    const key = tableKey(e0.table);
    const identifier = rt.icebergIdentifier(key);
    if (!identifier) throw new FloeError(SUBSYSTEM, 'internal', `no Iceberg table is known for captured table ${key}`);
    // the server's description now: exact TIMESTAMP literal defaults (session time zone) and, for
    // the decoding, charsets and collations the statement leaves to the table's defaults
    const server = (await rt.source.captureSchemas([e0.renamedTo ?? e0.table])).get(tableKey(e0.renamedTo ?? e0.table));
    const exact = preferServerTimestampDefaults(e0.after, server, derivedColumns(e0));
    const e: AlterEffect = { ...e0, after: exact.schema, changes: e0.changes.map((c) => withColumn(c, exact.schema)) };
    const table = await loadCatalogTable(rt.catalog, identifier);
    const plan = planIcebergSchemaChange({ effect: e, metadata: table.metadata, config, transforms, typeMapping });
    if (plan.refusal) return deps.refuse([key], plan.refusal);
    for (const name of exact.uncertain) ctx.logger.warn(`column ${name}: its TIMESTAMP literal default was written in the DDL session's time zone, which floe cannot see; it is taken as UTC`, { table: key, position });
    plans.set(e0, plan);
    servers.set(e0, server);
  }
  for (const e of effects) {
    if (e.kind === 'create' && e.orReplace && ctx.capturedTables.has(tableKey(e.table))) {
      return deps.refuse([tableKey(e.table)], 'CREATE OR REPLACE TABLE replaces a captured table (its rows are dropped without row events)');
    }
  }

  // 2. everything before the DDL, with the old schemas
  await ctx.checkpoint();

  // 3. apply
  const applied: string[] = [];
  let restartFor: string | undefined;
  for (const e of effects) {
    switch (e.kind) {
      case 'alter': {
        const key = tableKey(e.table);
        const plan = plans.get(e)!;
        // the column list the statement produced, with the server's exact description where it agrees
        const definition = enrichFromCatalog({ ...e.after, id: e.table }, servers.get(e), derivedColumns(e));
        // the schema update, the MySQL definition it matches (source-schema-record.ts) and the table's
        // offset through this DDL, in one commit
        await ctx.commitThroughDdl(e.table, { schema: { changes: plan.changes, properties: sourceSchemaProperty(definition) } });
        await failpoint('after-schema-change-commit');
        for (const note of plan.notes) ctx.logger.info(note, { table: key, position });
        for (const warning of plan.warnings) ctx.logger.warn(warning, { table: key, position });
        if (e.renamedTo) {
          // the offset through the statement is in the commit above
          restartFor = await renameLakeTable(deps, e.table, e.renamedTo, { stamped: true });
          break;
        }
        const mapped = await rt.source.remap(e.table, definition);
        await ctx.refreshTable(e.table, mapped);
        applied.push(key);
        ctx.notifier.notify({ type: 'schema-change-applied', table: key, statement, position, changes: plan.changes.map(describeChange) });
        ctx.logger.info('schema change applied', { table: key, position, changes: plan.changes.map(describeChange).join('; ') || '(none in the lake)' });
        break;
      }
      case 'truncate': {
        const key = tableKey(e.table);
        // every row removed, with the table's offset through the TRUNCATE (truncate-commit.ts)
        await ctx.commitThroughDdl(e.table, { truncate: true });
        applied.push(key);
        ctx.notifier.notify({ type: 'schema-change-applied', table: key, statement, position, changes: ['truncated: every row removed'] });
        break;
      }
      case 'drop': {
        const key = tableKey(e.table);
        rt.source.forget(e.table);
        rt.dropTable(key);
        applied.push(key);
        ctx.logger.warn('captured table dropped in MySQL; floe stops capturing it and keeps its lake table as it was', { table: key, position });
        ctx.notifier.notify({ type: 'schema-change-applied', table: key, statement, position, changes: ['table dropped: no longer captured; the lake table keeps its last state'] });
        break;
      }
      case 'rename': {
        const fromKey = tableKey(e.from);
        const toCaptured = isCaptured(config, e.to);
        if (ctx.capturedTables.has(fromKey) && toCaptured) restartFor = await renameLakeTable(deps, e.from, e.to, { stamped: false });
        else if (ctx.capturedTables.has(fromKey)) {
          rt.source.forget(e.from);
          rt.dropTable(fromKey);
          applied.push(fromKey);
          ctx.notifier.notify({ type: 'schema-change-applied', table: fromKey, statement, position, changes: [`renamed to ${tableKey(e.to)}, which is not captured: no longer captured`] });
        } else if (ctx.knownTables.has(fromKey) || ctx.knownTables.has(tableKey(e.to))) {
          // history: a replay, or a table whose rows in the lake are all from after the statement
        } else restartFor = `${tableKey(e.to)} (renamed from ${fromKey}) is a new captured table`;
        break;
      }
      case 'create': {
        if (ctx.knownTables.has(tableKey(e.table))) break; // a replay, or a table copied after the statement
        restartFor = `${tableKey(e.table)} was created and matches source.include`;
        break;
      }
      case 'unsupported':
        throw new FloeError(SUBSYSTEM, 'unsupported', `${tableKey(e.table)}: ${e.reason}`);
      case 'no-schema-effect':
        break;
    }
  }
  if (effects.some((e) => e.kind === 'alter' || e.kind === 'drop')) await rt.source.replanCascades();
  if (restartFor) return { action: 'restart', why: `${restartFor} (at ${position}): the run starts again from the lake to capture it` };
  return applied.length > 0 ? { action: 'applied', tables: applied } : { action: 'ignore' };
}

/** Lower-case names of the columns the statement defined (added, modified, renamed). */
function derivedColumns(e: AlterEffect): Set<string> {
  const derived = new Set<string>();
  for (const c of e.changes) {
    if (c.kind === 'add') derived.add(c.column.name.toLowerCase());
    if (c.kind === 'modify') derived.add(c.after.name.toLowerCase());
    if (c.kind === 'rename') derived.add(c.to.name.toLowerCase());
  }
  return derived;
}

/** A column change with its new column taken from `schema` (same name). */
function withColumn(c: ColumnChange, schema: TableSchema): ColumnChange {
  const find = (name: string) => schema.columns.find((x) => x.name === name);
  if (c.kind === 'add') return { ...c, column: find(c.column.name) ?? c.column };
  if (c.kind === 'modify') return { ...c, after: find(c.after.name) ?? c.after };
  return c;
}

/**
 * Renames the lake table of `from` to the identifier `to` maps to; returns the restart reason. The
 * table's offset through the statement is committed first (unless `stamped`: the caller's commit
 * held it), so that the next run resumes the renamed table after it. A crash between the two leaves
 * the lake table under its old name: the next run copies `to` into a new lake table from the start
 * and leaves that one as it was (as after a DROP TABLE). A lake table of `to`'s name that exists
 * already (one of an earlier MySQL table of that name) is left alone: the next run finds it behind
 * the statement and copies `to` into it again (runner.ts `capture`).
 */
async function renameLakeTable(deps: ApplyDeps, from: TableId, to: TableId, options: { stamped: boolean }): Promise<string> {
  const { rt, config, ctx } = deps;
  const source = rt.icebergIdentifier(tableKey(from));
  const target = icebergIdentifier(to, config);
  if (!options.stamped) await ctx.commitThroughDdl(from, {});
  if (source && !(await rt.catalog.tableExists(target))) {
    await rt.catalog.renameTable(source, target);
    ctx.logger.info('lake table renamed with its MySQL table', { from: tableKey(from), to: tableKey(to) });
  }
  rt.source.forget(from);
  rt.dropTable(tableKey(from));
  return `${tableKey(from)} was renamed to ${tableKey(to)}`;
}

function isCaptured(config: FloeConfig, t: TableId): boolean {
  const s = config.source;
  return s ? tableMatcher({ include: s.include, exclude: s.exclude })(t) : false;
}

function describeChange(c: { kind: string; name?: string; newName?: string }): string {
  switch (c.kind) {
    case 'add-column':
      return `add ${c.name}`;
    case 'drop-column':
      return `drop ${c.name}`;
    case 'rename-column':
      return `rename ${c.name} to ${c.newName}`;
    case 'update-column-type':
      return `widen ${c.name}`;
    case 'make-optional':
      return `make ${c.name} optional`;
    case 'update-write-default':
      return `write-default of ${c.name}`;
    case 'update-doc':
      return `doc of ${c.name}`;
    default:
      return c.kind;
  }
}
