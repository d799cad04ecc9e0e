/**
 * The pipeline runner: MySQL → Iceberg for one job, crash-safe.
 *
 *   start    open the MySQL side once (`openMySqlSource`: one control connection, dialect, server
 *            identity, the captured tables discovered and mapped); their Iceberg tables, each
 *            table's committed progress, the binlogs still on the server and the resume plan
 *            (run-start.ts)
 *   source   one stream of the opened source (`events`): chunk plans and rows (tables still to
 *            snapshot), hand-over, then transactions / DDL / progress marks forever
 *   route    rows and changes → per-table writers (router.ts), progress per table follows
 *   commit   checkpoints (checkpoint.ts): interval, size bound, mode switch, hand-over, DDL, stop
 *
 * Modes: `run` snapshots what needs it (per `source.snapshot.mode`: initial / never / schema-only),
 * then streams until `signal` aborts — it then commits what it routed, closes the source and returns
 * 'stopped'. `snapshot` stops at the hand-over, after committing every chunk: 'snapshot-complete'.
 * A DDL that creates a table matching the include patterns restarts the source in process with that
 * table added: it is snapshotted, then every table streams on from its committed offset. Any other
 * DDL goes to the schema-change policy (run-ddl.ts; schema-change.ts through ddl-handler.ts):
 * ignored, applied, 'ddl-stop' (everything before it committed) or a failure; the phase events
 * (snapshot, catch-up, hand-over, streaming) to run-phase.ts. Any error returns 'failed' after closing
 * everything; nothing uncommitted is trusted on restart — the tables are the only state (if in doubt,
 * stop: a restart resumes).
 *
 * Notifications: run-notifications.ts; scheduled maintenance: run-maintenance.ts. Metrics: rows,
 * binlog events, reader lag, per-table lag, commit durations, files and bytes.
 */
import type { Catalog } from '../iceberg/metadata/catalog.js';
import { openCatalog } from '../catalog/factory.js';
import type { FloeConfig } from '../config/schema.js';
import type { ParquetEncoderFactory } from '../iceberg/parquet/encoder.js';
import type { KeyColumnReader } from '../iceberg/keyindex/index.js';
import { openMySqlSource, serializeOffset, tableKey, type MappedTable, type OpenedMySqlSource } from '../source/mysql/index.js';
import type { DdlEvent, JobLock, SourceStream, PhaseEvent, SourceEvent, SourceResume, TableRef } from '../source/mysql/index.js';
import { FloeError } from '../util/errors.js';
import { Checkpointer } from './checkpoint.js';
import { cadenceEventOf } from './checkpoint-cadence.js';
import { ReadAhead, TIMED_OUT } from './read-ahead.js';
import type { Logger } from './observe/logger.js';
import type { Metrics } from './observe/metrics.js';
import type { Notifier } from './observe/notifications.js';
import type { ProgressReporter } from './observe/progress.js';
import { Router } from './router.js';
import { withPurgedTables } from './purged-binlog-check.js';
import { takeJobLock } from './job-lock.js';
import { checkpointOptions, sourceConfig } from './config-options.js';
import type { DdlHandler } from './ddl-handler.js';
import { announceSnapshotRows, prepareTables } from './tables/prepared-tables.js';
import { CapturedTables } from './tables/captured-tables.js';
import { createSchemaChangeHandler } from './schema-change/schema-change.js';
import { planResume } from './resume-plan.js';
import { snapshotComplete } from './state.js';
import { RunMaintenance } from './run-maintenance.js';
import { RunNotifications } from './run-notifications.js';
import { nextOrStop, settleWithin, STOP } from './stream-stop.js';
import { idleWait } from './idle-wait.js';
import type { RunEnd, RunResult, SessionEnd } from './run-end.js';
import { takeDdl } from './run-ddl.js';
import { takePhase } from './run-phase.js';
import { planRunStart } from './run-start.js';

export type { RunResult } from './run-end.js';

