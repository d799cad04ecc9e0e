/**
 * The filesystem catalog (floe's embedded default): Iceberg tables in the Hadoop layout under a
 * warehouse root on local disk or S3 (filesystem-layout.ts), readable without any service by DuckDB
 * `iceberg_scan`, Spark's HadoopCatalog, PyIceberg `StaticTable` and icebird.
 *
 * Commit protocol (spec "File System Tables"; Java `HadoopTableOperations.commit`): load the current
 * version N, check the requirements, apply the updates with the metadata builder, then create
 * `v<N+1>.metadata.json` with create-if-absent — link(2) on local disk, `If-None-Match: *` on S3. The
 * create is the commit point: exactly one writer gets each version; a loser gets 'commit-conflict'
 * (retryable) after re-checking its requirements against the winner's metadata. `version-hint.text` is
 * written afterwards, best effort: readers probe past a stale hint.
 *
 * The spec calls this scheme unsafe on object stores without atomic create. Stores that silently
 * ignore `If-None-Match` (s3rver, some gateways) would let two commits both "succeed" and lose one, so
 * every create and commit first asks the FileIO whether atomic creates really work there (a probe,
 * once per store) and refuses otherwise, naming the sql and rest catalogs as the alternatives.
 */
import type { FileIO } from '../../io/file-io.js';
import { fileIOFor, type StorageConfig } from '../../io/file-io-factory.js';
import { deleteTree } from '../../io/listing.js';
import { applyUpdates, checkRequirements, newTableMetadata } from '../../iceberg/metadata/metadata-builder.js';
import type { MetadataUpdate, TableRequirement } from '../../iceberg/metadata/metadata-updates.js';
import { stripTrailingSlash, writeTableMetadata } from '../../iceberg/spec/table-metadata-json.js';
import type { TableMetadata } from '../../iceberg/spec/table-metadata.js';
import { errorMessage, FloeError, isFloeError } from '../../util/errors.js';
import { deleteRemovedMetadataFiles } from '../../iceberg/metadata/metadata-file-retention.js';
import { failpoint } from '../../util/failpoints.js';
import { identifierToString, type Catalog, type CreateTableRequest, type LoadedTable, type TableIdentifier } from '../../iceberg/metadata/catalog.js';
import { createMetadataVersion, type VersionCreateOutcome } from './filesystem-commit.js';
import { FileSystemLayout, metadataFileLocation, normalizeWarehouse, versionHintLocation } from './filesystem-layout.js';
import { FileSystemNamespaces } from './filesystem-namespaces.js';
import { findCurrentVersion, listMetadataVersions } from './filesystem-versions.js';
import { MetadataFileCache } from '../metadata-file-cache.js';
import { checkNamespace, checkTableIdentifier, sameTable } from '../identifiers.js';

const SUBSYSTEM = 'catalog.filesystem';
const encoder = new TextEncoder();

export interface FileSystemCatalogOptions {
  /** Warehouse root: a local directory (path or file: URI) or `s3://bucket/prefix`. */
  warehouse: string;
  /** Catalog name (engines' catalog name). Default `filesystem`. */
  name?: string;
  /** The FileIO to use; default `fileIOFor(warehouse, storage)`. */
  io?: FileIO;
  storage?: StorageConfig;
  /**
   * Attempts per commit when another writer took the next version first and the requirements still
   * hold on its metadata (Java's server-side commit retries the same way). Default 4.
   */
  maxCommitAttempts?: number;
  /** Where best-effort failures (version hint) are reported. Default: process warnings. */
  warn?: (message: string) => void;
}

interface CurrentTable {
  version: number;
  metadataLocation: string;
  metadata: TableMetadata;
}

export class FileSystemCatalog implements Catalog {
  readonly name: string;
  /** The normalized warehouse URI (`file:///abs` or `s3://bucket/prefix`), no trailing slash. */
  readonly warehouse: string;
  readonly io: FileIO;
  private readonly layout: FileSystemLayout;
  private readonly namespaces: FileSystemNamespaces;
  private readonly maxCommitAttempts: number;
  private readonly warn: (message: string) => void;
  private readonly ownsIO: boolean;
  /** Keyed by the table's metadata directory. */
  private readonly metadataFiles = new MetadataFileCache();
  private atomicCreate: Promise<boolean> | undefined;

