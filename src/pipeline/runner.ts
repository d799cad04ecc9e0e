/**
 * The pipeline runner (issue 5 item 2): MySQL → Iceberg for one job, crash-safe.
 *
 *   start    discover + map the captured tables, create missing Iceberg tables, read each table's
 *            committed progress (runner-setup.ts); resume plan (state-resume.ts)
 *   source   one `MySqlSource` stream: chunk plans and rows (tables still to snapshot), hand-over,
 *            then transactions / DDL / progress marks forever
 *   route    rows and changes → per-table writers (router.ts), progress per table follows
 *   commit   checkpoints (checkpoint.ts): interval, size bound, mode switch, hand-over, DDL, stop
 *
 * Modes: `run` snapshots what needs it (per `source.snapshot.mode`: initial / never / schema-only),
 * then streams until `signal` aborts — it then commits what it routed, closes the source and returns
 * 'stopped'. `snapshot` stops at the hand-over, after committing every chunk: 'snapshot-complete'.
 * A DDL goes to the DDL handler (runner-ddl.ts): ignored, applied, 'ddl-stop' (everything before it
 * committed) or a failure. Any error returns 'failed' after closing everything; nothing uncommitted
 * is trusted on restart — the tables are the only state (if in doubt, stop: a restart resumes).
 *
 * Notifications: snapshot started / table snapshot finished / snapshot finished / streaming started
 * (with its offset). Stop notifications are the caller's (notifications.ts). Metrics: rows, binlog
 * events, reader lag, per-table lag, commit durations, files and bytes.
 */
import type { Catalog } from '../catalog/catalog.js';
import type { FloeConfig } from '../config/schema.js';
import type { ParquetEncoderFactory } from '../iceberg/parquet/encoder.js';
import { CheckpointCommitter } from '../iceberg/writer/index.js';
import { connectMysql, quoteString, type MysqlClient } from '../source/mysql/client.js';
import { detectDialect } from '../source/mysql/dialect.js';
import { tableKey, type DdlEvent, type PhaseEvent, type SourceEvent, type TableRef } from '../source/mysql/events.js';
import type { MappedTable } from '../source/mysql/type-mapping.js';
import { serializeOffset, type BinlogOffset } from '../source/mysql/offset.js';
import { MySqlSource } from '../source/mysql/source.js';
import { readServerIdentity } from '../source/mysql/watermark.js';
import { FloeError } from '../util/errors.js';
import { Checkpointer, type CheckpointReport, type CheckpointTable } from './checkpoint.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import type { Notifier } from './notifications.js';
import type { ProgressReporter } from './progress.js';
import { Router, type RoutedTable } from './router.js';
import { checkpointOptions, mysqlConnection, openCatalog, sourceOptions, streamStartOffset } from './runner-config.js';
import { createDdlHandler, ddlPositionText, type DdlContext, type DdlHandler } from './runner-ddl.js';
import { discoverMappedTables, firstCheckpointId, prepareTables, type PreparedTable } from './runner-setup.js';
import { snapshotComplete, type TableProgress } from './state.js';
import { ensureIcebergTable } from './table-mapping-catalog.js';
import { planTableMapping } from './table-mapping.js';
import { compileTransforms } from './transforms.js';
import { planResume, type TableStart } from './state-resume.js';
import { sameSourceMapping } from './runner-checks.js';

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

class PipelineRun {
  private readonly logger: Logger;
  private client: MysqlClient | undefined;
  private catalog: Catalog | undefined;
  private source: MySqlSource | undefined;
  private checkpointer: Checkpointer | undefined;
  private router: Router | undefined;
  private ddl: DdlHandler;
  /** Tables whose snapshot runs in this process (for notifications). */
  private readonly snapshotting = new Set<string>();
  private readonly announcedFinished = new Set<string>();
  private streamingAnnounced = false;
  private prepared = new Map<string, PreparedTable>();

  constructor(
    private readonly config: FloeConfig,
    private readonly options: RunOptions,
  ) {
    this.logger = options.logger;
    this.ddl = createDdlHandler(config);
  }

