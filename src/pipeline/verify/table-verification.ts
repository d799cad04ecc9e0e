/**
 * Verifying one table (docs/verify.md): chunk by chunk on the snapshot's chunks,
 *
 * 1. checksums — a batch of chunks is checksummed on the server (each at its read point), the lake's
 *    rows of those chunks are folded into the same checksums at the lake's current snapshot, and the
 *    table's binlog says which chunks changed between the two (changed-chunks.ts). An unchanged chunk
 *    whose checksums agree is equal; one whose checksums differ differs; a changed chunk is
 *    checksummed once more (its second read is closer to the lake's point), then compared row by row;
 * 2. row by row — at one point of the source's history (row-level.ts): what differs then is reported,
 *    lag never is. A chunk that cannot be placed at one point yet is tried again a few times, as floe
 *    run commits further, then reported unverified.
 *
 * Batches: where the lake's files can be pruned by key (lake-chunks.ts), about a million rows of
 * chunks per batch, each compared with the lake as it is then; otherwise — or where pruning would read
 * the same files again and again (files spanning the whole key range, as compaction writes them) —
 * one batch: the table's files are read once per round.
 */
import { changedChunks, maxOffset, readChunkChecksum, type Chunk, type ChunkChecksum, type ReadPoint } from '../../source/mysql/index.js';
import { errorMessage } from '../../util/errors.js';
import type { JsonValue } from '../../util/json.js';
import { toHex, type Value } from '../../model/values.js';
import { compareRowByRow, type RowLevelVerdict } from './row-level.js';
import type { TableRun } from './table-run.js';
import type { ChunkDifference, TableVerification } from './verify-result.js';
import { settled } from './verify-session.js';

const ROWS_PER_BATCH = 1_000_000;
const ROWS_PER_ROW_LEVEL_GROUP = 200_000;
const CHECKSUM_ROUNDS = 2;
const ROW_LEVEL_ATTEMPTS = 4;

export interface TableOutcome {
  readonly result: TableVerification;
  /** The chunks that differ (for the repair). */
  readonly differing: readonly Chunk[];
}

