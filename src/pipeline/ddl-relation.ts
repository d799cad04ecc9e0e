/**
 * How a DDL that the binlog stream reaches at some position stands to a captured table's data in the
 * lake (docs/design.md §3, "A schema change has a position"):
 *
 * - `history`: every row of the table in the lake is from after the DDL — its committed offset lies
 *   after it (a restart reads the binlog from the lowest offset of all tables), or every chunk of its
 *   snapshot was read after it (a table created, truncated or renamed in before floe copied it). The
 *   DDL is not applied to it again: a replayed TRUNCATE would remove the rows of a snapshot taken
 *   after it, and those rows' own changes before their chunks are never read again.
 * - `straddles`: the table's snapshot read some chunks before the DDL and some after (the DDL ran
 *   while the snapshot did): neither applying nor skipping it leaves the table right. Its snapshot
 *   starts over (checkpoint.ts `startOver`).
 * - `applies`: everything of the table in the lake is from before the DDL; it is applied at its
 *   position.
 */
import { isAfter, parseOffset, type DdlEvent } from '../source/mysql/index.js';
import type { CheckpointTable } from './checkpoint.js';

export type DdlRelation = 'history' | 'straddles' | 'applies';

export function ddlRelation(t: Pick<CheckpointTable, 'skipUntil' | 'working'>, position: DdlEvent['position']): DdlRelation {
  if (t.skipUntil && !isAfter(position, t.skipUntil)) return 'history';
  const finished = t.working?.snapshot?.finished;
  // A snapshot with no chunk finished meets a DDL only in the source's catch-up pass, after which
  // every chunk is read: with the definition captured before the pass, which any DDL in it
  // precedes (a later one makes the chunks' guard start floe again from the lake).
  if (t.working?.phase === 'snapshot' && finished && finished.size === 0) return 'history';
  if (!finished || finished.size === 0) return 'applies';
  let before = 0;
  for (const hw of finished.values()) if (isAfter(position, parseOffset(hw))) before++;
  if (before === finished.size) return 'applies';
  return before === 0 ? 'history' : 'straddles';
}
