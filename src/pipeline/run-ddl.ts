/**
 * A DDL event in a run: which captured tables it concerns (ddl-relation.ts: only tables whose data
 * in the lake is from before the statement take it), whether it brings a new table into the capture
 * (the session restarts with it), and otherwise the schema-change policy's outcome (schema-change.ts
 * through ddl-handler.ts) — each turned into what the run does next: go on, start over from the lake,
 * stop before the DDL, or fail.
 */
import type { FloeConfig } from '../config/schema.js';
import { tableKey, tableMatcher, type DdlEvent, type MappedTable, type TableRef } from '../source/mysql/index.js';
import type { Checkpointer } from './checkpoint.js';
import { capturedTablesIn, ddlPositionText, newTablesIn, type DdlContext, type DdlHandler } from './ddl-handler.js';
import { ddlRelation } from './ddl-relation.js';
import type { Logger } from './observe/logger.js';
import type { Notifier } from './observe/notifications.js';
import type { SessionEnd } from './run-end.js';
import type { RunNotifications } from './run-notifications.js';

/** What of the run a DDL event acts on. */
export interface DdlRun {
  readonly config: FloeConfig;
  readonly checkpointer: Checkpointer;
  readonly ddl: DdlHandler;
  readonly logger: Logger;
  readonly notifier: Notifier;
  readonly notes: RunNotifications;
  commit(reason: string, options?: { flushIdle?: boolean }): Promise<void>;
  closeSource(): Promise<void>;
  /** After the handler evolved the table's Iceberg schema (runner.ts `refreshTable`). */
  refreshTable(table: TableRef, mapped?: MappedTable): Promise<void>;
}

export async function takeDdl(e: DdlEvent, run: DdlRun): Promise<SessionEnd | undefined> {
  const { checkpointer, ddl, notes } = run;
  // Only tables whose data in the lake is from before the statement take it (ddl-relation.ts); a
  // table whose snapshot it straddles is copied again from the start, by a new run.
  // Under `stop` and `fail` a table the statement straddles is reported like any other.
  const relations = new Map([...checkpointer.tables.values()].map((t) => [t.key, ddlRelation(t, e.position)]));
  const straddled = new Set([...relations].filter(([, r]) => r === 'straddles').map(([k]) => k));
  const captured = new Set([...relations].filter(([k, r]) => r === 'applies' || (r === 'straddles' && !ddl.applies(e))).map(([k]) => k));
  const straddling = ddl.applies(e) ? capturedTablesIn(e.statement, e.database, straddled) : [];
  if (straddling.length > 0) {
    await run.commit('before a DDL');
    for (const key of straddling) notes.committed(await checkpointer.startOver(key, `${key}: a DDL its snapshot straddles`));
    return { again: `${straddling.join(', ')}: the statement at ${ddlPositionText(e)} came while their snapshot was read (some chunks before it, some after); they are copied again from the start` };
  }
  const source = run.config.source!;
  const joining = newTablesIn(e, new Set(checkpointer.tables.keys()), tableMatcher({ include: source.include, exclude: source.exclude }));
  if (joining.length > 0) {
    // The statement changes no captured table: pass it, commit every table at this point, and
    // start a session that snapshots the new table(s).
    checkpointer.advance(e.offset, e.timestampMs);
    await run.commit('a new table joins', { flushIdle: true });
    return { restart: joining };
  }
  const ctx: DdlContext = {
    config: run.config,
    capturedTables: captured,
    knownTables: new Set(relations.keys()),
    logger: run.logger,
    notifier: run.notifier,
    checkpoint: async () => {
      await run.commit('before a DDL');
    },
    commitThroughDdl: async (table, how) => {
      notes.committed(await checkpointer.commitSchemaChange(tableKey(table), e.offset, how));
    },
    refreshTable: (table, mapped) => run.refreshTable(table, mapped),
  };
  const outcome = await ddl.onDdl(e, ctx);
  switch (outcome.action) {
    case 'ignore':
    case 'applied':
      checkpointer.advance(e.offset, e.timestampMs);
      return undefined;
    case 'restart':
      // the statement is applied (a captured table renamed): everything stands after it, and the
      // next run captures the tables under their new names
      checkpointer.advance(e.offset, e.timestampMs);
      await run.commit('after a DDL that renames a captured table', { flushIdle: true });
      return { again: outcome.why };
    case 'stop': {
      // Everything before the DDL, committed; the DDL itself not passed (its offset is not recorded).
      await run.commit('stop before a DDL', { flushIdle: true });
      await run.closeSource();
      return { reason: 'ddl-stop', ddl: { statement: e.statement, position: ddlPositionText(e) } };
    }
    case 'fail':
      await run.commit('before a refused DDL', { flushIdle: true });
      throw outcome.error;
  }
}
