/**
 * A floe config file for tests that run `floe` as a child process (FloeProcess, spawnFloe): the
 * shared test server as the source, a local warehouse, the given job, and whatever else the test
 * sets (`source` merged into the source's settings). Written as JSON beside the warehouse.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sharedMysqlConfig } from '../../support/shared-mysql.js';

export interface FloeConfigFile {
  job: string;
  /** A local directory: the warehouse (unless `lake` is given), and where the config file goes beside it. */
  warehouse: string;
  /** The config's `warehouse` setting when the lake is elsewhere (`{location: 's3://…', s3: {…}}`). */
  lake?: Record<string, unknown>;
  /** A replica server id unique to the test (the floe process and its snapshot workers use it and the next few). */
  serverId: number;
  include: readonly string[];
  source?: Record<string, unknown>;
  /** Several configs for one warehouse: a suffix to tell their files apart. */
  configName?: string;
  [key: string]: unknown;
}

/** Writes the config next to the warehouse directory and returns its path. */
export async function writeFloeConfig(options: FloeConfigFile): Promise<string> {
  const { job, warehouse, lake, serverId, include, source, configName, ...extra } = options;
  const server = sharedMysqlConfig();
  const path = join(warehouse, '..', `${warehouse.split('/').pop()}${configName ? `-${configName}` : ''}.json`);
  await writeFile(
    path,
    JSON.stringify({
      job: { id: job },
      ...extra,
      source: { host: server.host, port: server.port, user: server.user, password: server.password, serverId, include, ...source },
      warehouse: lake ?? { location: warehouse },
    }),
  );
  return path;
}
