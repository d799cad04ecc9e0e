/**
 * Scheduled maintenance during `floe run` (maintenance.ts), run right after a checkpoint: nothing of
 * floe's is being committed meanwhile. A failure is logged and tried again next interval — it never
 * stops the replication (the table is only less tidy). Orphan removal has its own, longer interval.
 *
 * A round runs in steps, table after table: compaction, expiry, the manifest rewrite. While a step
 * runs, changes are read but not committed, so the slow work is done beside the checkpoints, which go
 * on meanwhile:
 * - the compaction of a table whose writer keeps a key index is prepared beside them (its new files
 *   written, compaction-landing.ts) and landed after a later checkpoint, with the deletes committed
 *   meanwhile carried over as DVs; the preparing waits for each commit in flight, so that it does not
 *   slow them down;
 * - with changes waiting, the expiry is planned beside them and committed after a later checkpoint,
 *   and the files it unreferenced are deleted beside them too.
 * A compaction that cannot be prepared so (no key index, or deletes that are not DVs) rewrites one
 * data file after another: once changes are waiting and one commit interval (`commit.intervalMs`) has
 * passed since the checkpoint, the round stops between two data files (or two steps) and goes on after
 * a later checkpoint — not before twice the time it just took has passed, so that the changes held
 * meanwhile are committed first. On a quiet stream a round runs to its end at once, and a round left
 * resting when the stream went quiet goes on without a checkpoint (runner.ts, `msUntilStep`).
 */
import type { Catalog } from '../iceberg/metadata/catalog.js';
import type { FloeConfig } from '../config/schema.js';
import { tableHealth } from '../iceberg/maintenance/table-health.js';
import type { CompactionCommit } from '../iceberg/keyindex/index.js';
import { loadCatalogTable, type CatalogTable } from '../iceberg/table/index.js';
import type { CheckpointTable } from './checkpoint.js';
import type { FileIO } from '../io/file-io.js';
import { FloeError } from '../util/errors.js';
import type { ParquetEncoderFactory } from '../iceberg/parquet/encoder.js';
import { prepareCompaction, type LandedCompaction, type PreparedCompaction } from '../iceberg/checkpoint/compaction-landing.js';
import { discardRewrite } from '../iceberg/maintenance/rewrite-beside.js';
import type { PlannedExpiry } from '../iceberg/maintenance/expire-snapshots.js';
import { addCompactions, compactionWanted, compactTable, expireTable, planTableExpiry, maintenanceOptions, MaintenanceSchedule, rewriteTableManifests, type CompactionProgress, type MaintenanceOptions, type TableMaintenanceReport } from './maintenance.js';
import type { Logger } from './observe/logger.js';
import type { Metrics } from './observe/metrics.js';

/** A round under way: the tables left (the first is being maintained) and where its steps are. */
interface Round {
  readonly options: MaintenanceOptions;
  readonly keys: string[];
  step: 'compaction' | 'landing' | 'expiry' | 'manifests';
  /** What the round did to the table up to its expiry (its manifest rewrite comes last). */
  expired?: TableMaintenanceReport;
  continuing?: CompactionProgress;
  /** The compaction being prepared beside the writer's commits (step 'landing' lands it once settled). */
  preparing?: Preparing<PreparedCompaction | { skipped: string } | undefined>;
  /** The expiry being planned beside them (step 'expiry' commits it once settled). */
  planning?: Preparing<PlannedExpiry>;
  /** The compaction is not for preparing beside the writer: it runs in steps (rewrite-data-files.ts). */
  inSteps?: boolean;
  done: Pick<TableMaintenanceReport, 'compaction' | 'manifests'>;
}

/** What a step may ask: whether to go on, whether changes are waiting, and (work beside the commits) when to pause. */
interface StepContext {
  readonly keepGoing: () => boolean;
  readonly waiting: () => boolean;
  /** Resolves when no checkpoint is committing: work beside the commits waits on it between its pieces (and fails once the run closes). */
  readonly pause: () => Promise<void>;
}

