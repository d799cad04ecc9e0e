/**
 * The freshness benchmark's printed report (bench/freshness.ts): the latency and where it went, floe's
 * commits and maintenance rounds, and the lake's bounds over the run.
 */
import type { FreshnessResult } from './freshness.js';
import { MEASURES, type Measure } from './freshness-bounds.js';
import type { Quantiles } from './freshness-latency.js';
import { machineLine } from './report.js';

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const ms = (v: number) => `${int.format(v)} ms`;
const q = (x: Quantiles) => `p50 ${ms(x.p50)}, p90 ${ms(x.p90)}, p99 ${ms(x.p99)}, max ${ms(x.max)} (mean ${ms(x.mean)})`;

const LABELS: Record<Measure, string> = {
  metadataBytes: 'metadata.json',
  filesUnderTable: 'files under the table',
  dataFiles: 'live data files',
  deletionVectors: 'deletion vectors',
  manifests: 'manifests',
  snapshots: 'snapshots',
};

function measureText(m: Measure, v: number): string {
  return m === 'metadataBytes' ? `${int.format(v / 1024)} KiB` : int.format(v);
}

export function formatFreshness(r: FreshnessResult): string {
  const o = r.options;
  const l = r.latency;
  const loads = r.samples.map((s) => s.loadAverage);
  const b = r.bounds;
  const lines = [
    `floe freshness: ${int.format(o.changesPerSecond)} changes/s of mixed DML for ${o.seconds} s, commit.intervalMs ${o.commitIntervalMs}, maintenance every ${o.maintenanceIntervalMs / 1000} s`,
    `machine: ${machineLine(r.machine)}; load average ${loads.length ? `${Math.min(...loads)}–${Math.max(...loads)}` : 'not sampled'} during the run`,
    `load: ${int.format(r.load.changesPerSecond)} changes/s held (${int.format(r.load.inserts)} inserts, ${int.format(r.load.updates)} updates, ${int.format(r.load.deletes)} deletes in ${int.format(r.load.transactions)} transactions of ${o.changesPerTransaction}, ${o.writers} connections; at most ${ms(r.load.maxBehindMs)} behind schedule)`,
    '',
    `source→lake latency of ${int.format(l.changes)} changes: ${q(l.latencyMs)}${l.unseen > 0 ? `; ${int.format(l.unseen)} changes never seen in the lake` : ''}`,
    `  to floe's commit start: ${q(l.parts.toCommitStartMs)}`,
    `  commit start to swap:   ${q(l.parts.toSwapMs)}`,
    `  swap to poll (${o.pollMs} ms): ${q(l.parts.toPollMs)}`,
    `  the slowest 1% (${int.format(l.slowestPercent.count)} changes), on average: ${ms(l.slowestPercent.toCommitStartMs)} to the commit, ${ms(l.slowestPercent.toSwapMs)} to the swap, ${ms(l.slowestPercent.toPollMs)} to the poll`,
    `floe's commits under load: ${int.format(r.commits.count)} (${r.commits.perSecond.toFixed(2)}/s); duration ${q(r.commits.durationMs)}; end to end ${q(r.commits.gapMs)}`,
    `maintenance: ${b.rounds} rounds (${b.roundsDue} intervals; a round starts at the first checkpoint after it is due, in steps after checkpoints); the step that ended each ${q(r.maintenance.durationMs)}`,
    `floe: ${(r.floe.cpuMs / 1000).toFixed(1)} CPU-s, peak RSS ${int.format(r.floe.peakRssBytes / 2 ** 20)} MiB, main thread busy ${Math.round(r.floe.mainBusy * 100)}%`,
    '',
    `lake over ${r.samples.length} samples (every ${o.sampleSeconds} s): min – max; the highest low point after a round in the first / second half (snapshots, manifests: the most seen / the largest cap)`,
    ...MEASURES.map((m) => {
      const x = b.measures[m];
      return `  ${LABELS[m].padEnd(22)} ${measureText(m, x.min)} – ${measureText(m, x.max)}; ${measureText(m, x.early)} / ${measureText(m, x.late)}${x.bounded === undefined ? ' (reported, not judged)' : x.bounded ? '' : '  NOT BOUNDED'}`;
    }),
    `  equality deletes: ${b.equalityDeletes}; metadata.json ${b.metadataUnder1MiB ? 'under' : 'OVER'} 1 MiB`,
    `within the soak's bounds: ${b.withinBounds ? 'yes' : 'no'}`,
    `lake vs MySQL: ${r.verified.mismatches === 0 ? `equal (${int.format(r.verified.lakeRows)} rows)` : `${r.verified.mismatches} mismatches; first: ${r.verified.firstMismatch}`}`,
  ];
  return lines.join('\n');
}
