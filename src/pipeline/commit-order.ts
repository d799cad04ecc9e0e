/**
 * The order a checkpoint's tables commit in: each after the tables it must follow (`commitFirst`),
 * depth first, so that a worker waiting on another table's commit only waits on one begun already.
 * A cycle is cut where the walk meets it.
 */
import type { CheckpointTable } from './table-checkpoint.js';

export function commitOrder<T extends { table: CheckpointTable }>(work: readonly T[], commitFirst: (key: string) => readonly string[]): T[] {
  const byKey = new Map(work.map((w) => [w.table.key, w]));
  const out: T[] = [];
  const seen = new Set<string>();
  const visit = (w: T) => {
    if (seen.has(w.table.key)) return;
    seen.add(w.table.key);
    for (const k of commitFirst(w.table.key)) {
      const first = byKey.get(k);
      if (first) visit(first);
    }
    out.push(w);
  };
  for (const w of work) visit(w);
  return out;
}
