/** Opener for separate processes of the catalog behaviour suite (see ../concurrent-committer.ts). */
import { SqlCatalog, type SqlCatalogOptions } from '../../../src/catalog/sql/sql-catalog.js';

export function openCatalog(config: SqlCatalogOptions): SqlCatalog {
  return new SqlCatalog(config);
}
