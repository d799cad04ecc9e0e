/**
 * Table properties that steer commits (Java `TableProperties`), with Java's defaults. Read from the
 * table's metadata at commit time, so an operator can tune them per table with `set-properties`.
 */
import type { TableMetadata } from '../spec/table-metadata.js';

export const COMMIT_NUM_RETRIES = 'commit.retry.num-retries';
export const COMMIT_NUM_RETRIES_DEFAULT = 4;
export const COMMIT_MIN_RETRY_WAIT_MS = 'commit.retry.min-wait-ms';
export const COMMIT_MIN_RETRY_WAIT_MS_DEFAULT = 100;
export const COMMIT_MAX_RETRY_WAIT_MS = 'commit.retry.max-wait-ms';
export const COMMIT_MAX_RETRY_WAIT_MS_DEFAULT = 60_000;
export const COMMIT_TOTAL_RETRY_TIME_MS = 'commit.retry.total-timeout-ms';
export const COMMIT_TOTAL_RETRY_TIME_MS_DEFAULT = 30 * 60_000;

export const MANIFEST_MERGE_ENABLED = 'commit.manifest-merge.enabled';
export const MANIFEST_MERGE_ENABLED_DEFAULT = true;
export const MANIFEST_MIN_MERGE_COUNT = 'commit.manifest.min-count-to-merge';
export const MANIFEST_MIN_MERGE_COUNT_DEFAULT = 100;
export const MANIFEST_TARGET_SIZE_BYTES = 'commit.manifest.target-size-bytes';
export const MANIFEST_TARGET_SIZE_BYTES_DEFAULT = 8 * 1024 * 1024;

/** Where manifests and manifest lists go when not `<location>/metadata` (Java `write.metadata.path`). */
const WRITE_METADATA_LOCATION = 'write.metadata.path';

/** An integer property, or the default when absent or not an integer (Java `propertyAsInt`). */
export function intProperty(metadata: TableMetadata, key: string, fallback: number): number {
  const text = metadata.properties[key];
  if (text === undefined) return fallback;
  const n = Number(text.trim());
  return Number.isSafeInteger(n) ? n : fallback;
}

export function booleanProperty(metadata: TableMetadata, key: string, fallback: boolean): boolean {
  const text = metadata.properties[key]?.trim().toLowerCase();
  if (text === 'true') return true;
  if (text === 'false') return false;
  return fallback;
}

/** Directory of the table's metadata files (manifests, manifest lists), no trailing slash. */
export function metadataDirectory(metadata: TableMetadata): string {
  const configured = metadata.properties[WRITE_METADATA_LOCATION];
  return (configured ?? `${metadata.location}/metadata`).replace(/\/+$/, '');
}
