/**
 * The schema-change policy (config `schemaChanges`, docs/design.md §3): what floe does when
 * the binlog carries a DDL statement, implementing the runner's `DdlHandler` (ddl-handler.ts).
 *
 * 1. Parse the statement (source ddl-parser.ts) and compute its effects on the captured tables
 *    (ddl-apply.ts: each table's new column list and column changes; creates, drops, renames,
 *    truncates). Statements that touch no captured table, or change nothing a row holds (ADD INDEX,
 *    ENGINE=…, comments on other objects), are ignored. A statement floe cannot parse but that names
 *    a captured table counts as schema-changing (a false stop is better than a corrupt table).
 * 2. Per policy, for a schema-changing statement:
 *    - `fail`: stop with an error that names the statement, its position and what to do;
 *    - `stop`: stop BEFORE it — the runner commits everything routed before the DDL (the tables'
 *      offsets stay before the statement), returns 'ddl-stop' with the DDL's GTID/position (exit code
 *      4, `ddl-stop` notification). On restart the same DDL comes again: with `stop` floe would stop
 *      there again, so the operator either restarts once with `schemaChanges: evolve`, or names the
 *      reviewed statement in `FLOE_ACCEPT_DDL` (comma-separated GTIDs or `file:position`, as the stop
 *      message prints them) — that one DDL is then applied as under `evolve` (and refused as there);
 *    - `evolve`: apply it (schema-change-apply.ts): commit everything before it, evolve the Iceberg
 *      schema (schema-change-plan.ts), switch the source's decoding to the new column list, refresh
 *      the table's writer; TRUNCATE empties the lake table; DROP TABLE stops capturing the table (its
 *      lake table stays as it was); a new or renamed-in table stops the run for a restart that
 *      snapshots it. Incompatible changes are refused like `fail`, with the reason.
 */
import type { FloeConfig } from '../../config/schema.js';
import { applyDdl, type TableEffect } from '../../source/mysql/index.js';
import { parseDdl } from '../../source/mysql/index.js';
import type { DdlStatement } from '../../source/mysql/index.js';
import { tableMatcher } from '../../source/mysql/index.js';
import type { DdlEvent, TableRef } from '../../source/mysql/index.js';
import type { TableSchema } from '../../source/mysql/index.js';
import type { CascadePlan, TableId } from '../../source/mysql/index.js';
import { errorMessage, FloeError } from '../../util/errors.js';
import { capturedTablesIn, ddlPositionText, type DdlContext, type DdlHandler, type DdlOutcome } from '../ddl-handler.js';
import { applyEvolve } from './schema-change-apply.js';
import type { SchemaChangeRuntime } from './schema-change-runtime.js';

const SUBSYSTEM = 'pipeline.schema-change';

export type { SchemaChangeRuntime } from './schema-change-runtime.js';

/** The runner's DDL handler for `config.schemaChanges` (accepted DDL positions from FLOE_ACCEPT_DDL unless given). */
export function createSchemaChangeHandler(config: FloeConfig, runtime: () => SchemaChangeRuntime | undefined, acceptDdl?: readonly string[]): DdlHandler {
  return new SchemaChangeHandler({ policy: config.schemaChanges, config, runtime, ...(acceptDdl ? { acceptDdl } : {}) });
}

interface SchemaChangeOptions {
  readonly policy: FloeConfig['schemaChanges'];
  /** DDL positions (GTID or file:position) an operator reviewed: applied as under `evolve`. */
  readonly acceptDdl?: readonly string[];
  readonly config: FloeConfig;
  /** The runner's extra capabilities (undefined before the source runs). */
  readonly runtime: () => SchemaChangeRuntime | undefined;
}

interface DdlAnalysis {
  readonly statement?: DdlStatement;
  readonly parseError?: unknown;
  /** Effects on captured tables that change a schema or rows (no-schema-effect ones left out). */
  readonly effects: readonly TableEffect[];
  /** 'db.table' of every captured table the statement changes. */
  readonly tables: readonly string[];
}

