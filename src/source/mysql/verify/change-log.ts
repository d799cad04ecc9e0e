/**
 * The binlog of one table while `floe verify` checks it: a reader of its own (its own replica server
 * id, never floe run's) that follows the table's row changes from the lake's committed offset on, and
 * keeps them in memory with their positions, so that verification can tell
 *
 * - whether a chunk changed between its read on the server and the offset of the lake it is compared
 *   with (then its checksums are not comparable, and it is compared row by row), and
 * - how to bring a chunk's rows from their read point to the lake's offset (window-apply.ts).
 *
 * The table's synthetic ON DELETE CASCADE deletes come with it (its parents' deletes are read too,
 * cascade.ts), decoded with full before images (a change undone needs its before image). The caller
 * trims what no pending comparison needs; more than `maxChanges` kept is an error (the lake is too
 * far behind, or the table too busy, for one verification to hold its changes).
 */
import { errorMessage, FloeError } from '../../../util/errors.js';
import type { MysqlConnectionConfig } from '../client.js';
import type { ServerDialect } from '../dialect.js';
import type { TableRef, TransactionChange } from '../events.js';
import { compareOffsets, formatOffset, isAfter, type BinlogOffset, type ServerIdentity } from '../offset/offset.js';
import { BinlogReader } from '../binlog/binlog-reader.js';
import { MappedTablesDecoding } from '../binlog/binlog-decoding.js';
import { CascadeExpander } from '../binlog/cascade.js';
import type { CascadeRule } from '../schema/foreign-keys.js';
import { tableKey } from '../schema/table-schema.js';
import type { MappedTable } from '../schema/type-mapping.js';

const SUBSYSTEM = 'source.mysql.verify';

export interface ChangeLogOptions {
  readonly connection: MysqlConnectionConfig;
  readonly dialect: ServerDialect;
  readonly identity: ServerIdentity;
  readonly table: MappedTable;
  /** Every captured table's mapping (the parents whose deletes cascade into `table` among them). */
  readonly captured: ReadonlyMap<string, MappedTable>;
  /** The ON DELETE CASCADE rules among the captured tables (foreign-keys.ts `planCascades`). */
  readonly cascades: readonly CascadeRule[];
  /**
   * Tables whose deletes may remove rows of `table` through key cascades (foreign-keys.ts
   * `keyCascadeTriggers`): each such delete is kept as a cascade of unknown rows (no columns).
   */
  readonly keyTriggers?: readonly { readonly trigger: TableRef; readonly via: readonly string[] }[];
  readonly serverId: number;
  /** Where to start: the lake's committed offset (changes at or before it are not kept). */
  readonly start: BinlogOffset;
  /** Heartbeat period asked of the server: how soon an idle binlog's end is known (default 500 ms). */
  readonly heartbeatMs?: number;
  /** Changes kept at most (default 2,000,000). */
  readonly maxChanges?: number;
}

/** One change of the table, as logged (or synthesized for a cascade), in binlog order. */
export type LoggedChange = TransactionChange;

export class TableChangeLog {
  private readonly reader: BinlogReader;
  private kept: LoggedChange[] = [];
  private reachedOffset: BinlogOffset;
  private failure: unknown;
  private schemaChange: string | undefined;
  private waiters: (() => void)[] = [];
  private readonly done: Promise<void>;
  private closed = false;
  private readonly key: string;
  private readonly keyTriggers: ReadonlyMap<string, readonly string[]>;

