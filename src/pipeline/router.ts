/**
 * Routing source events to table writers: snapshot chunks and binlog transactions become writer row
 * changes (projected to the Iceberg schema, column transforms applied), buffered in each table's
 * current checkpoint, and each table's working progress (state.ts) follows what was buffered.
 *
 * Writer modes (a `TableChangeWriter` has one per checkpoint, so the two kinds of writes of one table
 * never share a checkpoint — the checkpointer commits before a switch, which in practice happens once,
 * at the hand-over, when every chunk is done and the first transaction arrives):
 * - snapshot chunks → `append-only`: the chunk's keys cannot be in the table yet (its rows are only
 *   ever committed once, together with the chunk's "finished" mark, and binlog changes of its keys
 *   come after every chunk) — no equality deletes for millions of rows that cannot exist. A keyed table
 *   that already holds rows without this job's progress (made by someone else, or by a job with
 *   another id) is snapshotted in `upsert` mode instead, so nothing is duplicated.
 * - transactions → `upsert` (keyed tables) or `append` (tables without a primary key).
 *
 * Replays after a restart: a table skips the transactions at or before its own committed offset
 * (`skipUntil`, compared per transaction with `isAfter`), because the source reads from the lowest
 * offset any table needs. Beyond it every change is applied.
 */
import type { RowChange as WriterChange } from '../iceberg/writer/index.js';
import type { SnapshotPlanEvent, SnapshotRowsEvent, TransactionEvent } from '../source/mysql/index.js';
import { isAfter, serializeOffset } from '../source/mysql/index.js';
import { tableKey } from '../source/mysql/index.js';
import { FloeError } from '../util/errors.js';
import type { Checkpointer } from './checkpoint.js';
import type { PipelineTable } from './tables/pipeline-table.js';
import { cascadeWriterChange } from './cascade.js';
import { KeyCascades, keyCascadeChanges } from './key-cascades.js';
import type { CascadePlan } from '../source/mysql/index.js';
import type { Metrics } from './observe/metrics.js';
import type { ProgressReporter } from './observe/progress.js';

export class Router {
  private keyCascades: KeyCascades | undefined;
  /** Tables whose key cascades could not be followed (warned once each). */
  private readonly unfollowed = new Set<string>();

  constructor(
    /** The captured tables (tables/captured-tables.ts `byKey`). */
    private readonly tables: ReadonlyMap<string, PipelineTable>,
    private readonly checkpointer: Checkpointer,
    private readonly metrics: Metrics | undefined,
    private readonly progress: ProgressReporter | undefined,
    /** The source's cascade plan now (it changes with foreign-key DDL), and where warnings go. */
    private readonly cascades: { plan: () => CascadePlan | undefined; warn: (message: string) => void } = { plan: () => undefined, warn: () => {} },
  ) {}

  /** The key cascades of the current plan (key-cascades.ts); undefined when there are none. */
  private keyed(): KeyCascades | undefined {
    const plan = this.cascades.plan();
    if (!plan || plan.keyRules.length === 0) return undefined;
    if (this.keyCascades?.plan !== plan) this.keyCascades = new KeyCascades(plan);
    return this.keyCascades;
  }

  /** Tables that must commit before table `key` in a checkpoint (key-cascades.ts). */
  commitFirst(key: string): string[] {
    return this.keyed()?.commitFirst(key) ?? [];
  }

  /** Whether `e` removes rows whose key cascades must be followed (routed in order, between commits). */
  private followsKeys(e: TransactionEvent, keyed: KeyCascades | undefined): boolean {
    return keyed !== undefined && e.changes.some((c) => c.op === 'delete-matching' && keyed.isParent(tableKey(c.table)));
  }

  /** A table's chunk plan: the start of its snapshot progress (a resumed plan is already there). */
  plan(e: SnapshotPlanEvent): PipelineTable | undefined {
    const t = this.tables.get(tableKey(e.table));
    if (!t || e.chunks.length === 0) return undefined;
    if (!t.working?.snapshot) t.working = { phase: 'snapshot', snapshot: { chunks: e.chunks.map((x) => x.range), finished: new Map(), rows: 0 } };
    return t;
  }