/** Parses a DDL event and computes its effects on the captured tables. */
function analyzeDdl(event: DdlEvent, tables: ReadonlyMap<string, TableSchema>, flavor: 'mysql' | 'mariadb', isCaptured: (t: TableRef) => boolean): DdlAnalysis {
  let statement: DdlStatement;
  try {
    statement = parseDdl(event.statement, event.database);
  } catch (e) {
    const touched = capturedTablesIn(event.statement, event.database, new Set(tables.keys()));
    return { parseError: e, effects: [], tables: touched };
  }
  const all = applyDdl(statement, { flavor, tables, isCaptured, statement: event.statement });
  // an ALTER that names columns stays even when the definition already shows it (a replay): the
  // lake copy may still lag and is reconciled against the statement's columns
  const effects = all.filter((e) => e.kind !== 'no-schema-effect' && !(e.kind === 'alter' && e.changes.length === 0 && e.mentioned.length === 0 && !e.primaryKeyChanged && !e.renamedTo && e.unsupported.length === 0));
  const keys = new Set<string>();
  for (const e of effects) {
    if (e.kind === 'rename') keys.add(`${e.from.database}.${e.from.table}`);
    else keys.add(`${e.table.database}.${e.table.table}`);
  }
  return { statement, effects, tables: [...keys] };
}

/** Whether an operator accepted this DDL: its GTID, `file:position`, or the whole position text. */
function isAccepted(event: DdlEvent, accepted: readonly string[]): boolean {
  if (accepted.length === 0) return false;
  const text = ddlPositionText(event);
  const forms = new Set([text, `${event.position.file}:${event.position.commitPosition}`, ...(event.gtid ? [event.gtid, `gtid ${event.gtid}`] : [])]);
  return accepted.some((a) => forms.has(a.trim()));
}

/** `FLOE_ACCEPT_DDL`: comma-separated positions. */
function acceptedFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.FLOE_ACCEPT_DDL ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

class SchemaChangeHandler implements DdlHandler {
  private readonly accepted: readonly string[];

  constructor(private readonly options: SchemaChangeOptions) {
    this.accepted = options.acceptDdl ?? acceptedFromEnv();
  }

  applies(event: DdlEvent): boolean {
    return this.options.policy === 'evolve' || isAccepted(event, this.accepted);
  }

  async onDdl(event: DdlEvent, ctx: DdlContext): Promise<DdlOutcome> {
    const rt = this.options.runtime();
    const config = this.options.config;
    const definitions = new Map<string, TableSchema>();
    for (const [key, m] of rt?.source.tables ?? []) if (ctx.capturedTables.has(key)) definitions.set(key, m.schema);
    const source = config.source;
    const matcher = source ? tableMatcher({ include: source.include, exclude: source.exclude }) : () => false;
    const analysis = analyzeDdl(event, definitions, rt?.source.flavor ?? 'mysql', matcher);
    const where = ddlPositionText(event);
    const text = abbreviate(event.statement);

    if (analysis.parseError !== undefined) {
      if (analysis.tables.length === 0) {
        ctx.logger.debug('DDL not understood; it names no captured table', { statement: text, position: where, err: errorMessage(analysis.parseError) });
        return { action: 'ignore' };
      }
      if (this.options.policy === 'stop' && !isAccepted(event, this.accepted)) return this.stop(event, ctx, analysis.tables);
      return this.refuse(event, ctx, analysis.tables, `floe cannot parse it (${errorMessage(analysis.parseError)}) and it names captured table ${analysis.tables.join(', ')}`);
    }
    if (analysis.effects.length === 0) {
      ctx.logger.debug('DDL without effect on captured tables', { statement: text, position: where });
      if (rt && FOREIGN_KEY_DDL.test(event.statement)) return this.replanCascades(rt, ctx);
      return { action: 'ignore' };
    }

    const policy = isAccepted(event, this.accepted) ? 'evolve' : this.options.policy;
    if (policy === 'stop') return this.stop(event, ctx, analysis.tables);
    if (policy === 'fail') {
      return this.refuse(event, ctx, analysis.tables, 'schemaChanges is fail', 'To continue, restart with schemaChanges: evolve (or FLOE_ACCEPT_DDL naming this position) to apply it, or re-snapshot the table (drop its Iceberg table)');
    }
    if (!rt) {
      return this.refuse(event, ctx, analysis.tables, 'the runner did not provide what applying schema changes needs (internal: SchemaChangeRuntime)');
    }
    try {
      return await applyEvolve(event, analysis.effects, { ctx, rt, config, refuse: (tables, reason) => this.refuse(event, ctx, tables, reason) });
    } catch (e) {
      return this.refuse(event, ctx, analysis.tables, errorMessage(e));
    }
  }

