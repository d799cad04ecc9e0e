/**
 * `floe demo`, end to end:
 * 1. a MySQL-compatible server — the configured source, else a local one (demo-server.ts);
 * 2. database `shop` (re)created with sample rows (sample-shop.ts), and any earlier demo tables
 *    dropped from the lake, so every demo starts from the same state;
 * 3. floe runs into the configured warehouse (default `./warehouse`, filesystem catalog): snapshot,
 *    then binlog streaming with a 1 s commit interval;
 * 4. once streaming, live changes are applied (live-changes.ts) and the demo waits until every touched
 *    table has committed an offset at or past its last change;
 * 5. floe is stopped cleanly (the same path as SIGINT), and the lake is read back with floe's scan
 *    reader and compared row for row with MySQL (lake-report.ts);
 * 6. how to query the lake with DuckDB, Spark and Trino (query-hints.ts).
 */
import type { Catalog } from '../iceberg/metadata/catalog.js';
import { identifierToString } from '../iceberg/metadata/catalog.js';
import type { FloeConfig, SourceConfig } from '../config/schema.js';
import { sourceSchema } from '../config/source-schema.js';
import { mysqlConnection } from '../pipeline/config-options.js';
import { lastCommitted } from '../iceberg/checkpoint/checkpoint-stamps.js';
import type { Logger } from '../pipeline/observe/logger.js';
import { RecordingSink, type NotificationSink } from '../pipeline/observe/notifications.js';
import { icebergIdentifier } from '../pipeline/table-mapping.js';
import { connectMysql, type MysqlClient } from '../source/mysql/index.js';
import { detectDialect } from '../source/mysql/index.js';
import { compareOffsets, type BinlogOffset } from '../source/mysql/index.js';
import { parseProgressSummary } from '../pipeline/state.js';
import { FloeError, errorMessage } from '../util/errors.js';
import { startDemoServer, DEMO_HOMES, type DemoServer, type DemoServerKind } from './demo-server.js';
import { compareShop, formatComparisons, type TableComparison } from './lake-report.js';
import { applyLiveChanges, type LiveChanges } from './live-changes.js';
import { queryHints } from './query-hints.js';
import { foreignShopTables, loadSampleShop, SHOP_DATABASE, SHOP_TABLES, type ShopTable } from './sample-shop.js';

/** Runs the pipeline until `signal` aborts; resolves with the runner's outcome. */
type DemoPipeline = (config: FloeConfig, options: { signal: AbortSignal; extraSinks: NotificationSink[] }) => Promise<{ reason: string; exitCode: number; error?: unknown }>;

export interface DemoOptions {
  config: FloeConfig;
  logger: Logger;
  openCatalog: (config: FloeConfig) => Promise<Catalog>;
  runPipeline: DemoPipeline;
  /** The user's stop request (Ctrl-C). */
  signal: AbortSignal;
  /** Where the report goes (stdout). */
  out: NodeJS.WritableStream;
  color: boolean;
  /** Which local server to start when the config names no source (default MariaDB). */
  server?: DemoServerKind;
  /** The local server's home (default: DEMO_HOMES of its kind). */
  home?: string;
  /** How long to wait for streaming to start and for the changes to be committed (default 60 s each). */
  timeoutMs?: number;
}

