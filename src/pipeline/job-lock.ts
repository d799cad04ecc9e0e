/**
 * The job lock of a configuration (source/mysql/job-lock.ts): `floe run` holds it for its whole run,
 * `floe verify --repair` while it repairs, so that the two never write one job's tables at once — a
 * repair commits checkpoints of the job, and a running floe run would meet them as its own
 * (docs/verify.md "Repair while floe run runs"). Named after the job's identity: its id, its
 * warehouse and its catalog.
 */
import type { FloeConfig } from '../config/schema.js';
import { JobLock, jobLockName, type MysqlConnectionConfig } from '../source/mysql/index.js';
import { FloeError } from '../util/errors.js';

/** The context of the error `takeJobLock` throws (callers tell it from other failures by it). */
const JOB_LOCKED: Readonly<Record<string, string>> = Object.freeze({ job: 'locked' });

/** Whether `e` is `takeJobLock`'s refusal. */
export function isJobLocked(e: unknown): boolean {
  return e instanceof FloeError && e.context.job === JOB_LOCKED.job;
}

function lockName(config: FloeConfig): string {
  const c = config.catalog;
  const where = c.type === 'sql' ? c.url : c.type === 'rest' ? c.uri : '';
  return jobLockName([config.job.id, config.warehouse.location, c.type, c.name, where]);
}

/**
 * Takes the job's lock, or throws a FloeError that names who holds it and what to do. `who` is the
 * command taking it ('floe run', 'floe verify --repair').
 */
export async function takeJobLock(config: FloeConfig, connection: MysqlConnectionConfig, who: string): Promise<JobLock> {
  const attempt = await JobLock.acquire(connection, lockName(config));
  if ('lock' in attempt) return attempt.lock;
  throw new FloeError(
    'pipeline',
    'unsupported',
    `${who}: job ${config.job.id} is in use by another process (MySQL connection ${attempt.heldBy ?? 'unknown'} holds its lock): another floe run of this job, or floe verify --repair; expected none — stop it first (one writer per job)`,
    { context: JOB_LOCKED },
  );
}
