/**
 * The pipeline runner: MySQL → Iceberg for one job, crash-safe.
 *
 *   start    discover + map the captured tables, create missing Iceberg tables, read each table's
 *            committed progress (runner-setup.ts); the binlog each resumes from still on the server
 *            (runner-binlog-check.ts: a purged one stops the run before anything is committed);
 *            resume plan (state-resume.ts)
 *   source   one `MySqlSource` stream: chunk plans and rows (tables still to snapshot), hand-over,
 *            then transactions / DDL / progress marks forever
 *   route    rows and changes → per-table writers (router.ts), progress per table follows
 *   commit   checkpoints (checkpoint.ts): interval, size bound, mode switch, hand-over, DDL, stop
 *
 * Modes: `run` snapshots what needs it (per `source.snapshot.mode`: initial / never / schema-only),
 * then streams until `signal` aborts — it then commits what it routed, closes the source and returns
 * 'stopped'. `snapshot` stops at the hand-over, after committing every chunk: 'snapshot-complete'.
 * A DDL that creates a table matching the include patterns restarts the source in process with that
 * table added: it is snapshotted, then every table streams on from its committed offset. Any other
 * DDL goes to the schema-change policy (schema-change.ts through runner-ddl.ts): ignored, applied,
 * 'ddl-stop' (everything before it committed) or a failure. Any error returns 'failed' after closing everything; nothing uncommitted
 * is trusted on restart — the tables are the only state (if in doubt, stop: a restart resumes).
 *
 * Notifications: snapshot started / table snapshot finished / snapshot finished / streaming started
 * (with its offset). Stop notifications are the caller's (notifications.ts). Metrics: rows, binlog
 * events, reader lag, per-table lag, commit durations, files and bytes.
 */
import type { Catalog } from '../iceberg/metadata/catalog.js';
import { openCatalog } from '../catalog/factory.js';
import type { FloeConfig } from '../config/schema.js';
import type { ParquetEncoderFactory } from '../iceberg/parquet/encoder.js';
import { tableHealth } from '../iceberg/maintenance/table-health.js';
import { loadCatalogTable, type CatalogTable } from '../iceberg/table/index.js';
import type { CompactionCommit } from '../iceberg/maintenance/rewrite-data-files.js';
import { connectMysql, type MysqlClient } from '../source/mysql/index.js';
import { detectDialect } from '../source/mysql/index.js';
import { tableMatcher } from '../source/mysql/index.js';
import { tableKey, type DdlEvent, type PhaseEvent, type SourceEvent, type TableRef } from '../source/mysql/index.js';
import { isAfter, serializeOffset, type BinlogOffset } from '../source/mysql/index.js';
import { MySqlSource, type SourceResume } from '../source/mysql/index.js';
import { captureTableSchemas } from '../source/mysql/index.js';
import { mapTable, type MappedTable } from '../source/mysql/index.js';
import { readServerIdentity } from '../source/mysql/index.js';
import { FloeError } from '../util/errors.js';
import { Checkpointer, type CheckpointReport } from './checkpoint.js';
import type { Logger } from './observe/logger.js';
import type { Metrics } from './observe/metrics.js';
import type { Notifier } from './observe/notifications.js';
import type { ProgressReporter } from './observe/progress.js';
import { maintainTable, maintenanceOptions, MaintenanceSchedule } from './maintenance.js';
import { Router } from './router.js';
import { sameSourceMapping } from './runner-checks.js';
import { checkResumeBinlogs, withPurgedTables } from './runner-binlog-check.js';
import { checkpointOptions, mysqlConnection, sourceOptions, streamStartOffset, typeMappingOptions } from './runner-config.js';
import { ddlPositionText, newTablesIn, type DdlContext, type DdlHandler } from './runner-ddl.js';
import { announceSnapshotRows, discoverMappedTables, firstCheckpointId, prepareTables } from './runner-setup.js';
import { CapturedTables } from './runner-tables.js';
import { createSchemaChangeHandler } from './schema-change/schema-change.js';
import { planResume } from './state-resume.js';
import { snapshotComplete, type TableProgress } from './state.js';

export interface RunOptions {
  mode: 'run' | 'snapshot';
  signal: AbortSignal;
  notifications: Notifier;
  metrics?: Metrics;
  progress?: ProgressReporter;
  logger: Logger;
  /**
   * How Parquet files are encoded (default: parquet-wasm on this thread). The CLI passes the
   * worker-thread pool (src/iceberg/parquet/worker-encoder.ts), which the pipeline may not import
   * itself (only cli/ and io/ touch Node-only modules).
   */
  parquetEncoder?: ParquetEncoderFactory;
}

