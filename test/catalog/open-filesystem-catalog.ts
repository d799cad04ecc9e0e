/** Opener for separate processes of the catalog behaviour suite (see concurrent-committer.ts). */
import { FileSystemCatalog, type FileSystemCatalogOptions } from '../../src/catalog/filesystem/filesystem-catalog.js';

export function openCatalog(config: FileSystemCatalogOptions): FileSystemCatalog {
  return new FileSystemCatalog(config);
}
