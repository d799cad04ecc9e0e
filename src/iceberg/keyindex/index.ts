/**
 * The primary-key index of deletion-vector upserts: the public surface of `src/iceberg/keyindex/`
 * (docs/design.md §4a). The table committer keeps one per table (key-index-lifecycle.ts); what the
 * pipeline passes in is the seam that builds an index off its thread (`KeyTableBuilder`; the
 * worker-thread one is worker-key-table.ts, which only cli/ imports).
 */
export type { KeyTableBuilder } from './key-table-builder.js';
export { encodeKey } from './row-key.js';
export type { CompactionCommit } from './key-index.js';
