/**
 * One verification of a job's tables (docs/verify.md): each captured table (or those asked for) is
 * compared with its Iceberg table chunk by chunk (table-verification.ts), and — with `repair` —
 * the chunks that differ are copied again (repair.ts) under the job lock. What `floe verify` runs,
 * and `floe run` when it schedules a verification (scheduled-verify.ts, never with repair).
 *
 * A table that cannot be compared (no Iceberg table, still in its snapshot) is reported 'skipped';
 * one whose comparison failed part way (a lost connection, a table dropped meanwhile) 'unverified',
 * with the error — the other tables are still verified.
 */
import type { FloeConfig } from '../../config/schema.js';
import type { JobLock, MappedTable } from '../../source/mysql/index.js';
import { tableKey } from '../../source/mysql/index.js';
import { errorMessage } from '../../util/errors.js';
import { takeJobLock } from '../job-lock.js';
import type { Logger } from '../observe/logger.js';
import { icebergIdentifier } from '../table-mapping.js';
import { RepairCheckpoints, repairChunks } from './repair.js';
import { openTableRun } from './table-run.js';
import { verifyTableRun } from './table-verification.js';
import { overallStatus, type TableVerification } from './verify-result.js';
import { VerifySession, type VerifyOptions } from './verify-session.js';

export interface VerificationReport {
  readonly status: 'equal' | 'differs' | 'unverified';
  readonly tables: readonly TableVerification[];
  readonly seconds: number;
}

export interface VerifyHooks {
  /** A table's verification starts (`estimatedRows`: the server's estimate). */
  readonly tableStarted?: (table: string, estimatedRows: number) => void;
  readonly tableFinished?: (result: TableVerification) => void;
}

export async function runVerification(config: FloeConfig, options: VerifyOptions, logger: Logger, hooks: VerifyHooks = {}): Promise<VerificationReport> {
  const started = Date.now();
  const session = await VerifySession.open(config, options, logger);
  let lock: JobLock | undefined;
  try {
    if (options.repair) lock = await takeJobLock(config, session.connection, 'floe verify --repair');
    const checkpoints = new RepairCheckpoints(session);
    const tables = session.tables;
    const estimates = await session.source.rowEstimates(tables.map((m) => m.schema.id));
    const results: TableVerification[] = [];
    for (const mapped of tables) {
      session.checkAborted();
      const key = tableKey(mapped.schema.id);
      hooks.tableStarted?.(key, estimates.get(key) ?? 0);
      const result = await verifyOne(session, mapped, checkpoints);
      results.push(result);
      hooks.tableFinished?.(result);
    }
    return { status: overallStatus(results), tables: results, seconds: (Date.now() - started) / 1000 };
  } finally {
    await lock?.release();
    await session.close();
  }
}

async function verifyOne(session: VerifySession, mapped: MappedTable, checkpoints: RepairCheckpoints): Promise<TableVerification> {
  const key = tableKey(mapped.schema.id);
  const iceberg = () => {
    const id = icebergIdentifier(mapped.schema.id, session.config);
    return [...id.namespace, id.name].join('.');
  };
  const base = { table: key, differences: [], unverifiedChunks: [], excludedColumns: [], notes: [] };
  let run;
  try {
    run = await openTableRun(session, mapped);
  } catch (e) {
    session.checkAborted();
    return { ...base, iceberg: iceberg(), status: 'unverified', reason: errorMessage(e) };
  }
  if ('skipped' in run) return { ...base, iceberg: run.iceberg, status: 'skipped', reason: run.skipped };
  try {
    const { result, differing } = await verifyTableRun(run);
    if (!session.options.repair || differing.length === 0) return result;
    try {
      const repair = await repairChunks(run, differing, checkpoints);
      return { ...result, status: repair.stillDiffering === 0 ? 'repaired' : 'differs', repair };
    } catch (e) {
      // what differs is known either way: the report keeps it, and says why it was not repaired
      session.checkAborted();
      session.logger.warn('repair of a table failed', { table: key, err: e });
      return { ...result, notes: [...result.notes, `not repaired: ${errorMessage(e)}`] };
    }
  } catch (e) {
    session.checkAborted();
    session.logger.warn('verification of a table failed', { table: key, err: e });
    return { ...base, iceberg: iceberg(), status: 'unverified', reason: errorMessage(e) };
  } finally {
    await run.close();
  }
}
