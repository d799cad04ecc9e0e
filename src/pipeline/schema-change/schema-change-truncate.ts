/**
 * `TRUNCATE TABLE` in the lake: one snapshot (operation `delete`) that removes every live data file
 * and every live delete file of the table — what Java's `DeleteFiles` with an always-true filter
 * commits. Chosen over equality deletes because it is exact whatever the table holds (keyless
 * tables, float columns) and leaves no delete files for readers to apply; the old files stay
 * reachable through earlier snapshots until they expire (time travel still sees the rows).
 *
 * Idempotent: replayed after a restart (the checkpoint before the TRUNCATE committed, the run died
 * before the next one), it removes whatever is live again — by then only rows that a second TRUNCATE
 * removes in MySQL too, since nothing after the statement was committed.
 */
import { currentSnapshot } from '../../iceberg/spec/snapshot-ids.js';
import type { DataFile } from '../../iceberg/spec/data-file.js';
import { commitSnapshot, readManifestEntries, readSnapshotManifests, type CatalogTable } from '../../iceberg/table/index.js';

export interface TruncateResult {
  readonly table: CatalogTable;
  readonly removedDataFiles: number;
  readonly removedDeleteFiles: number;
}

/** Removes every live file of the table in one snapshot; `summary` is added to the snapshot summary. */
export async function truncateLakeTable(table: CatalogTable, summary: Record<string, string> = {}): Promise<TruncateResult> {
  const snapshot = currentSnapshot(table.metadata);
  if (!snapshot) return { table, removedDataFiles: 0, removedDeleteFiles: 0 };
  const live: DataFile[] = [];
  for (const manifest of await readSnapshotManifests(table.io, snapshot)) {
    for (const entry of await readManifestEntries(table.io, manifest)) if (entry.status !== 'deleted') live.push(entry.dataFile);
  }
  if (live.length === 0) return { table, removedDataFiles: 0, removedDeleteFiles: 0 };
  const result = await commitSnapshot(table, { operation: 'delete', removedFiles: live }, { summary });
  const data = live.filter((f) => f.content === 'data').length;
  return { table: result.table, removedDataFiles: data, removedDeleteFiles: live.length - data };
}
