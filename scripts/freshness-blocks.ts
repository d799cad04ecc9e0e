// The freshness benchmark's generated blocks (bench/freshness.ts results, bench/results/freshness-*.json),
// rendered by scripts/bench-summary.ts: `freshness` — one row per run, its latency, floe's commits and
// the lake's bounds; `intervals` — the commit interval to choose for a latency need, read off those runs.
import { posix } from 'node:path';
import type { FreshnessResult } from '../bench/freshness.js';

export interface LoadedFreshness {
  file: string;
  result: FreshnessResult;
}

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** A latency as the prose quotes it: milliseconds below 10 s, else seconds with one decimal. */
function latency(ms: number): string {
  return ms < 10_000 ? `${int.format(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

const kib = (bytes: number) => `${int.format(bytes / 1024)} KiB`;

function serverName(server: string): string {
  return server.replace(/^(MariaDB|MySQL) (\d+\.\d+\.\d+).*$/, '$1 $2');
}

function loads(r: FreshnessResult): string {
  const all = r.samples.map((s) => s.loadAverage);
  return all.length === 0 ? `${r.machine.loadAverage}` : `${r.machine.loadAverage} at start, ${Math.min(...all)}–${Math.max(...all)} during`;
}

export function renderFreshness(results: readonly LoadedFreshness[], docDir: string): string {
  const out = [
    '| run | changes/s held | commit interval | p50 | p90 | p99 | max | commits/s | commit p50 / p99 | maintenance rounds, longest last step | data files | DVs | manifests | snapshots | metadata.json | within the soak\'s bounds | load average |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const { file, result: r } of results) {
    const l = r.latency.latencyMs;
    const m = r.bounds.measures;
    out.push(
      `| [${posix.basename(file, '.json')}](${posix.relative(docDir, file)}) | ${int.format(r.load.changesPerSecond)} | ${int.format(r.options.commitIntervalMs)} ms | ${latency(l.p50)} | ${latency(l.p90)} | **${latency(l.p99)}** | ${latency(l.max)} | ${r.commits.perSecond.toFixed(2)} | ${latency(r.commits.durationMs.p50)} / ${latency(r.commits.durationMs.p99)} | ${r.maintenance.rounds}, ${latency(r.maintenance.durationMs.max)} | ${m.dataFiles.min}–${m.dataFiles.max} | ${m.deletionVectors.min}–${m.deletionVectors.max} | ${m.manifests.min}–${m.manifests.max} | ${m.snapshots.min}–${m.snapshots.max} | ≤ ${kib(m.metadataBytes.max)} | ${r.bounds.withinBounds ? 'yes' : 'no'} | ${loads(r)} |`,
    );
  }
  const runsByMachine = new Map<string, string[]>();
  for (const { file, result: r } of results) {
    const machine = `${r.machine.cpu}, ${r.machine.cores} cores, ${r.machine.memoryGiB} GiB RAM, ${r.machine.os}, Node ${r.machine.node}, ${serverName(r.machine.server)} on the same machine`;
    runsByMachine.set(machine, [...(runsByMachine.get(machine) ?? []), posix.basename(file, '.json')]);
  }
  // several machines: each named with its runs
  const machines = runsByMachine.size === 1 ? [...runsByMachine.keys()] : [...runsByMachine].map(([machine, runs]) => `${machine} (${runs.join(', ')})`);
  const shape = [...new Set(results.map(({ result: r }) => `${int.format(r.options.rows)} rows, transactions of ${r.options.changesPerTransaction} changes, ${r.options.seconds} s, maintenance every ${r.options.maintenanceIntervalMs / 1000} s (expiry beyond ${r.options.expireOlderThanMs / 1000} s), polls every ${r.options.pollMs} ms`))];
  out.push('', `Latency: each change's MySQL COMMIT (client clock) to the first catalog poll holding it. ${shape.join('; ')}. Machine: ${machines.join('; ')}.`);
  return out.join('\n');
}

/** The p99 latencies a user may need, in ms. */
const NEEDS_MS = [500, 1_000, 2_000, 5_000, 15_000, 30_000];

/**
 * For each need and each load measured: the longest interval whose run met the need (fewest
 * commits, so the smallest lake), or the nearest miss.
 */
export function renderIntervals(results: readonly LoadedFreshness[]): string {
  const rates = [...new Set(results.map(({ result: r }) => r.options.changesPerSecond))].sort((a, b) => a - b);
  const out = [`| p99 latency needed | ${rates.map((c) => `at ${int.format(c)} changes/s`).join(' | ')} |`, `|---|${rates.map(() => '---').join('|')}|`];
  for (const need of NEEDS_MS) {
    const cells = rates.map((rate) => {
      const runs = results.map(({ result }) => result).filter((r) => r.options.changesPerSecond === rate);
      const met = runs.filter((r) => r.latency.latencyMs.p99 <= need).sort((a, b) => b.options.commitIntervalMs - a.options.commitIntervalMs)[0];
      if (met) return `\`commit.intervalMs: ${met.options.commitIntervalMs}\` (p99 ${latency(met.latency.latencyMs.p99)}, ${met.commits.perSecond.toFixed(2)} commits/s${met.bounds.withinBounds ? '' : '; the lake not within the soak\'s bounds'})`;
      const best = [...runs].sort((a, b) => a.latency.latencyMs.p99 - b.latency.latencyMs.p99)[0];
      return best ? `not met by an interval measured (best: ${best.options.commitIntervalMs} ms, p99 ${latency(best.latency.latencyMs.p99)})` : 'not measured';
    });
    out.push(`| ≤ ${latency(need)} | ${cells.join(' | ')} |`);
  }
  return out.join('\n');
}
