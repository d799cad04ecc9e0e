/**
 * One table's share of a checkpoint (checkpoint.ts decides when and which tables): its progress
 * summary encoded and stamped (state.ts, `floe.source-offset`), its committer asked for the one
 * snapshot (table-committer.ts; a schema change may go with it), the state objects only its previous
 * progress needed removed, its counts reset and its commit reported to the metrics.
 */
import type { TableIdentifier } from '../iceberg/metadata/catalog.js';
import type { Snapshot } from '../iceberg/spec/table-metadata.js';
import type { SchemaCommit, TableCommitter } from '../iceberg/checkpoint/index.js';
import type { TableChangeWriterOptions } from '../iceberg/writer/index.js';
import type { FileIO } from '../io/file-io.js';
import { compareOffsets, parseOffset, serializeOffset, type BinlogOffset } from '../source/mysql/index.js';
import { errorMessage, FloeError } from '../util/errors.js';
import type { Logger } from './observe/logger.js';
import type { Metrics } from './observe/metrics.js';
import { encodeTableProgress, obsoleteStateObjects, settleProgress, strayStateObjects, type SnapshotProgress, type TableProgress } from './state.js';

const SUBSYSTEM = 'pipeline.checkpoint';

/** A table as checkpoints see it. */
export interface CheckpointTable {
  /** 'db.table' of the source table. */
  readonly key: string;
  readonly identifier: TableIdentifier;
  readonly io: FileIO;
  readonly location: string;
  readonly committer: TableCommitter;
  /** Writer options besides the mode, asked whenever a writer is opened (e.g. cascade match fields). */
  readonly writerOptions: () => TableChangeWriterOptions;
  /** Progress as the table holds it (undefined: the job never committed to it). */
  committed: TableProgress | undefined;
  /** Progress including what is buffered (the router updates it); its offset is set at commit time. */
  working: TableProgress | undefined;
  /** Transactions at or before this offset are already in the table (restart); cleared once passed. */
  skipUntil: BinlogOffset | undefined;
  checkpointsSinceCommit: number;
  lastCommitMs: number;
}

export interface CommittedTable {
  readonly key: string;
  readonly before: TableProgress | undefined;
  readonly after: TableProgress;
  /** Snapshot rows in the table (also when `after` no longer carries the snapshot part). */
  readonly snapshotRows: number | undefined;
  readonly snapshot: Snapshot | undefined;
}

/**
 * What a table's checkpoint commits besides its buffered changes and stamps: a schema change, or the
 * removal of every row (`truncate`: with nothing buffered).
 */
export interface TableCommitKind {
  readonly schema?: SchemaCommit;
  readonly truncate?: boolean;
}

/** What committing a table's checkpoint needs from the coordinator. */
export interface TableCheckpointContext {
  readonly logger: Logger;
  readonly metrics: Metrics | undefined;
  readonly now: () => number;
  /** Commit time of the last change routed (the table's lag). */
  readonly positionTimeMs: number | undefined;
}

/**
 * Commits checkpoint `id` of `table` with `progress` (and the changes its committer took out for it);
 * a conflict with another process of the job, or any failure, throws (the run stops and restarts from
 * what the tables hold).
 */
