/**
 * The SQL catalog: Iceberg's JdbcCatalog layout (sql-statements.ts) in PostgreSQL, MySQL/MariaDB or a
 * SQLite file, so that Trino (`iceberg.catalog.type=jdbc`), Spark's JdbcCatalog and PyIceberg's
 * SqlCatalog see the tables floe writes, and `floe catalog serve` can serve them over REST.
 *
 * Commit protocol (Java `JdbcTableOperations.doCommit`): read the row's `metadata_location`, check the
 * requirements against that metadata, apply the updates, write `<NNNNN>-<uuid>.metadata.json`
 * (metadata-files.ts), then compare-and-swap the pointer with
 * `UPDATE … SET metadata_location = new, previous_metadata_location = old WHERE … metadata_location = old`.
 * One updated row: landed. Zero rows: another writer moved the pointer first; the catalog reloads and,
 * when the requirements still hold on the winner's metadata, applies the updates again on top of it
 * (as Java's REST server does, `CatalogHandlers.commit`), up to `maxCommitAttempts`, else
 * 'commit-conflict' (retryable). A connection lost while the UPDATE was in flight leaves the outcome
 * unknown: the row is read back once; if it holds the new location the commit landed, otherwise the
 * error is 'commit-state-unknown' and the new metadata file is kept (it may be referenced).
 */
import type { FileIO } from '../../io/file-io.js';
import { fileIOFor, type StorageConfig } from '../../io/file-io-factory.js';
import { toFileUri } from '../../io/local-path.js';
import { isS3Uri } from '../../io/s3-location.js';
import { applyUpdates, checkRequirements, newTableMetadata } from '../../iceberg/metadata/metadata-builder.js';
import type { MetadataUpdate, TableRequirement } from '../../iceberg/metadata/metadata-updates.js';
import { stripTrailingSlash, writeTableMetadata } from '../../iceberg/spec/table-metadata-json.js';
import type { TableMetadata } from '../../iceberg/spec/table-metadata.js';
import { errorMessage, FloeError, isFloeError } from '../../util/errors.js';
import { deleteRemovedMetadataFiles } from '../../iceberg/metadata/metadata-file-retention.js';
import { failpoint } from '../../util/failpoints.js';
import { identifierToString, type Catalog, type CreateTableRequest, type LoadedTable, type TableCommit, type TableIdentifier } from '../../iceberg/metadata/catalog.js';
import { normalizeWarehouse } from '../filesystem/filesystem-layout.js';
import { readTableMetadataFile } from '../filesystem/filesystem-versions.js';
import { MetadataFileCache } from '../metadata-file-cache.js';
import { checkTableIdentifier, sameTable } from '../identifiers.js';
import { nextMetadataLocation } from './metadata-files.js';
import { purgeTableFiles } from './purge-table-files.js';
import type { SqlDriver } from './sql-driver.js';
import { SqlNamespaces, storedNamespace } from './sql-namespaces.js';
import { SqlTablePointers } from './sql-table-pointers.js';
import { ensureCatalogTables } from './sql-schema.js';
import { SQL } from './sql-statements.js';
import { openSqlDriver, redactSqlUrl } from './sql-url.js';

const SUBSYSTEM = 'catalog.sql';
const encoder = new TextEncoder();

export interface SqlCatalogOptions {
  /** `catalog_name` column value; engines sharing the tables must use the same name. Default `floe`. */
  name?: string;
  /** Connection URL (sql-url.ts). Give either `url` or `driver`. */
  url?: string;
  /** A driver to use instead of opening one from `url` (tests inject failures this way). */
  driver?: SqlDriver;
  /** Where new tables go by default: `<warehouse>/<namespace levels…>/<table>`. Local path or s3:// URI. */
  warehouse: string;
  storage?: StorageConfig;
  /** Directory that relative paths (SQLite file, local warehouse) resolve against. */
  baseDir?: string;
  /** See the module comment. Default 4. */
  maxCommitAttempts?: number;
  /** Where best-effort failures (orphan cleanup, purge) are reported. Default: process warnings. */
  warn?: (message: string) => void;
}

