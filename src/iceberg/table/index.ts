/**
 * Table operations: the public surface of `src/iceberg/table/` — creating and loading tables with
 * their catalog, committing snapshots (row deltas, appends) with optimistic retries, schema evolution
 * commits, and the unpartitioned spec for global equality deletes — every commit through the one
 * retry loop of commit-engine.ts.
 */
export { catalogTable, createTable, loadCatalogTable, reloadTable, type CatalogTable } from './catalog-table.js';
export {
  commitSnapshot,
  
  
  type CommitResult,
  
  
  
  
} from './snapshot-producer.js';
export { appendFiles, commitRowDelta,   } from './row-delta.js';
export { ensureUnpartitionedSpec, evolveTableSchema, replaceTableDefinition } from './table-updates.js';
export { unpartitionedSpecFor } from './added-spec.js';
export {  type RetryPolicy } from './commit-retry.js';
export { readManifestEntries, readSnapshotManifests } from './manifest-io.js';
export { packEnd,   } from './manifest-merge.js';
;
export * from './table-properties.js';