export interface RunOptions {
  mode: 'run' | 'snapshot';
  signal: AbortSignal;
  notifications: Notifier;
  metrics?: Metrics;
  progress?: ProgressReporter;
  logger: Logger;
  /**
   * How Parquet files are encoded (default: parquet-wasm on this thread); the CLI passes the worker
   * pool (src/iceberg/parquet/worker-encoder.ts), which only cli/ and io/ may import (Node-only).
   */
  parquetEncoder?: ParquetEncoderFactory;
  /**
   * Where the key columns of integer keys are decoded when a key index is built from the lake
   * (default: this thread); the CLI passes the worker-thread reader (keyindex/worker-key-column.ts).
   */
  keyColumnReader?: KeyColumnReader;
}

export async function runPipeline(config: FloeConfig, options: RunOptions): Promise<RunResult> {
  try {
    for (;;) {
      const run = new PipelineRun(config, options);
      let end: RunEnd;
      try {
        end = await run.execute();
        // a clean end, everything committed: the key indexes are kept for the next start
        if ('reason' in end) await run.saveKeyIndexes();
      } catch (error) {
        await run.abandon();
        return { reason: 'failed', error };
      } finally {
        await run.close();
      }
      if ('reason' in end) return end;
      if (options.signal.aborted) return { reason: 'stopped' };
      options.logger.info('starting again from the lake', { why: end.again });
    }
  } finally {
    options.progress?.stop();
  }
}

class PipelineRun {
  private readonly logger: Logger;
  /** The MySQL side, opened once for the run; each source session is one stream of it. */
  private mysql: OpenedMySqlSource | undefined;
  private catalog: Catalog | undefined;
  /** The job lock (job-lock.ts): one writer per job — a second floe run, or floe verify --repair, is refused. */
  private lock: JobLock | undefined;
  private source: SourceStream | undefined;
  private checkpointer: Checkpointer | undefined;
  private router: Router | undefined;
  private tables: CapturedTables | undefined;
  private readonly ddl: DdlHandler;
  private readonly notes: RunNotifications;
  private readonly maintenance: RunMaintenance;

  constructor(
    private readonly config: FloeConfig,
    private readonly options: RunOptions,
  ) {
    this.logger = options.logger;
    this.notes = new RunNotifications(options.notifications, options.progress);
    this.maintenance = new RunMaintenance(config, this.logger, options.metrics, options.parquetEncoder);
    this.ddl = createSchemaChangeHandler(config, () =>
      this.source && this.catalog && this.tables
        ? {
            source: this.source,
            catalog: this.catalog,
            icebergIdentifier: (key) => this.tables!.byKey.get(key)?.prepared.mapping.identifier,
            dropTable: (key) => this.tables!.remove(key),
          }
        : undefined,
    );
  }