/** Work done beside the writer's commits (a compaction's files, an expiry's plan), and how it ended. */
interface Preparing<T> {
  /** Settles when the preparing does, never with a failure. */
  done?: Promise<void>;
  /** Where it writes (to delete what will not land). */
  readonly io: FileIO;
  settled: boolean;
  result?: T;
  failure?: unknown;
}

/** How often a resting round looks whether the compaction it prepares is ready, with nothing buffered. */
const PREPARING_POLL_MS = 50;

export class RunMaintenance {
  private readonly schedule: MaintenanceSchedule | undefined;
  private readonly orphanSchedule: MaintenanceSchedule | undefined;
  private readonly stepMs: number;
  private round: Round | undefined;
  private closing = false;
  /** When the piece of work beside the commits under way started (the last `pause` ended). */
  private pieceStarted: number | undefined;
  /** Files expiries unreferenced, being deleted one expiry after the other. */
  private deleting: Promise<void> = Promise.resolve();
  /** When the round under way may go on (`now`): it rests twice as long as its last call took. */
  private restUntil = 0;

  constructor(
    private readonly config: FloeConfig,
    private readonly logger: Logger,
    private readonly metrics: Metrics | undefined,
    /** Encodes the Parquet of compactions prepared beside the writer (off the main thread: the writer's pool). */
    private readonly parquetEncoder?: ParquetEncoderFactory,
    /** Milliseconds, for a step's length. */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.schedule = config.maintenance.enabled ? new MaintenanceSchedule(config.maintenance.intervalMs) : undefined;
    this.orphanSchedule = config.maintenance.enabled ? new MaintenanceSchedule(config.maintenance.removeOrphans.intervalMs) : undefined;
    this.stepMs = config.commit.intervalMs;
  }

  /**
   * Whether `runIfDue` would maintain now: a round is under way and rested (its compaction prepared,
   * when one is being prepared), or the interval has passed.
   */
  get due(): boolean {
    const beside = this.round?.preparing ?? this.round?.planning;
    if (beside) return beside.settled;
    if (this.round) return this.now() >= this.restUntil;
    return this.schedule?.due() ?? false;
  }

  /** With a round under way, how long until it may go on (undefined: none is). */
  msUntilStep(): number | undefined {
    const beside = this.round?.preparing ?? this.round?.planning;
    if (beside) return beside.settled ? 0 : PREPARING_POLL_MS;
    return this.round ? Math.max(0, this.restUntil - this.now()) : undefined;
  }

  /**
   * Steps of the round under way, or of a new one when the interval has passed (call it after a
   * checkpoint; at least one step runs): until the round ends, or `waiting` says changes are and one
   * commit interval has passed.
   */
  async runIfDue(catalog: Catalog, captured: Iterable<CheckpointTable>, waiting: () => boolean = () => false, pieceMayStart?: (pieceMs: number) => Promise<void>): Promise<void> {
    const tables = [...captured];
    const round = this.round ?? this.startRound(tables);
    const beside = round?.preparing ?? round?.planning;
    if (!round || (beside && !beside.settled)) return;
    const byKey = new Map(tables.map((t) => [t.key, t]));
    const started = this.now();
    const deadline = started + this.stepMs;
    const keepGoing = (): boolean => this.now() < deadline || !waiting();
    let table: CatalogTable | undefined;
    do {
      const t = byKey.get(round.keys[0]!);
      if (!t) {
        this.nextTable(round); // no longer captured
        continue;
      }
      try {
        table = await this.step(round, t, table ?? (await loadCatalogTable(catalog, t.identifier)), { keepGoing, waiting, pause: () => this.pause(pieceMayStart) });
      } catch (e) {
        this.logger.warn('maintenance of a table failed; replication goes on, and it is tried again next interval', { table: t.key, err: e });
        this.nextTable(round);
      }
      if (round.step === 'compaction' && !round.continuing) table = undefined; // the next table's
    } while (round.keys.length > 0 && !round.preparing && !round.planning && keepGoing());
    if (round.keys.length === 0) this.round = undefined;
    const ended = this.now();
    this.restUntil = ended + 2 * (ended - started);
  }

