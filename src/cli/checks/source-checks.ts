/**
 * The source part of `floe check` (and of the checks `floe run` starts with): connect, discover the
 * captured tables, then the MySQL pre-flight of src/source/mysql/preflight.ts, each line prefixed
 * `source.`.
 */
import type { FloeConfig } from '../../config/schema.js';
import { captureTableSchemas, connectMysql, detectDialect, mapTable, readSessionTls, type MappedTable, type MysqlClient, type TableId } from '../../source/mysql/index.js';
import { discoverTables } from '../../source/mysql/index.js';
import { runPreflight } from '../../source/mysql/index.js';
import { tableKey } from '../../source/mysql/index.js';
import { errorMessage, isFloeError } from '../../util/errors.js';
import type { SourceConfig } from '../../config/schema.js';
import { mysqlConnection, typeMappingOptions } from '../../pipeline/config-options.js';
import type { CheckLine } from './check-line.js';
import { sparkTimeCheckLine } from './spark-time-check.js';
import { tlsCheckLine } from './tls-check.js';

/** An error as a check line's message: the line names the check, so the message names no subsystem. */
function checkMessage(e: unknown): string {
  return isFloeError(e) ? e.detail : errorMessage(e);
}

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
    // the connection error says where and what to do (connect-error.ts)
    return [{ check: 'source.connection', ok: false, severity: 'error', message: checkMessage(e) }];
  }
  try {
    const lines: CheckLine[] = [{ check: 'source.connection', ok: true, severity: 'error', message: `connected to ${where}` }];
    lines.push(tlsCheckLine(source.tls, connection.host, await readSessionTls(client)));
    const tables = await discoverTables(client, { include: source.include, exclude: source.exclude });
    lines.push(
      tables.length > 0
        ? { check: 'source.tables', ok: true, severity: 'info', message: `${tables.length} table${tables.length === 1 ? '' : 's'} to capture: ${tables.slice(0, 8).map(tableKey).join(', ')}${tables.length > 8 ? ', …' : ''}` }
        : { check: 'source.tables', ok: false, severity: 'warning', message: `no table the user can see matches include ${JSON.stringify(source.include)} / exclude ${JSON.stringify(source.exclude)}: nothing would be captured` },
    );
    const report = await runPreflight(client, { serverId: source.serverId, tables });
    for (const c of report.checks) lines.push({ ...c, check: `source.${c.check}` });
    const { mapped, refused } = await mappedTables(client, source, tables);
    lines.push(columnTypesCheckLine(refused));
    lines.push(sparkTimeCheckLine(mapped));
    return lines;
  } catch (e) {
    return [{ check: 'source.preflight', ok: false, severity: 'error', message: `a pre-flight query failed: ${checkMessage(e)}` }];
  } finally {
    // the check's verdict is already made; a failed close of its probe connection changes nothing
    await client.close().catch(() => undefined);
  }
}

/** The captured tables as floe would map them, and why it cannot map the others. */
async function mappedTables(client: MysqlClient, source: SourceConfig, tables: readonly TableId[]): Promise<{ mapped: MappedTable[]; refused: string[] }> {
  if (tables.length === 0) return { mapped: [], refused: [] };
  const schemas = await captureTableSchemas(client, tables, (await detectDialect(client)).flavor);
  const mapped: MappedTable[] = [];
  const refused: string[] = [];
  for (const id of tables) {
    const schema = schemas.get(tableKey(id));
    if (schema === undefined) continue; // dropped since discovery
    try {
      mapped.push(mapTable(schema, typeMappingOptions(source)));
    } catch (e) {
      // a spatial column, or text in a charset nothing decodes from the binlog (type-mapping.ts)
      refused.push(checkMessage(e));
    }
  }
  return { mapped, refused };
}

/** `floe run` stops on a captured table with a column it cannot map: said before it starts. */
function columnTypesCheckLine(refused: readonly string[]): CheckLine {
  if (refused.length === 0) return { check: 'source.column-types', ok: true, severity: 'error', message: 'floe maps every column of the captured tables' };
  const shown = refused.slice(0, 8).join('; ');
  const more = refused.length > 8 ? `; and ${refused.length - 8} more tables` : '';
  return { check: 'source.column-types', ok: false, severity: 'error', message: `${refused.length} captured table${refused.length === 1 ? '' : 's'} with a column floe cannot replicate: ${shown}${more}` };
}