  /** A finished chunk: its rows are buffered and it is marked finished in the table's progress. */
  async snapshotRows(e: SnapshotRowsEvent): Promise<PipelineTable | undefined> {
    const t = this.tables.get(tableKey(e.table));
    if (!t) return undefined;
    if (!t.working?.snapshot) throw new FloeError('pipeline', 'internal', `chunk ${e.chunk.id} arrived before the plan of ${t.key}: expected the source's snapshot-plan event first`);
    await this.checkpointer.ensureModes([[t, t.snapshotMode]]);
    // read after the mode switch: a checkpoint it made records where the plan object went
    const snapshot = t.working!.snapshot!;
    const changes: WriterChange[] = new Array(e.rows.length);
    for (let i = 0; i < e.rows.length; i++) changes[i] = { op: 'insert', after: t.project(e.rows[i]!) };
    await this.checkpointer.write(t, changes);
    this.checkpointer.chunkWritten();
    const finished = new Map(snapshot.finished);
    finished.set(e.chunk.id, serializeOffset(e.highWatermark));
    t.working = { ...t.working!, snapshot: { chunks: snapshot.chunks, finished, rows: snapshot.rows + e.rows.length, planLocation: snapshot.planLocation } };
    this.metrics?.rowsWritten(t.key, 'snapshot', e.rows.length);
    this.progress?.rowsCopied(t.key, e.rows.length);
    return t;
  }

  /**
   * Whether `e` may be routed while a checkpoint commits (read-ahead.ts): every table it changes is
   * streaming, writes in its streaming mode already (a mode switch is a checkpoint of its own), and
   * takes writes now (checkpoint.ts `writable`).
   */
  routableDuringCommit(e: TransactionEvent): boolean {
    if (this.followsKeys(e, this.keyed())) return false;
    let last: TransactionEvent['changes'][number]['table'] | undefined;
    for (const change of e.changes) {
      if (change.table === last) continue; // consecutive changes of one table share its TableRef
      last = change.table;
      const t = this.tables.get(tableKey(change.table));
      if (!t) continue;
      if (t.working?.phase !== 'streaming' || t.committer.mode !== t.streamMode || !this.checkpointer.writable(t)) return false;
    }
    return true;
  }

  /** A whole transaction: its changes per table, minus what each table already holds. */
  async transaction(e: TransactionEvent): Promise<void> {
    const keyed = this.keyed();
    let byTable = new Map<PipelineTable, WriterChange[]>();
    // consecutive changes of one table share its TableRef: its key ('db.table', a new string to
    // hash each time) is made once per run of them, not once per change
    let lastRef: TransactionEvent['changes'][number]['table'] | undefined;
    let lastTable: PipelineTable | undefined;
    const inOrder = this.followsKeys(e, keyed);
    // every table the transaction may write, key cascades included, in its streaming mode before the
    // first write: a mode switch is a checkpoint, which must not fall inside the transaction
    if (inOrder) await this.checkpointer.ensureModes(this.reached(e, keyed!).map((t) => [t, t.streamMode] as const));
    for (const change of e.changes) {
      if (change.table !== lastRef) {
        lastRef = change.table;
        lastTable = this.tables.get(tableKey(lastRef));
      }
      const t = lastTable;
      if (!t) continue;
      if (t.skipUntil) {
        if (!isAfter(change.position, t.skipUntil)) continue;
        t.skipUntil = undefined; // the stream is in order: everything from here on is new
      }
      if (change.op === 'delete-matching') {
        // ON DELETE CASCADE child rows the binlog does not carry (source cascade.ts, pipeline/cascade.ts)
        const dm = cascadeWriterChange(change, t.project, t.sourceColumns);
        if (inOrder && keyed!.isParent(t.key)) {
          // the rows it removes cascade on by their keys: what came before is written first
          await this.writeAll(byTable);
          byTable = new Map();
          await this.removeAndFollow(t, [dm], change.position, keyed!, 0);
          continue;
        }
        let list = byTable.get(t);
        if (!list) byTable.set(t, (list = []));
        list.push(dm);
        continue;
      }
      let list = byTable.get(t);
      if (!list) byTable.set(t, (list = []));
      list.push(toWriterChange(t, change));
    }
    await this.writeAll(byTable);
    this.checkpointer.advance(e.offset, e.timestampMs);
  }