  async execute(): Promise<RunResult> {
    const config = this.config;
    const source = config.source;
    if (!source) throw new FloeError('config', 'config', 'source: missing; configure the MySQL source (url or host/port/user/password)');
    const { signal, logger } = this.options;

    // ---- start: tables, their Iceberg tables and where each stands ----------------------------
    const client = (this.client = await connectMysql(mysqlConnection(source)));
    const dialect = await detectDialect(client);
    const identity = await readServerIdentity(client, dialect.flavor);
    const mapped = await discoverMappedTables(config, client, dialect);
    const catalog = (this.catalog = openCatalog(config, logger));
    const tables = await prepareTables(config, mapped, catalog, logger);
    for (const t of tables) this.prepared.set(t.key, t);
    const firstId = firstCheckpointId(tables);
    const fresh = tables.filter((t) => !t.progress);
    const streamFrom = source.snapshot.mode !== 'initial' && fresh.length > 0 ? await streamStartOffset(source, client, dialect, identity) : undefined;
    const starts: TableStart[] = tables.map((t) => ({ key: t.key, progress: t.progress, streamFrom: t.progress ? undefined : streamFrom }));
    const { resume, skipUntil } = planResume(starts);
    logger.info('pipeline starting', {
      job: config.job.id,
      mode: this.options.mode,
      tables: tables.length,
      checkpoint: firstId.toString(),
      resumeFrom: resume.offset ? serializeOffset(resume.offset) : undefined,
    });

    // ---- wiring ------------------------------------------------------------------------------
    const checkpointer = (this.checkpointer = new Checkpointer(firstId, checkpointOptions(config), logger, this.options.metrics));
    if (resume.offset) checkpointer.advance(resume.offset);
    const router = (this.router = new Router(checkpointer, this.options.metrics, this.options.progress));
    const startMs = Date.now();
    for (const t of tables) {
      const c: CheckpointTable = {
        key: t.key,
        identifier: t.mapping.identifier,
        io: t.ready.table.io,
        location: t.ready.table.metadata.location,
        committer: new CheckpointCommitter({
          catalog,
          jobId: config.job.id,
          emptyCommitInterval: 0,
          warn: (m) => logger.warn(m, { table: t.key }),
          ...(this.options.parquetEncoder ? { writer: { parquet: { encoderFactory: this.options.parquetEncoder } } } : {}),
        }),
        mode: undefined,
        pending: 0,
        committed: t.progress,
        working: t.progress ?? (streamFrom ? { phase: 'streaming', offset: streamFrom } : undefined),
        skipUntil: skipUntil.get(t.key),
        checkpointsSinceCommit: 0,
        lastCommitMs: startMs,
      };
      checkpointer.add(c);
      router.add(routedTable(t, c));
    }
    // Tables that stream without a snapshot record their start offset at once, so that a restart
    // starts from the same point (a 'latest' resolved again later would skip what came between).
    if (fresh.length > 0 && streamFrom) await this.commit('start offsets of tables without a snapshot');
    await this.announceApproximateRows(tables);

    // ---- the stream ----------------------------------------------------------------------------
    const src = (this.source = new MySqlSource(sourceOptions(source, tables.map((t) => t.id), resume, (m) => logger.debug(m, { component: 'source' }))));
    const events = src.events()[Symbol.asyncIterator]();
    const stopped = new Promise<typeof STOP>((resolve) => {
      if (signal.aborted) resolve(STOP);
      else signal.addEventListener('abort', () => resolve(STOP), { once: true });
    });
    let first = true;
    for (;;) {
      const next = await Promise.race([events.next(), stopped]);
      if (next === STOP) return this.stop();
      if (next.done) throw new FloeError('pipeline', 'source', 'the MySQL source stream ended unexpectedly; restart floe (it resumes from the committed offsets)');
      if (first) {
        first = false;
        sameSourceMapping(src.tables, tables);
      }
      const outcome = await this.handle(next.value);
      if (outcome) return outcome;
      const why = checkpointer.due();
      if (why) await this.commit(why);
    }
  }

