// The `targets` block (rendered by scripts/bench-summary.ts): every performance target floe holds
// itself to on the 2-core bench machine, beside the figure the named runs measured and whether it is
// met — missed targets included, so that the table cannot show only the good news. A target whose
// run is not among the block's files reads "not run".
import { posix } from 'node:path';
import type { FreshnessResult } from '../bench/freshness.js';
import type { BenchResult } from '../bench/run.js';

export interface LoadedRun {
  file: string;
  result: BenchResult | FreshnessResult;
}

interface Measured {
  value: number;
  text: string;
  file: string;
}

interface Target {
  what: string;
  /** true when the measured value meets the target */
  meets: (value: number) => boolean;
  measure: (runs: readonly LoadedRun[]) => Measured[];
}

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const k = (n: number) => (n >= 10_000 ? `${int.format(Math.round(n / 1000))}k` : int.format(n));
/** A figure held to a floor, rounded down: 0.296 reads 0.29 and 149.6k reads 149k, never as a target met. */
const down = (n: number, digits: number) => (Math.floor(n * 10 ** digits) / 10 ** digits).toFixed(digits);
const kDown = (n: number) => (n >= 10_000 ? `${int.format(Math.floor(n / 1000))}k` : int.format(Math.floor(n)));

function isBench(r: LoadedRun['result']): r is BenchResult {
  return 'cdcAfterCrash' in r;
}

function benches(runs: readonly LoadedRun[], rows?: number): { file: string; result: BenchResult }[] {
  return runs.flatMap((r) => (isBench(r.result) && (rows === undefined || r.result.options.rows === rows) ? [{ file: r.file, result: r.result }] : []));
}

/** The run with the Debezium and Flink CDC peers: the default run. */
function defaultRuns(runs: readonly LoadedRun[]): { file: string; result: BenchResult }[] {
  return benches(runs).filter((r) => r.result.options.peers);
}

function peakRss(r: BenchResult): number {
  return Math.max(r.snapshot.peakRssBytes, r.cdc.peakRssBytes, r.cdcAfterCrash.peakRssBytes, r.cdcWithoutState?.peakRssBytes ?? 0, ...r.partitioned.map((p) => p.peakRssBytes));
}

const rowsText = (r: BenchResult) => `${int.format(r.options.rows / 1_000_000)}M rows`;

const TARGETS: Target[] = [
  {
    what: 'CDC at 10M rows ≥ 150k changes/s',
    meets: (v) => v >= 150_000,
    measure: (runs) => benches(runs, 10_000_000).map(({ file, result }) => ({ value: result.cdc.eventsPerSecond, text: `${kDown(result.cdc.eventsPerSecond)} changes/s`, file })),
  },
  {
    what: 'CDC at 50M rows ≥ 100k changes/s',
    meets: (v) => v >= 100_000,
    measure: (runs) => benches(runs, 50_000_000).map(({ file, result }) => ({ value: result.cdc.eventsPerSecond, text: `${kDown(result.cdc.eventsPerSecond)} changes/s`, file })),
  },
  {
    what: "floe's peak RSS at 50M rows ≤ 2 GiB",
    meets: (v) => v <= 2 * 2 ** 30,
    measure: (runs) => benches(runs, 50_000_000).map(({ file, result }) => ({ value: peakRss(result), text: `${int.format(peakRss(result) / 2 ** 20)} MiB`, file })),
  },
  {
    what: 'CDC after a crash ≥ 0.8 of the clean-stop rate',
    meets: (v) => v >= 0.8,
    measure: (runs) =>
      benches(runs).map(({ file, result }) => {
        const ratio = result.cdcAfterCrash.eventsPerSecond / result.cdc.eventsPerSecond;
        return { value: ratio, text: `${down(ratio, 2)} at ${rowsText(result)} (${k(result.cdcAfterCrash.eventsPerSecond)} vs ${k(result.cdc.eventsPerSecond)} changes/s)`, file };
      }),
  },
  {
    what: 'snapshot ≥ 320k rows per CPU-second',
    meets: (v) => v >= 320_000,
    measure: (runs) => benches(runs).map(({ file, result }) => ({ value: result.snapshot.rowsPerCpuSecond, text: `${kDown(result.snapshot.rowsPerCpuSecond)} at ${rowsText(result)}`, file })),
  },
  {
    what: 'snapshot ≥ 0.3 of ceiling A (the table read through mysql2)',
    meets: (v) => v >= 0.3,
    measure: (runs) => benches(runs).map(({ file, result }) => ({ value: result.snapshot.ratioToCeiling, text: `${down(result.snapshot.ratioToCeiling, 2)} at ${rowsText(result)}`, file })),
  },
  {
    what: '`day(...)`-partitioned snapshot ≥ 0.6 of unpartitioned',
    meets: (v) => v >= 0.6,
    measure: (runs) =>
      defaultRuns(runs).flatMap(({ file, result }) =>
        result.partitioned.filter((p) => p.partitionBy.startsWith('day(')).map((p) => ({ value: p.ratioToUnpartitioned, text: `${down(p.ratioToUnpartitioned, 2)} (${k(p.rowsPerSecond)} rows/s)`, file })),
      ),
  },
  {
    what: 'freshness at 10,000 changes/s of mixed DML, 200 ms interval: p99 < 500 ms',
    meets: (v) => v < 500,
    measure: (runs) => freshness(runs).map(({ file, result }) => ({ value: result.latency.latencyMs.p99, text: `p99 ${int.format(result.latency.latencyMs.p99)} ms (p50 ${int.format(result.latency.latencyMs.p50)})`, file })),
  },
  {
    what: 'the same run: 10 minutes with the lake within the soak bounds',
    meets: (v) => v === 1,
    measure: (runs) =>
      freshness(runs).map(({ file, result }) => ({
        value: result.bounds.withinBounds && result.load.streamingSeconds >= 600 ? 1 : 0,
        text: `${result.bounds.withinBounds ? 'within bounds' : 'out of bounds'} over ${int.format(result.load.streamingSeconds)} s`,
        file,
      })),
  },
];

function freshness(runs: readonly LoadedRun[]): { file: string; result: FreshnessResult }[] {
  return runs.flatMap((r) => (!isBench(r.result) && r.result.options.changesPerSecond === 10_000 && r.result.options.commitIntervalMs === 200 ? [{ file: r.file, result: r.result }] : []));
}

export function renderTargets(runs: readonly LoadedRun[], docDir: string): string {
  const out = ['| target | measured | run | met |', '|---|---|---|---|'];
  for (const t of TARGETS) {
    const measured = t.measure(runs);
    if (measured.length === 0) out.push(`| ${t.what} | not run | | |`);
    for (const m of measured) out.push(`| ${t.what} | ${m.text} | [${posix.basename(m.file)}](${posix.relative(docDir, m.file)}) | ${t.meets(m.value) ? 'yes' : '**no**'} |`);
  }
  return out.join('\n');
}
