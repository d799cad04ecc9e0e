/**
 * The engines of the interop suite from a test: whether `npm run engines:install` has put them in
 * $FLOE_ENGINES_HOME, `engines/read <engine> <table>` as a child process, `floe scan` for the same
 * table, and the long-lived Trino (`engines/trino start|stop`) that the reads share.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runFloe } from '../../cli/run-floe.js';

export const ENGINES = ['spark', 'trino', 'duckdb', 'pyiceberg', 'iceberg-java'] as const;
export type Engine = (typeof ENGINES)[number];

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const ENGINES_HOME = process.env.FLOE_ENGINES_HOME || join(homedir(), '.cache', 'floe-engines');

/** The install stamps (engines/install) each engine needs. */
const STAMPS: Record<Engine, string[]> = {
  spark: ['python', 'spark'],
  trino: ['python', 'trino'],
  duckdb: ['python'],
  pyiceberg: ['python'],
  'iceberg-java': ['iceberg-java'],
};

export function missingEngines(): Engine[] {
  return ENGINES.filter((e) => !STAMPS[e].every((s) => existsSync(join(ENGINES_HOME, 'stamps', s))));
}

export interface EngineRead {
  code: number;
  /** The printed rows (sorted by engines/read). */
  lines: string[];
  stderr: string;
  /** "<engine>'s message" when the engine refused the table (exit 1). */
  refusal: string | undefined;
  seconds: number;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: REPO_ROOT, env: { ...process.env, ...env }, maxBuffer: 512 * 1024 * 1024, timeout: timeoutMs, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof (error as NodeJS.ErrnoException & { code?: unknown }).code === 'number' ? ((error as unknown as { code: number }).code) : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

export async function readWith(engine: Engine, table: string, env: NodeJS.ProcessEnv = {}): Promise<EngineRead> {
  const started = Date.now();
  const r = await run(join(REPO_ROOT, 'engines', 'read'), [engine, table], env, 600_000);
  const refused = new RegExp(`^engines/read: ${engine} refused: (.*)$`, 'm').exec(r.stderr);
  return {
    code: r.code,
    lines: r.stdout.split('\n').filter((l) => l !== ''),
    stderr: r.stderr,
    refusal: r.code === 1 ? refused?.[1] : undefined,
    seconds: (Date.now() - started) / 1000,
  };
}

/** `floe scan <table>`'s lines, sorted as engines/read sorts (by code point). */
export async function floeScanLines(table: string): Promise<string[]> {
  const r = await runFloe(['scan', table], { timeoutMs: 300_000 });
  if (r.code !== 0) throw new Error(`floe scan ${table} failed (${r.code}): ${r.stderr}`);
  return sortLines(r.stdout.split('\n').filter((l) => l !== ''));
}

/** Code-point order, as Python's sorted() on str (JavaScript's default sort compares UTF-16 units). */
export function sortLines(lines: string[]): string[] {
  return [...lines].sort((a, b) => {
    const x = [...a];
    const y = [...b];
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
      if (d !== 0) return d;
    }
    return x.length - y.length;
  });
}

export async function trino(command: 'start' | 'stop', env: NodeJS.ProcessEnv, warehouse?: string): Promise<string> {
  const r = await run(join(REPO_ROOT, 'engines', 'trino'), warehouse === undefined ? [command] : [command, '--warehouse', warehouse], env, 400_000);
  if (r.code !== 0) throw new Error(`engines/trino ${command} failed (${r.code}): ${r.stderr}`);
  return r.stdout.trim();
}