export async function commitTableCheckpoint(ctx: TableCheckpointContext, id: bigint, table: CheckpointTable, progress: TableProgress, how: TableCommitKind = {}): Promise<CommittedTable> {
  const started = ctx.now();
  // A table that never had a writer (only progress to record) must be known to its committer.
  if (table.committer.mode === undefined) await table.committer.open(table.writerOptions());
  // the table's whole progress summary (phase, offset, snapshot chunks), stamped as floe.source-offset
  const { summary: progressText, progress: recorded } = await encodeTableProgress(settleProgress(progress), {
    io: table.io,
    tableLocation: table.location,
    sourceKey: table.key,
    checkpointId: id,
  });
  let result;
  try {
    // no changes buffered: a stamps-only snapshot (the coordinator decided the table commits)
    result = how.truncate ? await table.committer.truncate(id, progressText) : await table.committer.commit(id, progressText, how.schema);
  } catch (e) {
    throw new FloeError(SUBSYSTEM, 'internal', `checkpoint ${id} of ${table.key} failed: ${errorMessage(e)}`, { cause: e, retryable: false });
  }
  if (result.status !== 'committed') {
    // Our ids are above everything the job committed when this process started: only another
    // process running the same job can have committed this one. Its changes would be dropped here.
    throw new FloeError(
      SUBSYSTEM,
      'commit-conflict',
      `checkpoint ${id} of ${table.key}: the table already holds checkpoint ${id} of this job (status ${result.status}); is another floe process running with the same job.id? Stop it; this process stops without committing`,
      { retryable: false },
    );
  }
  const before = table.committed;
  // State objects only `before` needed: a restart resumes from `recorded` now (best effort — a
  // leftover is harmless, and a commit whose outcome was unknown never gets here).
  for (const path of obsoleteStateObjects(before, recorded)) {
    await table.io.delete(path).catch((e: unknown) => ctx.logger.warn('could not remove a snapshot state object no longer needed', { table: table.key, path, err: e }));
  }
  // the snapshot part just dropped: every state object left is stray (a killed run's among them)
  if (before?.snapshot && !recorded.snapshot) {
    const stray = await strayStateObjects(table.io, table.location).catch((e: unknown) => {
      ctx.logger.warn('could not list the snapshot state objects left behind', { table: table.key, err: e });
      return [];
    });
    for (const path of stray) {
      await table.io.delete(path).catch((e: unknown) => ctx.logger.warn('could not remove a snapshot state object left behind', { table: table.key, path, err: e }));
    }
  }
  table.committed = recorded;
  table.working = recorded;
  table.checkpointsSinceCommit = 0;
  table.lastCommitMs = ctx.now();
  if (ctx.metrics) reportCommit(ctx.metrics, table.key, result.snapshot, (ctx.now() - started) / 1000, recorded, ctx.positionTimeMs, ctx.now());
  return { key: table.key, before, after: recorded, snapshotRows: progress.snapshot?.rows, snapshot: result.snapshot };
}

/**
 * A table's progress once it holds everything through `offset`: a streaming table stands there; a
 * table still in its snapshot (a DDL of the catch-up pass, hybrid-phases.ts) has its finished chunks raised
 * to it (the pass routed every change of their keys up to it).
 */
export function progressThrough(p: TableProgress | undefined, offset: BinlogOffset): TableProgress | undefined {
  if (!p) return undefined;
  if (p.phase === 'streaming') return { ...p, offset };
  return p.snapshot ? { ...p, snapshot: finishedAt(p.snapshot, offset) } : p;
}

/** The snapshot progress with every finished chunk's high watermark raised to `position`. */
export function finishedAt(s: SnapshotProgress, position: BinlogOffset): SnapshotProgress {
  const finished = new Map<string, string>();
  let raised = false;
  for (const [id, text] of s.finished) {
    if (compareOffsets(parseOffset(text), position) < 0) {
      finished.set(id, serializeOffset(position));
      raised = true;
    } else finished.set(id, text);
  }
  // a new progress object must be written for it: drop the location of the one holding the old marks
  return raised ? { chunks: s.chunks, finished, rows: s.rows, planLocation: s.planLocation } : s;
}

function summaryNumber(s: Snapshot | undefined, key: string): number {
  const v = s?.summary[key];
  return v === undefined ? 0 : Number(v);
}

function reportCommit(metrics: Metrics, key: string, snapshot: Snapshot | undefined, seconds: number, progress: TableProgress, positionTimeMs: number | undefined, nowMs: number): void {
  metrics.commitDuration(key, seconds);
  // The summary has one byte total for all added files; it is reported with the data files.
  metrics.filesWritten(key, 'data', summaryNumber(snapshot, 'added-data-files'), summaryNumber(snapshot, 'added-files-size'));
  metrics.filesWritten(key, 'delete', summaryNumber(snapshot, 'added-delete-files'), 0);
  if (progress.phase === 'streaming' && positionTimeMs !== undefined) metrics.tableLag(key, (nowMs - positionTimeMs) / 1000);
}