export interface DemoResult {
  exitCode: number;
  comparisons?: TableComparison[];
  changes?: LiveChanges;
}

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const { logger, out } = options;
  const print = (text = ''): void => void out.write(`${text}\n`);
  const bold = (text: string): string => (options.color ? `\x1b[1m${text}\x1b[0m` : text);
  const timeoutMs = options.timeoutMs ?? 60_000;
  const serverKind = options.server ?? 'mariadb';

  print(bold('floe demo: MySQL → Apache Iceberg, snapshot then live changes'));
  let server: DemoServer | undefined;
  let client: MysqlClient | undefined;
  let catalog: Catalog | undefined;
  const finished = new AbortController(); // ends background polling whatever happens
  const stop = new AbortController();
  let session: ReturnType<DemoPipeline> | undefined;
  try {
    let source: SourceConfig;
    if (options.config.source) {
      source = sourceSchema.parse({ ...options.config.source, include: [`${SHOP_DATABASE}.*`], exclude: [] });
    } else {
      server = await startDemoServer(logger, serverKind, options.home ?? DEMO_HOMES[serverKind]);
      source = sourceSchema.parse({ host: server.host, port: server.port, user: server.user, password: server.password, include: [`${SHOP_DATABASE}.*`] });
    }
    print(`source:    ${server ? server.description : `the configured source (${source.url ? 'url' : `${source.host}:${source.port}`})`}`);

    client = await connectMysql(mysqlConnection(source));
    const dialect = await detectDialect(client);
    if (!server) {
      const foreign = await foreignShopTables(client);
      if (foreign.length > 0) {
        throw new FloeError('demo', 'invalid-argument', `database ${SHOP_DATABASE} on the configured source holds tables the demo did not create (${foreign.join(', ')}); the demo drops and recreates ${SHOP_DATABASE}, so it refuses: use another server or remove them`);
      }
    }
    const counts = await loadSampleShop(client);
    print(`loaded:    ${SHOP_TABLES.map((t) => `${counts[t]} ${t}`).join(', ')} into database ${SHOP_DATABASE}`);

    const config: FloeConfig = {
      ...options.config,
      source: { ...source, snapshot: { ...source.snapshot, mode: 'initial' } },
      commit: { ...options.config.commit, intervalMs: 1000 },
      transforms: [],
    };
    catalog = await options.openCatalog(config);
    for (const table of SHOP_TABLES) {
      const id = icebergIdentifier({ database: SHOP_DATABASE, table }, config);
      if (await catalog.tableExists(id)) {
        logger.info('dropping the previous demo table', { table: identifierToString(id) });
        await catalog.dropTable(id, true);
      }
    }
    print(`lake:      ${config.warehouse.location} (${config.catalog.type} catalog), job ${config.job.id}`);
    print();

    const recording = new RecordingSink();
    const signal = AbortSignal.any([options.signal, stop.signal]);
    const running = options.runPipeline(config, { signal, extraSinks: [recording] });
    session = running;
    const ended = running.then((o) => ({ kind: 'ended' as const, outcome: o }));

    const started = await Promise.race([recording.waitFor('streaming-started').then(() => ({ kind: 'streaming' as const })), ended, timeout(timeoutMs)]);
    if (started.kind !== 'streaming') return await early(started, 'before streaming started');

    print(bold('live changes while floe streams the binlog:'));
    const changes = await applyLiveChanges(client, dialect);
    for (const c of changes.applied) print(`  • ${c.description}`);

    const committed = await Promise.race([waitForCommits(catalog, config, changes.targets, AbortSignal.any([signal, finished.signal])).then(() => ({ kind: 'committed' as const })), ended, timeout(timeoutMs)]);
    if (committed.kind !== 'committed') return await early(committed, 'before the live changes were committed');
    print(`  all changes committed to the lake`);
    print();

    stop.abort(new Error('demo: changes committed'));
    const outcome = await running;
    if (outcome.exitCode !== 0) {
      print(`floe stopped with ${outcome.reason}: ${errorMessage(outcome.error)}`);
      return { exitCode: outcome.exitCode, changes };
    }

    print(bold('what the lake holds now (read back with floe\'s scan reader, compared row for row with MySQL):'));
    const comparisons = await compareShop(catalog, client, dialect.flavor, config);
    out.write(formatComparisons(comparisons, options.color));
    print();
    const orders = icebergIdentifier({ database: SHOP_DATABASE, table: 'orders' }, config);
    if (config.catalog.type === 'filesystem' && !/^s3:/.test(config.warehouse.location)) {
      out.write(queryHints({ warehouse: config.warehouse.location, namespace: orders.namespace.join('.'), ordersTable: orders.name }));
    }
    const identical = comparisons.every((c) => c.identical);
    if (!identical) print('the lake differs from MySQL: this is a bug in floe; please report it with the output above');
    return { exitCode: identical ? 0 : 1, comparisons, changes };
  } finally {
    finished.abort();
    if (session) {
      // Leaving early (a timeout, an error): stop floe before its source goes away.
      stop.abort(new Error('demo: ending'));
      // the demo's own outcome (a timeout, an error) is what it reports; floe only has to have stopped
      await session.catch(() => undefined);
    }
    // leaving: the demo's outcome is decided, a failed close must not replace it
    await catalog?.close?.().catch(() => undefined);
    await client?.close().catch(() => undefined);
    if (server) {
      logger.info(`stopping the demo server (its data stays in ${options.home ?? DEMO_HOMES[serverKind]})`);
      await server.stop().catch((e: unknown) => logger.warn('could not stop the demo server', { err: e }));
    }
  }

  async function early(what: { kind: 'ended'; outcome: { reason: string; exitCode: number; error?: unknown } } | { kind: 'timeout' }, when: string): Promise<DemoResult> {
    if (what.kind === 'timeout') {
      throw new FloeError('demo', 'internal', `floe did not get there within ${timeoutMs / 1000} s (${when}); see the log above`);
    }
    const o = what.outcome;
    if (options.signal.aborted) {
      print(`demo interrupted ${when}`);
      return { exitCode: o.exitCode };
    }
    print(`floe stopped ${when}: ${o.reason}${o.error === undefined ? '' : `: ${errorMessage(o.error)}`}`);
    return { exitCode: o.exitCode === 0 ? 1 : o.exitCode };
  }
}

function timeout(ms: number): Promise<{ kind: 'timeout' }> {
  return new Promise((resolve) => setTimeout(() => resolve({ kind: 'timeout' }), ms).unref());
}

/** Polls the tables until each has committed an offset at or past its target. */
async function waitForCommits(catalog: Catalog, config: FloeConfig, targets: Map<ShopTable, BinlogOffset>, signal: AbortSignal): Promise<void> {
  const pending = new Map(targets);
  while (pending.size > 0 && !signal.aborted) {
    for (const [table, target] of [...pending]) {
      const loaded = await catalog.loadTable(icebergIdentifier({ database: SHOP_DATABASE, table }, config));
      const last = lastCommitted(loaded.metadata, config.job.id);
      if (last && reached(last.sourceOffset, target)) pending.delete(table);
    }
    if (pending.size > 0) await new Promise((r) => setTimeout(r, 200));
  }
}

function reached(committed: string, target: BinlogOffset): boolean {
  try {
    const progress = parseProgressSummary(committed);
    return progress.phase === 'streaming' && progress.offset !== undefined && compareOffsets(progress.offset, target) >= 0;
  } catch {
    return false;
  }
}
