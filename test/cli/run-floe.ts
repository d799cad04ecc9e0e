/**
 * Runs the `floe` command as a real child process (`node bin/floe.mjs …`: the build when it is up to
 * date with the sources, else the sources through tsx), from any
 * working directory, and collects its output and exit code.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FLOE_BIN = fileURLToPath(new URL('../../bin/floe.mjs', import.meta.url));

export interface FloeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface FloeOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Kill (SIGKILL) after this many ms; default 120 s. */
  timeoutMs?: number;
}

export function spawnFloe(args: string[], options: FloeOptions = {}): { child: ChildProcess; done: Promise<FloeRun>; output: () => { stdout: string; stderr: string } } {
  const child = spawn(process.execPath, [FLOE_BIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  const done = new Promise<FloeRun>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, done, output: () => ({ stdout, stderr }) };
}

export function runFloe(args: string[], options: FloeOptions = {}): Promise<FloeRun> {
  return spawnFloe(args, options).done;
}

/** JSON log lines of a run's stderr (non-JSON lines skipped). */
export function logLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The URL `floe catalog serve` prints once it listens (60 s at most; fails at once when it exits first). */
export async function waitForUrl(output: () => { stdout: string; stderr: string }, exited: Promise<unknown>): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`floe catalog serve printed no listening URL within 60 s: ${output().stderr}`);
    const m = /at (http:\/\/[^\s]+)/.exec(output().stdout);
    if (m) return m[1]!;
    const done = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 50))]);
    if (done) throw new Error(`floe catalog serve exited before listening: ${output().stderr}`);
  }
}