  constructor(options: FileSystemCatalogOptions) {
    this.name = options.name ?? 'filesystem';
    this.warehouse = normalizeWarehouse(options.warehouse, options.storage?.local?.baseDir);
    this.io = options.io ?? fileIOFor(this.warehouse, options.storage);
    this.ownsIO = options.io === undefined;
    this.layout = new FileSystemLayout(this.warehouse);
    this.namespaces = new FileSystemNamespaces(this.io, this.layout);
    this.maxCommitAttempts = Math.max(1, options.maxCommitAttempts ?? 4);
    this.warn = options.warn ?? ((message) => process.emitWarning(message, { code: 'FLOE_CATALOG' }));
  }

  // ---- namespaces --------------------------------------------------------------------------------

  async createNamespace(namespace: string[], properties: Record<string, string> = {}): Promise<void> {
    await this.namespaces.create(namespace, properties);
  }

  async listNamespaces(parent: string[] = []): Promise<string[][]> {
    if (parent.length > 0) checkNamespace(parent);
    return this.namespaces.list(parent);
  }

  async loadNamespaceProperties(namespace: string[]): Promise<Record<string, string>> {
    return this.namespaces.load(namespace);
  }

  async updateNamespaceProperties(namespace: string[], removals: string[], updates: Record<string, string>): Promise<void> {
    await this.namespaces.update(namespace, removals, updates);
  }

  async namespaceExists(namespace: string[]): Promise<boolean> {
    return this.namespaces.exists(namespace);
  }

  async dropNamespace(namespace: string[]): Promise<void> {
    await this.namespaces.drop(namespace);
  }

  // ---- tables ------------------------------------------------------------------------------------

  async listTables(namespace: string[]): Promise<TableIdentifier[]> {
    checkNamespace(namespace);
    await this.namespaces.requireExists(namespace);
    return (await this.namespaces.tableNames(namespace)).map((name) => ({ namespace: [...namespace], name }));
  }

  async tableExists(identifier: TableIdentifier): Promise<boolean> {
    checkTableIdentifier(identifier);
    return this.namespaces.isTableDir(this.layout.tableDir(identifier));
  }

  async loadTable(identifier: TableIdentifier): Promise<LoadedTable> {
    const current = await this.loadCurrent(identifier);
    return this.loaded(identifier, current);
  }

