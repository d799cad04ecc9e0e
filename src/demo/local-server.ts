/**
 * A private MySQL-compatible server started from the machine's binaries, with the binlog set up the way
 * floe needs it (log-bin, binlog_format=ROW, binlog_row_image=FULL, binlog_row_metadata=FULL, a server
 * id), on a free port, ready in a few seconds. Which server is a {@link ServerDistribution}: MariaDB
 * (`local-mariadb.ts`) or Oracle MySQL 8 (`local-mysql.ts`). `floe demo` runs on one; the test harness
 * (test/support/servers.ts) starts its servers through this same module.
 *
 * Two kinds of data directory:
 * - temporary (default): a copy of a per-distribution template made once with the distribution's
 *   initialiser, under the OS temp directory, removed by `stop()`;
 * - persistent (`home`): `<home>/data`, initialised on first use and reused afterwards (the demo's
 *   `./.floe/demo-mysql`). A data directory that no longer starts is re-initialised. A server left
 *   running by an earlier process on the same home (its pid and port are recorded in
 *   `<home>/server.json`) is adopted rather than fought over.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, cp, mkdir, readFile, writeFile, access, rename, stat } from 'node:fs/promises';
import { createHash, randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createServer } from 'node:net';
import mysql from 'mysql2/promise';
import { FloeError } from '../util/errors.js';

const SUBSYSTEM = 'demo.server';

export interface LocalServer {
  url: string;
  host: string;
  port: number;
  user: string;
  password: string;
  dataDir?: string;
  /** Stops the server; a temporary data directory is removed, a persistent one kept. */
  stop(): Promise<void>;
  /** Restarts the server with other extra arguments (same data directory). */
  restart?(extraArgs?: string[]): Promise<void>;
}

export interface StartLocalServerOptions {
  /** More server options, e.g. ['--binlog-format=STATEMENT']. Later options win. */
  extraArgs?: string[];
  serverId?: number;
  /** Keep the binlog off entirely (pre-flight tests). */
  noBinlog?: boolean;
  /** A persistent home directory (data in `<home>/data`); default: a temporary one. */
  home?: string;
  /**
   * Start the server in its own process group, so that a Ctrl-C at the terminal reaches floe (which
   * then stops cleanly and stops the server) and not the server directly.
   */
  detached?: boolean;
  /** Seconds to wait for the server to accept connections (default 30). */
  readyTimeoutSeconds?: number;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      if (typeof addr === 'object' && addr) {
        const port = addr.port;
        srv.close(() => resolvePort(port));
      } else reject(new Error('no port'));
    });
  });
}

/** How to run one kind of server: where its binary is, how a data directory is made, its options. */
export interface ServerDistribution {
  /** The server program, as messages name it. */
  readonly name: string;
  /** Name prefix of the shared template data directory under the OS temp directory. */
  readonly templatePrefix: string;
  /** The server binary's absolute path; an error saying what to install when there is none. */
  serverBinary(): Promise<string>;
  /** Creates an empty, initialised data directory at `dir` (root without a password). */
  initialize(dir: string): Promise<void>;
  /** Adjusts a data directory just copied from the template, before its first start. */
  copiedDataDir?(dataDir: string): Promise<void>;
  /** The distribution's own server options (binary log, paths), before the caller's extra ones. */
  serverArgs(context: { dataDir: string; binlog: boolean }): string[];
  /** What to do when the binary cannot be run. */
  readonly installHint: string;
}

/** The OS user the server runs as (`--user`): mysqld refuses to run as root without `--user=root`. */
export function osUser(): string {
  return process.getuid?.() === 0 ? 'root' : (process.env.USER ?? 'root');
}

const templates = new Map<string, Promise<string>>();

/**
 * A freshly initialised data directory that temporary servers are copied from. One per OS user and
 * server build, shared by every process (test workers, child processes) and kept between runs:
 * initialising one takes seconds and its output is ~100 MiB, so a template per process would
 * fill the disk. Created in a private directory and renamed into place (atomic), so concurrent
 * first users never see a half-initialised template.
 */
