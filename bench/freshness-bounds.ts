/**
 * Whether the lake stayed within the soak's bounds over a freshness run (bench/freshness.ts), from
 * the samples taken every few seconds (bench/lake-sample.ts) and the times of floe's commits and
 * maintenance rounds. The soak's targets (docs/performance.md, "Soak"): the metadata.json under
 * 1 MiB, no equality delete in a v3 table, and nothing growing without bound once maintenance runs.
 *
 * Between two rounds every count climbs with the commits (a data file, a deletion vector, a manifest
 * and a snapshot each), and a round takes it back down: compaction the data files and deletion
 * vectors, manifest rewriting the manifests, expiry the snapshots and the files only they reached.
 * So maintenance keeps pace when **the low point after each round does not climb**: the samples are
 * grouped by the round before them, and of each group's lowest value, the largest in the run's
 * second half may not pass the largest in its first half by more than a quarter (plus a few, so that
 * counts of a handful can move). Two measures have caps of their own instead: the snapshots retained
 * follow the commit rate (expiry keeps those of the last `expireOlderThanMs`), so a sample may hold
 * at most the last `retainLast`, the commits since the expiry window before the round before it
 * (counted back from the time the round's expiry was planned, when floe reports it: `floe run`
 * plans it beside its commits, a little before the round ends),
 * the maintenance commits it holds (a round commits a compaction per step) and a few more; and the manifests are rewritten only once more than
 * `manifestMinCount` are small, so a sample may hold that many plus two (a data and a delete
 * manifest) per commit since the round before it. The files under the table (all of the above, old
 * metadata files, files waiting for expiry) are reported, not judged.
 */
import type { LakeShape } from './lake-sample.js';

export interface FreshnessSample extends LakeShape {
  /** When it began (epoch ms; it holds the lake as of then or a little later), how long it took, and seconds since the load started. */
  atMs: number;
  sampleMs: number;
  elapsedSeconds: number;
  /** floe's checkpoint commits so far. */
  commits: number;
  rssBytes: number;
  openFds: number;
  /** The machine's 1-minute load average then. */
  loadAverage: number;
}

export const MEASURES = ['metadataBytes', 'filesUnderTable', 'dataFiles', 'deletionVectors', 'manifests', 'snapshots'] as const;
export type Measure = (typeof MEASURES)[number];
const JUDGED: readonly Measure[] = ['metadataBytes', 'dataFiles', 'deletionVectors', 'manifests', 'snapshots'];

export interface MeasureBound {
  min: number;
  max: number;
  /**
   * The low points after the rounds: the largest of them in the first and in the second half of
   * the run (snapshots and manifests: the largest sample and the largest cap at a sample's time).
   */
  early: number;
  late: number;
  /** Undefined for a measure reported only (the files under the table). */
  bounded: boolean | undefined;
}

export interface LakeBounds {
  measures: Record<Measure, MeasureBound>;
  metadataUnder1MiB: boolean;
  equalityDeletes: number;
  /**
   * Maintenance rounds run, and as many intervals as the streaming time holds (reported: a round runs
   * at the first checkpoint after it is due, so with a long commit interval there are fewer).
   */
  rounds: number;
  roundsDue: number;
  /** Every judged measure bounded, the metadata under 1 MiB, no equality delete. */
  withinBounds: boolean;
}

export interface BoundsSettings {
  maintenanceIntervalMs: number;
  expireOlderThanMs: number;
  retainLast: number;
  /** maintenance.manifests.minCount: more small manifests than this are rewritten at a round. */
  manifestMinCount: number;
  streamingSeconds: number;
}

const METADATA_LIMIT = 1 << 20;
const GROWTH = 1.25;
const SLACK = 8;

function valueOf(s: FreshnessSample, m: Measure): number {
  return m === 'deletionVectors' ? s.deleteFiles.deletionVectors : s[m];
}

/** Index of the first element of the ascending `xs` that is > x. */
function upperBound(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * `samples` in time order; `roundEnds` and `commitEnds`: epoch ms, ascending; `expiries`: per round,
 * the time its expiry's cutoff counted back from (undefined: the end of the checkpoint before the round's end).
 */
export function lakeBounds(samples: readonly FreshnessSample[], roundEnds: readonly number[], commitEnds: readonly number[], o: BoundsSettings, expiries: readonly (number | undefined)[] = []): LakeBounds {
  // the samples after each round, up to the next: the low point of each group
  const groups = new Map<number, FreshnessSample[]>();
  for (const s of samples) {
    const round = upperBound(roundEnds, s.atMs);
    if (round === 0) continue;
    let g = groups.get(round);
    if (!g) groups.set(round, (g = []));
    g.push(s);
  }
  const lows = [...groups.values()];
  const half = Math.ceil(lows.length / 2);
  const measures = {} as Record<Measure, MeasureBound>;
  for (const m of MEASURES) {
    const all = samples.map((s) => valueOf(s, m));
    const range = { min: all.length ? Math.min(...all) : 0, max: all.length ? Math.max(...all) : 0 };
    if (m === 'snapshots' || m === 'manifests') {
      // the round before the sample started at the end of the checkpoint before it
      // (src/pipeline/run-maintenance.ts): it expired what was older than expireOlderThanMs then,
      // and rewrote the manifests when more than manifestMinCount were small
      const checked = samples.filter((s) => upperBound(roundEnds, s.atMs) > 0);
      const allowed = checked.map((s) => {
        const round = upperBound(roundEnds, s.atMs) - 1;
        const end = roundEnds[round]!;
        const start = commitEnds[upperBound(commitEnds, end) - 1] ?? end;
        const since = (t: number) => upperBound(commitEnds, s.atMs) - upperBound(commitEnds, t);
        return m === 'snapshots' ? o.retainLast + since((expiries[round] ?? start) - o.expireOlderThanMs) + (s.maintenanceSnapshots ?? 0) + SLACK : o.manifestMinCount + 2 * since(start) + SLACK;
      });
      const over = checked.filter((s, i) => s[m] > allowed[i]!);
      measures[m] = { ...range, early: range.max, late: Math.max(0, ...allowed), bounded: checked.length > 0 && over.length === 0 };
      continue;
    }
    const lowOf = (g: FreshnessSample[]) => Math.min(...g.map((s) => valueOf(s, m)));
    const early = Math.max(0, ...lows.slice(0, half).map(lowOf));
    const late = Math.max(0, ...lows.slice(half).map(lowOf));
    // two rounds at least on each side, or there is no trend to read
    const judged = JUDGED.includes(m) ? half >= 2 && lows.length - half >= 2 && late <= early * GROWTH + SLACK : undefined;
    measures[m] = { ...range, early, late, bounded: judged };
  }
  const metadataUnder1MiB = samples.every((s) => s.metadataBytes < METADATA_LIMIT);
  const equalityDeletes = Math.max(0, ...samples.map((s) => s.deleteFiles.equality));
  const roundsDue = Math.floor((o.streamingSeconds * 1000) / o.maintenanceIntervalMs);
  const rounds = roundEnds.length;
  const withinBounds = metadataUnder1MiB && equalityDeletes === 0 && JUDGED.every((m) => measures[m].bounded);
  return { measures, metadataUnder1MiB, equalityDeletes, rounds, roundsDue, withinBounds };
}