  private async writeAll(byTable: Map<PipelineTable, WriterChange[]>): Promise<void> {
    if (byTable.size === 0) return;
    await this.checkpointer.ensureModes([...byTable.keys()].map((t) => [t, t.streamMode] as const));
    for (const [t, changes] of byTable) {
      await this.checkpointer.write(t, changes);
      this.metrics?.binlogEvents(t.key, changes.length);
      this.metrics?.rowsWritten(t.key, 'streaming', changes.reduce((n, c) => n + (c.op === 'insert' || c.op === 'update' ? 1 : 0), 0));
    }
  }

  /**
   * Matching deletes of `t` whose removed rows cascade on by key (key-cascades.ts): the rows they
   * remove become matching deletes of the tables referencing `t`'s key, written at once, level by
   * level (MySQL stops at 15 levels).
   */
  private async removeAndFollow(t: PipelineTable, deletes: WriterChange[], position: Position, keyed: KeyCascades, depth: number): Promise<void> {
    await this.checkpointer.ensureModes([[t, t.streamMode]]);
    const parent = keyed.isParent(t.key);
    const follow = parent && depth < 16 && (await t.committer.reportCascadeRemovals());
    if (parent && !follow) {
      this.unfollowable(t.key, depth >= 16 ? `its cascades run more than 16 levels deep (MySQL stops at 15)` : `${t.key} is not a format-v3 table with its key or row index and foreign-key indexes, so the rows a cascade removes from it cannot be named`);
    }
    await this.checkpointer.write(t, deletes);
    this.metrics?.binlogEvents(t.key, deletes.length);
    const removed = follow ? await t.committer.takeCascadeRemovals() : undefined;
    if (!removed || removed.rows.length === 0) return;
    for (const rule of keyed.rulesOf(t.key)) {
      const child = this.tables.get(tableKey(rule.child));
      if (!child) continue;
      if (child.skipUntil) {
        if (!isAfter(position, child.skipUntil)) continue; // the child holds this position already
        child.skipUntil = undefined;
      }
      const changes = keyCascadeChanges(rule, removed, t, child);
      if (typeof changes === 'string') this.unfollowable(t.key, changes);
      else if (changes.length > 0) await this.removeAndFollow(child, changes, position, keyed, depth + 1);
    }
  }

  /** The tables `e` changes, and those its key cascades may reach. */
  private reached(e: TransactionEvent, keyed: KeyCascades): PipelineTable[] {
    const keys = new Set(e.changes.map((c) => tableKey(c.table)));
    for (const k of keys) for (const r of keyed.rulesOf(k)) keys.add(tableKey(r.child));
    return [...keys].flatMap((k) => this.tables.get(k) ?? []);
  }

  private unfollowable(key: string, why: string): void {
    if (this.unfollowed.has(key)) return;
    this.unfollowed.add(key);
    const children = [...new Set(this.keyed()?.rulesOf(key).map((r) => tableKey(r.child)))].join(', ');
    this.cascades.warn(`pipeline.cascade: ON DELETE CASCADE from ${key} to ${children} is not reproduced: ${why}; ${children} will keep orphaned rows in the lake when a cascade removes ${key} rows (use format v3 with iceberg.upsertDeletes deletion-vectors, and no column transform on these keys)`);
  }
}

/** A change's place in the binlog. */
type Position = TransactionEvent['changes'][number]['position'];

function toWriterChange(t: PipelineTable, change: TransactionEvent['changes'][number] & { op: 'insert' | 'update' | 'delete' }): WriterChange {
  const { op } = change;
  const before = op === 'insert' ? undefined : t.project(change.before!);
  const after = op === 'delete' ? undefined : t.project(change.after!);
  // an identity projection (no column reordered, dropped or transformed): the source change is the
  // writer's change as it is — op, before and after mean the same — with no object made per change
  if (before === change.before && after === change.after) return change;
  switch (op) {
    case 'insert':
      return { op, after: after! };
    case 'update':
      return { op, before: before!, after: after! };
    case 'delete':
      return { op, before: before! };
  }
}
