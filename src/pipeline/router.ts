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
import type { Metrics } from './observe/metrics.js';
import type { ProgressReporter } from './observe/progress.js';

export class Router {
  constructor(
    /** The captured tables (tables/captured-tables.ts `byKey`). */
    private readonly tables: ReadonlyMap<string, PipelineTable>,
    private readonly checkpointer: Checkpointer,
    private readonly metrics: Metrics | undefined,
    private readonly progress: ProgressReporter | undefined,
  ) {}

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
    const byTable = new Map<PipelineTable, WriterChange[]>();
    // consecutive changes of one table share its TableRef: its key ('db.table', a new string to
    // hash each time) is made once per run of them, not once per change
    let lastRef: TransactionEvent['changes'][number]['table'] | undefined;
    let lastTable: PipelineTable | undefined;
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
        let list = byTable.get(t);
        if (!list) byTable.set(t, (list = []));
        list.push(cascadeWriterChange(change, t.project, t.sourceColumns));
        continue;
      }
      let list = byTable.get(t);
      if (!list) byTable.set(t, (list = []));
      list.push(toWriterChange(t, change));
    }
    if (byTable.size > 0) {
      await this.checkpointer.ensureModes([...byTable.keys()].map((t) => [t, t.streamMode] as const));
      for (const [t, changes] of byTable) {
        await this.checkpointer.write(t, changes);
        this.metrics?.binlogEvents(t.key, changes.length);
        this.metrics?.rowsWritten(t.key, 'streaming', changes.reduce((n, c) => n + (c.op === 'insert' || c.op === 'update' ? 1 : 0), 0));
      }
    }
    this.checkpointer.advance(e.offset, e.timestampMs);
  }
}

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
