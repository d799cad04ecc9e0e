/**
 * floe's config → a Catalog. `floe run`, `floe catalog serve` and every other command open their
 * catalog here, so all of them accept the same three kinds (config `catalog.type`):
 *
 * - `filesystem`: Hadoop layout under `warehouse.location` (local directory or s3://…);
 * - `sql`: the JdbcCatalog tables at `catalog.url` (PostgreSQL, MySQL/MariaDB, SQLite); new tables
 *   go under `warehouse.location`;
 * - `rest`: a REST catalog at `catalog.uri` (token or OAuth2 client credentials); the server chooses
 *   table locations, floe's `warehouse.s3` settings are the base of the S3 client it uses.
 *
 * SQL and REST catalogs are initialized before they are returned (catalog tables created, server
 * config fetched), so that configuration mistakes surface at start-up.
 */
import type { CatalogConfig, WarehouseConfig } from '../config/schema.js';
import type { StorageConfig } from '../io/file-io-factory.js';
import type { S3Config } from '../io/s3-file-io.js';
import type { Catalog } from '../iceberg/metadata/catalog.js';
import { FileSystemCatalog } from './filesystem/filesystem-catalog.js';
import { RestCatalog } from './rest/rest-catalog.js';
import { SqlCatalog } from './sql/sql-catalog.js';

export interface CatalogFactoryInput {
  catalog: CatalogConfig;
  warehouse: WarehouseConfig;
}

export interface OpenCatalogOptions {
  /** Directory that relative paths (local warehouse, SQLite file) resolve against. Default: the working directory. */
  baseDir?: string;
  /** Where catalogs report best-effort failures. */
  warn?: (message: string) => void;
}

export type OpenedCatalog = FileSystemCatalog | SqlCatalog | RestCatalog;

/** floe's `warehouse.s3` section in the FileIO's terms. */
export function s3ConfigOf(warehouse: WarehouseConfig): S3Config {
  const s3 = warehouse.s3;
  const out: S3Config = { region: s3.region, forcePathStyle: s3.pathStyle };
  if (s3.endpoint !== undefined) out.endpoint = s3.endpoint;
  if (s3.accessKeyId !== undefined) out.accessKeyId = s3.accessKeyId;
  if (s3.secretAccessKey !== undefined) out.secretAccessKey = s3.secretAccessKey;
  if (s3.sessionToken !== undefined) out.sessionToken = s3.sessionToken;
  return out;
}

export function storageConfigOf(warehouse: WarehouseConfig, baseDir?: string): StorageConfig {
  return { s3: s3ConfigOf(warehouse), local: baseDir !== undefined ? { baseDir } : {} };
}

/**
 * The catalog the config describes, without touching the network or the database yet: SQL and REST
 * catalogs connect on first use. For callers that need a synchronous factory.
 */
export function createCatalog(config: CatalogFactoryInput, options: OpenCatalogOptions = {}): OpenedCatalog {
  const storage = storageConfigOf(config.warehouse, options.baseDir);
  const c = config.catalog;
  switch (c.type) {
    case 'filesystem':
      return new FileSystemCatalog({ warehouse: config.warehouse.location, name: c.name, storage, warn: options.warn });
    case 'sql':
      return new SqlCatalog({ url: c.url, name: c.name, warehouse: config.warehouse.location, storage, baseDir: options.baseDir, warn: options.warn });
    case 'rest':
      return new RestCatalog({
        uri: c.uri,
        name: c.name,
        warehouse: c.warehouse,
        token: c.token,
        credential: c.credential,
        oauth2ServerUri: c.oauth2ServerUri,
        scope: c.scope,
        storage,
      });
  }
}

/** Opens and initializes the catalog the config describes. Close it with `catalog.close()`. */
export async function openCatalog(config: CatalogFactoryInput, options: OpenCatalogOptions = {}): Promise<OpenedCatalog> {
  const catalog = createCatalog(config, options);
  if (catalog instanceof FileSystemCatalog) return catalog;
  try {
    await catalog.initialize();
  } catch (e) {
    // initialize's error is the one to report; a failed close of a half-opened catalog adds nothing
    await catalog.close().catch(() => {});
    throw e;
  }
  return catalog;
}

/** The warehouse URI a catalog creates tables under, or undefined when a server decides (REST). */
export function warehouseOf(catalog: Catalog): string | undefined {
  return catalog instanceof FileSystemCatalog || catalog instanceof SqlCatalog ? catalog.warehouse : undefined;
}
