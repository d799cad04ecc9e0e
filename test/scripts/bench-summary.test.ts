/**
 * The performance figures in README.md and docs/performance.md are the rendering of the committed
 * bench results (bench/results/*.json), never typed by hand: this fails when a generated block
 * differs from what `npm run bench:summary` would write from the JSON its marker names.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FreshnessResult } from '../../bench/freshness.js';
import { BENCH_DOCS, beginMarker, endMarker, loadResult, withBenchBlocks } from '../../scripts/bench-summary.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (docPath: string) => readFileSync(`${ROOT}${docPath}`, 'utf8');

describe('the generated benchmark figures', () => {
  it.each(BENCH_DOCS)('%s holds exactly what bench/results renders to (npm run bench:summary)', (docPath) => {
    const doc = read(docPath);
    expect(withBenchBlocks(doc, docPath, loadResult)).toBe(doc);
  });

  it('are where the prose cites them: a summary in README, the latest table and the runs in docs/performance.md', () => {
    const readme = read('README.md');
    expect(readme).toContain(beginMarker('summary', ['bench/results/bench-2m-500k.json', 'bench/results/bench-10m-500k.json', 'bench/results/bench-50m-500k.json']));
    expect(readme).toContain(endMarker('summary'));
    const performance = read('docs/performance.md');
    expect(performance).toContain(beginMarker('targets', ['bench/results/bench-2m-500k.json', 'bench/results/bench-10m-500k.json', 'bench/results/bench-50m-500k.json', 'bench/results/freshness-10000cps-200ms.json']));
    expect(performance).toContain(endMarker('targets'));
    expect(performance).toContain(beginMarker('steps', ['bench/results/bench-2m-500k.json']));
    expect(performance).toContain(beginMarker('steps', ['bench/results/bench-10m-500k.json', 'bench/results/bench-50m-500k.json']));
    expect(performance).toContain(endMarker('steps'));
    expect(performance).toContain(beginMarker('key-index', ['bench/results/bench-2m-500k.json']));
    expect(performance).toContain(endMarker('key-index'));
    const freshness = [1000, 10_000].flatMap((c) => [200, 1000, 10_000].map((t) => `bench/results/freshness-${c}cps-${t}ms.json`));
    expect(performance).toContain(beginMarker('freshness', freshness));
    expect(performance).toContain(endMarker('freshness'));
    expect(performance).toContain(beginMarker('intervals', freshness));
    expect(performance).toContain(endMarker('intervals'));
  });

  it('follow the JSON: a figure changed there changes the rendered block, with links relative to the document', () => {
    const readme = read('README.md');
    const changed = (file: string) => {
      const result = loadResult(file);
      if (file === 'bench/results/bench-2m-500k.json') result.snapshot.rowsPerSecond = 123_456;
      return result;
    };
    const next = withBenchBlocks(readme, 'README.md', changed);
    expect(next).not.toBe(readme);
    expect(next).toContain('| [2,000,000 rows, 500,000 changes](bench/results/bench-2m-500k.json) | 123k rows/s | 173k changes/s | 143k changes/s | snapshot 2.30×, CDC 2.62× | snapshot 1.82× | 885 MiB |');
    expect(next).toContain('| [10,000,000 rows, 500,000 changes](bench/results/bench-10m-500k.json) | 201k rows/s | 120k changes/s | 99k changes/s | not run | not run | 732 MiB |');
    // the targets follow the runs too: a met target reads met, and the ratios built on it move with it
    const faster = (file: string) => {
      const result = loadResult(file);
      if (file === 'bench/results/bench-10m-500k.json') {
        result.cdc.eventsPerSecond = 160_000;
        result.snapshot.ratioToCeiling = 0.2999;
      }
      return result;
    };
    const performance = withBenchBlocks(read('docs/performance.md'), 'docs/performance.md', faster);
    expect(performance).toContain('| CDC at 10M rows ≥ 150k changes/s | 160k changes/s | [bench-10m-500k.json](../bench/results/bench-10m-500k.json) | yes |');
    expect(performance).toContain('| CDC after a crash ≥ 0.8 of the clean-stop rate | 0.61 at 10M rows (99k vs 160k changes/s) | [bench-10m-500k.json](../bench/results/bench-10m-500k.json) | **no** |');
    // a figure just short of its target is rounded down, never shown as reaching it
    expect(performance).toContain(' | 0.29 at 10M rows | [bench-10m-500k.json](../bench/results/bench-10m-500k.json) | **no** |');
    expect(read('docs/performance.md')).toContain('| CDC after a crash ≥ 0.8 of the clean-stop rate | 0.81 at 10M rows (99k vs 120k changes/s) | [bench-10m-500k.json](../bench/results/bench-10m-500k.json) | yes |');
  });

  it('refuses a block whose end marker is gone', () => {
    const doc = `text\n${beginMarker('summary', ['bench/results/bench-2m-500k.json'])}\nold figures\n`;
    expect(() => withBenchBlocks(doc, 'README.md', loadResult)).toThrow(/expected <!-- bench:summary end --> after the block .* of README\.md, found none/);
  });

  describe('freshness runs', () => {
    const q = (p99: number) => ({ p50: p99 / 2, p90: p99 * 0.8, p99, max: p99 * 1.5, mean: p99 / 2 });
    const bound = (min: number, max: number) => ({ min, max, early: min, late: min, bounded: true });
    const run = (changesPerSecond: number, commitIntervalMs: number, p99: number, withinBounds = true): FreshnessResult =>
      ({
        options: { changesPerSecond, commitIntervalMs, rows: 100_000, changesPerTransaction: 10, seconds: 600, maintenanceIntervalMs: 30_000, expireOlderThanMs: 60_000, pollMs: 20 },
        machine: { cpu: 'CPU', cores: 2, memoryGiB: 23.5, os: 'Linux', node: 'v20', server: 'MariaDB 10.11.19-MariaDB-log', loadAverage: 1.5 },
        load: { changesPerSecond: changesPerSecond - 3 },
        latency: { latencyMs: q(p99) },
        commits: { perSecond: 1000 / (commitIntervalMs + 100), durationMs: q(180) },
        maintenance: { rounds: 20, durationMs: q(2000) },
        bounds: { withinBounds, measures: { dataFiles: bound(3, 70), deletionVectors: bound(0, 68), manifests: bound(5, 140), snapshots: bound(20, 150), metadataBytes: bound(40_000, 235_520) } },
        samples: [{ loadAverage: 1.2 }, { loadAverage: 2.5 }],
      }) as unknown as FreshnessResult;
    const runs: Record<string, FreshnessResult> = {
      'bench/results/freshness-1000cps-200ms.json': run(1000, 200, 420),
      'bench/results/freshness-1000cps-1000ms.json': run(1000, 1000, 1_900),
      'bench/results/freshness-1000cps-10000ms.json': run(1000, 10_000, 11_200),
      'bench/results/freshness-10000cps-200ms.json': run(10_000, 200, 3_300, false),
      'bench/results/freshness-10000cps-1000ms.json': run(10_000, 1000, 4_100),
    };
    const files = Object.keys(runs);
    const render = (kind: 'freshness' | 'intervals') => withBenchBlocks(`${beginMarker(kind, files)}\n${endMarker(kind)}\n`, 'docs/performance.md', (file) => runs[file]);

    it('side by side: latency, commits and the lake bounds, with links relative to the document', () => {
      const doc = render('freshness');
      expect(doc).toContain('| [freshness-1000cps-200ms](../bench/results/freshness-1000cps-200ms.json) | 997 | 200 ms | 210 ms | 336 ms | **420 ms** | 630 ms | 3.33 | 90 ms / 180 ms | 20, 3,000 ms | 3–70 | 0–68 | 5–140 | 20–150 | ≤ 230 KiB | yes | 1.5 at start, 1.2–2.5 during |');
      expect(doc).toContain('| [freshness-10000cps-200ms](../bench/results/freshness-10000cps-200ms.json) | 9,997 | 200 ms |');
      expect(doc).toContain('| **11.2 s** | 16.8 s | 0.10 |');
      expect(doc).toContain('Machine: CPU, 2 cores, 23.5 GiB RAM, Linux, Node v20, MariaDB 10.11.19 on the same machine.');
    });

    it('names each machine with its runs when the runs come from more than one', () => {
      const other = { ...runs['bench/results/freshness-10000cps-200ms.json']!, machine: { ...runs['bench/results/freshness-10000cps-200ms.json']!.machine, cpu: 'Other CPU' } } as FreshnessResult;
      const doc = withBenchBlocks(`${beginMarker('freshness', files)}\n${endMarker('freshness')}\n`, 'docs/performance.md', (file) => (file.includes('10000cps-200ms') ? other : runs[file]));
      expect(doc).toContain('Machine: CPU, 2 cores, 23.5 GiB RAM, Linux, Node v20, MariaDB 10.11.19 on the same machine (freshness-1000cps-200ms, freshness-1000cps-1000ms, freshness-1000cps-10000ms, freshness-10000cps-1000ms); Other CPU, 2 cores, 23.5 GiB RAM, Linux, Node v20, MariaDB 10.11.19 on the same machine (freshness-10000cps-200ms).');
    });

    it('recommends, per latency need, the longest interval measured that met it', () => {
      const doc = render('intervals');
      expect(doc).toContain('| p99 latency needed | at 1,000 changes/s | at 10,000 changes/s |');
      expect(doc).toContain('| ≤ 500 ms | `commit.intervalMs: 200` (p99 420 ms, 3.33 commits/s) | not met by an interval measured (best: 200 ms, p99 3,300 ms) |');
      expect(doc).toContain('| ≤ 2,000 ms | `commit.intervalMs: 1000` (p99 1,900 ms, 0.91 commits/s) | not met by an interval measured (best: 200 ms, p99 3,300 ms) |');
      expect(doc).toContain("| ≤ 5,000 ms | `commit.intervalMs: 1000` (p99 1,900 ms, 0.91 commits/s) | `commit.intervalMs: 1000` (p99 4,100 ms, 0.91 commits/s) |");
      expect(doc).toContain('| ≤ 15.0 s | `commit.intervalMs: 10000` (p99 11.2 s, 0.10 commits/s) |');
    });
  });
});

