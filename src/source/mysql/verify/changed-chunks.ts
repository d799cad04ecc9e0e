/**
 * Which chunks changed between their read on the server and the lake's offset: for those, equal or
 * different checksums prove nothing (the two sides were taken at different points of the table's
 * history), and the chunk is compared row by row at one point instead (window-apply.ts).
 *
 * A change of the table sits in a chunk by its old and its new key (a key-changing update can sit in
 * two); for that chunk's read point (read-point.ts) it separates the two sides when the read holds
 * it and the lake does not, or the other way round, or when the read MAY hold it (MySQL, between the
 * watermarks). A synthetic cascade delete has no key: it is taken to touch every chunk it separates.
 */
import type { Value } from '../../../model/values.js';
import { isAfter, type BinlogOffset } from '../offset/offset.js';
import type { ChunkLocator } from '../snapshot/chunk.js';
import type { KeyTuple } from '../snapshot/key-compare.js';
import type { LoggedChange } from './change-log.js';
import { readStatus, type ReadPoint } from './read-point.js';

/**
 * The indexes of the chunks in `points` (chunk index → its read point) that a change in `changes`
 * separates from the lake at `lakeOffset`. `keyIdx`: the chunk key columns' indexes in the rows.
 */
export async function changedChunks(changes: readonly LoggedChange[], locator: ChunkLocator, keyIdx: readonly number[], points: ReadonlyMap<number, ReadPoint>, lakeOffset: BinlogOffset): Promise<Set<number>> {
  const out = new Set<number>();
  const separates = (point: ReadPoint, c: LoggedChange): boolean => {
    const status = readStatus(point, c.position);
    return status === 'maybe' || (status === 'yes') === isAfter(c.position, lakeOffset);
  };
  const keyed: { c: LoggedChange; key: KeyTuple }[] = [];
  for (const c of changes) {
    if (c.op === 'delete-matching') {
      for (const [index, point] of points) if (separates(point, c)) out.add(index);
      continue;
    }
    for (const row of [c.before, c.after]) if (row) keyed.push({ c, key: keyIdx.map((i) => row[i] as Value) });
  }
  if (keyed.length === 0) return out;
  const located = keyIdx.length === 0 ? keyed.map(() => 0) : await locator.locateMany(keyed.map((k) => k.key));
  keyed.forEach(({ c }, i) => {
    const index = located[i]!;
    const point = points.get(index);
    if (point && separates(point, c)) out.add(index);
  });
  return out;
}