  async createTable(identifier: TableIdentifier, request: CreateTableRequest): Promise<LoadedTable> {
    checkTableIdentifier(identifier);
    await this.namespaces.requireExists(identifier.namespace);
    await this.requireAtomicCreate(`create table ${identifierToString(identifier)}`);
    const tableDir = this.layout.tableDir(identifier);
    if (request.location !== undefined && normalizeWarehouse(request.location) !== tableDir) {
      // Java HadoopCatalog: "Cannot set a custom location for a path-based table".
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `table ${identifierToString(identifier)}: the filesystem catalog keeps a table at its directory ${tableDir}, found the custom location ${request.location}; omit the location or use the sql or rest catalog`);
    }
    await this.refuseExisting(identifier, tableDir);
    const metadata = newTableMetadata({
      schema: request.schema,
      spec: request.partitionSpec,
      sortOrder: request.sortOrder,
      location: tableDir,
      properties: request.properties,
      formatVersion: request.formatVersion,
    });
    const metadataDir = this.layout.metadataDir(identifier);
    const outcome = await createMetadataVersion(this.io, metadataDir, 1, encoder.encode(writeTableMetadata(metadata)));
    if (outcome !== 'created') {
      throw new FloeError(SUBSYSTEM, 'already-exists', `table ${identifierToString(identifier)} already exists (created concurrently at ${tableDir})`);
    }
    await this.writeVersionHint(metadataDir, 1);
    return this.loaded(identifier, { version: 1, metadataLocation: metadataFileLocation(metadataDir, 1), metadata });
  }

  async commitTable(identifier: TableIdentifier, requirements: TableRequirement[], updates: MetadataUpdate[]): Promise<LoadedTable> {
    checkTableIdentifier(identifier);
    await this.requireAtomicCreate(`commit to table ${identifierToString(identifier)}`);
    const metadataDir = this.layout.metadataDir(identifier);
    for (let attempt = 1; ; attempt++) {
      const base = await this.loadCurrent(identifier);
      checkRequirements(base.metadata, requirements);
      const next = applyUpdates(base.metadata, updates, { metadataLocationOfBase: base.metadataLocation });
      if (next === base.metadata) return this.loaded(identifier, base); // nothing changed: no new version
      const version = base.version + 1;
      const bytes = encoder.encode(writeTableMetadata(next));
      const outcome: VersionCreateOutcome = await createMetadataVersion(this.io, metadataDir, version, bytes);
      if (outcome === 'created') {
        this.metadataFiles.wrote(metadataDir, metadataFileLocation(metadataDir, version), bytes, next);
        // In the Hadoop layout, creating v<N> is both "the metadata file is written" and "the pointer
        // is swapped"; the version hint follows (best effort — readers probe past a stale hint).
        await failpoint('after-metadata-file');
        await failpoint('after-catalog-swap');
        await this.writeVersionHint(metadataDir, version);
        await deleteRemovedMetadataFiles(this.io, base.metadata, next, (m) => this.warn(`${SUBSYSTEM}: ${m}`));
        return this.loaded(identifier, { version, metadataLocation: metadataFileLocation(metadataDir, version), metadata: next });
      }
      // Another writer created v<version> first. Retry against its metadata: the requirements decide
      // whether our change still applies (a moved branch fails them with a commit-conflict).
      if (attempt >= this.maxCommitAttempts) {
        throw new FloeError(SUBSYSTEM, 'commit-conflict', `table ${identifierToString(identifier)}: another writer committed version ${version} first (${attempt} attempts); reload the table and retry`, { retryable: true });
      }
    }
  }

  /**
   * Renames a table by giving its current metadata file to the new name and then removing the old
   * name's version files. The table's files do not move: its `location` (data, manifests) stays the
   * old directory, as with every pointer-based catalog (JDBC, Hive); a table created later under the
   * old name shares that directory, but all file names are unique.
   *
   * Not atomic (Java's HadoopCatalog refuses renames altogether): stop writers of the table first. A
   * crash midway leaves both names pointing at the same files (drop one without purge); a commit that
   * lands on the old name during the rename is detected and reported, and nothing is lost (it stays
   * under the old name).
   */
  async renameTable(from: TableIdentifier, to: TableIdentifier): Promise<void> {
    checkTableIdentifier(from);
    checkTableIdentifier(to);
    const current = await this.loadCurrent(from);
    if (sameTable(from, to)) {
      throw new FloeError(SUBSYSTEM, 'already-exists', `cannot rename ${identifierToString(from)} to itself`);
    }
    await this.namespaces.requireExists(to.namespace);
    await this.requireAtomicCreate(`rename table ${identifierToString(from)}`);
    const toDir = this.layout.tableDir(to);
    await this.refuseExisting(to, toDir);
    const toMetadataDir = this.layout.metadataDir(to);
    const bytes = await this.io.read(current.metadataLocation);
    const outcome = await createMetadataVersion(this.io, toMetadataDir, current.version, bytes);
    if (outcome !== 'created') {
      throw new FloeError(SUBSYSTEM, 'already-exists', `cannot rename ${identifierToString(from)} to ${identifierToString(to)}: the target was created concurrently`);
    }
    await this.writeVersionHint(toMetadataDir, current.version);
    const fromMetadataDir = this.layout.metadataDir(from);
    this.metadataFiles.forget(fromMetadataDir);
    await this.removeVersionFiles(fromMetadataDir, current.version);
    const leftover = await listMetadataVersions(this.io, fromMetadataDir);
    if (leftover.size > 0) {
      throw new FloeError(SUBSYSTEM, 'commit-conflict', `renamed ${identifierToString(from)} to ${identifierToString(to)} at version ${current.version}, but ${identifierToString(from)} received a commit meanwhile (version ${Math.max(...leftover.keys())}); both names now exist — drop ${identifierToString(to)} without purge and rename again with writers stopped`, { retryable: false });
    }
  }

  /**
   * Without purge: removes the catalog entry (the table's `v<N>.metadata.json` files and version hint)
   * and keeps every other file, so the data stays as promised. With purge: removes the table's
   * directory, and its location when that differs (a renamed table) and no other table lives there.
   * The catalog does not read manifests, so data files placed outside those directories are kept.
   */
  async dropTable(identifier: TableIdentifier, purge = false): Promise<void> {
    const current = await this.loadCurrent(identifier);
    const tableDir = this.layout.tableDir(identifier);
    this.metadataFiles.forget(this.layout.metadataDir(identifier));
    if (!purge) {
      await this.removeVersionFiles(this.layout.metadataDir(identifier), current.version);
      return;
    }
    await deleteTree(this.io, tableDir);
    const location = stripTrailingSlash(current.metadata.location);
    if (location !== tableDir && location.startsWith(`${this.warehouse}/`)) {
      if (await this.namespaces.isTableDir(location)) {
        this.warn(`${SUBSYSTEM}: purge of ${identifierToString(identifier)} kept its location ${location}, where another table lives now`);
      } else {
        await deleteTree(this.io, location);
      }
    }
  }

  async close(): Promise<void> {
    if (this.ownsIO) await this.io.close?.();
  }

  // ---- internals ---------------------------------------------------------------------------------

  private async loadCurrent(identifier: TableIdentifier): Promise<CurrentTable> {
    checkTableIdentifier(identifier);
    const metadataDir = this.layout.metadataDir(identifier);
    const found = await findCurrentVersion(this.io, metadataDir);
    if (found === undefined) {
      throw new FloeError(SUBSYSTEM, 'not-found', `table ${identifierToString(identifier)} does not exist (no v<N>.metadata.json in ${metadataDir})`);
    }
    try {
      return { ...found, metadata: await this.metadataFiles.read(this.io, metadataDir, found.metadataLocation) };
    } catch (e) {
      // Dropped between listing and reading.
      if (isFloeError(e, 'not-found')) throw new FloeError(SUBSYSTEM, 'not-found', `table ${identifierToString(identifier)} was dropped while loading`, { cause: e });
      throw e;
    }
  }

  private loaded(identifier: TableIdentifier, current: CurrentTable): LoadedTable {
    return { identifier: { namespace: [...identifier.namespace], name: identifier.name }, metadataLocation: current.metadataLocation, metadata: current.metadata, io: this.io };
  }

  private async refuseExisting(identifier: TableIdentifier, tableDir: string): Promise<void> {
    if (await this.namespaces.isTableDir(tableDir)) {
      throw new FloeError(SUBSYSTEM, 'already-exists', `table ${identifierToString(identifier)} already exists`);
    }
    if ((await this.namespaces.readMarker([...identifier.namespace, identifier.name])) !== undefined) {
      throw new FloeError(SUBSYSTEM, 'already-exists', `cannot use ${identifierToString(identifier)} as a table: a namespace of that name exists at ${tableDir}`);
    }
  }

  /** Deletes v<N>…v1 (newest first, so a concurrent reader never falls back to an old version) and the hint. */
  private async removeVersionFiles(metadataDir: string, upTo: number): Promise<void> {
    const versions = [...(await listMetadataVersions(this.io, metadataDir)).entries()].filter(([v]) => v <= upTo).sort(([a], [b]) => b - a);
    await this.io.delete(versionHintLocation(metadataDir));
    for (const [, location] of versions) await this.io.delete(location);
  }

  private async writeVersionHint(metadataDir: string, version: number): Promise<void> {
    try {
      // Exactly the number, no trailing newline (PyIceberg checks `content.isnumeric()`, docs/iceberg-writer-checklist.md §6.4).
      await this.io.write(versionHintLocation(metadataDir), encoder.encode(String(version)));
    } catch (e) {
      // Best effort (Java ignores hint failures too): readers probe past a stale hint.
      this.warn(`${SUBSYSTEM}: committed ${metadataFileLocation(metadataDir, version)} but could not update ${versionHintLocation(metadataDir)}: ${errorMessage(e)}`);
    }
  }

  private async requireAtomicCreate(action: string): Promise<void> {
    this.atomicCreate ??= this.io.supportsAtomicCreate(this.warehouse);
    let atomic: boolean;
    try {
      atomic = await this.atomicCreate;
    } catch (e) {
      this.atomicCreate = undefined; // a failed probe is not an answer
      throw e;
    }
    if (!atomic) {
      throw new FloeError(SUBSYSTEM, 'unsupported', `cannot ${action}: the storage of warehouse ${this.warehouse} ignores conditional creates (a probe PUT with If-None-Match: * overwrote an existing object — s3rver and some S3 gateways behave so), and the filesystem catalog commits by creating v<N+1>.metadata.json only if absent; committing here could silently lose concurrent commits. Use the sql catalog (MySQL, PostgreSQL or SQLite) or the rest catalog with this storage, or an S3 store that honours If-None-Match (AWS S3, MinIO)`, { context: { warehouse: this.warehouse } });
    }
  }
}
