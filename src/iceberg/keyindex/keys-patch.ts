/**
 * Making the patch (index-patch.ts) that sets a batch of rows in a memory key index
 * (memory-key-index.ts): each data file's keys by position, scanned for runs (sorted-runs.ts) —
 * stretches of ascending keys at consecutive positions, cut where a run already holds keys in their
 * range — and hash entries for the rest.
 */
import type { DataFile } from '../spec/data-file.js';
import { TWO_32, type IndexPatch } from './index-patch.js';
import { MIN_RUN, scanRuns, SortedRuns, type Run } from './sorted-runs.js';
import type { KeyId } from './table-key.js';

/**
 * A file's keys by position while a patch is made: numbers in `numbers` (NaN elsewhere), strings
 * apart, and numbers at positions beyond the file's record count (never in a table's data file: no
 * array is grown for them) apart too.
 */
export interface FileKeys {
  file: DataFile;
  numbers: Float64Array;
  strings: [string, number][];
  beyond?: [number, number][];
}

/** What of an index a patch is made against. */
export interface IndexState {
  readonly slots: ReadonlyMap<string, number>;
  readonly nextSlot: number;
  readonly runs: SortedRuns;
  readonly snapshotId: bigint | undefined;
}

/** A file's keys, none set yet (an array of the file's record count). */
export function fileKeys(file: DataFile): FileKeys {
  return { file, numbers: new Float64Array(Number(file.recordCount) || 0).fill(Number.NaN), strings: [] };
}

/** `k` at `pos` of the file's keys. */
export function put(keys: FileKeys, k: KeyId, pos: number): void {
  if (typeof k !== 'number') keys.strings.push([k, pos]);
  else if (pos < keys.numbers.length) keys.numbers[pos] = k;
  else (keys.beyond ??= []).push([k, pos]);
}

/** The keys set in `numbers`. */
export function countKeys(numbers: Float64Array): number {
  let n = 0;
  for (let i = 0; i < numbers.length; i++) if (!Number.isNaN(numbers[i]!)) n++;
  return n;
}

/**
 * The patch that sets the keys of `files` on an index in `state` — runs where they ascend at
 * consecutive positions and no run holds a key in their range (cut around those that do), hash
 * entries otherwise — besides `rest`.
 */
export function keysPatch(state: IndexState, files: readonly FileKeys[], rest: Pick<IndexPatch, 'hashDeletes' | 'dead' | 'count' | 'to'> & { dropped?: readonly number[] }): IndexPatch {
  const newFiles: [number, string][] = [];
  let nextSlot = state.nextSlot;
  const slotFor = new Map<DataFile, number>();
  for (const { file } of files) {
    let slot = state.slots.get(file.filePath);
    if (slot === undefined) newFiles.push([(slot = nextSlot++), file.filePath]);
    slotFor.set(file, slot);
  }
  const runs: Run[] = [];
  const numberKeys: number[] = [];
  const numberPlaces: number[] = [];
  const stringKeys: string[] = [];
  const stringPlaces: number[] = [];
  // the runs of this patch so far (a patch's runs share no key range either)
  const claimed = new SortedRuns();
  const dropped = new Set(rest.dropped ?? []);
  for (const { file, numbers, strings, beyond } of files) {
    const slot = slotFor.get(file)!;
    for (const [k, p] of beyond ?? []) {
      numberKeys.push(k);
      numberPlaces.push(slot * TWO_32 + p);
    }
    const single = (p: number): void => {
      numberKeys.push(numbers[p]!);
      numberPlaces.push(slot * TWO_32 + p);
    };
    scanRuns(numbers, (first, end) => {
      // cut the stretch where runs (this index's, and this patch's so far) hold keys in its range
      const keys = numbers.subarray(first, end);
      const existing = state.runs.cutPoints(keys, dropped);
      const mine = existing && claimed.cutPoints(keys);
      if (!existing || !mine) {
        for (let p = first; p < end; p++) single(p);
        return;
      }
      const shared = new Set([...existing.shared, ...mine.shared]);
      const cuts = [...new Set([0, ...existing.cuts, ...mine.cuts, keys.length])].sort((a, b) => a - b);
      for (let c = 0; c + 1 < cuts.length; c++) {
        let a = cuts[c]!;
        const b = cuts[c + 1]!;
        while (a < b && shared.has(a)) a++;
        if (b - a >= MIN_RUN) {
          const run = { keys: numbers.slice(first + a, first + b), slot, start: first + a };
          claimed.add(run);
          runs.push(run);
        } else for (let p = a; p < b; p++) if (!shared.has(p)) single(first + p);
      }
      for (const p of shared) single(first + p);
    }, single);
    for (const [k, p] of strings) {
      stringKeys.push(k);
      stringPlaces.push(slot * TWO_32 + p);
    }
  }
  return {
    from: state.snapshotId,
    to: rest.to,
    files: newFiles,
    dropped: [...dropped],
    hashDeletes: rest.hashDeletes,
    dead: rest.dead,
    runs,
    numberSets: { keys: Float64Array.from(numberKeys), places: Float64Array.from(numberPlaces) },
    stringSets: { keys: stringKeys, places: Float64Array.from(stringPlaces) },
    count: rest.count,
    nextSlot,
  };
}
