/**
 * The MySQL-compatible server `floe demo` replicates from, when the configuration names none.
 *
 * `--server mariadb` (the default):
 * 1. the machine's `mariadbd`, with its data directory kept in `./.floe/demo-mysql` (a second demo
 *    reuses it; the demo database itself is recreated each time);
 * 2. otherwise, where a Docker engine is reachable, a MySQL 8.4 container (testcontainers) with GTIDs
 *    and the row binlog — removed when the demo ends, so nothing is kept between runs;
 * 3. otherwise an error saying what to install.
 *
 * `--server mysql`: Oracle MySQL 8 from `FLOE_MYSQL_HOME` or the directory `.ci/install-mysql8`
 * installs it into (local-mysql.ts), with GTIDs and the row binlog, its data directory kept in
 * `./.floe/demo-mysql8`; where there is none, an error naming both.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../pipeline/observe/logger.js';
import { FloeError, errorMessage } from '../util/errors.js';
import { mariaDbAvailable, startMariaDb } from './local-mariadb.js';
import { startMysql } from './local-mysql.js';

/** Which local server the demo starts (`floe demo --server`). */
export type DemoServerKind = 'mariadb' | 'mysql';

export interface DemoServer {
  kind: 'mariadb' | 'mysql' | 'mysql-container';
  host: string;
  port: number;
  user: string;
  password: string;
  /** What to show the user: where it runs and where its data lives. */
  description: string;
  stop(): Promise<void>;
}

/** Where each kind keeps its data directory (`<home>/data`) between demos. */
export const DEMO_HOMES: Readonly<Record<DemoServerKind, string>> = { mariadb: join('.floe', 'demo-mysql'), mysql: join('.floe', 'demo-mysql8') };

export async function startDemoServer(logger: Logger, kind: DemoServerKind, home = DEMO_HOMES[kind]): Promise<DemoServer> {
  if (kind === 'mysql') return startLocalMysql(logger, home);
  if (await mariaDbAvailable()) {
    logger.info('starting a local MariaDB for the demo', { dataDir: join(home, 'data') });
    // Own process group: a Ctrl-C reaches floe, which stops cleanly and then stops the server.
    const server = await startMariaDb({ home, serverId: 1, detached: true, extraArgs: ['--expire-logs-days=1'] });
    return {
      kind: 'mariadb',
      host: server.host,
      port: server.port,
      user: server.user,
      password: server.password,
      description: `MariaDB (mariadbd) on 127.0.0.1:${server.port}, data in ${join(home, 'data')}`,
      stop: () => server.stop(),
    };
  }
  const container = await startMysqlContainer(logger);
  if (container) return container;
  throw new FloeError(
    'demo',
    'unsupported',
    'no MySQL-compatible server for the demo: mariadbd is not installed and no Docker engine is reachable; install MariaDB server (apt-get install mariadb-server, brew install mariadb; or set FLOE_MARIADB_DIRS to where its mariadbd is), start Docker, or put a `source:` section in the config',
  );
}

/** MySQL 8 from its installation directory; a missing one is an error naming `.ci/install-mysql8` and FLOE_MYSQL_HOME. */
async function startLocalMysql(logger: Logger, home: string): Promise<DemoServer> {
  logger.info('starting a local MySQL 8 for the demo', { dataDir: join(home, 'data') });
  // Own process group: a Ctrl-C reaches floe, which stops cleanly and then stops the server.
  const server = await startMysql({ home, serverId: 1, detached: true, extraArgs: ['--binlog-expire-logs-seconds=86400'] });
  return {
    kind: 'mysql',
    host: server.host,
    port: server.port,
    user: server.user,
    password: server.password,
    description: `MySQL 8 (mysqld) on 127.0.0.1:${server.port}, data in ${join(home, 'data')}`,
    stop: () => server.stop(),
  };
}

/**
 * Whether a Docker engine could be reachable, by the places testcontainers looks (environment,
 * ~/.testcontainers.properties, the usual sockets, a Docker CLI context) — checked before loading
 * testcontainers at all, which is slow to find out that nothing is there.
 */
export function dockerMaybeReachable(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.DOCKER_HOST || env.TESTCONTAINERS_HOST_OVERRIDE || env.TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE) return true;
  const home = homedir();
  const candidates = [
    '/var/run/docker.sock',
    join(home, '.testcontainers.properties'),
    join(home, '.docker', 'run', 'docker.sock'),
    join(home, '.docker', 'desktop', 'docker.sock'),
    join(home, '.colima', 'default', 'docker.sock'),
    join(home, '.rd', 'docker.sock'),
    ...(env.XDG_RUNTIME_DIR ? [join(env.XDG_RUNTIME_DIR, 'docker.sock'), join(env.XDG_RUNTIME_DIR, 'podman', 'podman.sock')] : []),
  ];
  if (candidates.some((c) => existsSync(c))) return true;
  try {
    const config = JSON.parse(readFileSync(join(home, '.docker', 'config.json'), 'utf8')) as { currentContext?: string };
    return Boolean(config.currentContext && config.currentContext !== 'default');
  } catch {
    return false;
  }
}

async function startMysqlContainer(logger: Logger): Promise<DemoServer | undefined> {
  if (!dockerMaybeReachable()) return undefined;
  let testcontainers: typeof import('testcontainers');
  let mysqlModule: typeof import('@testcontainers/mysql');
  try {
    testcontainers = await import('testcontainers');
    mysqlModule = await import('@testcontainers/mysql');
  } catch {
    return undefined; // installed without dev dependencies
  }
  try {
    await testcontainers.getContainerRuntimeClient();
  } catch {
    return undefined; // no Docker engine
  }
  logger.info('mariadbd not found; starting MySQL 8.4 in Docker for the demo (testcontainers)');
  try {
    const started = await new mysqlModule.MySqlContainer('mysql:8.4')
      .withRootPassword('floe-demo')
      .withCommand([
        '--server-id=1',
        '--log-bin=binlog',
        '--binlog-format=ROW',
        '--binlog-row-image=FULL',
        '--binlog-row-metadata=FULL',
        '--gtid-mode=ON',
        '--enforce-gtid-consistency=ON',
      ])
      .start();
    return {
      kind: 'mysql-container',
      host: started.getHost(),
      port: started.getPort(),
      user: 'root',
      password: started.getRootPassword(),
      description: `MySQL 8.4 in Docker on ${started.getHost()}:${started.getPort()} (removed when the demo ends)`,
      stop: async () => {
        await started.stop();
      },
    };
  } catch (e) {
    throw new FloeError('demo', 'internal', `could not start MySQL 8.4 in Docker: ${errorMessage(e)}`, { cause: e });
  }
}
