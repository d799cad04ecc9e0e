/**
 * What one verification run holds open for all its tables: the MySQL side (the captured tables as
 * `floe run` captures them, the server's dialect and identity, a control connection and `parallelism`
 * connections for chunk reads), the catalog, the server's float text style (server-float-text.ts),
 * the ON DELETE CASCADE rules among the captured tables (a child table's binlog includes its parents'
 * deletes), and the options.
 *
 * Replica server ids: verification's binlog readers must never take floe run's (`source.serverId`
 * and the snapshot's next `snapshot.parallelism`): a second dump connection with a replica's id makes
 * the server drop the first. They use `source.serverId` + 100 and up for `floe verify`, + 200 and up
 * for the verification `floe run` schedules (docs/verify.md).
 */
import type { FloeConfig } from '../../config/schema.js';
import type { Catalog } from '../../iceberg/metadata/catalog.js';
import { connectMysql, discoverForeignKeys, openMySqlSource, planCascades, serverFloatTexts, tableKey, type CascadePlan, type MappedTable, type MysqlClient, type MysqlConnectionConfig, type OpenedMySqlSource, type ReadServer } from '../../source/mysql/index.js';
import { FloeError } from '../../util/errors.js';
import { openCatalog, sourceConfig } from '../config-options.js';
import type { Logger } from '../observe/logger.js';
import { calibrateFloatText, FLOAT_PROBES, type FloatTextStyle } from './server-float-text.js';

export interface VerifyOptions {
  /** Only these tables (`db.table` names or patterns of the source's include syntax); default all captured. */
  readonly tables?: (key: string) => boolean;
  readonly chunkSize: number;
  /** Chunk reads on the server at the same time (connections). */
  readonly parallelism: number;
  /** Print the values of rows that differ (default: keys and column names only). */
  readonly showValues: boolean;
  /** Rows listed per chunk and kind of difference. */
  readonly rowLimit: number;
  /** Re-copy the chunks that differ (repair.ts). */
  readonly repair: boolean;
  /** First replica server id of verification's binlog readers (module header). */
  readonly serverIdBase: number;
  readonly signal?: AbortSignal;
  /** Rows of a table compared so far (a progress bar). */
  readonly onRows?: (table: string, rows: number, totalEstimate?: number) => void;
}

/**
 * Both results, once both reads have ended (a failing one does not leave the other running on the
 * chunk-read connections into the next table's reads); the first failure is thrown.
 */
export async function settled<A, B>(reads: readonly [Promise<A>, Promise<B>]): Promise<[A, B]> {
  const [a, b] = await Promise.allSettled(reads);
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  return [a.value, b.value];
}

export class VerifySession {
  private constructor(
    readonly config: FloeConfig,
    readonly options: VerifyOptions,
    readonly logger: Logger,
    readonly connection: MysqlConnectionConfig,
    readonly source: OpenedMySqlSource,
    readonly catalog: Catalog,
    readonly control: MysqlClient,
    private readonly pool: MysqlClient[],
    readonly floatStyle: FloatTextStyle | undefined,
    readonly cascades: CascadePlan,
  ) {}

  static async open(config: FloeConfig, options: VerifyOptions, logger: Logger): Promise<VerifySession> {
    const sourceSettings = config.source;
    if (!sourceSettings) throw new FloeError('config', 'config', 'source: missing; floe verify compares the lake with the MySQL source of the config');
    // binlogThread 'main': verification reads no stream of the source, only its tables
    const settings = { ...sourceConfig(sourceSettings, (m) => logger.debug(m, { component: 'source' })), binlogThread: 'main' as const };
    const source = await openMySqlSource(settings);
    const opened: { close(): Promise<void> }[] = [source];
    try {
      const control = await connectMysql(settings.connection);
      opened.push(control);
      const pool: MysqlClient[] = [];
      for (let i = 0; i < Math.max(1, options.parallelism); i++) {
        const c = await connectMysql(settings.connection);
        opened.push(c);
        pool.push(c);
      }
      const floatStyle = calibrateFloatText(await serverFloatTexts(control, FLOAT_PROBES));
      if (!floatStyle) logger.warn('the server prints doubles in a way floe cannot reproduce: FLOAT and DOUBLE columns are left out of the comparison', { server: source.dialect.versionString });
      const databases = [...new Set([...source.tables.values()].map((m) => m.schema.id.database))];
      const cascades = planCascades(await discoverForeignKeys(control, databases), source.tables);
      const catalog = await openCatalog(config, logger);
      return new VerifySession(config, options, logger, settings.connection, source, catalog, control, pool, floatStyle, cascades);
    } catch (e) {
      for (const c of opened.reverse()) await c.close().catch(() => {});
      throw e;
    }
  }

  /** The captured tables to verify, by name. */
  get tables(): MappedTable[] {
    return [...this.source.tables.values()].filter((m) => this.options.tables?.(tableKey(m.schema.id)) ?? true);
  }

  get server(): ReadServer {
    return { dialect: this.source.dialect, identity: this.source.identity };
  }

  /** Runs `work` over `items` on the chunk-read connections, `parallelism` at a time; results in item order. */
  async parallel<T, R>(items: readonly T[], work: (client: MysqlClient, item: T) => Promise<R>): Promise<R[]> {
    const out = new Array<R>(items.length);
    let next = 0;
    const worker = async (client: MysqlClient): Promise<void> => {
      for (;;) {
        this.checkAborted();
        const i = next++;
        if (i >= items.length) return;
        out[i] = await work(client, items[i]!);
      }
    };
    await Promise.all(this.pool.slice(0, Math.max(1, Math.min(this.pool.length, items.length))).map(worker));
    return out;
  }

  checkAborted(): void {
    if (this.options.signal?.aborted) throw new FloeError('pipeline.verify', 'internal', 'verification stopped: floe is shutting down');
  }

  async close(): Promise<void> {
    for (const c of this.pool) await c.close().catch(() => {});
    await this.control.close().catch(() => {});
    await this.source.close();
    await this.catalog.close?.().catch(() => {});
  }
}
