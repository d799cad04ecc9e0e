/**
 * The engines of the interop suite from a test: whether `npm run engines:install` has put them in
 * $FLOE_ENGINES_HOME, `engines/read [--catalog …] <engine> <table>` as a child process, `floe scan`'s
 * lines for a table, the long-lived Trino (`engines/trino start|stop`) and engines server
 * (`engines/server start|stop`: one SparkSession and one Iceberg Java JVM for the whole suite) that
 * the reads share, and Spark SQL / Iceberg actions run on a table through that server.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runFloe } from '../../cli/run-floe.js';

const ENGINES = ['spark', 'trino', 'duckdb', 'pyiceberg', 'iceberg-java'] as const;
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

/**
 * Which of the engines a suite reads with are not installed, and whether FLOE_ENGINES_REQUIRED=1 makes
 * that a failure rather than a skip; a suite that will be skipped says so once, naming the way out.
 */
export function engineSuite(suite: string, needed: readonly Engine[] = ENGINES): { missing: Engine[]; required: boolean } {
  const missing = missingEngines().filter((e) => needed.includes(e));
  const required = process.env.FLOE_ENGINES_REQUIRED === '1';
  if (missing.length > 0 && !required) {
    console.warn(`[floe] ${suite} skipped: ${missing.join(', ')} not installed in ${ENGINES_HOME}; run npm run engines:install (FLOE_ENGINES_REQUIRED=1 makes this a failure)`);
  }
  return { missing, required };
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

/**
 * A catalog engines/read reaches a table through (engines/lib/catalogs.py); with `configs`, each engine
 * is set up from its own file in that directory (engines/lib/engine_configs.py).
 */
export type CatalogSpec =
  | { type: 'filesystem' }
  | { type: 'rest'; uri: string }
  | { type: 'sql'; url: string; name?: string; warehouse?: string }
  | { type: 'rest' | 'sql'; configs: string };
export type CatalogKind = CatalogSpec['type'];

function catalogArgs(catalog: CatalogSpec): string[] {
  if (catalog.type === 'filesystem') return [];
  if ('configs' in catalog) return ['--catalog', catalog.type, '--configs', catalog.configs];
  if (catalog.type === 'rest') return ['--catalog', 'rest', '--uri', catalog.uri];
  return ['--catalog', 'sql', '--uri', catalog.url, ...(catalog.name ? ['--catalog-name', catalog.name] : []), ...(catalog.warehouse ? ['--warehouse', catalog.warehouse] : [])];
}

/** `table`: a directory or metadata file (filesystem), else `namespace.table`. */
export async function readWith(engine: Engine, table: string, env: NodeJS.ProcessEnv = {}, catalog: CatalogSpec = { type: 'filesystem' }): Promise<EngineRead> {
  const started = Date.now();
  const r = await run(join(REPO_ROOT, 'engines', 'read'), [...catalogArgs(catalog), engine, table], env, 600_000);
  const refused = new RegExp(`^engines/read: ${engine} refused: (.*)$`, 'm').exec(r.stderr);
  return {
    code: r.code,
    lines: r.stdout.split('\n').filter((l) => l !== ''),
    stderr: r.stderr,
    refusal: r.code === 1 ? refused?.[1] : undefined,
    seconds: (Date.now() - started) / 1000,
  };
}

/**
 * `floe scan <table | metadata file>`'s lines, sorted as engines/read sorts (by code point); `env`
 * carries the AWS_* settings of a table on S3.
 */
export async function floeScanLines(table: string, env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const r = await runFloe(['scan', table], { timeoutMs: 300_000, env });
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

/** `engines/server start|stop` (its run directory from $FLOE_ENGINES_SERVER_RUN when set). */
export async function enginesServer(command: 'start' | 'stop', env: NodeJS.ProcessEnv = {}, warm: string[] = []): Promise<string> {
  const r = await run(join(REPO_ROOT, 'engines', 'server'), command === 'start' && warm.length > 0 ? [command, '--warm', warm.join(',')] : [command], env, 400_000);
  if (r.code !== 0) throw new Error(`engines/server ${command} failed (${r.code}): ${r.stderr}`);
  return r.stdout.trim();
}

function serverPort(): number {
  const dir = process.env.FLOE_ENGINES_SERVER_RUN || join(ENGINES_HOME, 'run', 'server');
  const state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { port: number };
  return state.port;
}

async function serverCall<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${serverPort()}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(900_000) });
  const answer = (await res.json()) as { status: string; message?: string } & T;
  if (answer.status !== 'ok') throw new Error(`engines server ${path}: ${answer.status}: ${answer.message}`);
  return answer;
}

export interface SparkStatementResult {
  statement: string;
  rows?: (string | null)[][];
  /** Spark's error (the statement failed; the others still ran). */
  error?: string;
}

/**
 * Spark SQL on one table, in the engines server's session: `{catalog}` is replaced by the Spark
 * catalog's name, `{table}` by the table's identifier within it (for procedure arguments), and
 * `{qualified}` by both.
 */
export async function sparkSql(catalog: CatalogSpec, table: string, statements: string[]): Promise<SparkStatementResult[]> {
  return (await serverCall<{ results: SparkStatementResult[] }>('/spark/sql', { catalog, table, statements })).results;
}

/** Iceberg's DeleteOrphanFiles action through Spark (the procedure refuses older_than < 24 h). */
export async function sparkDeleteOrphanFiles(catalog: CatalogSpec, table: string, olderThanMs: number): Promise<string[]> {
  return (await serverCall<{ deleted: string[] }>('/spark/delete-orphan-files', { catalog, table, olderThanMs })).deleted;
}
