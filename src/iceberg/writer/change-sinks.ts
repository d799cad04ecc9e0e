/**
 * What a mode writer of one table's checkpoint writes through — the sinks iceberg-rust's
 * `DeltaWriter` is made of (a data writer, a position-delete writer, an equality-delete writer) and
 * the counters they share. The table writer (table-change-writer.ts) builds them and injects them
 * into the writer of its mode: keyed-change-writer.ts (`upsert`, `append-only`) or
 * keyless-change-writer.ts (`append`); at prepare it finishes them into one row delta.
 */
import type { EqualityDeleteSink } from './equality-delete-sink.js';
import type { PartitionedDataSink } from './partitioned-data-sink.js';
import type { PositionDeleteSink } from './position-delete-sink.js';
import type { RowChange } from './row-change.js';
import type { WriterStats } from './writer-stats.js';

export interface ChangeSinks {
  data: PartitionedDataSink;
  positions: PositionDeleteSink;
  equality: EqualityDeleteSink;
  stats: WriterStats;
}

/** The writer of one mode: row changes (never `delete-matching`, which the table writer applies) in. */
export interface ModeWriter {
  /** One change; synchronous unless it must wait (then the promise must settle before the next). */
  step(change: Exclude<RowChange, { op: 'delete-matching' }>): Promise<void> | undefined;
  /** Drops the per-row state of the checkpoint (prepared or aborted). */
  clear(): void;
}