interface CurrentRow {
  metadataLocation: string;
  metadata: TableMetadata;
}

export class SqlCatalog implements Catalog {
  readonly name: string;
  readonly warehouse: string;
  readonly driver: SqlDriver;
  private readonly namespaces: SqlNamespaces;
  private readonly pointers: SqlTablePointers;
  private readonly storage: StorageConfig;
  private readonly ios = new Map<string, FileIO>();
  /** Keyed by the table's identifier. */
  private readonly metadataFiles = new MetadataFileCache();
  private readonly maxCommitAttempts: number;
  private readonly warn: (message: string) => void;
  private ready: Promise<void> | undefined;

  constructor(options: SqlCatalogOptions) {
    if ((options.url === undefined) === (options.driver === undefined)) {
      throw new FloeError(SUBSYSTEM, 'config', 'expected exactly one of url or driver for the sql catalog');
    }
    this.name = options.name ?? 'floe';
    this.driver = options.driver ?? openSqlDriver(options.url!, { baseDir: options.baseDir });
    this.warehouse = normalizeWarehouse(options.warehouse, options.baseDir ?? options.storage?.local?.baseDir);
    this.storage = options.storage ?? {};
    this.namespaces = new SqlNamespaces(this.driver, this.name, this.warehouse);
    this.maxCommitAttempts = Math.max(1, options.maxCommitAttempts ?? 4);
    this.warn = options.warn ?? ((message) => process.emitWarning(message, { code: 'FLOE_CATALOG' }));
    this.pointers = new SqlTablePointers(this.driver, this.name, this.warn);
  }

  /** Creates the catalog tables if missing. Called lazily by every operation; call it to fail fast. */
  initialize(): Promise<void> {
    this.ready ??= ensureCatalogTables(this.driver).catch((e: unknown) => {
      this.ready = undefined;
      throw this.wrap(e, 'preparing the catalog tables');
    });
    return this.ready;
  }

  // ---- namespaces --------------------------------------------------------------------------------

  async createNamespace(namespace: string[], properties: Record<string, string> = {}): Promise<void> {
    await this.run('creating a namespace', () => this.namespaces.create(namespace, properties));
  }

  async listNamespaces(parent: string[] = []): Promise<string[][]> {
    return this.run('listing namespaces', () => this.namespaces.list(parent));
  }

  async loadNamespaceProperties(namespace: string[]): Promise<Record<string, string>> {
    return this.run('loading namespace properties', () => this.namespaces.load(namespace));
  }

  async updateNamespaceProperties(namespace: string[], removals: string[], updates: Record<string, string>): Promise<void> {
    await this.run('updating namespace properties', () => this.namespaces.update(namespace, removals, updates));
  }

  async namespaceExists(namespace: string[]): Promise<boolean> {
    return this.run('checking a namespace', () => this.namespaces.exists(namespace));
  }

  async dropNamespace(namespace: string[]): Promise<void> {
    await this.run('dropping a namespace', () => this.namespaces.drop(namespace, async (ns) => (await this.listTables([...ns])).map((t) => t.name)));
  }

  // ---- tables ------------------------------------------------------------------------------------

  async listTables(namespace: string[]): Promise<TableIdentifier[]> {
    return this.run('listing tables', async () => {
      const stored = storedNamespace(namespace);
      await this.namespaces.requireExists(namespace);
      const rows = (await this.driver.execute(SQL.listTables, [this.name, stored])).rows;
      return rows.map((r) => String(r.table_name)).sort().map((name) => ({ namespace: [...namespace], name }));
    });
  }

  async tableExists(identifier: TableIdentifier): Promise<boolean> {
    return this.run('checking a table', async () => (await this.pointers.read(identifier)) !== undefined);
  }

  async loadTable(identifier: TableIdentifier): Promise<LoadedTable> {
    return this.run('loading a table', async () => this.loaded(identifier, await this.loadCurrent(identifier)));
  }

