/**
 * What a verification found, per table and per chunk: the records `floe verify` prints (a summary
 * table, or JSON lines with `--json`), `floe run`'s scheduled verification reports as a gauge and a
 * notification, and the exit code is decided from (docs/verify.md "Output").
 */
import type { JsonValue } from '../../util/json.js';
import type { ChunkRowDiff } from './row-diff.js';

/**
 * - equal: every chunk compared equal (at one point of the source's history each);
 * - differs: some chunk differs (see `differences`);
 * - repaired: it differed, `--repair` re-copied those chunks, and they verify equal now;
 * - unverified: some chunk could not be compared at one point (see `reason`); none differed;
 * - skipped: the table was not compared at all (`reason`: not in the lake yet, still in its
 *   snapshot, …).
 */
type TableStatus = 'equal' | 'differs' | 'repaired' | 'unverified' | 'skipped';

export interface ChunkDifference {
  readonly chunk: number;
  /** The chunk's key range: inclusive lower, exclusive upper bound (absent: open). */
  readonly lower?: readonly JsonValue[];
  readonly upper?: readonly JsonValue[];
  readonly rows: ChunkRowDiff;
}

export interface RepairOutcome {
  readonly chunks: number;
  /** Rows written (inserted or replaced) and deleted in the lake. */
  readonly rowsWritten: number;
  readonly rowsDeleted: number;
  readonly checkpointIds: readonly string[];
  /** Chunks that still differ after the repair (verified again). */
  readonly stillDiffering: number;
}

interface TableStats {
  readonly chunks: number;
  /** Chunks whose checksums settled it. */
  readonly checksumEqual: number;
  /** Chunks compared row by row (their checksums differed, or they changed around the read). */
  readonly rowByRow: number;
  readonly mysqlRows: number;
  readonly lakeRowsRead: number;
  readonly lakeFilesRead: number;
  readonly lakeBytesRead: number;
  readonly seconds: number;
}

export interface TableVerification {
  /** `db.table` */
  readonly table: string;
  /** The Iceberg table, `namespace.name`. */
  readonly iceberg: string;
  readonly status: TableStatus;
  readonly reason?: string;
  /** The snapshot and `floe.source-offset` offset the lake was compared at (the last pass's). */
  readonly lakeSnapshotId?: string;
  readonly lakeOffset?: string;
  readonly differences: readonly ChunkDifference[];
  readonly unverifiedChunks: readonly { readonly chunk: number; readonly reason: string }[];
  readonly excludedColumns: readonly { readonly column: string; readonly reason: string }[];
  readonly notes: readonly string[];
  readonly stats?: TableStats;
  readonly repair?: RepairOutcome;
}

/** The verdict over all tables: 'differs' beats 'unverified' beats 'equal'. */
export function overallStatus(tables: readonly TableVerification[]): 'equal' | 'differs' | 'unverified' {
  if (tables.some((t) => t.status === 'differs' || (t.repair && t.repair.stillDiffering > 0))) return 'differs';
  if (tables.some((t) => t.status === 'unverified' || t.status === 'skipped')) return 'unverified';
  return 'equal';
}