export async function verifyTableRun(run: TableRun): Promise<TableOutcome> {
  const started = Date.now();
  const { session } = run;
  const equal = new Set<number>();
  const differences = new Map<number, ChunkDifference>();
  const unverified: { chunk: number; reason: string }[] = [];
  let rowByRow: Chunk[] = [];
  let suspects: Chunk[] = [...run.chunks];
  let mysqlRows = 0;

  for (let round = 0; round < CHECKSUM_ROUNDS && suspects.length > 0; round++) {
    const changed: Chunk[] = [];
    for (const batch of await batchesOf(run, suspects)) {
      session.checkAborted();
      // the two sides at once: the server's statements and the lake's files are independent reads
      const lake = await run.lake();
      const [sums, pass] = await settled([
        session.parallel(batch, (client, chunk) => readChunkChecksum(client, session.server, run.mapped, chunk, run.plan.canonical)),
        run.reader.read(lake, batch, new Set()),
      ]);
      run.count(pass);
      await run.log.until(maxOffset([lake.offset, ...sums.map((s) => s.point.high)]));
      const points = new Map<number, ReadPoint>(batch.map((c, i) => [c.index, sums[i]!.point]));
      const moved = await changedChunks(run.log.changes, run.locator, run.keyIdx, points, lake.offset);
      batch.forEach((chunk, i) => {
        const same = agree(sums[i]!, pass.sums.get(chunk.index)!.total());
        if (moved.has(chunk.index)) changed.push(chunk);
        else if (same) equal.add(chunk.index);
        else rowByRow.push(chunk);
      });
      run.log.trimThrough(lake.offset);
      if (round === 0) {
        const rows = sums.reduce((n, s) => n + Number(s.rows), 0);
        mysqlRows += rows;
        session.options.onRows?.(run.key, rows);
      }
    }
    suspects = changed;
  }
  rowByRow = [...rowByRow, ...suspects].sort((a, b) => a.index - b.index);
  const checksumEqual = equal.size;

  for (let attempt = 0; attempt < ROW_LEVEL_ATTEMPTS && rowByRow.length > 0; attempt++) {
    if (attempt > 0) await pause(Math.min(session.config.commit.intervalMs, 5_000), session.options.signal);
    const retry: { chunk: Chunk; reason: string }[] = [];
    for (const group of groupsOf(rowByRow, Math.max(1, Math.floor(ROWS_PER_ROW_LEVEL_GROUP / session.options.chunkSize)))) {
      session.checkAborted();
      const verdicts = await compareRowByRow(run, group);
      for (const chunk of group) {
        const v: RowLevelVerdict = verdicts.get(chunk.index)!;
        if (v.kind === 'equal') equal.add(chunk.index);
        else if (v.kind === 'differs') differences.set(chunk.index, { chunk: chunk.index, ...bounds(chunk), rows: v.rows });
        else retry.push({ chunk, reason: v.reason });
      }
      run.log.trimThrough(run.last.offset);
    }
    rowByRow = retry.map((r) => r.chunk);
    if (attempt === ROW_LEVEL_ATTEMPTS - 1) unverified.push(...retry.map((r) => ({ chunk: r.chunk.index, reason: r.reason })));
  }

  const differing = run.chunks.filter((c) => differences.has(c.index));
  const notes = [...run.notes];
  if (run.log.ddl) notes.push(`a DDL on the table ran during the verification (${run.log.ddl}); verify again once floe run has applied it`);
  return {
    differing,
    result: {
      table: run.key,
      iceberg: [...run.identifier.namespace, run.identifier.name].join('.'),
      status: differences.size > 0 ? 'differs' : unverified.length > 0 ? 'unverified' : 'equal',
      ...(unverified.length > 0 && differences.size === 0 ? { reason: `${unverified.length} chunk(s) could not be compared at one point of the binlog` } : {}),
      lakeSnapshotId: run.last.snapshotId?.toString(),
      lakeOffset: run.last.committed.sourceOffset,
      differences: [...differences.values()].sort((a, b) => a.chunk - b.chunk),
      unverifiedChunks: unverified,
      excludedColumns: run.plan.excluded,
      notes,
      stats: {
        chunks: run.chunks.length,
        checksumEqual,
        rowByRow: run.chunks.length - checksumEqual,
        mysqlRows,
        lakeRowsRead: run.counters.rowsRead,
        lakeFilesRead: run.counters.filesRead,
        lakeBytesRead: run.counters.bytesRead,
        seconds: (Date.now() - started) / 1000,
      },
    },
  };
}

function agree(mysql: ChunkChecksum, lake: { rows: bigint; sum: bigint }): boolean {
  return mysql.rows === lake.rows && mysql.sum === lake.sum;
}

/** Batches of consecutive chunks (module header). */
async function batchesOf(run: TableRun, chunks: readonly Chunk[]): Promise<Chunk[][]> {
  const size = Math.max(run.session.options.parallelism, Math.ceil(ROWS_PER_BATCH / run.session.options.chunkSize));
  if (chunks.length <= size) return [[...chunks]];
  const batches = groupsOf(chunks, size);
  // pruning pays only when the batches read mostly different files
  try {
    const lake = await run.lake();
    const planned = await run.reader.plannedBytes(lake, batches);
    if (planned.total > 2 * planned.table) return [[...chunks]];
  } catch (e) {
    run.session.logger.debug('could not plan the lake reads by key range; reading the table once', { table: run.key, err: errorMessage(e) });
    return [[...chunks]];
  }
  return batches;
}

function groupsOf<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function boundJson(v: Value): JsonValue {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Uint8Array) return toHex(v);
  return v;
}

function bounds(chunk: Chunk): Pick<ChunkDifference, 'lower' | 'upper'> {
  return { ...(chunk.lower ? { lower: chunk.lower.map(boundJson) } : {}), ...(chunk.upper ? { upper: chunk.upper.map(boundJson) } : {}) };
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}