function template(distribution: ServerDistribution): Promise<string> {
  let ready = templates.get(distribution.templatePrefix);
  if (ready) return ready;
  ready = (async () => {
    const binary = await distribution.serverBinary();
    const info = await stat(binary);
    const build = createHash('sha256').update(`${binary}:${info.size}:${info.mtimeMs}`).digest('hex').slice(0, 12);
    const dir = join(tmpdir(), `${distribution.templatePrefix}-${osUser()}-${build}`);
    if (await exists(join(dir, TEMPLATE_COMPLETE))) return dir;
    const staging = `${dir}.staging-${process.pid}-${randomUUID().slice(0, 8)}`;
    try {
      await distribution.initialize(staging);
      await writeFile(join(staging, TEMPLATE_COMPLETE), '');
      try {
        await rename(staging, dir);
      } catch (e) {
        // Another process finished first (or a broken leftover sits there): use a complete one.
        if (!(await exists(join(dir, TEMPLATE_COMPLETE)))) {
          await rm(dir, { recursive: true, force: true });
          // if this rename loses a race too, the winner's complete template is used below
          await rename(staging, dir).catch(() => undefined);
        }
        if (!(await exists(join(dir, TEMPLATE_COMPLETE)))) throw e;
      }
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
    return dir;
  })();
  templates.set(distribution.templatePrefix, ready);
  return ready;
}

const TEMPLATE_COMPLETE = '.floe-template-complete';


async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** ER_SECURE_TRANSPORT_REQUIRED: the server runs with require_secure_transport=ON. */
const SECURE_TRANSPORT_REQUIRED = 3159;

async function canConnect(port: number, ssl?: { rejectUnauthorized: false }): Promise<boolean> {
  try {
    const conn = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root', password: '', connectTimeout: 2000, ...(ssl ? { ssl } : {}) });
    await conn.end();
    return true;
  } catch (e) {
    // a server started with --require-secure-transport=ON refuses a plain session: ask again over TLS
    // (the readiness probe only needs an answer; its certificate is the server's own, not checked)
    if (!ssl && (e as { errno?: number }).errno === SECURE_TRANSPORT_REQUIRED) return canConnect(port, { rejectUnauthorized: false });
    return false;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface ServerRecord {
  pid: number;
  port: number;
}

async function readRecord(home: string): Promise<ServerRecord | undefined> {
  try {
    const r = JSON.parse(await readFile(join(home, 'server.json'), 'utf8')) as ServerRecord;
    return Number.isInteger(r.pid) && Number.isInteger(r.port) ? r : undefined;
  } catch {
    return undefined;
  }
}

export async function startLocalServer(distribution: ServerDistribution, options: StartLocalServerOptions = {}): Promise<LocalServer> {
  const binary = await distribution.serverBinary();
  const name = distribution.name;
  const persistent = options.home !== undefined;
  const base = persistent ? resolve(options.home!) : await mkdtemp(join(tmpdir(), 'floe-mysqld-'));
  const dataDir = join(base, 'data');
  const serverId = options.serverId ?? 1;
  const readyMs = (options.readyTimeoutSeconds ?? 30) * 1000;
  let child: ChildProcess | undefined;
  let adoptedPid: number | undefined;
  let stderr = '';
  let port = 0;

  const args = (extraArgs: string[]): string[] => {
    const list = [
      '--no-defaults',
      `--datadir=${dataDir}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--socket=${join(base, 'mysqld.sock')}`,
      `--pid-file=${join(base, 'mysqld.pid')}`,
      // A server of its own for temporary tables: mysqld deletes every `#sql*` file of its tmpdir as
      // it starts (sql_base.cc mysql_rm_tmp_tables), so servers sharing /tmp remove the on-disk
      // temporary tables of each other's running queries ("Error on delete of '/tmp/#sql-temptable…'").
      `--tmpdir=${join(base, 'tmp')}`,
      `--server-id=${serverId}`,
      '--skip-name-resolve',
      '--innodb-buffer-pool-size=256M',
      '--innodb-flush-log-at-trx-commit=2',
      '--sync-binlog=0',
      '--max-connections=500',
      '--character-set-server=utf8mb4',
      ...distribution.serverArgs({ dataDir, binlog: !options.noBinlog }),
      ...extraArgs,
    ];
    if (process.getuid?.() === 0) list.push('--user=root');
    return list;
  };

  const launch = async (extraArgs: string[]): Promise<void> => {
    stderr = '';
    await mkdir(join(base, 'tmp'), { recursive: true });
    const proc = spawn(binary, args(extraArgs), { stdio: ['ignore', 'ignore', 'pipe'], detached: options.detached ?? false });
    child = proc;
    proc.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const spawnError = new Promise<Error>((resolveError) => proc.once('error', resolveError));
    let failed: Error | undefined;
    void spawnError.then((e) => (failed = e));
    const deadline = Date.now() + readyMs;
    for (;;) {
      if (failed) throw new FloeError(SUBSYSTEM, 'internal', `cannot run ${name}: ${failed.message}; ${distribution.installHint}`, { cause: failed });
      if (proc.exitCode !== null) throw new FloeError(SUBSYSTEM, 'internal', `${name} exited with ${proc.exitCode} while starting on ${dataDir}: ${stderr.trim()}`);
      if (await canConnect(port)) break;
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new FloeError(SUBSYSTEM, 'internal', `${name} on ${dataDir} did not accept connections within ${readyMs / 1000} s: ${stderr.trim()}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    if (persistent) await writeFile(join(base, 'server.json'), JSON.stringify({ pid: proc.pid ?? 0, port } satisfies ServerRecord));
  };

  const halt = async (): Promise<void> => {
    if (adoptedPid !== undefined) {
      const pid = adoptedPid;
      adoptedPid = undefined;
      process.kill(pid, 'SIGTERM');
      const deadline = Date.now() + 15_000;
      while (processAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      if (processAlive(pid)) process.kill(pid, 'SIGKILL');
      return;
    }
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((resolveExit) => {
      const timer = setTimeout(() => c.kill('SIGKILL'), 15_000);
      c.once('exit', () => {
        clearTimeout(timer);
        resolveExit();
      });
      c.kill('SIGTERM');
    });
  };

  let current = options.extraArgs ?? [];
  if (!persistent) {
    await cp(await template(distribution), dataDir, { recursive: true });
    await distribution.copiedDataDir?.(dataDir);
    port = await freePort();
    await launch(current);
  } else {
    await mkdir(base, { recursive: true });
    const record = await readRecord(base);
    if (record && processAlive(record.pid) && (await canConnect(record.port))) {
      // An earlier process left its server running (it was killed before it could stop it): use it.
      port = record.port;
      adoptedPid = record.pid;
    } else {
      if (record && processAlive(record.pid)) {
        throw new FloeError(SUBSYSTEM, 'internal', `process ${record.pid} recorded in ${join(base, 'server.json')} still runs but does not answer on port ${record.port}; stop it, or remove ${base}`);
      }
      port = await freePort();
      const initialised = await exists(join(dataDir, 'mysql'));
      if (!initialised) await distribution.initialize(dataDir);
      try {
        await launch(current);
      } catch (e) {
        if (!initialised) throw e;
        // The kept data directory does not start any more (an interrupted first start, an upgrade):
        // it only ever holds demo data, so start over with a fresh one.
        await distribution.initialize(dataDir);
        await launch(current);
      }
    }
  }

  return {
    url: `mysql://root@127.0.0.1:${port}`,
    host: '127.0.0.1',
    port,
    user: 'root',
    password: '',
    dataDir,
    async stop() {
      await halt();
      if (persistent) await rm(join(base, 'server.json'), { force: true });
      else await rm(base, { recursive: true, force: true });
    },
    async restart(extraArgs?: string[]) {
      await halt();
      if (extraArgs) current = extraArgs;
      await launch(current);
    },
  };
}
