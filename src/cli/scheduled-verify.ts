/**
 * The verification `floe run` schedules (`verify.intervalMs`, off by default; docs/verify.md): every
 * interval, `floe verify --json` of the same configuration runs as a child process at a lower CPU
 * priority — so its lake reads and hashing never take the pipeline's thread, and what it costs floe
 * run is only its reads on the server — with replica server ids of its own (source.serverId + 200).
 * It never repairs. Its result goes to the floe_verify_* gauges (metrics.ts) and a `verify-finished`
 * notification. A verification that fails is logged and tried again next interval; the next one
 * starts an interval after the last one ended. Stopped with the run (the child is terminated).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { FloeConfig } from '../config/schema.js';
import type { Logger } from '../pipeline/observe/logger.js';
import type { Metrics } from '../pipeline/observe/metrics.js';
import type { Notifier } from '../pipeline/observe/notifications.js';
import type { TableVerification } from '../pipeline/verify/verify-result.js';

const FLOE_BIN = fileURLToPath(new URL('../../bin/floe.mjs', import.meta.url));

/** Niceness of the verification process (19 is the lowest priority). */
const NICENESS = 10;

export class ScheduledVerification {
  private timer: NodeJS.Timeout | undefined;
  private child: ChildProcess | undefined;
  private stopped = false;

  constructor(
    private readonly config: FloeConfig,
    private readonly configPath: string,
    private readonly logger: Logger,
    private readonly notifier: Notifier,
    private readonly metrics: Metrics | undefined,
  ) {}

  start(): void {
    if (this.config.verify.intervalMs === undefined) return;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.runOnce().finally(() => this.schedule()), this.config.verify.intervalMs);
    this.timer.unref();
  }

  private async runOnce(): Promise<void> {
    const source = this.config.source;
    if (this.stopped || !source) return;
    const args = [FLOE_BIN, 'verify', '-c', this.configPath, '--json', '--no-progress', '--log-format', 'json', '--log-level', 'warn'];
    args.push('--parallelism', String(this.config.verify.parallelism), '--server-id', String(source.serverId + 200));
    const tables: TableVerification[] = [];
    let summary: { status?: 'equal' | 'differs' | 'unverified' } = {};
    const stderr: string[] = [];
    const code = await new Promise<number | null>((resolve) => {
      const child = (this.child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } }));
      try {
        if (child.pid !== undefined) setPriority(child.pid, NICENESS);
      } catch {
        // a lower priority is a courtesy to the pipeline; without it the verification still runs
      }
      let pending = '';
      child.stdout!.on('data', (d: Buffer) => {
        pending += d.toString();
        let nl: number;
        while ((nl = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          try {
            const record = JSON.parse(line) as { type?: string };
            if (record.type === 'table') tables.push(record as unknown as TableVerification);
            else if (record.type === 'summary') summary = record as typeof summary;
          } catch {
            // not a result line
          }
        }
      });
      child.stderr!.on('data', (d: Buffer) => {
        stderr.push(d.toString());
        if (stderr.length > 40) stderr.shift();
      });
      child.on('close', (c) => resolve(c));
      child.on('error', (e) => {
        stderr.push(String(e));
        resolve(null);
      });
    });
    this.child = undefined;
    if (this.stopped) return;
    if (!summary.status) {
      this.logger.warn('the scheduled verification did not finish; it is tried again next interval', { exitCode: code, output: stderr.join('').slice(-2000) });
      return;
    }
    for (const t of tables) {
      const rows = t.differences.reduce((n, d) => n + d.rows.onlyInMysql + d.rows.onlyInLake + d.rows.differing, 0);
      this.metrics?.verification?.(t.table, { differingRows: rows, differingChunks: t.differences.length, verified: t.status === 'equal' || t.status === 'differs' });
    }
    this.metrics?.verificationFinished?.(Date.now());
    this.notifier.notify({
      type: 'verify-finished',
      status: summary.status,
      tables: tables.map((t) => ({ table: t.table, status: t.status, differingChunks: t.differences.length, differingRows: t.differences.reduce((n, d) => n + d.rows.onlyInMysql + d.rows.onlyInLake + d.rows.differing, 0) })),
    });
  }

  /** Stops scheduling and ends a verification under way. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.child?.kill('SIGTERM');
  }
}
