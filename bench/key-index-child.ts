/**
 * The key-index micro-benchmarks (bench/key-index.ts, the memory index; bench/key-index-stores.ts,
 * the disk index) in a process of their own, for bench/run.ts: a million keys of each kind and a
 * SQLite store of as many leave the process that built them with a heap and a page cache of
 * hundreds of MB. Measured in the bench's own process, floe's snapshot right after ran at
 * 210–216k rows/s in two default runs against 268k in a run without them (2026-12-04); in a child
 * that exits, nothing of theirs stays beside floe's runs.
 *
 * The value indexes (bench/value-index.ts: a keyless table's row index, a cascade child's FK index)
 * run here too, with as many rows.
 *
 * argv: keys seed. Answers one IPC message: {keyIndex, diskKeyIndex, valueIndex} or {error}.
 */
import { diskKeyIndexBench, type StoreFigures } from './key-index-stores.js';
import { keyIndexBench, type KeyIndexFigures } from './key-index.js';
import { valueIndexBench, type ValueIndexFigures } from './value-index.js';

export type KeyIndexChildMessage = { keyIndex: KeyIndexFigures[]; diskKeyIndex: StoreFigures[]; valueIndex: ValueIndexFigures[] } | { error: string };

const keys = Number(process.argv[2]);
const seed = Number(process.argv[3]);
const reply = (m: KeyIndexChildMessage): void => {
  process.send?.(m);
  process.disconnect?.();
};
try {
  const keyIndex = await keyIndexBench(keys, seed);
  const diskKeyIndex = await diskKeyIndexBench(keys, seed);
  const valueIndex = await valueIndexBench(keys, seed);
  reply({ keyIndex, diskKeyIndex, valueIndex });
} catch (e) {
  reply({ error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
}
