/**
 * Where the source resumes, from every table's committed progress (state.ts). Tables can stand at
 * different points after a crash between per-table commits, or because one is new:
 *
 * - a table still snapshotting passes its plan and finished chunks: the source re-reads only the
 *   chunks that are not in the table (their rows were never committed, so re-reading them duplicates
 *   nothing) and filters its binlog changes by chunk high watermark at the hand-over;
 * - a streaming table passes an empty plan (nothing to snapshot) — or its kept plan, until its offset
 *   has passed the highest high watermark — and its offset;
 * - a table without committed progress is snapshotted (snapshot mode `initial`: no plan, the source
 *   splits it) or streamed from a given offset (`never` / `schema-only`, and tables created there).
 *
 * The binlog is read from the LOWEST point any table needs: the offsets of streaming tables, the high
 * watermarks of finished chunks (their tables need every change after them), and the start offsets of
 * fresh streaming tables. Each table then skips the transactions at or before its own offset
 * (`skipUntil`); the snapshot tables are protected by the hand-over filter instead.
 */
import type { SourceResume } from '../source/mysql/index.js';
import { minOffset, parseOffset, type BinlogOffset } from '../source/mysql/index.js';
import type { TableProgress } from './state.js';

export interface TableStart {
  /** 'db.table' */
  readonly key: string;
  /** What the table committed; undefined for a table the job never committed to. */
  readonly progress?: TableProgress;
  /** For a table without progress: where its binlog changes start; undefined = snapshot it. */
  readonly streamFrom?: BinlogOffset;
}

export interface ResumePlan {
  readonly resume: SourceResume;
  /** Per table: skip its transactions that are not after this offset (what the table already holds). */
  readonly skipUntil: ReadonlyMap<string, BinlogOffset>;
}

export function planResume(tables: readonly TableStart[]): ResumePlan {
  const plans: Record<string, readonly string[]> = {};
  const finished: Record<string, string> = {};
  const needed: BinlogOffset[] = [];
  const skipUntil = new Map<string, BinlogOffset>();
  for (const t of tables) {
    const p = t.progress;
    if (!p) {
      if (t.streamFrom) {
        plans[t.key] = [];
        needed.push(t.streamFrom);
        skipUntil.set(t.key, t.streamFrom);
      }
      continue;
    }
    plans[t.key] = p.snapshot ? p.snapshot.chunks : [];
    for (const [id, hw] of p.snapshot?.finished ?? []) {
      finished[id] = hw;
      if (p.phase === 'snapshot') needed.push(parseOffset(hw));
    }
    if (p.phase === 'streaming' && p.offset) {
      needed.push(p.offset);
      skipUntil.set(t.key, p.offset);
    }
  }
  const resume: SourceResume = { plans, finished, ...(needed.length ? { offset: minOffset(needed) } : {}) };
  return { resume, skipUntil };
}