  async execute(): Promise<RunEnd> {
    const config = this.config;
    const source = config.source;
    if (!source) throw new FloeError('config', 'config', 'source: missing; configure the MySQL source (url or host/port/user/password)');
    const logger = this.logger;

    // ---- start: tables, their Iceberg tables and where each stands ----------------------------
    const settings = sourceConfig(source, (m) => logger.debug(m, { component: 'source' }), (m) => logger.warn(m, { component: 'source' }));
    this.lock = await takeJobLock(config, settings.connection, 'floe run');
    const mysql = (this.mysql = await openMySqlSource(settings));
    const catalog = (this.catalog = await openCatalog(config, { warn: (message) => logger.warn(message, { catalog: config.catalog.name }) }));
    const { prepared, firstId, fresh, streamFrom, resume, skipUntil } = await planRunStart(config, mysql, catalog, logger);
    const resumeFrom = resume.offset ? serializeOffset(resume.offset) : undefined;
    logger.info('pipeline starting', { job: config.job.id, mode: this.options.mode, tables: prepared.length, checkpoint: firstId.toString(), resumeFrom });

    // ---- wiring ------------------------------------------------------------------------------
    const tables = (this.tables = new CapturedTables({ config, catalog, logger, cascades: () => this.source?.cascades, parquetEncoder: this.options.parquetEncoder, keyColumnReader: this.options.keyColumnReader }));
    const checkpointer = (this.checkpointer = new Checkpointer(tables.byKey, firstId, checkpointOptions(config), logger, this.options.metrics));
    if (resume.offset) checkpointer.advance(resume.offset);
    this.router = new Router(tables.byKey, checkpointer, this.options.metrics, this.options.progress, { plan: () => this.source?.cascades, warn: (m) => logger.warn(m) });
    checkpointer.commitFirst = (key) => this.router!.commitFirst(key);
    for (const t of prepared) tables.add(t, t.progress ?? (streamFrom ? { phase: 'streaming', offset: streamFrom } : undefined), skipUntil.get(t.key));
    // Tables that stream without a snapshot record their start offset at once, so that a restart
    // starts from the same point (a 'latest' resolved again later would skip what came between).
    if (fresh.length > 0 && streamFrom) await this.commit('start offsets of tables without a snapshot');
    if (this.options.progress) await announceSnapshotRows(mysql, prepared, this.options.progress, source.snapshot.mode === 'initial');

    // ---- sessions of the source: one, unless a new table joins --------------------------------
    let next: SourceResume = resume;
    for (;;) {
      let end: SessionEnd;
      try {
        end = await this.session(next);
      } catch (e) {
        // a start the server refused as purged (GTIDs after a failover, or a purge while floe ran behind): name the tables
        const standing = [...checkpointer.tables.values()].map((t) => ({ key: t.key, identifier: t.identifier, location: t.location, progress: t.committed }));
        throw withPurgedTables(e, standing, config.catalog.type);
      }
      if (!('restart' in end)) return end;
      const captured = await this.capture(end.restart);
      if ('again' in captured) return captured;
      next = captured;
    }
  }

  /** One source stream, until the run ends or a new table must join. */
  private async session(resume: SourceResume): Promise<SessionEnd> {
    const src = (this.source = this.mysql!.events({ ...this.tables!.sourceSession(), resume }));
    const events = src.events()[Symbol.asyncIterator]();
    const ahead = new ReadAhead(events);
    let first = true;
    try {
      for (;;) {
        // with changes buffered, the wait for the next event ends when the interval makes a checkpoint due
        const wait = this.checkpointer!.msUntilDue() ?? this.maintenance.msUntilStep();
        // the source's silence is the time this thread sat idle for it (idle-wait.ts), not the wall time
        const { value: next, idleMs: quietMs } = await idleWait(() => nextOrStop(() => ahead.nextWithin(wait), this.options.signal));
        if (next === TIMED_OUT) {
          // nothing buffered: only a maintenance round resting (msUntilStep) was waited for
          if (this.checkpointer!.msUntilDue() === undefined) await ahead.during(this.maintain(ahead));
          else {
            const why = this.checkpointer!.dueAfterSilence(quietMs);
            if (why) await this.checkpointDue(ahead, why);
          }
          continue;
        }
        if (next === STOP) {
          const end = await this.stop();
          // End the source stream too: a snapshot in progress holds reader connections (and backfill
          // binlog sessions) that only its generator's cleanup closes — left open, they keep the
          // process alive after a clean stop. The pending read finishes first (one chunk at most).
          await settleWithin(events.return?.(undefined), 10_000, () => this.logger.warn('the source did not end within 10 s of the stop; its connections close when the process exits'));
          return end;
        }
        if (next.done) throw new FloeError('pipeline', 'source', 'the MySQL source stream ended unexpectedly; restart floe (it resumes from the committed offsets)');
        const kind = cadenceEventOf(next.value);
        if (kind) this.checkpointer!.sourceEvent(kind, quietMs);
        if (first) {
          first = false;
          // foreign keys floe cannot reproduce (ON DELETE SET NULL, ON UPDATE CASCADE, …): pre-flight warnings
          for (const w of src.cascades.warnings) this.logger.warn(`foreign keys: ${w}`);
        }
        const end = await this.handle(next.value);
        if (end) {
          if ('restart' in end) {
            await src.close();
            await events.return?.(undefined);
          }
          return end;
        }
        const why = this.checkpointer!.due();
        if (why) await this.checkpointDue(ahead, why);
      }
    } catch (e) {
      // A failure (a checkpoint that could not be written, a full disk, a DDL that could not be
      // applied) must end the source stream as a stop does: a snapshot chunk being read holds a
      // reader connection that only the generator's cleanup closes, and it would keep the process
      // alive after `floe run` reported the failure.
      await settleWithin(events.return?.(undefined), 10_000, () => this.logger.warn('the source did not end within 10 s of the failure; its connections close when the process exits'));
      throw e;
    }
  }