  async createTable(identifier: TableIdentifier, request: CreateTableRequest): Promise<LoadedTable> {
    return this.run('creating a table', async () => {
      checkTableIdentifier(identifier);
      const stored = storedNamespace(identifier.namespace);
      // Strict, unlike Java's default: a table in a missing namespace is refused (jdbc.strict-mode).
      await this.namespaces.requireExists(identifier.namespace);
      await this.pointers.refuseExisting(identifier);
      const location = request.location !== undefined ? normalizeWarehouse(request.location, this.storage.local?.baseDir) : this.defaultLocation(identifier);
      const metadata = newTableMetadata({
        schema: request.schema,
        spec: request.partitionSpec,
        sortOrder: request.sortOrder,
        location,
        properties: request.properties,
        formatVersion: request.formatVersion,
      });
      const metadataLocation = nextMetadataLocation(metadata);
      const io = this.ioFor(metadata.location);
      await io.write(metadataLocation, encoder.encode(writeTableMetadata(metadata)));
      try {
        await this.driver.execute(SQL.createTable, [this.name, stored, identifier.name, metadataLocation]);
      } catch (e) {
        await this.pointers.deleteOrphan(io, metadataLocation);
        if (this.driver.isUniqueViolation(e)) throw new FloeError(SUBSYSTEM, 'already-exists', `table ${identifierToString(identifier)} already exists (created concurrently)`, { cause: e });
        throw e;
      }
      return this.loaded(identifier, { metadataLocation, metadata });
    });
  }

  /** Java JdbcCatalog.registerTable: a new row pointing at an existing metadata file (read first, to refuse a non-table). */
  async registerTable(identifier: TableIdentifier, metadataLocation: string): Promise<LoadedTable> {
    return this.run('registering a table', async () => {
      checkTableIdentifier(identifier);
      await this.namespaces.requireExists(identifier.namespace);
      await this.pointers.refuseExisting(identifier);
      const location = isS3Uri(metadataLocation) ? metadataLocation : toFileUri(metadataLocation, this.storage.local?.baseDir);
      let metadata: TableMetadata;
      try {
        metadata = await readTableMetadataFile(this.ioFor(location), location);
      } catch (e) {
        if (isFloeError(e, 'not-found')) throw new FloeError(SUBSYSTEM, 'invalid-data', `cannot register ${identifierToString(identifier)}: no metadata file at ${location}`, { cause: e });
        throw e;
      }
      try {
        await this.driver.execute(SQL.createTable, [this.name, storedNamespace(identifier.namespace), identifier.name, location]);
      } catch (e) {
        if (this.driver.isUniqueViolation(e)) throw new FloeError(SUBSYSTEM, 'already-exists', `table ${identifierToString(identifier)} already exists (created concurrently)`, { cause: e });
        throw e;
      }
      return this.loaded(identifier, { metadataLocation: location, metadata });
    });
  }

  async commitTable(identifier: TableIdentifier, requirements: TableRequirement[], updates: MetadataUpdate[]): Promise<LoadedTable> {
    return this.run('committing', async () => {
      for (let attempt = 1; ; attempt++) {
        const prepared = await this.prepareCommit(identifier, requirements, updates);
        if (prepared.next === undefined) return this.loaded(identifier, prepared.base);
        const landed = await this.pointers.swap(this.driver, identifier, prepared.base.metadataLocation, prepared.nextLocation, prepared.io);
        if (landed) {
          await failpoint('after-catalog-swap');
          await deleteRemovedMetadataFiles(prepared.io, prepared.base.metadata, prepared.next, (m) => this.warn(`${SUBSYSTEM}: ${m}`));
          return this.loaded(identifier, { metadataLocation: prepared.nextLocation, metadata: prepared.next });
        }
        await this.pointers.deleteOrphan(prepared.io, prepared.nextLocation);
        if (attempt >= this.maxCommitAttempts) {
          throw new FloeError(SUBSYSTEM, 'commit-conflict', `table ${identifierToString(identifier)}: another writer moved metadata_location first (${attempt} attempts); reload the table and retry`, { retryable: true });
        }
      }
    });
  }

