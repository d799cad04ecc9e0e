/**
 * Snapshot progress for a person at a terminal: one bar per table with rows copied, rows/s and an ETA
 * from the table's approximate row count (information_schema's estimate: the total grows when the
 * estimate was low). Off when stderr is not a terminal — logs and metrics cover that case.
 *
 * While bars are on screen, log lines must go through `writeLine` (the CLI routes its terminal log
 * stream there) so they print above the bars instead of tearing them.
 */
import { MultiBar, type SingleBar } from 'cli-progress';

/** What the runner reports during a snapshot. Every method is cheap and never throws. */
export interface ProgressReporter {
  /** `table`'s snapshot starts; `approximateRows` is the server's estimate (0 when unknown). */
  tableStarted(table: string, approximateRows: number): void;
  /** `rows` more rows of `table` copied. */
  rowsCopied(table: string, rows: number): void;
  /** Every chunk of `table` is committed. */
  tableFinished(table: string): void;
  /** Removes the bars (snapshot over, or stopping). Further calls are ignored. */
  stop(): void;
}

interface TableBar {
  bar: SingleBar;
  rows: number;
  total: number;
  started: number;
  /** Recent (time, rows) samples for the rate: the last ~5 seconds. */
  samples: [number, number][];
  done: boolean;
}

export class TerminalProgress implements ProgressReporter {
  private readonly multibar: MultiBar;
  private readonly bars = new Map<string, TableBar>();
  private stopped = false;
  private readonly nameWidth: number;

  constructor(
    private readonly stream: NodeJS.WritableStream = process.stderr,
    private readonly now: () => number = () => Date.now(),
    tableNameWidth = 28,
  ) {
    this.nameWidth = tableNameWidth;
    this.multibar = new MultiBar({
      stream,
      format: '{table} |{bar}| {rowsText} rows | {rateText} rows/s | {etaText}',
      barsize: 24,
      hideCursor: false, // a forced exit (second Ctrl-C) must not leave the cursor hidden
      clearOnComplete: false,
      autopadding: true,
      fps: 5,
      // floe handles SIGINT itself (finish the checkpoint first); the bars are stopped from there.
      gracefulExit: false,
    });
  }

  get active(): boolean {
    return this.bars.size > 0 && !this.stopped;
  }

  /** Prints a line above the bars (or plainly when none are shown). */
  writeLine(text: string): void {
    const line = text.endsWith('\n') ? text : `${text}\n`;
    if (this.active) {
      this.multibar.log(line);
      this.multibar.update(); // draw now: a line logged just before stop() must not be lost
    } else this.stream.write(line);
  }

  tableStarted(table: string, approximateRows: number): void {
    if (this.stopped || this.bars.has(table)) return;
    const total = Math.max(1, Math.round(approximateRows));
    const t = this.now();
    const bar = this.multibar.create(total, 0, this.payload(table, 0, total, 0, undefined));
    this.bars.set(table, { bar, rows: 0, total, started: t, samples: [[t, 0]], done: false });
  }

  rowsCopied(table: string, rows: number): void {
    const b = this.bars.get(table);
    if (!b || this.stopped || b.done) return;
    b.rows += rows;
    if (b.rows > b.total) b.total = b.rows; // the estimate was low
    const t = this.now();
    b.samples.push([t, b.rows]);
    while (b.samples.length > 2 && t - b.samples[0]![0] > 5_000) b.samples.shift();
    const rate = this.rate(b);
    const eta = rate > 0 ? (b.total - b.rows) / rate : undefined;
    b.bar.setTotal(b.total);
    b.bar.update(b.rows, this.payload(table, b.rows, b.total, rate, eta));
  }

  tableFinished(table: string): void {
    const b = this.bars.get(table);
    if (!b || this.stopped || b.done) return;
    b.done = true;
    const elapsed = Math.max(1, this.now() - b.started) / 1000;
    b.total = Math.max(1, b.rows);
    b.bar.setTotal(b.total);
    b.bar.update(b.rows, { ...this.payload(table, b.rows, b.total, b.rows / elapsed, 0), etaText: `done in ${formatSeconds(elapsed)}` });
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.multibar.stop();
  }

  private rate(b: TableBar): number {
    const [t0, r0] = b.samples[0]!;
    const [t1, r1] = b.samples[b.samples.length - 1]!;
    if (t1 - t0 < 200) {
      const elapsed = (t1 - b.started) / 1000;
      return elapsed > 0 ? b.rows / elapsed : 0;
    }
    return ((r1 - r0) * 1000) / (t1 - t0);
  }

  private payload(table: string, rows: number, total: number, rate: number, eta: number | undefined): Record<string, string> {
    const name = table.length > this.nameWidth ? `…${table.slice(-(this.nameWidth - 1))}` : table.padEnd(this.nameWidth);
    return {
      table: name,
      rowsText: `${formatCount(rows)}/${formatCount(total)}`.padStart(17),
      rateText: formatCount(Math.round(rate)).padStart(7),
      etaText: eta === undefined ? 'ETA –' : `ETA ${formatSeconds(eta)}`,
    };
  }
}

function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return '–';
  if (s < 60) return `${Math.max(0, Math.round(s))}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
