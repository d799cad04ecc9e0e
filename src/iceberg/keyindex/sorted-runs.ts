/**
 * The bulk of a key index of numeric keys, 8 bytes per key: runs of rows whose keys ascend at
 * consecutive positions of one data file, each kept as its keys alone — the position of the i-th
 * key of a run is the run's first position + i. A snapshot chunk is read in primary-key order and
 * written row after row (docs/design.md §2), so a snapshotted table is a few thousand such runs, and
 * so is what floe's compaction writes from them (it copies the live rows in order). Rows written in
 * change order (a CDC checkpoint's) seldom make runs: they stay in the index's hash
 * (memory-key-index.ts).
 *
 * Runs never share a key range, so a key has at most one run: the last run starting at or below it.
 * Chunks read in parallel land in a file in the order they finish, so one ascending stretch of a file
 * may hold chunks 1 and 4 while 2 and 3 come in another file: a run may have a gap in its range
 * where it holds no key, and a run that fits in such a gap splits it (`add`); a stretch of keys that
 * holds a run in one of its own gaps is cut around it first (`cutPoints`). Lookup: a binary search of the
 * runs' first keys, then of the run's keys — sorted batches of lookups (a checkpoint's,
 * keyed-change-writer.ts) walk both in order and stay in the caches.
 *
 * Keys are integer-valued doubles (table-key.ts `KeyId` numbers, within ±(2^53 − 1)), compared
 * exactly.
 */

/** One run: `keys` ascending, the i-th at position `start + i` of the data file in `slot`. */
export interface Run {
  readonly keys: Float64Array;
  readonly slot: number;
  readonly start: number;
}

export class SortedRuns {
  /** Runs in ascending key order, and their first and last keys (for the binary searches). */
  private runs: Run[] = [];
  private firsts: number[] = [];
  private lasts: number[] = [];
  /** Keys in all runs. */
  size = 0;
  /** Where the last successful `find` found its key. */
  foundSlot = 0;
  foundPos = 0;
  /** The run `find` looked in last: a sorted batch mostly stays in it, or moves to the next. */
  private hint = 0;

