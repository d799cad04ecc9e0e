/**
 * The catalog seam: where the pointer to a table's current metadata file lives. Implementations:
 * filesystem (Hadoop layout, the embedded default), SQL (Iceberg JdbcCatalog layout), REST client.
 * Every implementation passes the one behaviour suite in test/catalog/.
 *
 * Commits are requirement-checked update lists (metadata-updates.ts), as in the REST protocol. A commit
 * either lands exactly once, fails with FloeError kind 'commit-conflict' (retryable: reload and try
 * again), or fails with kind 'commit-state-unknown' (the request may have landed: never delete files it
 * references; reload and look).
 *
 * The interface lives here, in the table layer, and its implementations in src/catalog/: the commit
 * path (table/catalog-table.ts, checkpoint/table-committer.ts) depends on the seam, never on a
 * catalog, so src/iceberg imports nothing above it (the layer rules of .dependency-cruiser.cjs).
 */
import type { MetadataUpdate, TableRequirement } from './metadata-updates.js';
import type { PartitionSpec } from '../spec/partition.js';
import type { Schema } from '../spec/schema.js';
import type { FormatVersion, SortOrder, TableMetadata } from '../spec/table-metadata.js';
import type { FileIO } from '../../io/file-io.js';

export interface TableIdentifier {
  namespace: string[];
  name: string;
}

export interface LoadedTable {
  identifier: TableIdentifier;
  metadataLocation: string;
  metadata: TableMetadata;
  /** The FileIO that reads and writes this table's files. */
  io: FileIO;
}

export interface CreateTableRequest {
  schema: Schema;
  partitionSpec?: PartitionSpec;
  sortOrder?: SortOrder;
  /** Defaults to the catalog's warehouse location for the identifier. */
  location?: string;
  properties?: Record<string, string>;
  formatVersion?: FormatVersion;
}

/** One table's part of a multi-table commit. */
export interface TableCommit {
  identifier: TableIdentifier;
  requirements: TableRequirement[];
  updates: MetadataUpdate[];
}

export interface Catalog {
  readonly name: string;

  createNamespace(namespace: string[], properties?: Record<string, string>): Promise<void>;
  listNamespaces(parent?: string[]): Promise<string[][]>;
  loadNamespaceProperties(namespace: string[]): Promise<Record<string, string>>;
  updateNamespaceProperties(namespace: string[], removals: string[], updates: Record<string, string>): Promise<void>;
  namespaceExists(namespace: string[]): Promise<boolean>;
  /** Fails when the namespace still holds tables. */
  dropNamespace(namespace: string[]): Promise<void>;

  listTables(namespace: string[]): Promise<TableIdentifier[]>;
  tableExists(identifier: TableIdentifier): Promise<boolean>;
  /**
   * Creates a table. Ids in the request are kept as given by local catalogs; a REST server may reassign
   * them, so callers must use the returned metadata's ids.
   */
  createTable(identifier: TableIdentifier, request: CreateTableRequest): Promise<LoadedTable>;
  loadTable(identifier: TableIdentifier): Promise<LoadedTable>;
  commitTable(
    identifier: TableIdentifier,
    requirements: TableRequirement[],
    updates: MetadataUpdate[],
  ): Promise<LoadedTable>;
  /**
   * Optional: commits to several tables at once, all or none (SQL: one database transaction; REST:
   * the `transactions/commit` endpoint — 'unsupported' when the server does not advertise it).
   * Catalogs without an atomic multi-table commit do not implement it.
   */
  commitTransaction?(changes: TableCommit[]): Promise<LoadedTable[]>;
  /**
   * Optional: adds an existing table to the catalog under `identifier`, pointing at the metadata file
   * `metadataLocation` as it is (no file is written or moved). Fails 'already-exists' when the name is
   * taken, 'not-found' when the namespace is missing, 'invalid-data' when the file is no table metadata.
   * The SQL catalog implements it; the filesystem catalog cannot, since there a table is found by its
   * directory, not through a pointer.
   */
  registerTable?(identifier: TableIdentifier, metadataLocation: string): Promise<LoadedTable>;
  renameTable(from: TableIdentifier, to: TableIdentifier): Promise<void>;
  /** Removes the table from the catalog; with purge, also its files. */
  dropTable(identifier: TableIdentifier, purge?: boolean): Promise<void>;
  close?(): Promise<void>;
}

export function identifierToString(id: TableIdentifier): string {
  return [...id.namespace, id.name].join('.');
}
