/**
 * Where a run starts, once the MySQL side and the catalog are open: the captured tables' Iceberg
 * tables (created when missing) and each one's committed progress (tables/prepared-tables.ts); the binlog
 * each resumes from, checked to be still on the server (purged-binlog-check.ts: a purged one stops
 * the run before anything is read or committed); the first checkpoint id; and the resume plan
 * (resume-plan.ts), with the offset tables without a snapshot stream from.
 */
import type { Catalog } from '../iceberg/metadata/catalog.js';
import type { FloeConfig } from '../config/schema.js';
import type { BinlogOffset, OpenedMySqlSource } from '../source/mysql/index.js';
import { FloeError } from '../util/errors.js';
import { configuredStart } from './config-options.js';
import type { Logger } from './observe/logger.js';
import { firstCheckpointId, prepareTables, type PreparedTable } from './tables/prepared-tables.js';
import { checkResumeBinlogs } from './purged-binlog-check.js';
import { planResume, type ResumePlan } from './resume-plan.js';

export interface RunStart extends ResumePlan {
  readonly prepared: readonly PreparedTable[];
  readonly firstId: bigint;
  /** Tables the job never committed to. */
  readonly fresh: readonly PreparedTable[];
  /** Where fresh tables stream from, when they are not snapshotted (snapshot mode never / schema-only). */
  readonly streamFrom: BinlogOffset | undefined;
}

export async function planRunStart(config: FloeConfig, mysql: OpenedMySqlSource, catalog: Catalog, logger: Logger): Promise<RunStart> {
  const source = config.source!;
  if (mysql.tables.size === 0) {
    throw new FloeError('config', 'config', `no table matches source.include ${JSON.stringify(source.include)} (minus source.exclude): expected at least one base table the source user can read`);
  }
  const prepared = await prepareTables(config, [...mysql.tables.values()], catalog, logger);
  // a table whose binlog was purged while floe was stopped: stop before anything is read or committed
  await checkResumeBinlogs(
    mysql,
    prepared.map((t) => ({ key: t.key, identifier: t.mapping.identifier, location: t.ready.table.metadata.location, progress: t.progress })),
    config.catalog.type,
  );
  const fresh = prepared.filter((t) => !t.progress);
  const streamFrom = source.snapshot.mode !== 'initial' && fresh.length > 0 ? await mysql.resolveStart(configuredStart(source)) : undefined;
  const plan = planResume(prepared.map((t) => ({ key: t.key, progress: t.progress, streamFrom: t.progress ? undefined : streamFrom })));
  return { ...plan, prepared, firstId: firstCheckpointId(prepared), fresh, streamFrom };
}
