/**
 * `SourceStream`: one stream of the MySQL/MariaDB source, as the pipeline uses it (an opened
 * source's `events(session)`, opened-source.ts). One ordered async stream (contract: events.ts):
 * chunk plans → a catch-up pass when needed → chunk rows with their high watermarks, in parallel →
 * hand-over (binlog from the lowest high watermark, filtered per chunk) → streaming (transactions,
 * DDL, progress) forever. The phases are hybrid-phases.ts; this class holds what they share and what
 * the pipeline changes while the stream runs: the tables' mappings and their decoding (`remap` after
 * a DDL, `forget`), the ON DELETE CASCADE plan, and the binlog reader that is open.
 *
 * Resume: the caller persists what the stream tells it — each table's `snapshot-plan` (serialized
 * chunks), each finished chunk's high watermark, and the `offset` of the last transaction it
 * committed — and passes them back as `SourceResume`. With an offset and every chunk finished the
 * source streams from the offset (still filtering by chunk high watermarks until past the highest);
 * otherwise it reads the unfinished chunks and hands over from the lowest high watermark. Events
 * between the persisted offset and what the caller had really applied are delivered again
 * (at-least-once across a crash; upserts absorb them).
 */
import { FloeError } from '../../util/errors.js';
import type { MysqlClient } from './client.js';
import type { ServerDialect } from './dialect.js';
import type { SourceEvent, TableRef } from './events.js';
import type { HandoverTable } from './snapshot/handover.js';
import type { ServerIdentity } from './offset/offset.js';
import { captureTableSchemas, tableKey, type TableId, type TableSchema } from './schema/table-schema.js';
import { mapTable, type MappedTable } from './schema/type-mapping.js';
import { prewarmBinlogWorker } from './binlog/worker-session.js';
import { BinlogReader } from './binlog/binlog-reader.js';
import { MappedTablesDecoding } from './binlog/binlog-decoding.js';
import { CascadeExpander } from './binlog/cascade.js';
import { discoverForeignKeys, planCascades, type CascadePlan } from './schema/foreign-keys.js';
import { catchUp, finishedMarks, handOverTables, planChunks, readChunks, stream, type PhaseContext } from './hybrid-phases.js';
import type { MySqlSourceOptions, SourceControl } from './source-options.js';

export type { MySqlSourceOptions, SourceControl, SourceResume } from './source-options.js';

const SUBSYSTEM = 'source.mysql';

export class SourceStream {
  private control: MysqlClient | undefined;
  private dialect: ServerDialect | undefined;
  private identity: ServerIdentity | undefined;
  private current: BinlogReader | undefined;
  /** Table mappings used to decode binlog rows; the pipeline replaces one after a DDL (`remap`). */
  readonly decoding: MappedTablesDecoding;
  /** The stream's tables ("db.table"): their mappings are the decoding's. */
  private readonly keys: Set<string>;
  private cascadePlan: CascadePlan = { rules: [], keyRules: [], warnings: [] };

  /**
   * One stream of an opened source (opened-source.ts `events`): `options.tables` are the tables it
   * captures, `shared` is the opened source's control connection, which the opened source closes (a
   * session only ends its own readers), and `captured` the opened source's map of its tables'
   * mappings, which the stream keeps as it decodes (a DDL's new mapping, a table forgotten).
   */
  constructor(
    private readonly options: Omit<MySqlSourceOptions, 'tables'> & { readonly tables: readonly TableId[] },
    private readonly shared: SourceControl,
    captured: Map<string, MappedTable> = new Map(),
  ) {
    this.decoding = new MappedTablesDecoding([], captured);
    this.keys = new Set(options.tables.map(tableKey));
  }

  /** The control connection and what was read on it (after `events()` has started). */
  private get controlled(): { client: MysqlClient; identity: ServerIdentity } {
    return { client: this.control!, identity: this.identity! };
  }

  /**
   * Replaces a table's mapping (after the pipeline applied a DDL); later rows decode with it. With
   * `definition` (the table as the DDL left it, ddl-apply.ts) that definition is used; without, the
   * server's current one (information_schema), which may already include later DDL.
   */
  async remap(table: TableRef, definition?: TableSchema): Promise<MappedTable> {
    if (definition) {
      const mapped = mapTable(definition, this.options.typeMapping);
      this.decoding.set(mapped, { verify: true });
      return mapped;
    }
    const client = this.control!;
    const schemas = await captureTableSchemas(client, [table], this.dialect!.flavor);
    const schema = schemas.get(tableKey(table));
    if (!schema) {
      this.forget(table);
      throw new FloeError(SUBSYSTEM, 'not-found', `table ${tableKey(table)} no longer exists: expected it after the DDL; stop capturing it`);
    }
    const mapped = mapTable(schema, this.options.typeMapping);
    this.decoding.set(mapped);
    return mapped;
  }

  /**
   * The ON DELETE CASCADE constraints floe reproduces among the captured tables, and warnings for the
   * foreign keys it cannot (after `events()` has started; also logged then).
   */
  get cascades(): CascadePlan {
    return this.cascadePlan;
  }

