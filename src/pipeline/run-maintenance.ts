/**
 * Scheduled maintenance during `floe run` (maintenance.ts), run right after a checkpoint: nothing of
 * floe's is being committed meanwhile. A failure is logged and tried again next interval — it never
 * stops the replication (the table is only less tidy). Orphan removal has its own, longer interval.
 *
 * A round runs in steps: compaction (one data file after another), then the manifest rewrite, then
 * expiry, table after table. While a step runs, changes are read but not committed; once changes are
 * waiting and one commit interval (`commit.intervalMs`) has passed since the checkpoint, the round
 * stops between two steps (or two data files) and goes on after a later checkpoint — not before
 * twice the time it just took has passed, so that the changes held meanwhile are committed first.
 * So under load a round holds changes back about one interval at a time and takes at most a third
 * of the time, instead of holding them for the whole round; on a quiet stream it runs to its end at
 * once, and a round left resting when the stream went quiet goes on without a checkpoint
 * (runner.ts, `msUntilStep`).
 */
import type { Catalog } from '../iceberg/metadata/catalog.js';
import type { FloeConfig } from '../config/schema.js';
import { tableHealth } from '../iceberg/maintenance/table-health.js';
import type { CompactionCommit } from '../iceberg/keyindex/index.js';
import { loadCatalogTable, type CatalogTable } from '../iceberg/table/index.js';
import type { CheckpointTable } from './checkpoint.js';
import { addCompactions, compactTable, expireTable, maintenanceOptions, MaintenanceSchedule, rewriteTableManifests, type CompactionProgress, type MaintenanceOptions, type TableMaintenanceReport } from './maintenance.js';
import type { Logger } from './observe/logger.js';
import type { Metrics } from './observe/metrics.js';

/** A round under way: the tables left (the first is being maintained) and where its steps are. */
interface Round {
  readonly options: MaintenanceOptions;
  readonly keys: string[];
  step: 'compaction' | 'manifests' | 'expiry';
  continuing?: CompactionProgress;
  done: Pick<TableMaintenanceReport, 'compaction' | 'manifests'>;
}

export class RunMaintenance {
  private readonly schedule: MaintenanceSchedule | undefined;
  private readonly orphanSchedule: MaintenanceSchedule | undefined;
  private readonly stepMs: number;
  private round: Round | undefined;
  /** When the round under way may go on (`now`): it rests twice as long as its last call took. */
  private restUntil = 0;

  constructor(
    private readonly config: FloeConfig,
    private readonly logger: Logger,
    private readonly metrics: Metrics | undefined,
    /** Milliseconds, for a step's length. */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.schedule = config.maintenance.enabled ? new MaintenanceSchedule(config.maintenance.intervalMs) : undefined;
    this.orphanSchedule = config.maintenance.enabled ? new MaintenanceSchedule(config.maintenance.removeOrphans.intervalMs) : undefined;
    this.stepMs = config.commit.intervalMs;
  }

  /** Whether `runIfDue` would maintain now: a round is under way and rested, or the interval has passed. */
  get due(): boolean {
    if (this.round) return this.now() >= this.restUntil;
    return this.schedule?.due() ?? false;
  }

  /** With a round under way, how long until it may go on (undefined: none is). */
  msUntilStep(): number | undefined {
    return this.round ? Math.max(0, this.restUntil - this.now()) : undefined;
  }

  /**
   * Steps of the round under way, or of a new one when the interval has passed (call it after a
   * checkpoint; at least one step runs): until the round ends, or `waiting` says changes are and one
   * commit interval has passed.
   */
  async runIfDue(catalog: Catalog, captured: Iterable<CheckpointTable>, waiting: () => boolean = () => false): Promise<void> {
    const tables = [...captured];
    const round = this.round ?? this.startRound(tables);
    if (!round) return;
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
        table = await this.step(round, t, table ?? (await loadCatalogTable(catalog, t.identifier)), keepGoing);
      } catch (e) {
        this.logger.warn('maintenance of a table failed; replication goes on, and it is tried again next interval', { table: t.key, err: e });
        this.nextTable(round);
      }
      if (round.step === 'compaction' && !round.continuing) table = undefined; // the next table's
    } while (round.keys.length > 0 && keepGoing());
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
  private async step(round: Round, t: CheckpointTable, table: CatalogTable, keepGoing: () => boolean): Promise<CatalogTable> {
    // each of its commits is followed by the table's writer: its key index moves to the
    // compacted files (a restart would otherwise take floe's own compaction for another writer's)
    const options = { ...round.options, onCommit: async (after: CatalogTable, compaction?: CompactionCommit) => void (await t.committer.followMaintenance(after, compaction)) };
    switch (round.step) {
      case 'compaction': {
        const r = await compactTable(table, options, this.logger, { keepGoing, ...(round.continuing ? { continuing: round.continuing } : {}) });
        const compaction = addCompactions(round.done.compaction, r.compaction);
        round.done = { ...round.done, ...(compaction ? { compaction } : {}) };
        round.continuing = r.continuing;
        if (!r.continuing) round.step = 'manifests';
        return r.table;
      }
      case 'manifests': {
        const r = await rewriteTableManifests(table, options, this.logger);
        round.done = { ...round.done, ...(r.manifests ? { manifests: r.manifests } : {}) };
        round.step = 'expiry';
        return r.table;
      }
      case 'expiry': {
        const { report, result } = await expireTable(table, options, this.logger, round.done);
        if (report.expiredSnapshots > 0 || (report.orphanFiles ?? 0) > 0 || (report.manifests?.replaced ?? 0) > 0 || (report.compaction?.rewrittenDataFiles ?? 0) > 0) this.logger.info('maintenance: data files compacted, old snapshots expired, manifests rewritten, orphan files removed', { ...report, table: t.key });
        if (this.metrics?.tableHealth) this.metrics.tableHealth(t.key, await tableHealth(result.table.io, result.table.metadata, result.table.metadataLocation));
        this.nextTable(round);
        return result.table;
      }
    }
  }

  private nextTable(round: Round): void {
    round.keys.shift();
    round.step = 'compaction';
    round.done = {};
    delete round.continuing;
  }
}
