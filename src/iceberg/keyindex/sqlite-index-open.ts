/**
 * Opening a table's persisted disk key index (sqlite-key-index.ts) and bringing it to the table's
 * current snapshot — or saying why it must be rebuilt from the lake instead.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { errorMessage } from '../../util/errors.js';
import type { FileIO } from '../../io/file-io.js';
import { planScan } from '../scan/scan-plan.js';
import { ancestorsOf, currentSnapshot } from '../spec/snapshot-ids.js';
import { DELETED_DATA_FILES } from '../table/snapshot-summary.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import { keyReader } from './key-index-build.js';
import type { TableKey } from './table-key.js';
import { DiskKeyIndex, type DiskIndexIdentity } from './sqlite-key-index.js';

/**
 * Whether every snapshot from `from` (excluded) to `to` that removed data files is floe's own
 * compaction (maintenance/rewrite-data-files.ts, summary `floe.maintenance: rewrite-data-files`) —
 * `from` must be an ancestor of `to`. Another writer's rewrite is not trusted here (its rows'
 * places are found by a rebuild, as committed-dv-targets.ts finds them at commit).
 */
function onlyOwnRewritesRemovedFiles(m: TableMetadata, from: bigint | undefined, to: bigint | undefined): boolean {
  if (from === undefined || to === undefined) return false;
  for (const s of ancestorsOf(m, to)) {
    if (s.snapshotId === from) return true;
    const removed = Number(s.summary[DELETED_DATA_FILES] ?? '0');
    if (removed > 0 && s.summary['floe.maintenance'] !== 'rewrite-data-files') return false;
  }
  return false; // `from` is not in the history of `to`
}

export type DiskIndexOpen = { index: DiskKeyIndex; how: 'reused' | 'replayed'; replayedFiles: number } | { index: undefined; why: string; missing: boolean };

/**
 * Opens the table's persisted index and brings it to the current snapshot, or says why it must be
 * rebuilt (the database is then closed; the caller rebuilds over it).
 */
export async function openDiskKeyIndex(path: string, table: { io: FileIO; metadata: TableMetadata }, key: TableKey, identity: DiskIndexIdentity): Promise<DiskIndexOpen> {
  if (!existsSync(path)) return { index: undefined, why: 'no index on disk', missing: true };
  let opened: ReturnType<typeof DiskKeyIndex.openExisting>;
  try {
    opened = DiskKeyIndex.openExisting(path);
  } catch (e) {
    return { index: undefined, why: `unreadable (${errorMessage(e)})`, missing: false };
  }
  const { index, stamp, files } = opened;
  try {
    if (!stamp) {
      index.close();
      return { index: undefined, why: 'its build was interrupted (no stamp)', missing: false };
    }
    const m = table.metadata;
    const plan = await planScan(table.io, m);
    const head = currentSnapshot(m)?.snapshotId;
    const stamped = stamp.snapshot_id === '' ? undefined : BigInt(stamp.snapshot_id);
    const r = await index.catchUp(stamp, files, identity, head, plan.tasks, keyReader(table, key, plan.schema), onlyOwnRewritesRemovedFiles(m, stamped, head));
    if ('stale' in r) {
      index.close();
      return { index: undefined, why: r.stale, missing: false };
    }
    return { index, how: r.replayedFiles === 0 ? 'reused' : 'replayed', replayedFiles: r.replayedFiles };
  } catch (e) {
    index.close();
    // the lake failing to answer is not the cache's fault: raised as it is
    if (!(e instanceof Database.SqliteError)) throw e;
    return { index: undefined, why: `unreadable (${errorMessage(e)})`, missing: false };
  }
}
