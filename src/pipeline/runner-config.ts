/**
 * floe's configuration turned into the parts the runner wires together: the MySQL
 * connection, the source engine's options, the checkpoint settings, and the concrete binlog offset a
 * table without a snapshot starts streaming from; the catalog through src/catalog/factory.ts.
 */
import type { Catalog } from '../iceberg/metadata/catalog.js';
import { createCatalog, storageConfigOf } from '../catalog/factory.js';
import type { FloeConfig, SourceConfig, WarehouseConfig } from '../config/schema.js';
import type { StorageConfig } from '../io/file-io-factory.js';
import type { Chunk } from '../source/mysql/index.js';
import { splitTable } from '../source/mysql/index.js';
import type { MysqlClient, MysqlConnectionConfig } from '../source/mysql/index.js';
import type { ServerDialect } from '../source/mysql/index.js';
import { mariadbGtids, mysqlGtids, type BinlogOffset, type ServerIdentity } from '../source/mysql/index.js';
import type { MySqlSourceOptions, SourceResume } from '../source/mysql/index.js';
import { tableKey, type TableId } from '../source/mysql/index.js';
import type { TypeMappingOptions } from '../source/mysql/index.js';
import { listBinlogFiles, readWatermark } from '../source/mysql/index.js';
import { FloeError } from '../util/errors.js';
import type { CheckpointOptions } from './checkpoint.js';
import type { Logger } from './observe/logger.js';

/** The MySQL connection: `source.url` (mysql://user:password@host:port[?ssl=true]) wins over host/port/user/password. */
export function mysqlConnection(source: SourceConfig): MysqlConnectionConfig {
  if (!source.url) return { host: source.host, port: source.port, user: source.user, password: source.password };
  let u: URL;
  try {
    u = new URL(source.url);
  } catch {
    throw new FloeError('config', 'config', 'source.url: expected mysql://user:password@host:port, found a string that is not a URL');
  }
  if (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:') throw new FloeError('config', 'config', `source.url: expected the mysql:// scheme, found ${u.protocol}//`);
  const ssl = u.searchParams.get('ssl');
  return {
    host: u.hostname || source.host,
    port: u.port ? Number(u.port) : source.port,
    user: u.username ? decodeURIComponent(u.username) : source.user,
    password: u.password ? decodeURIComponent(u.password) : source.password,
    ...(ssl === 'true' || ssl === '1' ? { ssl: true } : {}),
  };
}

export function typeMappingOptions(source: SourceConfig): TypeMappingOptions {
  return { tinyInt1AsBoolean: source.tinyint1AsBoolean, timeAsMicros: source.timeAsMicros };
}

/** The source engine's options for one run over an explicit table list. */
export function sourceOptions(source: SourceConfig, tables: readonly TableId[], resume: SourceResume, log: (message: string) => void): MySqlSourceOptions {
  const chunkKeys = source.snapshot.chunkKeys;
  const chunkSize = source.snapshot.chunkSize;
  return {
    connection: mysqlConnection(source),
    tables,
    typeMapping: typeMappingOptions(source),
    serverIdBase: source.serverId,
    snapshot: {
      enabled: true,
      parallelism: source.snapshot.parallelism,
      backfill: source.snapshot.backfill,
      chunkSize,
      splitter: async (client, table) => {
        const chunks: Chunk[] = [];
        for await (const c of splitTable(client, table, { chunkSize, chunkKeyColumn: chunkKeys[tableKey(table.schema.id)] })) chunks.push(c);
        return chunks;
      },
    },
    resume,
    heartbeatMs: source.heartbeatMs,
    log,
  };
}

export function checkpointOptions(config: FloeConfig): CheckpointOptions {
  return {
    intervalMs: config.commit.intervalMs,
    maxBufferedChanges: config.commit.maxBufferedChanges,
    idleCheckpoints: config.commit.idleCheckpoints,
    idleMaxMs: config.commit.idleMaxMs,
    concurrency: 4,
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
 * Where a table that is not snapshotted starts streaming, as a concrete offset (so that it can be
 * committed at once and a restart does not move it): `schema-only` → the binlog end now; `never` →
 * `source.startPosition` ('latest' = now, 'earliest' = the oldest binlog file still on the server).
 */
export async function streamStartOffset(source: SourceConfig, client: MysqlClient, dialect: ServerDialect, identity: ServerIdentity): Promise<BinlogOffset> {
  const start = source.snapshot.mode === 'schema-only' ? 'latest' : source.startPosition;
  if (start === 'latest') return readWatermark(client, dialect, identity);
  if (start === 'earliest') {
    const files = await listBinlogFiles(client);
    if (files.length === 0) throw new FloeError('config', 'source', 'source.startPosition is earliest, but the server lists no binary log files (SHOW BINARY LOGS); is log_bin on?');
    return { file: files[0].name, position: 4, ...identity };
  }
  if ('gtid' in start) return { gtids: dialect.flavor === 'mysql' ? mysqlGtids(start.gtid) : mariadbGtids(start.gtid), ...identity };
  return { file: start.file, position: start.position, ...identity };
}
