/**
 * Where the filesystem catalog keeps things under its warehouse root (Hadoop catalog layout, Java
 * `HadoopCatalog` / `HadoopTableOperations`; spec "File System Tables"):
 *
 *   <warehouse>/<ns level 1>/…/<ns level n>/.namespace.json            namespace marker + properties
 *   <warehouse>/<ns levels…>/<table>/metadata/v<N>.metadata.json        table metadata, N = 1, 2, …
 *   <warehouse>/<ns levels…>/<table>/metadata/version-hint.text         "N", no trailing newline
 *   <warehouse>/<ns levels…>/<table>/{data,metadata}/…                  the table's files
 *
 * `.namespace.json` is floe's addition (Java's HadoopCatalog has directories only and no namespace
 * properties): object stores have no empty directories, so a namespace needs an object to exist at
 * all. Its content is `{"namespace": [...levels], "properties": {...}}`.
 */
import { toFileUri } from '../../io/local-path.js';
import { isS3Uri } from '../../io/s3-location.js';
import { stripTrailingSlash } from '../../iceberg/spec/table-metadata-json.js';
import type { TableIdentifier } from '../../iceberg/metadata/catalog.js';

const NAMESPACE_MARKER_FILE = '.namespace.json';
const VERSION_HINT_FILE = 'version-hint.text';
export const METADATA_DIR = 'metadata';

/** `v<N>.metadata.json` or the gzip form `v<N>.gz.metadata.json` (Java `HadoopTableOperations`). */
const VERSION_FILE = /^v([1-9][0-9]*)(\.gz)?\.metadata\.json$/;

/** `base/part1/part2`, with no doubled slash. */
export function joinLocation(base: string, ...parts: string[]): string {
  return [stripTrailingSlash(base), ...parts].join('/');
}

/** The warehouse as a URI without trailing slash: local paths become `file:///abs`. */
export function normalizeWarehouse(warehouse: string, baseDir?: string): string {
  if (isS3Uri(warehouse)) return stripTrailingSlash(warehouse);
  return stripTrailingSlash(toFileUri(warehouse, baseDir));
}

/** The version of a Hadoop metadata file name, or undefined for any other name. */
export function metadataFileVersion(fileName: string): number | undefined {
  const m = VERSION_FILE.exec(fileName);
  if (!m) return undefined;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? n : undefined;
}

export class FileSystemLayout {
  constructor(readonly warehouse: string) {}

  namespaceDir(namespace: readonly string[]): string {
    return joinLocation(this.warehouse, ...namespace);
  }

  namespaceMarker(namespace: readonly string[]): string {
    return joinLocation(this.namespaceDir(namespace), NAMESPACE_MARKER_FILE);
  }

  tableDir(id: TableIdentifier): string {
    return joinLocation(this.namespaceDir(id.namespace), id.name);
  }

  metadataDir(id: TableIdentifier): string {
    return joinLocation(this.tableDir(id), METADATA_DIR);
  }
}

export function versionHintLocation(metadataDir: string): string {
  return joinLocation(metadataDir, VERSION_HINT_FILE);
}

export function metadataFileLocation(metadataDir: string, version: number): string {
  return joinLocation(metadataDir, `v${version}.metadata.json`);
}
