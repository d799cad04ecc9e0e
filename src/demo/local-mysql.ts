/**
 * Oracle MySQL 8 as a local server (`local-server.ts`), for `floe demo --server mysql` and the test
 * harness: a MySQL installation directory holding `bin/mysqld` — `FLOE_MYSQL_HOME`, else the one
 * `.ci/install-mysql8` puts into `~/.cache/floe-ci/mysql-8.0.31` (MySQL 8.0.31 Community from Maven
 * Central). Data directories are made by `mysqld --initialize-insecure` (root without a password),
 * which also generates the TLS certificates a server needs (`ca.pem`, `server-cert.pem`,
 * `client-cert.pem`, `client-key.pem` in the data directory).
 *
 * Not the `mysqld` on the PATH: Debian's MariaDB package installs /usr/sbin/mysqld as a link to
 * `mariadbd`, which would quietly run MariaDB under MySQL's name.
 */
import { constants } from 'node:fs';
import { access, mkdir, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { FloeError, errorMessage } from '../util/errors.js';
import { osUser, startLocalServer, type LocalServer, type ServerDistribution, type StartLocalServerOptions } from './local-server.js';

const execFileAsync = promisify(execFile);
const SUBSYSTEM = 'demo.mysql';
const INSTALL_HINT = 'run `bash .ci/install-mysql8` (MySQL 8.0.31 from Maven Central into ~/.cache/floe-ci) or set FLOE_MYSQL_HOME to a MySQL 8 installation directory (the one holding bin/mysqld)';

/** The MySQL installation directory (its `bin/mysqld`, `share/`, `lib/`). */
function mysqlHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FLOE_MYSQL_HOME) return env.FLOE_MYSQL_HOME;
  return join(env.FLOE_CI_CACHE ?? join(homedir(), '.cache', 'floe-ci'), 'mysql-8.0.31');
}

/** Whether a MySQL `mysqld` can be run from {@link mysqlHome}. */
async function mysqlAvailable(): Promise<boolean> {
  try {
    await access(join(mysqlHome(), 'bin', 'mysqld'), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function requireMysqld(): Promise<string> {
  if (await mysqlAvailable()) return join(mysqlHome(), 'bin', 'mysqld');
  const where = process.env.FLOE_MYSQL_HOME ? `FLOE_MYSQL_HOME (${process.env.FLOE_MYSQL_HOME})` : mysqlHome();
  throw new FloeError(SUBSYSTEM, 'invalid-argument', `expected MySQL's bin/mysqld in ${where}, found none; ${INSTALL_HINT}`);
}

const MYSQL: ServerDistribution = {
  name: 'mysqld (MySQL 8)',
  templatePrefix: 'floe-mysql-template',
  serverBinary: requireMysqld,
  async initialize(dir) {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    // --initialize-insecure makes root@localhost only, which a TCP client from 127.0.0.1 does not match
    // under --skip-name-resolve: root may also connect from the loopback address, without a password.
    const initFile = `${dir}.init.sql`;
    await writeFile(initFile, "CREATE USER 'root'@'127.0.0.1' IDENTIFIED BY '';\nGRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n");
    try {
      await execFileAsync(await requireMysqld(), ['--no-defaults', '--initialize-insecure', `--basedir=${mysqlHome()}`, `--datadir=${dir}`, `--init-file=${initFile}`, `--user=${osUser()}`]);
    } catch (e) {
      throw new FloeError(SUBSYSTEM, 'internal', `mysqld --initialize-insecure could not initialise ${dir}: ${errorMessage(e)}`, { cause: e });
    } finally {
      await rm(initFile, { force: true });
    }
  },
  // auto.cnf holds the server's UUID, the source id of its GTIDs: a copy of the template must get one
  // of its own (mysqld writes a new auto.cnf when there is none), or two servers of one test — a
  // primary and its replica — would log each other's GTIDs as their own.
  copiedDataDir: (dataDir) => rm(join(dataDir, 'auto.cnf'), { force: true }),
  serverArgs: ({ dataDir, binlog }) => [
    `--basedir=${mysqlHome()}`,
    // X Protocol listens on 33060 by default: a second server on the machine would fail to start
    '--mysqlx=OFF',
    '--local-infile=ON',
    ...(binlog
      ? [
          `--log-bin=${join(dataDir, 'binlog')}`,
          '--binlog-format=ROW',
          '--binlog-row-image=FULL',
          '--binlog-row-metadata=FULL',
          '--gtid-mode=ON',
          '--enforce-gtid-consistency=ON',
        ]
      : ['--disable-log-bin']),
  ],
  installHint: INSTALL_HINT,
};

/** A private MySQL 8 server (see local-server.ts for the data directory kinds). */
export function startMysql(options: StartLocalServerOptions = {}): Promise<LocalServer> {
  return startLocalServer(MYSQL, options);
}