  private startRound(tables: readonly CheckpointTable[]): Round | undefined {
    const schedule = this.schedule;
    if (!schedule?.due()) return undefined;
    schedule.ran();
    const orphans = this.orphanSchedule!.due();
    if (orphans) this.orphanSchedule!.ran();
    const options = { ...maintenanceOptions(this.config), ...(orphans ? { orphansOlderThanMs: this.config.maintenance.removeOrphans.olderThanMs } : {}) };
    const keys = tables.map((t) => t.key);
    if (keys.length === 0) return undefined;
    return (this.round = { options, keys, step: 'compaction', done: {} });
  }

  /** One step of the round on its first table; returns the table as the step left it. */
  private async step(round: Round, t: CheckpointTable, table: CatalogTable, how: StepContext): Promise<CatalogTable> {
    const { keepGoing, waiting } = how;
    // each of its commits is followed by the table's writer: its key index moves to the
    // compacted files (a restart would otherwise take floe's own compaction for another writer's)
    const options = { ...round.options, onCommit: async (after: CatalogTable, compaction?: CompactionCommit) => void (await t.committer.followMaintenance(after, compaction)) };
    switch (round.step) {
      case 'compaction': {
        if (!round.inSteps && !round.continuing && t.committer.landsCompactions) {
          // prepared beside the checkpoints that go on meanwhile, landed after a later one
          const wanted = compactionWanted(table, options);
          round.step = wanted ? 'landing' : 'expiry';
          this.pieceStarted = undefined;
          if (wanted) round.preparing = prepare(table.io, prepareCompaction(table, { ...wanted, ...(this.parquetEncoder ? { parquet: { encoderFactory: this.parquetEncoder } } : {}), pause: how.pause }));
          return table;
        }
        const r = await compactTable(table, options, this.logger, { keepGoing, ...(round.continuing ? { continuing: round.continuing } : {}) });
        const compaction = addCompactions(round.done.compaction, r.compaction);
        round.done = { ...round.done, ...(compaction ? { compaction } : {}) };
        round.continuing = r.continuing;
        if (!r.continuing) round.step = 'expiry';
        return r.table;
      }
      case 'landing': {
        const landed = await this.land(round, t, table);
        if (!landed) return table;
        const compaction = { rewrittenDataFiles: landed.commit ? landed.commit.removedDataFiles.length : 0, removedDeleteFiles: landed.removedDeleteFiles, addedDataFiles: landed.commit?.addedDataFiles.length ?? 0 };
        round.done = { ...round.done, compaction };
        round.step = 'expiry';
        return landed.table;
      }
      case 'expiry': {
        if (!round.planning && waiting()) {
          // with changes waiting: planned beside the checkpoints that go on meanwhile, committed after a later one
          round.planning = prepare(table.io, planTableExpiry(table, options));
          return table;
        }
        const { result: planned, failure } = round.planning ?? {};
        delete round.planning;
        if (failure !== undefined) this.logger.warn('planning the expiry beside the commits failed; planning it again now', { table: t.key, err: failure });
        const { report, result } = await expireTable(table, options, this.logger, round.done, Date.now(), { ...(planned ? { planned } : {}), deleteLater: (deletion) => this.deleteLater(deletion) });
        round.expired = report;
        round.step = 'manifests';
        return result.table;
      }
      case 'manifests': {
        // last: the manifests of the head as the round leaves it (expiry does not change them)
        const r = await rewriteTableManifests(table, options, this.logger);
        const report = { ...round.expired!, ...(r.manifests ? { manifests: r.manifests } : {}) };
        if (report.expiredSnapshots > 0 || (report.orphanFiles ?? 0) > 0 || (report.manifests?.replaced ?? 0) > 0 || (report.compaction?.rewrittenDataFiles ?? 0) > 0) this.logger.info('maintenance: data files compacted, old snapshots expired, manifests rewritten, orphan files removed', { ...report, table: t.key });
        if (this.metrics?.tableHealth) this.metrics.tableHealth(t.key, await tableHealth(r.table.io, r.table.metadata, r.table.metadataLocation));
        this.nextTable(round);
        return r.table;
      }
    }
  }

