/** Opener for separate processes of the catalog behaviour suite (see ../concurrent-committer.ts). */
import { RestCatalog, type RestCatalogOptions } from '../../../src/catalog/rest/rest-catalog.js';

export function openCatalog(config: RestCatalogOptions): RestCatalog {
  return new RestCatalog(config);
}