  /** Whether `k` is in a run; its place is then in `foundSlot` / `foundPos`. */
  find(k: number): boolean {
    const firsts = this.firsts;
    const n = firsts.length;
    if (n === 0) return false;
    let r = this.hint;
    if (r >= n || firsts[r]! > k || (r + 1 < n && firsts[r + 1]! <= k)) {
      if (r + 1 < n && firsts[r + 1]! <= k && (r + 2 >= n || firsts[r + 2]! > k)) r++;
      else {
        if (k < firsts[0]!) return false;
        let lo = 0;
        let hi = n - 1;
        while (lo < hi) {
          const mid = (lo + hi + 1) >>> 1;
          if (firsts[mid]! <= k) lo = mid;
          else hi = mid - 1;
        }
        r = lo;
      }
      this.hint = r;
    }
    if (k > this.lasts[r]!) return false;
    const run = this.runs[r]!;
    const keys = run.keys;
    let lo = 0;
    let hi = keys.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = keys[mid]!;
      if (v < k) lo = mid + 1;
      else if (v > k) hi = mid - 1;
      else {
        this.foundSlot = run.slot;
        this.foundPos = run.start + mid;
        return true;
      }
    }
    return false;
  }

  /**
   * Where the ascending `keys` must be cut so that no piece's range holds a key of a run (leaving out
   * the runs of the data files in `ignored`, about to be dropped): for each run key inside their
   * range, the index of the first of `keys` above it — and, for a run key equal to one of `keys`
   * (its row moved), that index in `shared` too (that key can be in no run). `cuts` may repeat and
   * are not sorted. Undefined when over four times as many run keys as `keys` lie in their range (the keys are too
   * sparse to be worth a run).
   */
  cutPoints(keys: Float64Array, ignored?: ReadonlySet<number>): { cuts: number[]; shared: number[] } | undefined {
    const first = keys[0]!;
    const last = keys[keys.length - 1]!;
    const cuts: number[] = [];
    const shared: number[] = [];
    let budget = 4 * keys.length;
    for (let i = this.firstReaching(first); i < this.firsts.length && this.firsts[i]! <= last; i++) {
      const run = this.runs[i]!;
      if (ignored?.has(run.slot)) continue;
      const a = lowerBound(run.keys, first);
      const b = lowerBound(run.keys, last + 1);
      if ((budget -= b - a) < 0) return undefined;
      for (let e = a; e < b; e++) {
        const k = run.keys[e]!;
        const at = lowerBound(keys, k);
        if (keys[at] === k) {
          shared.push(at);
          cuts.push(at, at + 1);
        } else cuts.push(at);
      }
    }
    return { cuts, shared };
  }

  /**
   * Adds a run (its keys ascending, no run holding a key in its range: `cutPoints` found none). A run
   * whose range it falls in is split around it: the keys below go before it, those above after it.
   */
  add(run: Run): void {
    const first = run.keys[0]!;
    const last = run.keys[run.keys.length - 1]!;
    const at = this.firstReaching(first);
    const replaced: Run[] = [run];
    let end = at;
    for (; end < this.firsts.length && this.firsts[end]! <= last; end++) {
      const r = this.runs[end]!;
      const j = lowerBound(r.keys, first);
      if (j > 0) replaced.push({ keys: r.keys.subarray(0, j), slot: r.slot, start: r.start });
      if (j < r.keys.length) replaced.push({ keys: r.keys.subarray(j), slot: r.slot, start: r.start + j });
    }
    replaced.sort((a, b) => a.keys[0]! - b.keys[0]!);
    this.runs.splice(at, end - at, ...replaced);
    this.firsts.splice(at, end - at, ...replaced.map((r) => r.keys[0]!));
    this.lasts.splice(at, end - at, ...replaced.map((r) => r.keys[r.keys.length - 1]!));
    this.size += run.keys.length;
    this.hint = 0;
  }

  /** Forgets the runs of the data files in `slots` (a compaction removed them). */
  dropSlots(slots: ReadonlySet<number>): void {
    const keep = this.runs.filter((r) => !slots.has(r.slot));
    if (keep.length === this.runs.length) return;
    this.runs = keep;
    this.firsts = keep.map((r) => r.keys[0]!);
    this.lasts = keep.map((r) => r.keys[r.keys.length - 1]!);
    this.size = keep.reduce((n, r) => n + r.keys.length, 0);
    this.hint = 0;
  }

  /** The runs, in ascending key order (saving, entries). */
  all(): readonly Run[] {
    return this.runs;
  }

  /** The index of the first run whose range may reach `k` or beyond: the last starting at or below it, if it reaches `k`. */
  private firstReaching(k: number): number {
    const after = this.indexAfter(k);
    return after > 0 && this.lasts[after - 1]! >= k ? after - 1 : after;
  }

  /** The index of the first run starting above `k`. */
  private indexAfter(k: number): number {
    const firsts = this.firsts;
    let lo = 0;
    let hi = firsts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (firsts[mid]! <= k) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The index of the first of the ascending `keys` at or above `k`. */
function lowerBound(keys: Float64Array, k: number): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Shortest stretch of ascending keys kept as a run: below it the keys go to the index's hash. */
export const MIN_RUN = 16;

/**
 * The runs in one data file's keys by position (`keys[p]`: the key at position p, NaN where no key
 * belongs — a deleted row, one written over, a key that is not a number): each maximal stretch of at
 * least `MIN_RUN` keys that ascend at consecutive positions gives `run(first, end)` (positions
 * [first, end)), every other key `single(p)`.
 */
export function scanRuns(keys: Float64Array, run: (first: number, end: number) => void, single: (pos: number) => void): void {
  const n = keys.length;
  let p = 0;
  while (p < n) {
    if (Number.isNaN(keys[p]!)) {
      p++;
      continue;
    }
    let end = p + 1;
    while (end < n && keys[end]! > keys[end - 1]!) end++; // NaN compares false: ends the stretch
    if (end - p >= MIN_RUN) run(p, end);
    else for (let q = p; q < end; q++) single(q);
    p = end;
  }
}
