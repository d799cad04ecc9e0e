/** What a table committer (table-committer.ts) is made with, and what one of its commits came to. */
import type { Catalog, TableIdentifier } from '../metadata/catalog.js';
import type { Snapshot } from '../spec/table-metadata.js';
import type { RetryPolicy } from '../table/index.js';
import type { TableChangeWriterOptions, WriterStats } from '../writer/table-change-writer.js';
import type { KeyIndexOptions } from '../keyindex/key-index-lifecycle.js';

export interface TableCommitterOptions extends KeyIndexOptions {
  catalog: Catalog;
  /** The table this committer commits to. */
  identifier: TableIdentifier;
  /** The pipeline's stable identity (`floe.job-id`). */
  jobId: string;
  /** Defaults for the table's writer (the mode and others per `open`). */
  writer?: TableChangeWriterOptions;
  retry?: Partial<RetryPolicy>;
}

export interface TableCommitOutcome {
  identifier: TableIdentifier;
  /**
   * 'committed': a snapshot with this checkpoint was committed (or found, for an unknown outcome
   * that landed). 'already-committed': the table already held this checkpoint (or a later one) of
   * this job; the buffered changes were dropped.
   */
  status: 'committed' | 'already-committed';
  snapshot?: Snapshot;
  stats?: WriterStats;
}