  /**
   * The compaction prepared beside the writer lands (undefined: nothing was to rewrite, and the round
   * goes on to expiry; or it was not prepared — the table is not for it, the preparing failed — or
   * not landed, and the round compacts the table in steps instead).
   */
  private async land(round: Round, t: CheckpointTable, table: CatalogTable): Promise<LandedCompaction | undefined> {
    const { result, failure } = round.preparing!;
    delete round.preparing;
    if (failure === undefined && result === undefined) {
      round.step = 'expiry'; // nothing to rewrite after all
      return undefined;
    }
    if (failure !== undefined) this.logger.warn('preparing a compaction beside the commits failed; compacting in steps instead', { table: t.key, err: failure });
    if (result && !('skipped' in result)) {
      const landed = await t.committer.landCompaction(result, table);
      if (!landed.skipped) return landed;
      this.logger.info(`compaction prepared beside the commits not landed: ${landed.skipped}; compacting in steps instead`, { table: t.key });
    }
    round.step = 'compaction';
    round.inSteps = true;
    return undefined;
  }

  /** Ends a round's work on a table, leaving a compaction being prepared to end by itself and deleting what it wrote. */
  private nextTable(round: Round): void {
    round.keys.shift();
    round.step = 'compaction';
    round.done = {};
    delete round.continuing;
    delete round.inSteps;
    delete round.expired;
    if (round.preparing) void discardWhenSettled(round.preparing);
    delete round.preparing;
    delete round.planning;
  }

  /**
   * Between two pieces of work beside the commits: none is in flight, and none is due before a
   * piece as long as the last one would end; a closing run stops the work.
   */
  private async pause(pieceMayStart: ((pieceMs: number) => Promise<void>) | undefined): Promise<void> {
    if (this.closing) throw new FloeError('pipeline.maintenance', 'internal', 'the run is ending: the compaction being prepared is given up (its files are deleted)');
    const pieceMs = this.pieceStarted === undefined ? 0 : this.now() - this.pieceStarted;
    await pieceMayStart?.(pieceMs);
    this.pieceStarted = this.now();
  }

  /** Deletes the files an expiry unreferenced after the ones before, beside the writer's commits. */
  private deleteLater(deletion: () => Promise<void>): void {
    this.deleting = this.deleting.then(deletion).catch((e: unknown) => this.logger.warn('deleting files expired snapshots referenced failed; orphan removal takes them', { err: e }));
  }

  /** At the end of the run: a compaction being prepared is waited for and what it wrote deleted; expired files are deleted. */
  async close(): Promise<void> {
    this.closing = true;
    const { preparing, planning } = this.round ?? {};
    this.round = undefined;
    if (preparing) await discardWhenSettled(preparing);
    await planning?.done;
    await this.deleting;
  }
}

/** A compaction being prepared, followed until it settles. */
function prepare<T>(io: FileIO, promise: Promise<T>): Preparing<T> {
  const p: Preparing<T> = { io, settled: false };
  p.done = promise.then(
    (result) => void (p.result = result),
    (e: unknown) => void (p.failure = e),
  ).finally(() => void (p.settled = true));
  return p;
}

/** Deletes the files of a prepared compaction that will not land, once it is prepared. */
async function discardWhenSettled(p: Preparing<PreparedCompaction | { skipped: string } | undefined>): Promise<void> {
  await p.done;
  if (p.result && !('skipped' in p.result)) await discardRewrite(p.io, p.result.rewrite);
}
