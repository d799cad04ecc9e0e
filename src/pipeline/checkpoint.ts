/**
 * The checkpoint coordinator: the pipeline's unit of durability (docs/design.md §4). Changes routed to
 * tables are buffered by one `TableCommitter` per table (src/iceberg/checkpoint/table-committer.ts); a
 * checkpoint commits, for every table that needs it, ONE Iceberg snapshot stamped with the job id, the
 * checkpoint id and that table's own progress (`floe.source-offset`, state.ts). One committer per
 * table, because each table's stamp is its own: its phase, its chunks, its offset.
 *
 * Every decision about WHEN and WHETHER a table commits is made here, and only here — the committers
 * have no policy (they commit what they are asked to, replay-safe): the checkpoint interval and the
 * buffered-changes ceiling (`due`), the writer modes (`ensureModes`), whether a table has changes
 * buffered (its committer counts them: `bufferedChanges`), and the idle counting
 * (`checkpointsSinceCommit`, `lastCommitMs`) below.
 *
 * Writes go on while a checkpoint commits, so that reading the binlog never waits for the lake: the checkpoint takes every committing
 * table's buffered changes out at its start, synchronously (`TableCommitter.detach`), so that what
 * the runner routes meanwhile (`writableDuringCommit`) goes to the next checkpoint, and its counts
 * (the committer's `bufferedChanges`, `buffered` here) survive the commit.
 *
 * When: the runner asks `due()` between source events — i.e. always at a transaction boundary (the
 * source hands out whole transactions), and also when no event came for as long as `msUntilDue`
 * says — and checkpoints `commit.intervalMs` after the start of the checkpoint before, or early when
 * the stream catches up after a backlog (checkpoint-cadence.ts), when the changes buffered pass
 * `commit.maxBufferedChanges`, when a table's writer must change mode, at the hand-over, before a
 * DDL, and at a clean stop.
 *
 * Ids: increase per job. A restart continues at (highest `floe.max-committed-checkpoint-id` over every
 * table) + 1, so an id is never re-used, even for tables that a crash left one checkpoint behind.
 *
 * What each table's stamp says, at a checkpoint whose source position is C (the offset after the last
 * transaction / progress mark routed): a table in the snapshot phase records its chunk progress; a
 * streaming table records offset C — unless it is still skipping transactions it already holds
 * (its committed offset is beyond C after a restart that reads from a lower table's offset): then its
 * offset stays, and it is not committed at all.
 *
 * Which tables commit: those with buffered changes, those whose progress changed (chunks finished,
 * phase switched), and idle streaming tables whose offset advanced — these at most every
 * `idleCheckpoints` checkpoints or when their last commit is `idleMaxMs` old, and at a clean stop —
 * so that a quiet table's offset advances too and a restart does not read a long (perhaps purged)
 * stretch of binlog. That empty commit is the committer's stamps-only snapshot (a commit with nothing
 * buffered).
 */
import type { RowChange, WriteMode } from '../iceberg/writer/index.js';
import { compareOffsets, serializeOffset, type BinlogOffset } from '../source/mysql/index.js';
import { FloeError } from '../util/errors.js';
import type { Logger } from './observe/logger.js';
import type { Metrics } from './observe/metrics.js';
import type { TableProgress } from './state.js';
import { CheckpointCadence, type SourceEventKind } from './checkpoint-cadence.js';
import { commitOrder } from './commit-order.js';
import { waitBesideCommits } from './beside-commits.js';
import { commitTableCheckpoint, finishedAt, progressThrough, type CheckpointTable, type CommittedTable, type TableCheckpointContext, type TableCommitKind } from './table-checkpoint.js';

export type { CheckpointTable } from './table-checkpoint.js';

const SUBSYSTEM = 'pipeline.checkpoint';

