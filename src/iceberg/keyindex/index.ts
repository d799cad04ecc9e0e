/**
 * The primary-key index of deletion-vector upserts: the public surface of `src/iceberg/keyindex/`
 * (docs/design.md §4a). The table committer keeps one per table (key-index-lifecycle.ts); what the
 * pipeline passes in is the seam that decodes key columns off its thread (`KeyColumnReader`; the
 * worker-thread one is worker-key-column.ts, which only cli/ imports).
 */
export type { KeyColumnReader } from './key-column-reader.js';
export type { CompactionCommit } from './key-index.js';
export { encodeKey } from './row-key.js';
