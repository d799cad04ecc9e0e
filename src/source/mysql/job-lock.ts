/**
 * The job lock: a MySQL named lock (`GET_LOCK`) that the process writing a job's tables holds on a
 * connection of its own — `floe run` for its whole run, `floe verify --repair` while it repairs — so
 * that the two never write the same tables at once (their checkpoint ids would collide: docs/verify.md
 * "Repair while floe run runs"). The server releases a named lock when its connection ends, so a
 * killed process never leaves it behind; the connection's wait_timeout is raised so that an idle
 * holder is not dropped by the server.
 *
 * Named locks need no privilege, and both MySQL and MariaDB have them. The name is derived from the
 * job's identity (job id, warehouse, catalog), hashed to fit MySQL's 64-character limit: two jobs
 * with the same id writing different warehouses do not exclude each other.
 */
import { createHash } from 'node:crypto';
import { FloeError } from '../../util/errors.js';
import { connectMysql, quoteString, type MysqlClient, type MysqlConnectionConfig } from './client.js';

/** The lock name of a job identified by `parts` (job id, warehouse location, catalog). */
export function jobLockName(parts: readonly string[]): string {
  return `floe-job:${createHash('sha256').update(parts.join('\u0000'), 'utf8').digest('hex').slice(0, 48)}`;
}

export type JobLockAttempt = { readonly lock: JobLock } | { readonly heldBy: number | undefined };

export class JobLock {
  private constructor(
    private readonly client: MysqlClient,
    readonly name: string,
  ) {}

  /** Takes the lock, waiting up to `waitSeconds` (0: not at all); `heldBy` names the holder's connection when taken. */
  static async acquire(connection: MysqlConnectionConfig, name: string, waitSeconds = 0): Promise<JobLockAttempt> {
    const client = await connectMysql(connection, { initStatements: ['SET SESSION wait_timeout = 31536000'] });
    let row: { got: unknown; holder: unknown } | undefined;
    try {
      [row] = await client.query<{ got: unknown; holder: unknown }>(`SELECT GET_LOCK(${quoteString(name)}, ${Math.max(0, Math.floor(waitSeconds))}) AS got, IS_USED_LOCK(${quoteString(name)}) AS holder`);
    } catch (e) {
      await client.close().catch(() => {});
      throw e;
    }
    if (row && Number(row.got) === 1) return { lock: new JobLock(client, name) };
    await client.close().catch(() => {});
    if (row?.got === null || row?.got === undefined) throw new FloeError('source.mysql', 'source', `GET_LOCK('${name}') returned NULL: expected 1 (taken) or 0 (held by another session) from the server`);
    return { heldBy: row.holder === null || row.holder === undefined ? undefined : Number(row.holder) };
  }

  /** Releases the lock (closing its connection: the server releases it then in any case). */
  async release(): Promise<void> {
    // the connection's end releases the lock even when RELEASE_LOCK cannot run
    await this.client.query(`SELECT RELEASE_LOCK(${quoteString(this.name)})`).catch(() => {});
    await this.client.close().catch(() => {});
  }
}