export interface CheckpointOptions {
  readonly intervalMs: number;
  readonly maxBufferedChanges: number;
  readonly idleCheckpoints: number;
  readonly idleMaxMs: number;
  /** Tables committed at the same time. */
  readonly concurrency: number;
  /** Checkpoint as soon as the stream goes quiet after a backlog (module header). */
  readonly whenCaughtUp: boolean;
  /** Checkpoint early when the buffered changes opened this many data files (module header). */
  readonly maxOpenFiles: number;
}

export interface CheckpointReport {
  readonly checkpointId: bigint;
  readonly reason: string;
  readonly committed: readonly CommittedTable[];
}

export class Checkpointer {
  private nextId: bigint;
  private buffered = 0;
  /** Data files the buffered changes opened (one per partition a table's changes touch). */
  private openFiles = 0;
  /** Snapshot chunks buffered, and whether one of this run was committed yet (`due`). */
  private chunksBuffered = 0;
  private chunkCommitted = false;
  /** The interval and the catching up (checkpoint-cadence.ts). */
  private readonly cadence: CheckpointCadence;
  /** The source position everything routed so far reaches (C), and its commit time. */
  private position: BinlogOffset | undefined;
  private positionTimeMs: number | undefined;
  /** The tables of the checkpoint being committed (undefined between checkpoints). */
  private committing: Set<CheckpointTable> | undefined;
  /** Settles when the checkpoint committing now ends (undefined: none is). */
  private committed: Promise<void> | undefined;

  constructor(
    /** The captured tables (tables/captured-tables.ts `byKey`: the one map, which tables join and leave). */
    readonly tables: ReadonlyMap<string, CheckpointTable>,
    firstCheckpointId: bigint,
    private readonly options: CheckpointOptions,
    private readonly logger: Logger,
    private readonly metrics: Metrics | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.nextId = firstCheckpointId;
    this.cadence = new CheckpointCadence(options, now);
  }

  /**
   * During the source's catch-up pass (source-stream.ts `changedDefinitions`): every checkpoint commits
   * every table, and a table still in its snapshot records its finished chunks as standing at the
   * position reached (their keys' changes up to it are routed). So when a DDL is applied in the
   * pass — after the checkpoint before it — no table's progress lies before the DDL any more, and a
   * restart never reads rows of the old layout with the definition the DDL recorded
   * (source-schema-record.ts).
   */
  catchingUp = false;

  get sourcePosition(): BinlogOffset | undefined {
    return this.position;
  }

  /** Everything routed so far reaches `offset` (a transaction boundary); `timestampMs` = its commit time. */
  advance(offset: BinlogOffset, timestampMs?: number): void {
    this.position = offset;
    if (timestampMs !== undefined) this.positionTimeMs = timestampMs;
  }

  /**
   * At a clean end of the run, everything committed: each table's memory key index is saved to the
   * state directory for the next start (table-committer.ts `saveKeyIndex`). A cache: a table whose
   * index cannot be saved is only warned about (the next start builds it from the lake).
   */
  async saveKeyIndexes(): Promise<void> {
    for (const t of this.tables.values()) {
      try {
        if (await t.committer.saveKeyIndex()) this.logger.debug('key index saved for the next start', { table: t.key });
      } catch (e) {
        this.logger.warn('could not save the key index for the next start (it is built from the lake then)', { table: t.key, err: e });
      }
    }
  }

  /** Closes the tables' key indexes (disk ones stay on disk for the next run). */
  close(): void {
    for (const t of this.tables.values()) t.committer.close();
  }

  /**
   * Makes each table's writer take its mode. A writer has one mode: a table that buffered changes in
   * another mode gets them committed first — by ONE checkpoint before anything of the caller's event
   * is written, so that a checkpoint never holds part of a transaction.
   */
  async ensureModes(wanted: readonly (readonly [CheckpointTable, WriteMode])[]): Promise<void> {
    const switching = wanted.filter(([t, mode]) => t.committer.mode !== mode);
    if (switching.length === 0) return;
    const busy = switching.find(([t]) => t.committer.bufferedChanges > 0);
    if (busy) await this.checkpoint(`${busy[0].key} switches from ${busy[0].committer.mode} to ${busy[1]} writes`);
    for (const [t, mode] of switching) {
      await t.committer.open({ ...t.writerOptions(), mode });
    }
  }

