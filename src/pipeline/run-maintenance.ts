/**
 * Scheduled maintenance during `floe run` (maintenance.ts), run right after a checkpoint: nothing of
 * floe's is being committed meanwhile. A failure is logged and tried again next interval — it never
 * stops the replication (the table is only less tidy). Orphan removal has its own, longer interval.
 */
import type { Catalog } from '../iceberg/metadata/catalog.js';
import type { FloeConfig } from '../config/schema.js';
import { tableHealth } from '../iceberg/maintenance/table-health.js';
import type { CompactionCommit } from '../iceberg/keyindex/index.js';
import { loadCatalogTable, type CatalogTable } from '../iceberg/table/index.js';
import type { CheckpointTable } from './checkpoint.js';
import { maintainTable, maintenanceOptions, MaintenanceSchedule } from './maintenance.js';
import type { Logger } from './observe/logger.js';
import type { Metrics } from './observe/metrics.js';

export class RunMaintenance {
  private readonly schedule: MaintenanceSchedule | undefined;
  private readonly orphanSchedule: MaintenanceSchedule | undefined;

  constructor(
    private readonly config: FloeConfig,
    private readonly logger: Logger,
    private readonly metrics: Metrics | undefined,
  ) {
    this.schedule = config.maintenance.enabled ? new MaintenanceSchedule(config.maintenance.intervalMs) : undefined;
    this.orphanSchedule = config.maintenance.enabled ? new MaintenanceSchedule(config.maintenance.removeOrphans.intervalMs) : undefined;
  }

  /** Whether `runIfDue` would maintain now. */
  get due(): boolean {
    return this.schedule?.due() ?? false;
  }

  /** Maintains every table when the interval has passed (call it after a checkpoint). */
  async runIfDue(catalog: Catalog, tables: Iterable<CheckpointTable>): Promise<void> {
    const schedule = this.schedule;
    if (!schedule?.due()) return;
    schedule.ran();
    const orphans = this.orphanSchedule!.due();
    if (orphans) this.orphanSchedule!.ran();
    const options = { ...maintenanceOptions(this.config), ...(orphans ? { orphansOlderThanMs: this.config.maintenance.removeOrphans.olderThanMs } : {}) };
    for (const t of tables) {
      try {
        // each of its commits is followed by the table's writer: its key index moves to the
        // compacted files (a restart would otherwise take floe's own compaction for another writer's)
        const follow = async (table: CatalogTable, compaction?: CompactionCommit): Promise<void> => {
          await t.committer.followMaintenance(table, compaction);
        };
        const { report, result } = await maintainTable(await loadCatalogTable(catalog, t.identifier), { ...options, onCommit: follow }, this.logger);
        if (report.expiredSnapshots > 0 || (report.orphanFiles ?? 0) > 0 || (report.manifests?.replaced ?? 0) > 0 || (report.compaction?.rewrittenDataFiles ?? 0) > 0) this.logger.info('maintenance: data files compacted, old snapshots expired, manifests rewritten, orphan files removed', { ...report, table: t.key });
        if (this.metrics?.tableHealth) this.metrics.tableHealth(t.key, await tableHealth(result.table.io, result.table.metadata, result.table.metadataLocation));
      } catch (e) {
        this.logger.warn('maintenance of a table failed; replication goes on, and it is tried again next interval', { table: t.key, err: e });
      }
    }
  }
}
