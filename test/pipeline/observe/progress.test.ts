/**
 * Snapshot progress bars on a (simulated) terminal: one bar per table with rows, rows/s and an ETA
 * from the approximate row count, log lines printed above the bars, nothing once stopped.
 */
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { TerminalProgress, formatSeconds } from '../../../src/pipeline/observe/progress.js';

function fakeTerminal(): { stream: Writable; screen: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text += chunk.toString();
      cb();
    },
  });
  Object.assign(stream, { isTTY: true, columns: 200, cursorTo: () => true, moveCursor: () => true, clearLine: () => true, clearScreenDown: () => true });
  // Control sequences (cursor moves, clears) are not what a person reads.
  return { stream, screen: () => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '') };
}

describe('terminal progress', () => {
  it('shows rows, rows/s and an ETA per table, and a finished table with its duration', () => {
    let now = 1_000_000;
    const term = fakeTerminal();
    const progress = new TerminalProgress(term.stream, () => now);
    progress.tableStarted('shop.orders', 10_000);
    progress.tableStarted('shop.customers', 500);
    now += 1_000;
    progress.rowsCopied('shop.orders', 2_000);
    now += 1_000;
    progress.rowsCopied('shop.orders', 2_000); // 4,000 rows at 2,000 rows/s: 6,000 left → 3 s
    progress.rowsCopied('shop.customers', 600); // more than the estimate: the total grows
    now += 500;
    progress.tableFinished('shop.customers');
    progress.writeLine('a log line above the bars');
    progress.stop();
    const screen = term.screen();
    expect(screen).toMatch(/shop\.orders\s+\|[^|]+\|\s+4,000\/10,000 rows \|\s+2,000 rows\/s \| ETA 3s/);
    expect(screen).toMatch(/shop\.customers\s+\|[^|]+\|\s+600\/600 rows \|\s+240 rows\/s \| done in 3s/);
    expect(screen).toContain('a log line above the bars\n');
    // Nothing is drawn after stop; further reports are ignored.
    const before = term.screen();
    progress.rowsCopied('shop.orders', 1);
    progress.tableStarted('shop.items', 5);
    expect(term.screen()).toBe(before);
  });

  it('formats durations for people', () => {
    expect(formatSeconds(0.4)).toBe('0s');
    expect(formatSeconds(59)).toBe('59s');
    expect(formatSeconds(61)).toBe('1m01s');
    expect(formatSeconds(3 * 3600 + 5 * 60)).toBe('3h05m');
    expect(formatSeconds(Infinity)).toBe('–');
  });
});