  /** One source event; a result ends the run. */
  private async handle(e: SourceEvent): Promise<RunResult | undefined> {
    const router = this.router!;
    const checkpointer = this.checkpointer!;
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
        if (e.offset) checkpointer.advance(e.offset);
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

  private async handleDdl(e: DdlEvent): Promise<RunResult | undefined> {
    const checkpointer = this.checkpointer!;
    const ctx: DdlContext = {
      config: this.config,
      capturedTables: new Set(checkpointer.tables.keys()),
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
   * After a schema change of a captured table (the DDL handler has evolved its Iceberg table): what is
   * buffered is committed with the old schema, later binlog rows decode with the new MySQL definition
   * (`mapped`, or the server's current one), and map onto the table's new schema.
   */
  private async refreshTable(ref: TableRef, mapped?: MappedTable): Promise<void> {
    const key = tableKey(ref);
    const prepared = this.prepared.get(key);
    const routed = this.router!.tables.get(key);
    if (!prepared || !routed) throw new FloeError('pipeline', 'internal', `refreshTable: ${key} is not a captured table`);
    const c = routed.checkpoint;
    if (c.pending > 0) await this.commit(`schema change of ${key}`);
    let definition = mapped;
    if (definition) this.source!.decoding.set(definition);
    else definition = await this.source!.remap(ref);
    const mapping = planTableMapping(definition, this.config, compileTransforms(this.config.transforms));
    const ready = await ensureIcebergTable(this.catalog!, mapping, this.logger);
    routed.project = ready.project;
    c.mode = undefined; // the next write re-opens the writer on the table's new schema
    this.prepared.set(key, { ...prepared, mapped: definition, mapping, ready });
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

  /** Progress bars for tables with chunks still to copy (server's row estimate). */
  private async announceApproximateRows(tables: readonly PreparedTable[]): Promise<void> {
    const progress = this.options.progress;
    if (!progress) return;
    const toCopy = tables.filter((t) => !t.progress || (t.progress.phase === 'snapshot' && t.progress.snapshot && !snapshotComplete(t.progress.snapshot)));
    const needsSnapshot = this.config.source!.snapshot.mode === 'initial' ? toCopy : toCopy.filter((t) => t.progress);
    if (needsSnapshot.length === 0) return;
    const rows = await this.client!.query<{ db: string; t: string; n: unknown }>(
      `SELECT TABLE_SCHEMA AS db, TABLE_NAME AS t, TABLE_ROWS AS n FROM information_schema.TABLES WHERE (TABLE_SCHEMA, TABLE_NAME) IN (${needsSnapshot
        .map((t) => `(${quoteString(t.id.database)}, ${quoteString(t.id.table)})`)
        .join(', ')})`,
    );
    for (const t of needsSnapshot) {
      const r = rows.find((x) => String(x.db) === t.id.database && String(x.t) === t.id.table);
      progress.tableStarted(t.key, Number(r?.n ?? 0));
      if (t.progress?.snapshot) progress.rowsCopied(t.key, t.progress.snapshot.rows);
    }
  }

  /** After a failure: drop buffered changes (never committed) so their files do not linger. */
  async abandon(): Promise<void> {
    await this.checkpointer?.abort().catch(() => {});
  }

  async close(): Promise<void> {
    this.options.progress?.stop();
    await this.source?.close().catch((e) => this.logger.warn('closing the source failed', { err: e }));
    await this.client?.close().catch(() => {});
    await this.catalog?.close?.().catch(() => {});
  }
}

function snapshotDone(p: TableProgress): boolean {
  return p.phase === 'streaming' || (p.snapshot !== undefined && snapshotComplete(p.snapshot));
}

function routedTable(t: PreparedTable, checkpoint: CheckpointTable): RoutedTable {
  const keyless = t.mapping.keyless;
  return {
    key: t.key,
    checkpoint,
    project: t.ready.project,
    snapshotMode: keyless ? 'append' : t.foreignRows ? 'upsert' : 'append-only',
    streamMode: keyless ? 'append' : 'upsert',
  };
}
