/**
 * Table operations: the public surface of `src/iceberg/table/` — creating and loading tables with
 * their catalog, committing snapshots (row deltas, appends) with optimistic retries, schema evolution
 * commits, and the unpartitioned spec for global equality deletes.
 */
export { catalogTable, createTable, loadCatalogTable, reloadTable, type CatalogTable } from './catalog-table.js';
export {
  commitSnapshot,
  type CommitDecision,
  type CommitOptions,
  type CommitResult,
  type CommittedSnapshot,
  type SkippedCommit,
  type SnapshotChanges,
  type SnapshotOperation,
} from './snapshot-producer.js';
export { appendFiles, commitRowDelta, rowDeltaOperation, type RowDeltaFiles } from './row-delta.js';
export { ensureUnpartitionedSpec, evolveTableSchema, unpartitionedSpec } from './table-updates.js';
export { retryPolicy, type RetryPolicy } from './commit-retry.js';
export { readManifestEntries, readSnapshotManifests } from './manifest-io.js';
export { packEnd, mergePolicy, type MergePolicy } from './manifest-merge.js';
export { snapshotSummary, SnapshotSummaryBuilder, COMPUTED_SUMMARY_KEYS } from './snapshot-summary.js';
export * from './table-properties.js';