  /** Buffers changes of one table (its mode set with `ensureModes`). */
  async write(table: CheckpointTable, changes: readonly RowChange[]): Promise<void> {
    if (changes.length === 0) return;
    const files = table.committer.bufferedDataFiles;
    await table.committer.write(changes);
    this.buffered += changes.length;
    this.openFiles += table.committer.bufferedDataFiles - files;
  }

  /** A snapshot chunk's rows were written (`write`): the first of a run is committed at once (`due`). */
  chunkWritten(): void {
    this.chunksBuffered++;
  }

  /** Whether the changes buffered reached `commit.maxBufferedChanges` (the memory bound). */
  get full(): boolean {
    return this.buffered >= this.options.maxBufferedChanges;
  }

  /**
   * Whether changes of `table` may be written now: always between checkpoints; while one commits,
   * when the table's committer takes them (table-committer.ts `writableDuringCommit`) — a table
   * the checkpoint does not commit takes them as ever.
   */
  writable(table: CheckpointTable): boolean {
    return !this.committing || !this.committing.has(table) || table.committer.writableDuringCommit;
  }

  /**
   * While changes are buffered: the milliseconds until the interval, counted from the start of the
   * checkpoint before, makes a checkpoint due (0: due already). The runner waits for the next source event at most this long, so the last changes
   * before a silence are committed one interval after the checkpoint before them — not at the next
   * event, which in a silence is the server's next heartbeat (`source.heartbeatMs`, or never for a
   * long period). Undefined with nothing buffered: an idle table's offset-only commit waits for events.
   */
  msUntilDue(): number | undefined {
    return this.buffered === 0 ? undefined : this.cadence.msUntilDue();
  }

  /**
   * The runner took a source event after sitting idle `quietMs` for it (idle-wait.ts). A binlog
   * event (a transaction, a DDL, a progress mark) after a quiet spell starts a stretch of changes;
   * anything of the snapshot phase ends it (checkpoint-cadence.ts). Events routed while a checkpoint
   * commits (read-ahead.ts) are not seen here: a stretch runs on across a commit.
   */
  sourceEvent(event: SourceEventKind, quietMs: number): void {
    this.cadence.sourceEvent(event, quietMs);
  }

  /**
   * No event came within `msUntilDue`, the runner idle `quietMs` of it: why the checkpoint it makes
   * due is due — the stream caught up after a backlog, or the interval ran out in a silence — or
   * undefined when none is (the wait for a quiet spell was spent busy, not idle: wait again).
   */
  dueAfterSilence(quietMs: number): string | undefined {
    return this.cadence.dueAfterSilence(quietMs);
  }

  /** See beside-commits.ts: when a piece of work beside the commits may start. */
  async pieceMayStart(pieceMs = 0): Promise<void> {
    await waitBesideCommits({ inFlight: () => this.committed, untilDue: () => (this.buffered > 0 ? this.cadence.msUntilDue() : Infinity) }, pieceMs);
  }

  /** Why a checkpoint is due now, or undefined. */
  due(): string | undefined {
    if (this.buffered >= this.options.maxBufferedChanges) return `${this.buffered} buffered changes`;
    if (this.openFiles >= this.options.maxOpenFiles) return `${this.openFiles} data files open`;
    if (this.chunksBuffered > 0 && !this.chunkCommitted) return 'the first chunks of the run';
    if (this.cadence.intervalPassed) return 'interval';
    return undefined;
  }

