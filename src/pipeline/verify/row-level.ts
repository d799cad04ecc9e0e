/**
 * Comparing chunks row by row at ONE point of the source's history: the chunks' rows are read on
 * the server (chunk-reads, each at its read point), the lake is read at its current snapshot, and the
 * server's rows are brought to the lake's offset with the table's binlog changes in between
 * (window-apply.ts) — so a chunk that changed while it was being compared (lag) compares equal,
 * and what differs is a real difference. A chunk whose rows cannot be brought there yet (a cascade
 * delete to undo, a keyless table changed during the read) is 'retry': compared again once floe run
 * has committed further.
 */
import type { Row, Value } from '../../model/values.js';
import { maxOffset, readChunkRows, rowsAtOffset, type Chunk } from '../../source/mysql/index.js';
import { diffChunkRows, type ChunkRowDiff } from './row-diff.js';
import type { TableRun } from './table-run.js';
import { settled } from './verify-session.js';

export type RowLevelVerdict = { readonly kind: 'equal' } | { readonly kind: 'differs'; readonly rows: ChunkRowDiff } | { readonly kind: 'retry'; readonly reason: string };

export async function compareRowByRow(run: TableRun, chunks: readonly Chunk[]): Promise<Map<number, RowLevelVerdict>> {
  const { session, mapped, plan } = run;
  const lake = await run.lake();
  const [reads, pass] = await settled([
    session.parallel(chunks, (client, chunk) => readChunkRows(client, session.server, mapped, chunk)),
    run.reader.read(lake, chunks, new Set(chunks.map((c) => c.index))),
  ]);
  run.count(pass);
  await run.log.until(maxOffset([lake.offset, ...reads.map((r) => r.point.high)]));
  const out = new Map<number, RowLevelVerdict>();
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i]!;
    const read = reads[i]!;
    const at = rowsAtOffset(mapped, read.rows, read.point, lake.offset, run.log.changes);
    if ('unresolvable' in at) {
      out.set(chunk.index, { kind: 'retry', reason: at.unresolvable });
      continue;
    }
    const mine = await inChunk(run, chunk, at.rows);
    const rows = diffChunkRows(plan, mine.map(plan.project), pass.rows.get(chunk.index) ?? [], { showValues: session.options.showValues, limit: session.options.rowLimit });
    out.set(chunk.index, rows.onlyInLake + rows.onlyInMysql + rows.differing === 0 ? { kind: 'equal' } : { kind: 'differs', rows });
  }
  return out;
}

/** The rows whose chunk key lies in `chunk` (rows moved in or out by the changes applied). */
async function inChunk(run: TableRun, chunk: Chunk, rows: readonly Row[]): Promise<Row[]> {
  if (run.keyIdx.length === 0 || run.chunks.length === 1) return [...rows];
  const located = await run.locator.locateMany(rows.map((r) => run.keyIdx.map((i) => r[i] as Value)));
  return rows.filter((_, i) => located[i] === chunk.index);
}