  /**
   * A checkpoint the interval or the buffered changes made due, with maintenance steps after it when
   * due. While it commits, the next transactions go into the next one (routeDuringCommit); with
   * maintenance they are only read and held: a key index follows floe's compaction only with nothing
   * buffered (table-committer.ts followMaintenance).
   */
  private async checkpointDue(ahead: ReadAhead, why: string): Promise<void> {
    const maintains = this.maintenance.due;
    const work = this.commit(why).then(() => (maintains ? this.maintain(ahead) : undefined));
    await ahead.during(work, maintains ? undefined : (e) => this.routeDuringCommit(e));
  }

  private maintain(ahead: ReadAhead): Promise<void> {
    return this.maintenance.runIfDue(this.catalog!, this.checkpointer!.tables.values(), () => ahead.holdsChanges, (pieceMs) => this.checkpointer!.pieceMayStart(pieceMs));
  }

  /**
   * New tables join: they are created in the lake and snapshotted by the next session, which reads
   * the binlog from the offset every table has just committed (the caller flushed them all).
   */
  private async capture(refs: readonly TableRef[]): Promise<SourceResume | { again: string }> {
    const { config, logger } = this;
    const added = await prepareTables(config, await this.mysql!.capture(refs), this.catalog!, logger);
    // A lake table that holds this job's progress although its MySQL table only joins now (created,
    // or renamed into the include patterns, after everything the lake holds of it): it holds an
    // earlier MySQL table of that name. The new one starts over in it — emptied, copied from the
    // start by the next run (its old rows stay in the table's history).
    const earlier = added.filter((t) => t.progress);
    for (const t of added) {
      this.tables!.add(t, t.progress, undefined);
      if (!t.progress) logger.info('new table captured: snapshotting it while the other tables wait at their offsets', { table: t.key });
    }
    if (earlier.length > 0) {
      for (const t of earlier) this.notes.committed(await this.checkpointer!.startOver(t.key, `${t.key}: a new MySQL table of the name of an earlier one`));
      return { again: `${earlier.map((t) => t.key).join(', ')}: created in MySQL while their lake tables hold an earlier table of that name; emptied, they are copied again from the start` };
    }
    const checkpointer = this.checkpointer!;
    const { resume, skipUntil } = planResume([...checkpointer.tables.values()].map((t) => ({ key: t.key, progress: t.committed })));
    for (const t of checkpointer.tables.values()) t.skipUntil = skipUntil.get(t.key);
    if (this.options.progress) await announceSnapshotRows(this.mysql!, added, this.options.progress, true);
    return resume;
  }

  /**
   * An event taken while a checkpoint commits: a transaction every table of which takes writes now
   * (router.ts `routableDuringCommit`), within the memory bound, is routed — into the next
   * checkpoint — and so is a progress mark; anything else is declined (held until the commit ends).
   */
  private async routeDuringCommit(e: SourceEvent): Promise<boolean> {
    if (e.kind === 'progress') {
      await this.handle(e);
      return true;
    }
    if (e.kind !== 'transaction' || this.checkpointer!.full || !this.router!.routableDuringCommit(e)) return false;
    await this.handle(e);
    return true;
  }

