/**
 * Whether the lake stayed within the soak's bounds over a freshness run (bench/freshness.ts), from
 * the samples taken every few seconds (bench/lake-sample.ts). The soak's targets
 * (docs/performance.md, "Soak"): the metadata.json under 1 MiB, no equality delete in a v3 table,
 * and nothing growing without bound once maintenance runs — compaction takes the data files and
 * deletion vectors back down, expiry the snapshots, manifest rewriting the manifests. "Growing" is
 * read off the samples after the first maintenance round: split in two halves, the second half's
 * largest value may not pass the first half's by more than a quarter (plus a few, so that counts of
 * a handful can move): a measure that maintenance keeps pace with levels off, one it does not keep
 * pace with climbs on.
 */
import type { LakeShape } from './lake-sample.js';

export interface FreshnessSample extends LakeShape {
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

export interface MeasureBound {
  min: number;
  max: number;
  /** Largest value in the first and in the second half of the samples after the first maintenance round. */
  earlyMax: number;
  lateMax: number;
  bounded: boolean;
}

export interface LakeBounds {
  measures: Record<Measure, MeasureBound>;
  metadataUnder1MiB: boolean;
  equalityDeletes: number;
  /** Maintenance rounds run, and as many as the interval allows over the streaming time. */
  rounds: number;
  roundsDue: number;
  /** Every measure bounded, every round run (one missed at most), the metadata under 1 MiB, no equality delete. */
  withinBounds: boolean;
}

const METADATA_LIMIT = 1 << 20;
const GROWTH = 1.25;
const SLACK = 8;

function valueOf(s: FreshnessSample, m: Measure): number {
  return m === 'deletionVectors' ? s.deleteFiles.deletionVectors : s[m];
}

export function lakeBounds(samples: readonly FreshnessSample[], firstRoundSeconds: number | undefined, rounds: number, streamingSeconds: number, maintenanceIntervalMs: number): LakeBounds {
  const after = firstRoundSeconds === undefined ? [] : samples.filter((s) => s.elapsedSeconds >= firstRoundSeconds);
  const half = Math.ceil(after.length / 2);
  const early = after.slice(0, half);
  const late = after.slice(half);
  const measures = {} as Record<Measure, MeasureBound>;
  for (const m of MEASURES) {
    const all = samples.map((s) => valueOf(s, m));
    const earlyMax = Math.max(0, ...early.map((s) => valueOf(s, m)));
    const lateMax = Math.max(0, ...late.map((s) => valueOf(s, m)));
    measures[m] = {
      min: all.length ? Math.min(...all) : 0,
      max: all.length ? Math.max(...all) : 0,
      earlyMax,
      lateMax,
      // two samples at least on each side, or there is no trend to read
      bounded: early.length >= 2 && late.length >= 2 && lateMax <= earlyMax * GROWTH + SLACK,
    };
  }
  const metadataUnder1MiB = samples.every((s) => s.metadataBytes < METADATA_LIMIT);
  const equalityDeletes = Math.max(0, ...samples.map((s) => s.deleteFiles.equality));
  const roundsDue = Math.floor((streamingSeconds * 1000) / maintenanceIntervalMs);
  const withinBounds = metadataUnder1MiB && equalityDeletes === 0 && rounds >= roundsDue - 1 && MEASURES.every((m) => measures[m].bounded);
  return { measures, metadataUnder1MiB, equalityDeletes, rounds, roundsDue, withinBounds };
}
