/**
 * A table as the commit and scan code use it: the catalog's `LoadedTable` (identifier, metadata,
 * metadata location, FileIO) together with the catalog it came from, so that a commit can reload it
 * and swap its metadata pointer. Values are immutable: every commit returns a new `CatalogTable`.
 */
import type { Catalog, CreateTableRequest, LoadedTable, TableIdentifier } from '../metadata/catalog.js';

export interface CatalogTable extends LoadedTable {
  readonly catalog: Catalog;
}

export function catalogTable(catalog: Catalog, loaded: LoadedTable): CatalogTable {
  return { ...loaded, catalog };
}

export async function loadCatalogTable(catalog: Catalog, identifier: TableIdentifier): Promise<CatalogTable> {
  return catalogTable(catalog, await catalog.loadTable(identifier));
}

/** The table as the catalog has it now. */
export async function reloadTable(table: CatalogTable): Promise<CatalogTable> {
  return loadCatalogTable(table.catalog, table.identifier);
}

/**
 * Creates a table (schema, partition spec, sort order, properties, format version 2 or 3) and returns
 * it ready for commits. Local catalogs keep the given field ids; a REST server may reassign them, so
 * writers must take ids from the returned metadata.
 */
export async function createTable(catalog: Catalog, identifier: TableIdentifier, request: CreateTableRequest): Promise<CatalogTable> {
  return catalogTable(catalog, await catalog.createTable(identifier, request));
}
