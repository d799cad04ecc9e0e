/**
 * Where the lake stands for one table, as verification compares it: the table's current snapshot and
 * the offset up to which it holds the source (`floe.source-offset` of the job's last checkpoint,
 * state.ts). Comparable only once the table streams with its snapshot part settled — every
 * transaction at or before the offset is in the table, none after it; before that (a snapshot under
 * way, or the hand-over not yet past every chunk's high watermark) chunks stand at different points.
 *
 * The current snapshot may be a later one than the job's checkpoint (another engine's compaction,
 * a repair): such commits do not change what the rows say, so the offset still holds.
 */
import type { Catalog, TableIdentifier } from '../../iceberg/metadata/catalog.js';
import { currentSnapshot } from '../../iceberg/spec/snapshot-ids.js';
import { loadCatalogTable, type CatalogTable } from '../../iceberg/table/index.js';
import { lastCommitted, type CommittedCheckpoint } from '../../iceberg/checkpoint/index.js';
import { formatOffset, type BinlogOffset } from '../../source/mysql/index.js';
import { parseProgressSummary } from '../state.js';
import type { LakeSnapshot } from './lake-chunks.js';

export interface LakeState extends LakeSnapshot {
  readonly table: CatalogTable;
  readonly offset: BinlogOffset;
  readonly committed: CommittedCheckpoint;
}

/** The lake as comparable now, or why it is not. */
export async function loadLakeState(catalog: Catalog, identifier: TableIdentifier, jobId: string): Promise<LakeState | { notComparable: string }> {
  const table = await loadCatalogTable(catalog, identifier);
  const committed = lastCommitted(table.metadata, jobId);
  if (!committed) return { notComparable: `job ${jobId} has not committed to it (start floe run, or pass the job's config)` };
  const progress = parseProgressSummary(committed.sourceOffset);
  if (progress.phase !== 'streaming' || !progress.offset) {
    const s = progress.snapshot;
    return { notComparable: `its snapshot is still being copied${s ? ` (${s.finished} of ${s.chunks} chunks)` : ''}; verify it once floe run streams it` };
  }
  if (progress.snapshot) {
    return { notComparable: `it streams, but floe run has not yet committed past every chunk's high watermark (offset ${formatOffset(progress.offset)}); verify it after the next checkpoint` };
  }
  return { table, io: table.io, metadata: table.metadata, snapshotId: currentSnapshot(table.metadata)?.snapshotId, offset: progress.offset, committed };
}
