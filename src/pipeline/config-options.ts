/**
 * floe's configuration turned into the options of the parts the runner wires together: the MySQL
 * connection, the source's configuration (the tables it captures, how it maps and snapshots them),
 * where a table without a snapshot starts streaming, the checkpoint settings; the catalog and its
 * storage through src/catalog/factory.ts. The CLI's checks and the demo use the same translation.
 */
import type { Catalog } from '../iceberg/metadata/catalog.js';
import { createCatalog, storageConfigOf } from '../catalog/factory.js';
import type { FloeConfig, SourceConfig, WarehouseConfig } from '../config/schema.js';
import type { StorageConfig } from '../io/file-io-factory.js';
import type { Chunk } from '../source/mysql/index.js';
import { splitTable } from '../source/mysql/index.js';
import type { MysqlConnectionConfig, MySqlSourceConfig, StartPosition, TypeMappingOptions } from '../source/mysql/index.js';
import { tableKey } from '../source/mysql/index.js';
import { FloeError } from '../util/errors.js';
import type { CheckpointOptions } from './checkpoint.js';
import type { Logger } from './observe/logger.js';

/** The MySQL connection: `source.url` (mysql://user:password@host:port) wins over host/port/user/password; TLS from `source.tls`. */
export function mysqlConnection(source: SourceConfig): MysqlConnectionConfig {
  if (!source.url) return { host: source.host, port: source.port, user: source.user, password: source.password, tls: source.tls };
  let u: URL;
  try {
    u = new URL(source.url);
  } catch {
    throw new FloeError('config', 'config', 'source.url: expected mysql://user:password@host:port, found a string that is not a URL');
  }
  if (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:') throw new FloeError('config', 'config', `source.url: expected the mysql:// scheme, found ${u.protocol}//`);
  return {
    host: u.hostname || source.host,
    port: u.port ? Number(u.port) : source.port,
    user: u.username ? decodeURIComponent(u.username) : source.user,
    password: u.password ? decodeURIComponent(u.password) : source.password,
    tls: source.tls,
  };
}

export function typeMappingOptions(source: SourceConfig): TypeMappingOptions {
  return { tinyInt1AsBoolean: source.tinyint1AsBoolean, timeAs: source.timeAs, timeAsMicros: source.timeAsMicros };
}

/**
 * The source's configuration for a run: the tables `source.include` / `source.exclude` select; `log`
 * takes the source's notes, `warn` what an operator must see.
 */
export function sourceConfig(source: SourceConfig, log: (message: string) => void, warn: (message: string) => void = log): MySqlSourceConfig {
  const chunkKeys = source.snapshot.chunkKeys;
  const chunkSize = source.snapshot.chunkSize;
  return {
    connection: mysqlConnection(source),
    tables: { include: source.include, exclude: source.exclude },
    typeMapping: typeMappingOptions(source),
    serverIdBase: source.serverId,
    snapshot: {
      enabled: true,
      parallelism: source.snapshot.parallelism,
      backfill: source.snapshot.backfill,
      chunkSize,
      splitter: async (client, table, flavor) => {
        const chunks: Chunk[] = [];
        for await (const c of splitTable(client, table, flavor, { chunkSize, chunkKeyColumn: chunkKeys[tableKey(table.schema.id)] })) chunks.push(c);
        return chunks;
      },
    },
    heartbeatMs: source.heartbeatMs,
    binlogThread: source.binlogThread,
    // the writer locates a row by its key (keyed-change-writer.ts): the rest of a before image is not decoded
    beforeImages: 'key',
    log,
    warn,
  };
}

export function checkpointOptions(config: FloeConfig): CheckpointOptions {
  return {
    intervalMs: config.commit.intervalMs,
    maxBufferedChanges: config.commit.maxBufferedChanges,
    idleCheckpoints: config.commit.idleCheckpoints,
    idleMaxMs: config.commit.idleMaxMs,
    concurrency: 4,
    whenCaughtUp: config.commit.whenCaughtUp,
    maxOpenFiles: config.commit.maxOpenFiles,
  };
}

/** The storage part of the config (the catalog factory's form; kept for the CLI's checks). */
export function storageConfig(warehouse: WarehouseConfig): StorageConfig {
  return storageConfigOf(warehouse);
}

/** The configured catalog, connecting on first use (src/catalog/factory.ts `createCatalog`). */
export function openCatalog(config: FloeConfig, logger: Logger): Catalog {
  return createCatalog(config, { warn: (message) => logger.warn(message, { catalog: config.catalog.name }) });
}

/**
 * Where a table that is not snapshotted starts streaming (resolved to a concrete offset on the server,
 * start-position.ts, so that it can be committed at once and a restart does not move it):
 * `schema-only` → the binlog end now; `never` → `source.startPosition` ('latest' = now, 'earliest' =
 * the oldest binlog file still on the server, or a file/position or GTID set of this server).
 */
export function configuredStart(source: SourceConfig): StartPosition {
  const start = source.snapshot.mode === 'schema-only' ? 'latest' : source.startPosition;
  if (start === 'latest' || start === 'earliest') return { kind: start };
  if ('gtid' in start) return { kind: 'gtid', gtid: start.gtid };
  return { kind: 'file', file: start.file, position: start.position };
}