  /** Re-reads the foreign keys of the captured tables (after a DDL that may have changed them). */
  async replanCascades(): Promise<CascadePlan> {
    if (this.options.cascadeDeletes === false || !this.control) return this.cascadePlan;
    const tables = this.tables;
    const fks = await discoverForeignKeys(this.control, [...new Set([...tables.values()].map((m) => m.schema.id.database))]);
    const plan = planCascades(fks, tables);
    this.cascadePlan = plan;
    this.decoding.cascades = plan.rules.length > 0 ? new CascadeExpander(plan.rules, (key) => this.decoding.mappingOf(key)) : undefined;
    return plan;
  }

  /** The server flavor (after `events()` has started). */
  get flavor(): ServerDialect['flavor'] | undefined {
    return this.dialect?.flavor;
  }

  /** Reads tables' current definitions from the server (information_schema). */
  async captureSchemas(tables: readonly TableRef[]): Promise<Map<string, TableSchema>> {
    return captureTableSchemas(this.control!, tables, this.dialect!.flavor);
  }

  /** Stops decoding a table's rows (it was dropped or renamed away). */
  forget(table: TableRef): void {
    this.decoding.delete(table);
    this.keys.delete(tableKey(table));
  }

  /** The stream's tables and the mappings they are decoded with now (after `events()` has started). */
  get tables(): ReadonlyMap<string, MappedTable> {
    const out = new Map<string, MappedTable>();
    for (const key of this.keys) {
      const m = this.decoding.mappingOf(key);
      if (m) out.set(key, m);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.current?.close();
    this.control = undefined;
  }

  async *events(): AsyncGenerator<SourceEvent> {
    // the streaming reader's worker thread loads its modules meanwhile (its start-up is off the critical path)
    if (this.options.binlogThread === 'worker') prewarmBinlogWorker();
    const o = this.options;
    this.decoding.beforeImages = o.beforeImages ?? 'full';
    try {
      this.control = this.shared.client;
      this.dialect = this.shared.dialect;
      this.identity = this.shared.identity;
      const tables = await this.mapTables();
      for (const [key, offset] of o.decodeAfter ?? []) this.decoding.skipThrough(key, offset);
      if (o.cascadeDeletes !== false) {
        const plan = await this.replanCascades();
        for (const w of plan.warnings) o.log?.(`foreign keys: ${w}`);
      }
      const ctx = this.phaseContext();
      const resume = o.resume ?? {};
      let from = resume.offset;
      let handover: HandoverTable[] = [];
      if (o.snapshot?.enabled !== false) {
        let snapshotTables = yield* planChunks(ctx, tables, resume);
        const marks = finishedMarks(snapshotTables, resume);
        const changed = snapshotTables.filter((t) => o.changedDefinitions?.has(tableKey(t.table.schema.id)) && marks.hw.get(tableKey(t.table.schema.id))!.size < t.chunks.length);
        if (marks.done < marks.total && changed.length > 0) {
          const caughtUp = yield* catchUp(ctx, snapshotTables, marks, resume.offset, changed.map((t) => tableKey(t.table.schema.id)));
          from = caughtUp.offset;
          snapshotTables = caughtUp.tables;
        }
        if (marks.done < marks.total) yield* readChunks(ctx, snapshotTables, marks, new Set(Object.keys(resume.finished ?? {})));
        handover = handOverTables(ctx, snapshotTables, marks);
      }
      yield* stream(ctx, handover, from);
    } finally {
      await this.close();
    }
  }

  /**
   * The stream's tables with the mappings it decodes with: the ones given (options `mapped`: where a
   * DDL made while floe was stopped is still ahead), else the opened source's, else the server's
   * current definition.
   */
  private async mapTables(): Promise<MappedTable[]> {
    const o = this.options;
    const known = (key: string) => o.mapped?.get(key) ?? this.decoding.mappingOf(key);
    const schemas = await captureTableSchemas(this.control!, o.tables.filter((id) => !known(tableKey(id))), this.dialect!.flavor);
    for (const id of o.tables) {
      const key = tableKey(id);
      const s = schemas.get(key);
      const m = known(key) ?? (s && mapTable(s, o.typeMapping));
      if (!m) throw new FloeError(SUBSYSTEM, 'not-found', `table ${key} not found: expected a base table readable by the source user`);
      this.decoding.set(m);
    }
    return [...this.tables.values()];
  }

  /** What the stream's phases (hybrid-phases.ts) read and drive. */
  private phaseContext(): PhaseContext {
    const o = this.options;
    return {
      options: o,
      control: this.shared,
      decoding: this.decoding,
      mappingOf: (key) => this.decoding.mappingOf(key),
      cascadeTriggers: (table) => this.cascadePlan.rules.filter((r) => tableKey(r.child) === tableKey(table)).map((r) => r.trigger),
      readAfter: (table) => this.cascadePlan.keyRules.filter((r) => tableKey(r.child) === tableKey(table)).map((r) => r.parent),
      openReader: (start) =>
        (this.current = new BinlogReader({
          connection: o.connection,
          serverId: o.serverIdBase,
          start,
          tables: [...this.tables.values()].map((m) => m.schema.id),
          decoding: this.decoding,
          dialect: this.shared.dialect,
          control: this.controlled,
          heartbeatMs: o.heartbeatMs,
          ...(o.binlogThread ? { thread: o.binlogThread } : {}),
          log: o.log,
        })),
      closeReader: async () => {
        await this.current?.close();
        this.current = undefined;
      },
    };
  }
}