  /**
   * Commits to several tables atomically: every metadata file is written first, then all pointer
   * swaps run in one database transaction, which is rolled back unless every swap updates its row.
   * Used by `floe catalog serve` for the REST `transactions/commit` endpoint.
   */
  async commitTransaction(changes: TableCommit[]): Promise<LoadedTable[]> {
    return this.run('committing a multi-table transaction', async () => {
      const seen: TableIdentifier[] = [];
      for (const c of changes) {
        if (seen.some((s) => sameTable(s, c.identifier))) {
          throw new FloeError(SUBSYSTEM, 'invalid-argument', `table ${identifierToString(c.identifier)} appears twice in one transaction; merge its changes into one entry`);
        }
        seen.push(c.identifier);
      }
      const prepared = [];
      try {
        for (const c of changes) prepared.push({ change: c, ...(await this.prepareCommit(c.identifier, c.requirements, c.updates)) });
      } catch (e) {
        for (const p of prepared) if (p.next !== undefined) await this.pointers.deleteOrphan(p.io, p.nextLocation);
        throw e;
      }
      const toSwap = prepared.filter((p) => p.next !== undefined);
      let failed: TableIdentifier | undefined;
      try {
        await this.driver.transaction(async (tx) => {
          for (const p of toSwap) {
            const r = await tx.execute(SQL.commitTable, [p.nextLocation, p.base.metadataLocation, this.name, storedNamespace(p.change.identifier.namespace), p.change.identifier.name, p.base.metadataLocation]);
            if (r.affectedRows !== 1) {
              failed = p.change.identifier;
              throw new FloeError(SUBSYSTEM, 'commit-conflict', `table ${identifierToString(p.change.identifier)}: another writer moved metadata_location first; no table of the transaction was changed; reload and retry`, { retryable: true });
            }
          }
        });
      } catch (e) {
        if (failed !== undefined || !this.driver.isConnectionLoss(e)) {
          for (const p of toSwap) await this.pointers.deleteOrphan(p.io, p.nextLocation);
          throw e;
        }
        throw new FloeError(SUBSYSTEM, 'commit-state-unknown', `the connection to ${this.driver.description} was lost while committing a transaction over ${toSwap.map((p) => identifierToString(p.change.identifier)).join(', ')}; it may or may not have landed: do not delete its files, reload the tables and look for the snapshots`, { cause: e, retryable: false });
      }
      await failpoint('after-catalog-swap');
      return prepared.map((p) => this.loaded(p.change.identifier, p.next === undefined ? p.base : { metadataLocation: p.nextLocation, metadata: p.next }));
    });
  }

  async renameTable(from: TableIdentifier, to: TableIdentifier): Promise<void> {
    await this.run('renaming a table', async () => {
      checkTableIdentifier(from);
      checkTableIdentifier(to);
      if (sameTable(from, to)) return; // Java JdbcCatalog.renameTable: a no-op
      if ((await this.pointers.read(from)) === undefined) throw this.notFound(from);
      await this.namespaces.requireExists(to.namespace);
      await this.pointers.refuseExisting(to);
      let updated: number;
      try {
        updated = (await this.driver.execute(SQL.renameTable, [storedNamespace(to.namespace), to.name, this.name, storedNamespace(from.namespace), from.name])).affectedRows;
      } catch (e) {
        if (this.driver.isUniqueViolation(e)) throw new FloeError(SUBSYSTEM, 'already-exists', `cannot rename ${identifierToString(from)} to ${identifierToString(to)}: the target was created concurrently`, { cause: e });
        throw e;
      }
      if (updated === 0) throw this.notFound(from);
    });
  }