export interface RunResult {
  reason: 'snapshot-complete' | 'stopped' | 'ddl-stop' | 'failed';
  ddl?: { statement: string; position: string };
  error?: unknown;
}

export async function runPipeline(config: FloeConfig, options: RunOptions): Promise<RunResult> {
  const run = new PipelineRun(config, options);
  try {
    return await run.execute();
  } catch (error) {
    await run.abandon();
    return { reason: 'failed', error };
  } finally {
    await run.close();
  }
}

const STOP = Symbol('stop');

/** A source session ends the run, or asks for a new session that also captures `tables`. */
type SessionEnd = RunResult | { restart: TableRef[] };

class PipelineRun {
  private readonly logger: Logger;
  private client: MysqlClient | undefined;
  private catalog: Catalog | undefined;
  private source: MySqlSource | undefined;
  private checkpointer: Checkpointer | undefined;
  private router: Router | undefined;
  private tables: CapturedTables | undefined;
  private readonly ddl: DdlHandler;
  /** Tables whose snapshot runs in this process (for notifications). */
  private readonly snapshotting = new Set<string>();
  private readonly announcedFinished = new Set<string>();
  private streamingAnnounced = false;
  private readonly maintenance: MaintenanceSchedule | undefined;
  private readonly orphanSchedule: MaintenanceSchedule | undefined;

  constructor(
    private readonly config: FloeConfig,
    private readonly options: RunOptions,
  ) {
    this.logger = options.logger;
    this.maintenance = config.maintenance.enabled ? new MaintenanceSchedule(config.maintenance.intervalMs) : undefined;
    this.orphanSchedule = config.maintenance.enabled ? new MaintenanceSchedule(config.maintenance.removeOrphans.intervalMs) : undefined;
    this.ddl = createSchemaChangeHandler(config, () =>
      this.source && this.catalog && this.tables
        ? {
            source: this.source,
            catalog: this.catalog,
            icebergIdentifier: (key) => this.tables!.prepared.get(key)?.mapping.identifier,
            dropTable: (key) => this.tables!.remove(key),
          }
        : undefined,
    );
  }

