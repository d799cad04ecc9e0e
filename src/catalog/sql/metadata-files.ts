/**
 * Metadata file naming of pointer-based ("metastore") catalogs — JDBC, Hive, Glue, REST servers
 * (spec "Metastore Tables"; Java `BaseMetastoreTableOperations.newTableMetadataFilePath` and
 * `parseVersion`): `<metadata dir>/<NNNNN>-<uuid>.metadata.json`, the version zero-padded to five
 * digits and counting from 00000 for a new table; the metadata dir is the table property
 * `write.metadata.path` or `<location>/metadata`. The uuid makes every name unique, so a plain write
 * never overwrites anything and a losing writer's file is simply unreferenced.
 */
import { newUuid } from '../../iceberg/spec/snapshot-ids.js';
import { stripTrailingSlash } from '../../iceberg/spec/table-metadata-json.js';
import type { TableMetadata } from '../../iceberg/spec/table-metadata.js';

const WRITE_METADATA_PATH = 'write.metadata.path';

const VERSIONED_NAME = /^(\d+)-[^/]*\.metadata\.json$/;

/** The version encoded in a metadata file location, or -1 when the name has none (Java parseVersion). */
export function parseMetadataVersion(location: string): number {
  const name = location.slice(location.lastIndexOf('/') + 1);
  const m = VERSIONED_NAME.exec(name);
  if (!m) return -1;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? n : -1;
}

function metadataDirOf(metadata: TableMetadata): string {
  const custom = metadata.properties[WRITE_METADATA_PATH];
  return stripTrailingSlash(custom !== undefined && custom !== '' ? custom : `${stripTrailingSlash(metadata.location)}/metadata`);
}

/** The location of the next metadata file after `currentLocation` (undefined: a new table). */
export function nextMetadataLocation(metadata: TableMetadata, currentLocation?: string): string {
  const version = currentLocation === undefined ? 0 : parseMetadataVersion(currentLocation) + 1;
  return `${metadataDirOf(metadata)}/${String(version).padStart(5, '0')}-${newUuid()}.metadata.json`;
}
