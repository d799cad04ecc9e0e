/**
 * The source part of `floe check` (and of the checks `floe run` starts with): connect, discover the
 * captured tables, then the MySQL pre-flight of src/source/mysql/preflight.ts, each line prefixed
 * `source.`.
 */
import type { FloeConfig } from '../../config/schema.js';
import { connectMysql, type MysqlClient } from '../../source/mysql/index.js';
import { discoverTables } from '../../source/mysql/index.js';
import { runPreflight } from '../../source/mysql/index.js';
import { tableKey } from '../../source/mysql/index.js';
import { errorMessage } from '../../util/errors.js';
import { mysqlConnection } from '../../pipeline/config-options.js';
import type { CheckLine } from './check-line.js';

export async function sourceChecks(config: FloeConfig): Promise<CheckLine[]> {
  const source = config.source;
  if (!source) {
    return [{ check: 'source.config', ok: false, severity: 'error', message: 'no source configured: add a `source:` section (host, port, user, password or url); `floe demo` starts a local one instead' }];
  }
  const connection = mysqlConnection(source);
  const where = `${connection.user}@${connection.host}:${connection.port}`;
  let client: MysqlClient;
  try {
    client = await connectMysql(connection);
  } catch (e) {
    return [{ check: 'source.connection', ok: false, severity: 'error', message: `cannot connect to ${where}: ${errorMessage(e)}` }];
  }
  try {
    const lines: CheckLine[] = [{ check: 'source.connection', ok: true, severity: 'error', message: `connected to ${where}` }];
    const tables = await discoverTables(client, { include: source.include, exclude: source.exclude });
    lines.push(
      tables.length > 0
        ? { check: 'source.tables', ok: true, severity: 'info', message: `${tables.length} table${tables.length === 1 ? '' : 's'} to capture: ${tables.slice(0, 8).map(tableKey).join(', ')}${tables.length > 8 ? ', …' : ''}` }
        : { check: 'source.tables', ok: false, severity: 'warning', message: `no table the user can see matches include ${JSON.stringify(source.include)} / exclude ${JSON.stringify(source.exclude)}: nothing would be captured` },
    );
    const report = await runPreflight(client, { serverId: source.serverId, tables });
    for (const c of report.checks) lines.push({ ...c, check: `source.${c.check}` });
    return lines;
  } catch (e) {
    return [{ check: 'source.preflight', ok: false, severity: 'error', message: `pre-flight queries failed on ${where}: ${errorMessage(e)}` }];
  } finally {
    // the check's verdict is already made; a failed close of its probe connection changes nothing
    await client.close().catch(() => undefined);
  }
}