  /**
   * Commits every table that needs it (see the module header). `flushIdle` commits every table whose
   * offset advanced (a clean stop). Throws on any commit failure: the run must stop and restart from
   * what the tables hold.
   */
  async checkpoint(reason: string, options: { flushIdle?: boolean } = {}): Promise<CheckpointReport> {
    if (this.committing) throw new FloeError(SUBSYSTEM, 'internal', `checkpoint (${reason}) asked for while checkpoint ${this.nextId - 1n} commits; only transactions are routed meanwhile (Router.routableDuringCommit)`);
    const id = this.nextId;
    const now = this.now();
    const work: { table: CheckpointTable; progress: TableProgress }[] = [];
    for (const table of this.tables.values()) {
      const progress = this.progressAt(table);
      if (progress && this.needsCommit(table, progress, now, (options.flushIdle ?? false) || this.catchingUp)) work.push({ table, progress });
      else table.checkpointsSinceCommit++;
    }
    const committed: CommittedTable[] = [];
    const bufferedAtStart = this.buffered;
    const openFilesAtStart = this.openFiles;
    const chunksAtStart = this.chunksBuffered;
    if (work.length > 0) {
      this.nextId++;
      // Every committing table's changes are taken out now, before the first await: a change routed
      // while the commits run belongs to the next checkpoint (module header). A table that never had
      // a writer opens one in commitTable, and takes no writes before it is committed.
      for (const { table } of work) if (table.committer.mode !== undefined) table.committer.detach();
      this.committing = new Set(work.map((w) => w.table));
      const order = commitOrder(work, this.commitFirst);
      const commits = new Map<string, Promise<CommittedTable>>();
      let next = 0;
      let failed = false;
      const worker = async () => {
        while (next < order.length && !failed) {
          const item = order[next++]!;
          const commit = this.commitAfter(id, item, commits);
          commits.set(item.table.key, commit);
          try {
            committed.push(await commit);
          } catch (e) {
            failed = true;
            throw e;
          }
        }
      };
      let ended!: () => void;
      this.committed = new Promise<void>((resolve) => (ended = resolve));
      // allSettled: never leave a commit running behind the caller's back when another one failed.
      const results = await Promise.allSettled(Array.from({ length: Math.min(this.options.concurrency, work.length) }, worker));
      this.committing = undefined;
      this.committed = undefined;
      ended();
      const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failure) throw failure.reason;
      this.logger.debug('checkpoint committed', { checkpoint: id.toString(), reason, tables: committed.length, ms: Math.round(this.now() - now) });
    }
    // what was written while the commits ran stays buffered
    this.buffered -= bufferedAtStart;
    this.openFiles -= openFilesAtStart;
    this.chunksBuffered -= chunksAtStart;
    if (chunksAtStart > 0) this.chunkCommitted = true;
    this.cadence.checkpointStarted(now);
    return { checkpointId: id, reason, committed };
  }

  /**
   * Tables that must commit before table `key` in a checkpoint, when both commit in it (key-cascades.ts:
   * a grandchild before the child whose removed rows it follows, so a crash between the two commits
   * leaves the child behind, never ahead).
   */
  commitFirst: (key: string) => readonly string[] = () => [];

  /** `item`'s commit, once the commits it must follow (`commitFirst`, started already) have landed. */
  private async commitAfter(id: bigint, item: { table: CheckpointTable; progress: TableProgress }, commits: ReadonlyMap<string, Promise<CommittedTable>>): Promise<CommittedTable> {
    const before = this.commitFirst(item.table.key).flatMap((k) => commits.get(k) ?? []);
    if ((await Promise.allSettled(before)).some((r) => r.status === 'rejected')) {
      throw new FloeError(SUBSYSTEM, 'internal', `${item.table.key} is not committed in checkpoint ${id}: a table whose commit must come first failed`);
    }
    return commitTableCheckpoint(this.commitContext(), id, item.table, item.progress);
  }

  /**
   * A DDL applied to the Iceberg table of `key` (schema-change-apply.ts): the schema change (or, for
   * TRUNCATE, the emptying of the table) and the table's progress through the DDL at `offset` — its
   * rows before the DDL committed already (the caller's checkpoint), the DDL itself applied — in ONE
   * commit. So whenever floe dies afterwards, the definition the lake records for the table is the
   * one in force at the table's offset (docs/design.md §3, "A schema change has a position"): no
   * restart decodes a row logged before the DDL with the definition after it — also not the rows a
   * restart reads again although the table was never committed for them (the hand-over filter
   * dropped them: a later chunk holds them).
   */
  async commitSchemaChange(key: string, offset: BinlogOffset, how: TableCommitKind): Promise<CheckpointReport> {
    const table = this.tableForDdl(key);
    const progress = progressThrough(table.working, offset);
    if (!progress) throw new FloeError(SUBSYSTEM, 'internal', `schema change of ${key}: the table has no progress to record yet (no chunk plan, no offset)`);
    const report = await this.commitOne(table, progress, how, `schema change of ${key}`);
    // the DDL lies after any offset the table was still skipping to: what follows it is new
    table.skipUntil = undefined;
    return report;
  }

  /**
   * Empties the table of `key` and records that it has copied nothing yet (a snapshot without chunks),
   * in one commit: its rows are copied again from the start by the next run (tables/prepared-tables.ts: a
   * table without a past). For a table whose snapshot a DDL straddles, or a new MySQL table that
   * takes the name of an earlier one whose rows the lake table holds.
   */
  async startOver(key: string, why: string): Promise<CheckpointReport> {
    return this.commitOne(this.tableForDdl(key), { phase: 'snapshot', snapshot: { chunks: [], finished: new Map(), rows: 0 } }, { truncate: true }, why);
  }

  private tableForDdl(key: string): CheckpointTable {
    const table = this.tables.get(key);
    if (!table) throw new FloeError(SUBSYSTEM, 'internal', `DDL commit of ${key}: expected a captured table, found none`);
    if (this.committing || table.committer.bufferedChanges > 0) throw new FloeError(SUBSYSTEM, 'internal', `DDL commit of ${key}: expected its rows before the DDL committed, found ${table.committer.bufferedChanges} buffered${this.committing ? ' and a checkpoint committing' : ''}`);
    return table;
  }

  private async commitOne(table: CheckpointTable, progress: TableProgress, how: TableCommitKind, reason: string): Promise<CheckpointReport> {
    const id = this.nextId++;
    const committed = await commitTableCheckpoint(this.commitContext(), id, table, progress, how);
    return { checkpointId: id, reason, committed: [committed] };
  }

  /** The progress a commit of `table` would record now (undefined: nothing to record yet). */
  private progressAt(table: CheckpointTable): TableProgress | undefined {
    const p = table.working;
    if (p && p.phase === 'snapshot' && p.snapshot && this.catchingUp && this.position) return { ...p, snapshot: finishedAt(p.snapshot, this.position) };
    if (!p || p.phase !== 'streaming' || !this.position) return p;
    if (table.skipUntil) {
      if (compareOffsets(this.position, table.skipUntil) < 0) return p;
      table.skipUntil = undefined;
    }
    return { ...p, offset: this.position };
  }

  private needsCommit(table: CheckpointTable, progress: TableProgress, now: number, flushIdle: boolean): boolean {
    if (table.committer.bufferedChanges > 0) return true;
    const before = table.committed;
    if (!before || before.phase !== progress.phase) return true;
    if (progress.snapshot !== before.snapshot) return true;
    const offsetMoved = progress.offset !== undefined && (before.offset === undefined || serializeOffset(progress.offset) !== serializeOffset(before.offset));
    if (!offsetMoved) return false;
    return flushIdle || table.checkpointsSinceCommit + 1 >= this.options.idleCheckpoints || now - table.lastCommitMs >= this.options.idleMaxMs;
  }

  private commitContext(): TableCheckpointContext {
    return { logger: this.logger, metrics: this.metrics, now: this.now, positionTimeMs: this.positionTimeMs };
  }

  /** Drops every buffered change (their files were never committed). */
  async abort(): Promise<void> {
    for (const t of this.tables.values()) {
      try {
        await t.committer.abort();
      } catch (e) {
        this.logger.warn('could not remove the files of an abandoned checkpoint', { table: t.key, err: e });
      }
    }
  }
}