  /**
   * Removes the row. With purge, then deletes the files the last metadata reaches
   * (purge-table-files.ts); without purge every file stays.
   */
  async dropTable(identifier: TableIdentifier, purge = false): Promise<void> {
    await this.run('dropping a table', async () => {
      const current = purge ? await this.loadCurrent(identifier) : undefined;
      const deleted = (await this.driver.execute(SQL.dropTable, [this.name, storedNamespace(identifier.namespace), identifier.name])).affectedRows;
      if (deleted === 0) throw this.notFound(identifier);
      if (current !== undefined) await purgeTableFiles(this.ioFor(current.metadata.location), current.metadata, current.metadataLocation, (m) => this.warn(`${SUBSYSTEM}: ${m}`));
    });
  }

  async close(): Promise<void> {
    for (const io of this.ios.values()) await io.close?.();
    this.ios.clear();
    await this.driver.close();
  }

  // ---- internals ---------------------------------------------------------------------------------

  private async run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    await this.initialize();
    try {
      return await fn();
    } catch (e) {
      throw this.wrap(e, what);
    }
  }

  /** Driver errors become FloeErrors that say where; FloeErrors pass through. */
  private wrap(e: unknown, what: string): FloeError {
    if (isFloeError(e)) return e;
    const lost = this.driver.isConnectionLoss(e);
    return new FloeError(SUBSYSTEM, 'io', `${what} in ${this.driver.description} failed: ${redactSqlUrl(errorMessage(e))}${lost ? ' (connection lost; check that the database is reachable)' : ''}`, { cause: e, retryable: lost });
  }

  private defaultLocation(identifier: TableIdentifier): string {
    // Java JdbcCatalog.defaultWarehouseLocation: <warehouse>/<level>/…/<table>.
    return [this.warehouse, ...identifier.namespace, identifier.name].join('/');
  }

  private ioFor(location: string): FileIO {
    const scheme = location.startsWith('s3') ? `s3:${location.split('/')[2] ?? ''}` : 'local';
    let io = this.ios.get(scheme);
    if (io === undefined) {
      io = fileIOFor(location, this.storage);
      this.ios.set(scheme, io);
    }
    return io;
  }

  private async loadCurrent(identifier: TableIdentifier): Promise<CurrentRow> {
    const metadataLocation = await this.pointers.read(identifier);
    if (metadataLocation === undefined) throw this.notFound(identifier);
    const io = this.ioFor(metadataLocation);
    try {
      return { metadataLocation, metadata: await this.metadataFiles.read(io, identifierToString(identifier), metadataLocation) };
    } catch (e) {
      if (isFloeError(e, 'not-found')) {
        throw new FloeError(SUBSYSTEM, 'invalid-data', `table ${identifierToString(identifier)} points at ${metadataLocation}, which does not exist; restore the file or point metadata_location at an existing metadata file`, { cause: e });
      }
      throw e;
    }
  }

  private async prepareCommit(identifier: TableIdentifier, requirements: TableRequirement[], updates: MetadataUpdate[]) {
    const base = await this.loadCurrent(identifier);
    checkRequirements(base.metadata, requirements);
    const next = applyUpdates(base.metadata, updates, { metadataLocationOfBase: base.metadataLocation });
    const io = this.ioFor(next.location);
    if (next === base.metadata) return { base, next: undefined, nextLocation: base.metadataLocation, io };
    const nextLocation = nextMetadataLocation(next, base.metadataLocation);
    const bytes = encoder.encode(writeTableMetadata(next));
    await io.write(nextLocation, bytes);
    // served from the cache only once the pointer names it (and its bytes are these)
    this.metadataFiles.wrote(identifierToString(identifier), nextLocation, bytes, next);
    await failpoint('after-metadata-file');
    return { base, next, nextLocation, io };
  }

  private notFound(identifier: TableIdentifier): FloeError {
    return new FloeError(SUBSYSTEM, 'not-found', `table ${identifierToString(identifier)} does not exist in catalog ${this.name}`);
  }

  private loaded(identifier: TableIdentifier, current: CurrentRow): LoadedTable {
    return {
      identifier: { namespace: [...identifier.namespace], name: identifier.name },
      metadataLocation: current.metadataLocation,
      metadata: current.metadata,
      io: this.ioFor(stripTrailingSlash(current.metadata.location)),
    };
  }
}
