/**
 * `floe run` as a child process for crash tests: `node bin/floe.mjs run -c <config>`
 * with JSON logs, whose log lines are watched as they arrive (to know the phase at the moment of a
 * kill, and to wait for one), and which can be killed with SIGKILL at any moment.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FLOE_BIN = fileURLToPath(new URL('../../../bin/floe.mjs', import.meta.url));

export interface FloeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export type LogRecord = Record<string, unknown> & { msg?: string; level?: string; notification?: string };

export class FloeProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<FloeExit>;
  /** Every JSON log line so far. */
  readonly logs: LogRecord[] = [];
  /** Non-JSON output (crash traces). */
  readonly text: string[] = [];
  private waiters: { test: (r: LogRecord) => boolean; resolve: (r: LogRecord) => void }[] = [];
  private exit: FloeExit | undefined;

  constructor(configPath: string, options: { env?: NodeJS.ProcessEnv; command?: 'run' | 'snapshot'; logLevel?: 'info' | 'debug' } = {}) {
    this.child = spawn(
      process.execPath,
      [FLOE_BIN, options.command ?? 'run', '-c', configPath, '--no-preflight', '--no-progress', '--log-format', 'json', '--log-level', options.logLevel ?? 'info'],
      { cwd: REPO_ROOT, env: { ...process.env, NO_COLOR: '1', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let pending = '';
    const onData = (d: Buffer) => {
      pending += d.toString();
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        this.line(line);
      }
    };
    this.child.stdout!.on('data', onData);
    this.child.stderr!.on('data', onData);
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
  }

  private line(line: string): void {
    if (!line.startsWith('{')) {
      if (line.trim()) this.text.push(line);
      return;
    }
    let record: LogRecord;
    try {
      record = JSON.parse(line) as LogRecord;
    } catch {
      this.text.push(line);
      return;
    }
    this.logs.push(record);
    const ready = this.waiters.filter((w) => w.test(record));
    this.waiters = this.waiters.filter((w) => !w.test(record));
    for (const w of ready) w.resolve(record);
  }

  /** Notification types logged so far, in order. */
  notifications(): string[] {
    return this.logs.flatMap((r) => (typeof r.notification === 'string' ? [r.notification] : []));
  }

  /** Resolves with the first log record matching `test` (past or future), or undefined once the process exits. */
  waitFor(test: (r: LogRecord) => boolean): Promise<LogRecord | undefined> {
    const seen = this.logs.find(test);
    if (seen) return Promise.resolve(seen);
    if (this.exit) return Promise.resolve(undefined);
    return Promise.race([new Promise<LogRecord>((resolve) => this.waiters.push({ test, resolve })), this.exited.then(() => undefined)]);
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (!this.exit) this.child.kill(signal);
  }

  get hasExited(): boolean {
    return this.exit !== undefined;
  }

  /** The last lines of output, for failure messages. */
  tail(n = 40): string {
    const lines = [...this.logs.map((r) => `${r.level} ${r.msg} ${JSON.stringify({ ...r, level: undefined, msg: undefined, time: undefined, pid: undefined })}`), ...this.text];
    return lines.slice(-n).join('\n');
  }
}
