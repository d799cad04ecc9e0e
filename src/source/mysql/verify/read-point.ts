/**
 * Where in the binlog a verification read of one chunk stands (docs/verify.md "A consistent point"):
 * the read runs inside `START TRANSACTION WITH CONSISTENT SNAPSHOT`, so it sees the table as of one
 * instant, and that instant is placed in the binlog as exactly as the server allows —
 *
 * - MariaDB: exactly. Inside the transaction, `binlog_snapshot_file/position` is the binlog position
 *   of the read view (the snapshot reader's low watermark, watermark.ts): `low` = `high` = it.
 * - MySQL: between two watermarks taken right before and right after the transaction starts (a
 *   millisecond apart, not a whole SELECT apart as a chunk window is). With GTIDs the low watermark's
 *   executed set says which transactions the read view surely holds: MySQL adds a transaction to
 *   gtid_executed only once it is committed in InnoDB (WAIT_FOR_EXECUTED_GTID_SET relies on it), so
 *   a transaction in that set is visible to a read view made after it was read. Without GTIDs a
 *   transaction before the low watermark's position is taken as seen: one still between its binlog
 *   write and its InnoDB commit then (a group commit wide) is the case the snapshot reader accepts
 *   too (snapshot-reader.ts) — the delivery guarantee of the comparison weakens there.
 *
 * `readStatus` says, for one change of the binlog, whether the read holds it: 'yes', 'no', or
 * 'maybe' (between the watermarks, MySQL only).
 */
import type { BinlogOffset, EventPosition } from '../offset/offset.js';
import { isAfter } from '../offset/offset.js';

export interface ReadPoint {
  /** Every transaction at or before it (MySQL with GTIDs: in its GTID set) is in the read. */
  readonly low: BinlogOffset;
  /** No transaction after it is in the read. */
  readonly high: BinlogOffset;
  /** `low` is the read's exact point (MariaDB's consistent snapshot): nothing is 'maybe'. */
  readonly exact: boolean;
}

export type ReadStatus = 'yes' | 'maybe' | 'no';

/** Whether the read at `point` holds the change at `position` (module header). */
export function readStatus(point: ReadPoint, position: EventPosition): ReadStatus {
  if (point.exact) return isAfter(position, point.low) ? 'no' : 'yes';
  const gtids = point.low.gtids;
  if (gtids?.flavor === 'mysql' && position.gtid !== undefined) {
    if (gtids.set.contains(position.gtid)) return 'yes';
    return isAfter(position, point.high) ? 'no' : 'maybe';
  }
  if (!isAfter(position, point.low)) return 'yes';
  return isAfter(position, point.high) ? 'no' : 'maybe';
}
