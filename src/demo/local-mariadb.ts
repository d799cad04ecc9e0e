/**
 * MariaDB as a local server (`local-server.ts`): the machine's `mariadbd`, data directories made by
 * `mariadb-install-db`. `floe demo` runs on it by default; the test harness starts its MariaDB servers
 * through it.
 */
import { constants } from 'node:fs';
import { access, mkdir, rm } from 'node:fs/promises';
import { delimiter, join, resolve } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { FloeError, errorMessage } from '../util/errors.js';
import { osUser, startLocalServer, type LocalServer, type ServerDistribution, type StartLocalServerOptions } from './local-server.js';

const execFileAsync = promisify(execFile);
const SUBSYSTEM = 'demo.mariadb';

/**
 * Where MariaDB's programs are looked for: `FLOE_MARIADB_DIRS` (a PATH-like list, for a server
 * installed elsewhere, e.g. /opt/mariadb/bin) when it is set; otherwise the PATH and then the system's
 * sbin directories. Debian and Ubuntu install `mariadbd` in /usr/sbin, which is not on an ordinary
 * user's PATH, so a search of the PATH alone would tell such a user that MariaDB is not installed.
 */
function mariaDbSearchDirs(): string[] {
  const override = process.env.FLOE_MARIADB_DIRS;
  if (override !== undefined) return override.split(delimiter).filter((dir) => dir !== '');
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  for (const sbin of ['/usr/local/sbin', '/usr/sbin', '/sbin']) if (!dirs.includes(sbin)) dirs.push(sbin);
  return dirs;
}

/** The first executable `command` in {@link mariaDbSearchDirs}, as an absolute path. */
async function mariaDbBinary(command: string): Promise<string | undefined> {
  for (const dir of mariaDbSearchDirs()) {
    try {
      await access(join(dir, command), constants.X_OK);
      return resolve(dir, command);
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** Like {@link mariaDbBinary}, but a missing program is an error that says what to install. */
async function requireMariaDbBinary(command: string): Promise<string> {
  const binary = await mariaDbBinary(command);
  if (binary !== undefined) return binary;
  const where = process.env.FLOE_MARIADB_DIRS !== undefined ? `FLOE_MARIADB_DIRS (${process.env.FLOE_MARIADB_DIRS})` : 'the PATH, /usr/local/sbin, /usr/sbin or /sbin';
  throw new FloeError(SUBSYSTEM, 'invalid-argument', `${command} is not in ${where}; install MariaDB server (apt-get install mariadb-server, brew install mariadb) or set FLOE_MARIADB_DIRS to the directory that holds it`);
}

/**
 * Whether `mariadbd` and `mariadb-install-db` can be run here (both found by {@link mariaDbBinary},
 * executable).
 */
export async function mariaDbAvailable(): Promise<boolean> {
  return (await mariaDbBinary('mariadbd')) !== undefined && (await mariaDbBinary('mariadb-install-db')) !== undefined;
}

const MARIADB: ServerDistribution = {
  name: 'mariadbd',
  templatePrefix: 'floe-mariadb-template',
  serverBinary: () => requireMariaDbBinary('mariadbd'),
  async initialize(dir) {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    try {
      await execFileAsync(await requireMariaDbBinary('mariadb-install-db'), [
        '--no-defaults',
        `--datadir=${dir}`,
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
        `--user=${osUser()}`,
      ]);
    } catch (e) {
      throw new FloeError(SUBSYSTEM, 'internal', `mariadb-install-db could not initialise ${dir}: ${errorMessage(e)}; is MariaDB server installed (apt-get install mariadb-server)?`, { cause: e });
    }
  },
  serverArgs: ({ dataDir, binlog }) => [
    '--innodb-log-file-size=256M',
    '--collation-server=utf8mb4_general_ci',
    ...(binlog ? [`--log-bin=${join(dataDir, 'binlog')}`, '--binlog-format=ROW', '--binlog-row-image=FULL', '--binlog-row-metadata=FULL'] : []),
  ],
  installHint: 'install MariaDB server (apt-get install mariadb-server) or configure a source',
};

export type StartMariaDbOptions = StartLocalServerOptions;

/** A private MariaDB server (see local-server.ts for the data directory kinds). */
export function startMariaDb(options: StartMariaDbOptions = {}): Promise<LocalServer> {
  return startLocalServer(MARIADB, options);
}
