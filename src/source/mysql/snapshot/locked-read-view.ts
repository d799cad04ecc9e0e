/**
 * The exact read point of a keyless chunk on MySQL. A chunk of a table without a primary key cannot be
 * backfilled (its rows have no identity to upsert by), so its rows must be the table exactly at the
 * chunk's low watermark: the hand-over replays every change after it, and one the SELECT had already
 * seen would be applied twice (an update's new row appended again). MariaDB reports the binlog
 * position of a consistent snapshot (watermark.ts); MySQL does not, and a watermark read before an
 * autocommit SELECT lets transactions that commit in between into both.
 *
 * So, for the moment it takes to open a read view, writers of the table are held off:
 *
 *   lock session:  LOCK TABLES t READ            (waits until no transaction is writing t)
 *   chunk session: START TRANSACTION WITH CONSISTENT SNAPSHOT; low watermark
 *   lock session:  UNLOCK TABLES
 *   chunk session: SELECT the chunk (from the read view); COMMIT
 *
 * A transaction that changes t holds t's metadata lock until it ends — after its binlog write and its
 * engine commit — and `LOCK TABLES … READ` waits for those locks and keeps new writers out (MySQL 8.0
 * Reference Manual, "Metadata Locking" and "LOCK TABLES and UNLOCK TABLES Statements"). While it is
 * held, every change of t is both in the binlog before the watermark and visible to the read view, and
 * every later one is after the watermark and invisible to it. `WITH CONSISTENT SNAPSHOT` opens the
 * read view at once, and only at REPEATABLE READ ("START TRANSACTION … Statements"), which the
 * chunk session asks for. The lock is taken on a session of its own because `START TRANSACTION`
 * releases the table locks of its own session.
 *
 * Delivery guarantee: when the user may not lock the table (no LOCK TABLES privilege) or the lock is
 * not granted within {@link LOCK_WAIT_SECONDS} (a long transaction writing the table; a waiting lock
 * request also holds up the writers queued behind it, so it must not wait long), the chunk is read
 * after a plain watermark as before: at-least-once, and the caller is told why.
 */
import { errorMessage } from '../../../util/errors.js';
import { mysqlErrorCode, quoteIdent, type MysqlClient } from '../client.js';
import type { ServerDialect } from '../dialect.js';
import type { BinlogOffset, ServerIdentity } from '../offset/offset.js';
import { qualifiedTable, tableKey, type TableId } from '../schema/table-schema.js';
import { readWatermark } from './watermark.js';

/** How long the lock request may wait (MySQL's lock_wait_timeout, whole seconds). */
const LOCK_WAIT_SECONDS = 5;

/** Errors that mean "no lock now" rather than "the server failed": the chunk is read without one. */
const NO_LOCK_CODES = new Set(['ER_TABLEACCESS_DENIED_ERROR', 'ER_DBACCESS_DENIED_ERROR', 'ER_SPECIFIC_ACCESS_DENIED_ERROR', 'ER_LOCK_WAIT_TIMEOUT']);

export type LockedReadView = { readonly low: BinlogOffset } | { readonly refused: string };

/**
 * Opens a read view on `client` (a transaction the caller ends with COMMIT) whose content is exactly
 * the table at the returned low watermark, using `locker` for the lock; or says why it could not lock.
 */
export async function openLockedReadView(client: MysqlClient, locker: MysqlClient, table: TableId, dialect: ServerDialect, identity: ServerIdentity): Promise<LockedReadView> {
  try {
    await locker.query(`SET SESSION lock_wait_timeout = ${LOCK_WAIT_SECONDS}`);
    await locker.query(`LOCK TABLES ${qualifiedTable(table)} READ`);
  } catch (e) {
    const code = mysqlErrorCode(e);
    if (code === undefined || !NO_LOCK_CODES.has(code)) throw e;
    const why =
      code === 'ER_LOCK_WAIT_TIMEOUT'
        ? `LOCK TABLES ${tableKey(table)} READ waited ${LOCK_WAIT_SECONDS} s behind a transaction writing the table`
        : `the source user may not lock ${tableKey(table)} (GRANT LOCK TABLES ON ${quoteIdent(table.database)}.* to it)`;
    return { refused: `${why}: ${errorMessage(e)}` };
  }
  try {
    await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    await client.query('START TRANSACTION WITH CONSISTENT SNAPSHOT');
    return { low: await readWatermark(client, dialect, identity) };
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    // a failure here is a broken session, whose locks the server drops with it: the chunk fails (retryable)
    await locker.query('UNLOCK TABLES');
  }
}