  /** One source event; a session end stops the session. */
  private async handle(e: SourceEvent): Promise<SessionEnd | undefined> {
    const router = this.router!;
    switch (e.kind) {
      case 'snapshot-plan': {
        const t = router.plan(e);
        const snapshot = t?.working?.snapshot;
        if (t && snapshot && !snapshotComplete(snapshot)) this.notes.snapshotPlanned(t.key);
        return undefined;
      }
      case 'snapshot-rows':
        await router.snapshotRows(e);
        return undefined;
      case 'transaction':
        await router.transaction(e);
        this.options.metrics?.readerLag((Date.now() - e.timestampMs) / 1000);
        return undefined;
      case 'progress':
        if (e.offset) this.checkpointer!.advance(e.offset);
        return undefined;
      case 'ddl':
        return this.handleDdl(e);
      case 'phase':
        return this.handlePhase(e);
    }
  }

  private handlePhase(e: PhaseEvent): Promise<RunResult | undefined> {
    return takePhase(e, {
      mode: this.options.mode,
      checkpointer: this.checkpointer!,
      logger: this.logger,
      notes: this.notes,
      commit: (reason, options) => this.commit(reason, options),
      closeSource: async () => this.source?.close(),
    });
  }

  private handleDdl(e: DdlEvent): Promise<SessionEnd | undefined> {
    return takeDdl(e, {
      config: this.config,
      checkpointer: this.checkpointer!,
      ddl: this.ddl,
      logger: this.logger,
      notifier: this.options.notifications,
      notes: this.notes,
      commit: (reason, options) => this.commit(reason, options),
      closeSource: async () => this.source?.close(),
      refreshTable: (table, mapped) => this.refreshTable(table, mapped),
    });
  }

  /**
   * After a schema change of a captured table (the handler evolved its Iceberg table): what is
   * buffered is committed with the old schema; later rows decode with `mapped` (the handler switched
   * the source to it) or the server's current definition, and map onto the table's new schema.
   */
  private async refreshTable(ref: TableRef, mapped?: MappedTable): Promise<void> {
    const key = tableKey(ref);
    if ((this.checkpointer!.tables.get(key)?.committer.bufferedChanges ?? 0) > 0) await this.commit(`schema change of ${key}`);
    await this.tables!.refresh(key, mapped ?? (await this.source!.remap(ref)));
  }

  /** The signal aborted: commit what was routed (a transaction boundary), close, report. */
  private async stop(): Promise<RunResult> {
    this.logger.info('stopping: committing the current checkpoint');
    await this.commit('stop', { flushIdle: true });
    await this.source?.close();
    return { reason: 'stopped' };
  }

  private async commit(reason: string, options: { flushIdle?: boolean } = {}): Promise<void> {
    this.notes.committed(await this.checkpointer!.checkpoint(reason, options));
  }

  async saveKeyIndexes(): Promise<void> {
    await this.checkpointer?.saveKeyIndexes();
  }

  /** After a failure: drop buffered changes (never committed) so their files do not linger. */
  async abandon(): Promise<void> {
    // abandoning after a failure: that failure is what the caller reports; a file abort() cannot delete is unreferenced, and orphan removal deletes it later
    await this.checkpointer?.abort().catch(() => {});
  }

  async close(): Promise<void> {
    await this.maintenance.close().catch((e) => this.logger.warn('deleting the files of a compaction being prepared failed (orphan removal takes them)', { err: e }));
    // the disk key indexes' SQLite handles (their files stay: the next run reuses them)
    this.checkpointer?.close();
    await this.source?.close().catch((e) => this.logger.warn('closing the source failed', { err: e }));
    // closing after the run's outcome is decided: a failing close must not replace it
    await this.mysql?.close();
    await this.catalog?.close?.().catch(() => {});
    await this.lock?.release();
  }
}
