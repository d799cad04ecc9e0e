/**
 * Test harness: a private MariaDB server with the binlog set up the way floe needs it
 * (log-bin, binlog_format=ROW, binlog_row_image=FULL, binlog_row_metadata=FULL, a server id), started
 * from the machine's `mariadbd` on a free port and a temp data directory, ready in a few seconds.
 *
 * `FLOE_TEST_MYSQL_URL` (e.g. mysql://root:pw@127.0.0.1:3307) points the shared-server tests at any
 * other server (MySQL 8.x) instead. Tests that must reconfigure the server (pre-flight) always start
 * their own with `startMariaDb({ extraArgs })`.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, cp, mkdir, access } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';

const execFileAsync = promisify(execFile);

export interface TestServer {
  url: string;
  host: string;
  port: number;
  user: string;
  password: string;
  dataDir?: string;
  /** Stops the server (and removes its data directory when the harness created it). */
  stop(): Promise<void>;
  /** Restarts a harness-started server with other extra arguments (same data directory). */
  restart?(extraArgs?: string[]): Promise<void>;
}

export interface StartOptions {
  /** More `mariadbd` options, e.g. ['--binlog-format=STATEMENT']. Later options win. */
  extraArgs?: string[];
  serverId?: number;
  /** Keep the binlog off entirely (pre-flight tests). */
  noBinlog?: boolean;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      if (typeof addr === 'object' && addr) {
        const port = addr.port;
        srv.close(() => resolve(port));
      } else reject(new Error('no port'));
    });
  });
}

let templateReady: Promise<string> | undefined;

/** A freshly initialised data directory, created once per process and copied for each server. */
async function template(): Promise<string> {
  templateReady ??= (async () => {
    const dir = join(tmpdir(), `floe-mariadb-template-${process.pid}`);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    await execFileAsync('mariadb-install-db', [
      '--no-defaults',
      `--datadir=${dir}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      '--user=' + (process.getuid?.() === 0 ? 'root' : (process.env.USER ?? 'root')),
    ]);
    return dir;
  })();
  return templateReady;
}

export async function startMariaDb(options: StartOptions = {}): Promise<TestServer> {
  const base = await mkdtemp(join(tmpdir(), 'floe-mariadb-'));
  const dataDir = join(base, 'data');
  await cp(await template(), dataDir, { recursive: true });
  const port = await freePort();
  const serverId = options.serverId ?? 1;
  let child: ChildProcess | undefined;
  let stderr = '';

  const launch = async (extraArgs: string[]): Promise<void> => {
    const args = [
      '--no-defaults',
      `--datadir=${dataDir}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--socket=${join(base, 'mysqld.sock')}`,
      `--pid-file=${join(base, 'mysqld.pid')}`,
      `--server-id=${serverId}`,
      '--skip-name-resolve',
      '--innodb-buffer-pool-size=256M',
      '--innodb-log-file-size=256M',
      '--innodb-flush-log-at-trx-commit=2',
      '--sync-binlog=0',
      '--max-connections=500',
      '--character-set-server=utf8mb4',
      '--collation-server=utf8mb4_general_ci',
      ...(options.noBinlog
        ? []
        : [
            `--log-bin=${join(dataDir, 'binlog')}`,
            '--binlog-format=ROW',
            '--binlog-row-image=FULL',
            '--binlog-row-metadata=FULL',
          ]),
      ...extraArgs,
    ];
    if (process.getuid?.() === 0) args.push('--user=root');
    stderr = '';
    child = spawn('mariadbd', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`test harness: mariadbd exited with ${child.exitCode}: ${stderr}`);
      try {
        const conn = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root', password: '' });
        await conn.end();
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`test harness: mariadbd not ready after 30s: ${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  const halt = async (): Promise<void> => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => c.kill('SIGKILL'), 15_000);
      c.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      c.kill('SIGTERM');
    });
  };

  let current = options.extraArgs ?? [];
  await launch(current);
  return {
    url: `mysql://root@127.0.0.1:${port}`,
    host: '127.0.0.1',
    port,
    user: 'root',
    password: '',
    dataDir,
    async stop() {
      await halt();
      await rm(base, { recursive: true, force: true });
    },
    async restart(extraArgs?: string[]) {
      await halt();
      if (extraArgs) current = extraArgs;
      await launch(current);
    },
  };
}

/** Parses mysql://user:password@host:port into connection fields. */
export function parseMysqlUrl(url: string): { host: string; port: number; user: string; password: string } {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: u.port ? Number(u.port) : 3306,
    user: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password || ''),
  };
}

export async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