  constructor(private readonly options: ChangeLogOptions) {
    const table = options.table;
    this.key = tableKey(table.schema.id);
    const rules = options.cascades.filter((r) => tableKey(r.child) === this.key);
    const triggers = new Map([...rules.map((r) => [tableKey(r.trigger), r.trigger] as const), ...(options.keyTriggers ?? []).map((t) => [tableKey(t.trigger), t.trigger] as const)]);
    this.keyTriggers = new Map((options.keyTriggers ?? []).map((t) => [tableKey(t.trigger), t.via]));
    triggers.delete(this.key);
    const decoding = new MappedTablesDecoding([table, ...[...triggers.keys()].flatMap((k) => (options.captured.has(k) ? [options.captured.get(k)!] : []))]);
    decoding.beforeImages = 'full';
    if (rules.length > 0) decoding.cascades = new CascadeExpander(rules, (k) => (k === this.key ? table : options.captured.get(k)));
    this.reachedOffset = options.start;
    this.reader = new BinlogReader({
      connection: options.connection,
      serverId: options.serverId,
      start: { kind: 'offset', offset: options.start },
      tables: [table.schema.id, ...triggers.values()],
      ddlDatabases: [table.schema.id.database],
      decoding,
      dialect: options.dialect,
      heartbeatMs: options.heartbeatMs ?? 500,
      progressIntervalMs: 100,
    });
    this.done = this.follow();
  }

  private async follow(): Promise<void> {
    const max = this.options.maxChanges ?? 2_000_000;
    try {
      for await (const e of this.reader) {
        if (e.kind === 'transaction') {
          for (const c of e.changes) {
            if (tableKey(c.table) === this.key) this.kept.push(c);
            const via = c.op === 'delete' && !c.noForeignKeyChecks ? this.keyTriggers.get(tableKey(c.table)) : undefined;
            // rows a key cascade removed: which ones, only the lake knows (window-apply.ts refuses to place them)
            if (via) this.kept.push({ table: this.options.table.schema.id, op: 'delete-matching', columns: [], values: [], position: c.position, cause: { table: c.table, constraints: via } });
          }
          if (this.kept.length > max) {
            throw new FloeError(
              SUBSYSTEM,
              'unsupported',
              `table ${this.key}: more than ${max} changes between the lake's offset and the verification's reads; let floe run catch up (or verify when the table is quieter) and verify again`,
            );
          }
        } else if (e.kind === 'ddl' && mentions(e.statement, this.options.table.schema.id)) {
          this.schemaChange ??= e.statement.slice(0, 200);
        }
        if (e.offset) this.reachedOffset = e.offset;
        this.wake();
      }
    } catch (e) {
      if (!this.closed) this.failure = e;
    } finally {
      this.wake();
    }
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** The offset the log has read up to: every change of the table at or before it is kept (unless trimmed). */
  get reached(): BinlogOffset {
    return this.reachedOffset;
  }

  /** A DDL statement on the table met in the binlog (the comparison's definition may be stale), if any. */
  get ddl(): string | undefined {
    return this.schemaChange;
  }

  /** Waits until the log has read past `offset` (at most `timeoutMs`). */
  async until(offset: BinlogOffset, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.failure !== undefined) throw this.wrapped();
      if (compareOffsets(this.reachedOffset, offset) >= 0) return;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new FloeError(SUBSYSTEM, 'source', `table ${this.key}: the verification's binlog reader reached ${formatOffset(this.reachedOffset)} but not ${formatOffset(offset)} within ${Math.round(timeoutMs / 1000)} s; the server is slow to send its binlog — verify again`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 1000));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private wrapped(): FloeError {
    const e = this.failure;
    if (e instanceof FloeError) return e;
    return new FloeError(SUBSYSTEM, 'source', `table ${this.key}: the verification's binlog reader failed: ${errorMessage(e)}`, { cause: e });
  }

  /** The changes kept, in binlog order (do not modify). */
  get changes(): readonly LoggedChange[] {
    return this.kept;
  }

  /** Drops the changes at or before `offset` (no comparison needs them any more). */
  trimThrough(offset: BinlogOffset): void {
    let n = 0;
    while (n < this.kept.length && !isAfter(this.kept[n]!.position, offset)) n++;
    if (n > 0) this.kept = this.kept.slice(n);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.reader.close().catch(() => {});
    await this.done;
  }
}

/** Whether a DDL statement names the table (a cheap textual test: the statement is not parsed). */
function mentions(statement: string, id: TableRef): boolean {
  const s = statement.toLowerCase();
  return s.includes(id.table.toLowerCase());
}
