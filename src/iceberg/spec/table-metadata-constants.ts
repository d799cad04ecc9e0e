/** Names and defaults of table metadata that several modules share (Java `SnapshotRef`, `TableProperties`). */

export const MAIN_BRANCH = 'main';

/** Table property capping the metadata-log (Java TableProperties.METADATA_PREVIOUS_VERSIONS_MAX). */
export const METADATA_PREVIOUS_VERSIONS_MAX = 'write.metadata.previous-versions-max';
export const METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT = 100;

/**
 * Table property: delete the metadata files that drop out of the metadata-log at each commit (Java
 * TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, default false there).
 */
export const METADATA_DELETE_AFTER_COMMIT = 'write.metadata.delete-after-commit.enabled';

/** Reserved properties that Java never persists in the `properties` map (TableProperties.RESERVED_PROPERTIES). */
export const RESERVED_PROPERTIES: ReadonlySet<string> = new Set([
  'format-version',
  'uuid',
  'snapshot-count',
  'current-snapshot-id',
  'current-snapshot-summary',
  'current-snapshot-timestamp-ms',
  'current-schema',
  'default-partition-spec',
  'default-sort-order',
]);