  /**
   * A foreign key was added or dropped (no schema effect): the cascades floe reproduces are planned
   * again, and a child table whose FK columns to index changed gets a new writer — after the rows
   * of the old constraints are committed — so a later synthetic delete finds its rows indexed.
   */
  private async replanCascades(rt: SchemaChangeRuntime, ctx: DdlContext): Promise<DdlOutcome> {
    const before = writerCascadeShapes(rt.source.cascades);
    const plan = await rt.source.replanCascades();
    const after = writerCascadeShapes(plan);
    for (const w of plan.warnings) ctx.logger.warn(`foreign keys: ${w}`);
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter((k) => before.get(k) !== after.get(k) && ctx.capturedTables.has(k));
    if (changed.length === 0) return { action: 'ignore' };
    await ctx.checkpoint();
    for (const key of changed) {
      const mapped = rt.source.tables.get(key);
      if (mapped) await ctx.refreshTable(mapped.schema.id, mapped);
    }
    ctx.logger.info('ON DELETE CASCADE constraints changed', { tables: changed.join(', ') });
    return { action: 'applied', tables: changed };
  }

  private stop(event: DdlEvent, ctx: DdlContext, tables: readonly string[]): DdlOutcome {
    ctx.logger.warn('stopping before a DDL statement (schemaChanges: stop); everything before it is committed', {
      statement: abbreviate(event.statement),
      position: ddlPositionText(event),
      tables: tables.join(', '),
      resume: `review the change, then restart with schemaChanges: evolve, or with FLOE_ACCEPT_DDL="${event.gtid ?? `${event.position.file}:${event.position.commitPosition}`}" to apply just this statement`,
    });
    return { action: 'stop', table: tables[0] };
  }

  private refuse(event: DdlEvent, ctx: DdlContext, tables: readonly string[], reason: string, todo?: string): DdlOutcome {
    const position = ddlPositionText(event);
    for (const table of tables) ctx.notifier.notify({ type: 'schema-change-refused', table, statement: abbreviate(event.statement), position, reason });
    return {
      action: 'fail',
      error: new FloeError(
        SUBSYSTEM,
        'unsupported',
        `DDL on captured table ${tables.join(', ')} at ${position}: ${abbreviate(event.statement)} — not applied: ${reason}; everything before it is committed${todo ? `. ${todo}` : ''}`,
      ),
    };
  }
}

const FOREIGN_KEY_DDL = /\b(foreign\s+key|references|drop\s+constraint)\b/i;

/** Child table → its cascade FK column sets, as one comparable text. */
/** Per table, what its writer is opened with for cascades: the FK column sets it matches on, the columns it reports. */
function writerCascadeShapes(plan: CascadePlan): Map<string, string> {
  const sets = new Map<string, string[]>();
  const add = (table: TableId, what: string) => {
    const key = `${table.database}.${table.table}`;
    const list = sets.get(key) ?? [];
    list.push(what);
    sets.set(key, list);
  };
  for (const r of [...plan.rules, ...plan.keyRules]) add(r.child, `match ${r.childColumns.map((c) => c.toLowerCase()).join(',')}`);
  for (const r of plan.keyRules) add(r.parent, `carry ${r.parentColumns.map((c) => c.toLowerCase()).join(',')}`);
  return new Map([...sets].map(([k, v]) => [k, [...new Set(v)].sort().join('|')]));
}

function abbreviate(statement: string, max = 500): string {
  const one = statement.replace(/\s+/g, ' ').trim();
  return one.length > max ? one.slice(0, max - 1) + '…' : one;
}