  async execute(): Promise<RunResult> {
    const config = this.config;
    const source = config.source;
    if (!source) throw new FloeError('config', 'config', 'source: missing; configure the MySQL source (url or host/port/user/password)');
    const logger = this.logger;

    // ---- start: tables, their Iceberg tables and where each stands ----------------------------
    const client = (this.client = await connectMysql(mysqlConnection(source)));
    const dialect = await detectDialect(client);
    const identity = await readServerIdentity(client, dialect.flavor);
    const catalog = (this.catalog = await openCatalog(config, { warn: (message) => logger.warn(message, { catalog: config.catalog.name }) }));
    const prepared = await prepareTables(config, await discoverMappedTables(config, client, dialect), catalog, logger);
    // a table whose binlog was purged while floe was stopped: stop before anything is read or committed
    await checkResumeBinlogs(
      client,
      identity,
      prepared.map((t) => ({ key: t.key, identifier: t.mapping.identifier, location: t.ready.table.metadata.location, progress: t.progress })),
      config.catalog.type,
    );
    const firstId = firstCheckpointId(prepared);
    const fresh = prepared.filter((t) => !t.progress);
    const streamFrom = source.snapshot.mode !== 'initial' && fresh.length > 0 ? await streamStartOffset(source, client, dialect, identity) : undefined;
    const { resume, skipUntil } = planResume(prepared.map((t) => ({ key: t.key, progress: t.progress, streamFrom: t.progress ? undefined : streamFrom })));
    logger.info('pipeline starting', {
      job: config.job.id,
      mode: this.options.mode,
      tables: prepared.length,
      checkpoint: firstId.toString(),
      resumeFrom: resume.offset ? serializeOffset(resume.offset) : undefined,
    });

    // ---- wiring ------------------------------------------------------------------------------
    const checkpointer = (this.checkpointer = new Checkpointer(firstId, checkpointOptions(config), logger, this.options.metrics));
    if (resume.offset) checkpointer.advance(resume.offset);
    const router = (this.router = new Router(checkpointer, this.options.metrics, this.options.progress));
    const tables = (this.tables = new CapturedTables({ config, catalog, checkpointer, router, logger, cascades: () => this.source?.cascades, parquetEncoder: this.options.parquetEncoder }));
    for (const t of prepared) tables.add(t, t.progress ?? (streamFrom ? { phase: 'streaming', offset: streamFrom } : undefined), skipUntil.get(t.key));
    // Tables that stream without a snapshot record their start offset at once, so that a restart
    // starts from the same point (a 'latest' resolved again later would skip what came between).
    if (fresh.length > 0 && streamFrom) await this.commit('start offsets of tables without a snapshot');
    if (this.options.progress) await announceSnapshotRows(client, prepared, this.options.progress, source.snapshot.mode === 'initial');

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
      next = await this.capture(end.restart);
    }
  }

  /** One source stream, until the run ends or a new table must join. */
  private async session(resume: SourceResume): Promise<SessionEnd> {
    const source = this.config.source!;
    const tables = this.tables!;
    const ids = [...tables.prepared.values()].map((t) => t.id);
    // Decode each table with the definition the run maps it with (for a table resumed from the lake,
    // the one valid at its committed offset; source-schema-record.ts), and none of its rows at or
    // before that offset (they may predate that definition).
    const definitions = new Map([...tables.prepared.values()].map((t) => [t.key, t.mapped.schema]));
    const decodeAfter = new Map<string, BinlogOffset>();
    for (const t of this.checkpointer!.tables.values()) if (t.skipUntil) decodeAfter.set(t.key, t.skipUntil);
    const changedDefinitions = new Set([...tables.prepared.values()].filter((t) => t.definitionFromLake).map((t) => t.key));
    const src = (this.source = new MySqlSource({ ...sourceOptions(source, ids, resume, (m) => this.logger.debug(m, { component: 'source' })), definitions, decodeAfter, changedDefinitions }));
    const events = src.events()[Symbol.asyncIterator]();
    let first = true;
    try {
      for (;;) {
        const next = await nextOrStop(events, this.options.signal);
        if (next === STOP) {
          const end = await this.stop();
          // End the source stream too: a snapshot in progress holds reader connections (and backfill
          // binlog sessions) that only its generator's cleanup closes — left open, they keep the
          // process alive after a clean stop. The pending read finishes first (one chunk at most).
          await settleWithin(events.return?.(undefined), 10_000, () => this.logger.warn('the source did not end within 10 s of the stop; its connections close when the process exits'));
          return end;
        }
        if (next.done) throw new FloeError('pipeline', 'source', 'the MySQL source stream ended unexpectedly; restart floe (it resumes from the committed offsets)');
        if (first) {
          first = false;
          sameSourceMapping(src.tables, [...tables.prepared.values()]);
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
        if (why) {
          await this.commit(why);
          await this.maintainIfDue();
        }
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
   * Scheduled maintenance (maintenance.ts), right after a checkpoint: nothing of floe's is being
   * committed meanwhile. A failure is logged and tried again next interval — it never stops the
   * replication (the table is only less tidy).
   */
  private async maintainIfDue(): Promise<void> {
    const schedule = this.maintenance;
    if (!schedule?.due()) return;
    schedule.ran();
    const orphans = this.orphanSchedule!.due();
    if (orphans) this.orphanSchedule!.ran();
    const options = { ...maintenanceOptions(this.config), ...(orphans ? { orphansOlderThanMs: this.config.maintenance.removeOrphans.olderThanMs } : {}) };
    for (const t of this.checkpointer!.tables.values()) {
      try {
        // each of its commits is followed by the table's writer: its key index moves to the
        // compacted files (a restart would otherwise take floe's own compaction for another writer's)
        const follow = async (table: CatalogTable, compaction?: CompactionCommit): Promise<void> => {
          await t.committer.followMaintenance(t.identifier, table, compaction);
        };
        const { report, result } = await maintainTable(await loadCatalogTable(this.catalog!, t.identifier), { ...options, onCommit: follow }, this.logger);
        if (report.expiredSnapshots > 0 || (report.orphanFiles ?? 0) > 0 || (report.manifests?.replaced ?? 0) > 0 || (report.compaction?.rewrittenDataFiles ?? 0) > 0) this.logger.info('maintenance: data files compacted, old snapshots expired, manifests rewritten, orphan files removed', { ...report, table: t.key });
        if (this.options.metrics?.tableHealth) this.options.metrics.tableHealth(t.key, await tableHealth(result.table.io, result.table.metadata, result.table.metadataLocation));
      } catch (e) {
        this.logger.warn('maintenance of a table failed; replication goes on, and it is tried again next interval', { table: t.key, err: e });
      }
    }
  }

  /**
   * New tables join: they are created in the lake and snapshotted by the next session, which reads
   * the binlog from the offset every table has just committed (the caller flushed them all).
   */
  private async capture(refs: readonly TableRef[]): Promise<SourceResume> {
    const { config, logger } = this;
    const client = this.client!;
    const dialect = await detectDialect(client);
    const schemas = await captureTableSchemas(client, refs, dialect.flavor);
    const mapped = [...schemas.values()].map((s) => mapTable(s, typeMappingOptions(config.source!)));
    const added = await prepareTables(config, mapped, this.catalog!, logger);
    for (const t of added) {
      if (t.progress) {
        throw new FloeError(
          'pipeline',
          'unsupported',
          `table ${t.key} was created in MySQL while its Iceberg table ${[...t.mapping.identifier.namespace, t.mapping.identifier.name].join('.')} holds an earlier table of that name (job ${config.job.id} committed to it); drop the Iceberg table and start floe again to snapshot the new one`,
        );
      }
      this.tables!.add(t, undefined, undefined);
      logger.info('new table captured: snapshotting it while the other tables wait at their offsets', { table: t.key });
    }
    const checkpointer = this.checkpointer!;
    const { resume, skipUntil } = planResume([...checkpointer.tables.values()].map((t) => ({ key: t.key, progress: t.committed })));
    for (const t of checkpointer.tables.values()) t.skipUntil = skipUntil.get(t.key);
    if (this.options.progress) await announceSnapshotRows(client, added, this.options.progress, true);
    return resume;
  }

  /** One source event; a session end stops the session. */
  private async handle(e: SourceEvent): Promise<SessionEnd | undefined> {
    const router = this.router!;
    switch (e.kind) {
      case 'snapshot-plan': {
        const t = router.plan(e);
        const snapshot = t?.checkpoint.working?.snapshot;
        if (t && snapshot && !snapshotComplete(snapshot)) this.snapshotting.add(t.key);
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

  private async handlePhase(e: PhaseEvent): Promise<RunResult | undefined> {
    const { notifications } = this.options;
    const checkpointer = this.checkpointer!;
    if (e.phase === 'snapshot') {
      notifications.notify({ type: 'snapshot-started', tables: [...this.snapshotting] });
      return undefined;
    }
    if (e.phase === 'catch-up') {
      this.logger.warn('a table still in its snapshot changed in MySQL while floe was stopped: reading the binlog up to now first (its DDL is applied there), then the remaining chunks', { until: e.offset ? serializeOffset(e.offset) : undefined });
      checkpointer.catchingUp = true;
      return undefined;
    }
    if (e.phase === 'caught-up') {
      // everything of the finished chunks' keys up to e.offset is routed: commit them standing there
      if (e.offset) checkpointer.advance(e.offset);
      await this.commit('caught up before the remaining chunks', { flushIdle: true });
      checkpointer.catchingUp = false;
      return undefined;
    }
    if (e.phase === 'handover') {
      // Every chunk is done: the snapshot tables switch to streaming; their offset is the point the
      // binlog is read from (every chunk's rows are at or past it; the hand-over filter drops what
      // a chunk already holds).
      if (e.offset) checkpointer.advance(e.offset);
      for (const t of checkpointer.tables.values()) {
        const p = t.working;
        if (p?.phase === 'snapshot' && p.snapshot && snapshotComplete(p.snapshot)) t.working = { ...p, phase: 'streaming' };
      }
      await this.commit('hand-over');
      if (this.snapshotting.size > 0) notifications.notify({ type: 'snapshot-finished', tables: [...this.snapshotting] });
      this.snapshotting.clear();
      this.options.progress?.stop();
      if (this.options.mode === 'snapshot') return this.finishSnapshotMode();
      this.announceStreaming(e.offset);
      return undefined;
    }
    // 'streaming': directly (nothing to snapshot), or once the hand-over filter is passed
    if (this.options.mode === 'snapshot') {
      await this.commit('snapshot complete', { flushIdle: true });
      return this.finishSnapshotMode();
    }
    this.announceStreaming(e.offset ?? checkpointer.sourcePosition);
    return undefined;
  }

  private announceStreaming(offset: BinlogOffset | undefined): void {
    if (this.streamingAnnounced) return;
    this.streamingAnnounced = true;
    this.options.notifications.notify({ type: 'streaming-started', offset: offset ? serializeOffset(offset) : '(server default)' });
  }

  private async finishSnapshotMode(): Promise<RunResult> {
    await this.source?.close();
    return { reason: 'snapshot-complete' };
  }

  private async handleDdl(e: DdlEvent): Promise<SessionEnd | undefined> {
    const checkpointer = this.checkpointer!;
    // A table resumed past this statement applied it before (its committed offset is after it):
    // for that table the DDL is history, not a change (a restart reads the binlog from the lowest
    // offset of all tables).
    const captured = new Set([...checkpointer.tables.values()].filter((t) => !t.skipUntil || isAfter(e.position, t.skipUntil)).map((t) => t.key));
    const source = this.config.source!;
    const joining = newTablesIn(e, new Set(checkpointer.tables.keys()), tableMatcher({ include: source.include, exclude: source.exclude }));
    if (joining.length > 0) {
      // The statement changes no captured table: pass it, commit every table at this point, and
      // start a session that snapshots the new table(s).
      checkpointer.advance(e.offset, e.timestampMs);
      await this.commit('a new table joins', { flushIdle: true });
      return { restart: joining };
    }
    const ctx: DdlContext = {
      config: this.config,
      capturedTables: captured,
      logger: this.logger,
      notifier: this.options.notifications,
      checkpoint: async () => {
        await this.commit('before a DDL');
      },
      refreshTable: (table, mapped) => this.refreshTable(table, mapped),
    };
    const outcome = await this.ddl.onDdl(e, ctx);
    switch (outcome.action) {
      case 'ignore':
      case 'applied':
        checkpointer.advance(e.offset, e.timestampMs);
        return undefined;
      case 'stop': {
        // Everything before the DDL, committed; the DDL itself not passed (its offset is not recorded).
        await this.commit('stop before a DDL', { flushIdle: true });
        await this.source?.close();
        return { reason: 'ddl-stop', ddl: { statement: e.statement, position: ddlPositionText(e) } };
      }
      case 'fail':
        await this.commit('before a refused DDL', { flushIdle: true });
        throw outcome.error;
    }
  }

  /**
   * After a schema change of a captured table (the handler evolved its Iceberg table): what is
   * buffered is committed with the old schema; later rows decode with `mapped` (the handler switched
   * the source to it) or the server's current definition, and map onto the table's new schema.
   */
  private async refreshTable(ref: TableRef, mapped?: MappedTable): Promise<void> {
    const key = tableKey(ref);
    if ((this.checkpointer!.tables.get(key)?.pending ?? 0) > 0) await this.commit(`schema change of ${key}`);
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
    const report = await this.checkpointer!.checkpoint(reason, options);
    this.afterCommit(report);
  }

  private afterCommit(report: CheckpointReport): void {
    for (const c of report.committed) {
      if (!this.snapshotting.has(c.key) || this.announcedFinished.has(c.key)) continue;
      if (!snapshotDone(c.after)) continue;
      this.announcedFinished.add(c.key);
      this.options.progress?.tableFinished(c.key);
      this.options.notifications.notify({ type: 'table-snapshot-finished', table: c.key, rows: c.snapshotRows ?? 0 });
    }
  }

  /** After a failure: drop buffered changes (never committed) so their files do not linger. */
  async abandon(): Promise<void> {
    // abandoning after a failure: that failure is what the caller reports; a file abort() cannot delete is unreferenced, and orphan removal deletes it later
    await this.checkpointer?.abort().catch(() => {});
  }

  async close(): Promise<void> {
    this.options.progress?.stop();
    // the disk key indexes' SQLite handles (their files stay: the next run reuses them)
    this.checkpointer?.close();
    await this.source?.close().catch((e) => this.logger.warn('closing the source failed', { err: e }));
    // closing after the run's outcome is decided: a failing close must not replace it
    await this.client?.close().catch(() => {});
    await this.catalog?.close?.().catch(() => {});
  }
}

/** Waits for `p` (its failure ignored) at most `ms`; `onTimeout` when it did not settle by then. */
async function settleWithin(p: Promise<unknown> | undefined, ms: number, onTimeout: () => void): Promise<void> {
  if (!p) return;
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([p.then(() => true, () => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  clearTimeout(timer);
  if (!settled) onTimeout();
}

function snapshotDone(p: TableProgress): boolean {
  return p.phase === 'streaming' || (p.snapshot !== undefined && snapshotComplete(p.snapshot));
}

/**
 * The next source event, or STOP when `signal` aborts first. Not `Promise.race` with one long-lived
 * stop promise: every race leaves a reaction on that promise which holds the race's result, so every
 * event (snapshot chunks with all their rows) would stay reachable until the run ends
 * (nodejs/node#17469) — memory growing with the table, and the GC copying it over and over.
 */
function nextOrStop<T>(events: AsyncIterator<T>, signal: AbortSignal): Promise<IteratorResult<T> | typeof STOP> {
  if (signal.aborted) return Promise.resolve(STOP);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(STOP);
    signal.addEventListener('abort', onAbort, { once: true });
    events.next().then(
      (r) => {
        signal.removeEventListener('abort', onAbort);
        resolve(r);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
