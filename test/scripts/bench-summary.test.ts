/**
 * The performance figures in README.md and docs/performance.md are the rendering of the committed
 * bench results (bench/results/*.json), never typed by hand: this fails when a generated block
 * differs from what `npm run bench:summary` would write from the JSON its marker names.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
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
    expect(readme).toContain(beginMarker('summary', ['bench/results/bench-2m-500k.json', 'bench/results/bench-10m-500k.json']));
    expect(readme).toContain(endMarker('summary'));
    const performance = read('docs/performance.md');
    expect(performance).toContain(beginMarker('steps', ['bench/results/bench-2m-500k.json']));
    expect(performance).toContain(endMarker('steps'));
    expect(performance).toContain(beginMarker('runs', ['bench/results/bench-2m-500k.json', 'bench/results/bench-2m-500k-run2.json', 'bench/results/bench-2m-500k-run3.json']));
    expect(performance).toContain(endMarker('runs'));
    expect(performance).toContain(beginMarker('key-index', ['bench/results/bench-1m-250k.json']));
    expect(performance).toContain(endMarker('key-index'));
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
    expect(next).toContain('| [2,000,000 rows, 500,000 changes](bench/results/bench-2m-500k.json) | 123k rows/s | 195k changes/s | 173k changes/s | snapshot 1.73×, CDC 2.78× | snapshot 1.54× | 825 MiB |');
    expect(next).toContain('| [10,000,000 rows, 500,000 changes](bench/results/bench-10m-500k.json) | 241k rows/s | 50k changes/s | 28k changes/s | not run | not run | 710 MiB |');
    const performance = withBenchBlocks(read('docs/performance.md'), 'docs/performance.md', changed);
    expect(performance).toContain('| [bench-2m-500k.json](../bench/results/bench-2m-500k.json) | 1,148k rows/s | 123k rows/s |');
  });

  it('refuses a block whose end marker is gone', () => {
    const doc = `text\n${beginMarker('summary', ['bench/results/bench-2m-500k.json'])}\nold figures\n`;
    expect(() => withBenchBlocks(doc, 'README.md', loadResult)).toThrow(/expected <!-- bench:summary end --> after the block .* of README\.md, found none/);
  });
});
