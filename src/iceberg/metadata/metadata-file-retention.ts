/**
 * Old metadata files after a commit (Java `BaseMetastoreTableOperations.deleteRemovedMetadataFiles`):
 * with `write.metadata.delete-after-commit.enabled` = true, the files that were in the base's
 * metadata-log and fell out of the new one (the log is capped by
 * `write.metadata.previous-versions-max`, metadata-builder.ts) are deleted once the commit landed.
 * Files still in the new log stay, so time travel through the log keeps working for its length.
 * Without the property (Java's default false) every metadata file stays forever; floe sets it on the
 * tables it creates (pipeline table-mapping.ts), since it commits every few seconds.
 */
import type { FileIO } from '../../io/file-io.js';
import { errorMessage } from '../../util/errors.js';
import { METADATA_DELETE_AFTER_COMMIT } from '../spec/table-metadata-constants.js';
import type { TableMetadata } from '../spec/table-metadata.js';

/** The metadata files a commit from `base` to `next` leaves behind for deletion (none unless enabled). */
function metadataFilesRemovedByCommit(base: TableMetadata, next: TableMetadata): string[] {
  if ((next.properties[METADATA_DELETE_AFTER_COMMIT] ?? 'false').trim().toLowerCase() !== 'true') return [];
  const kept = new Set(next.metadataLog.map((e) => e.metadataFile));
  return base.metadataLog.map((e) => e.metadataFile).filter((f) => !kept.has(f));
}

/** Deletes them, best effort: a file left behind is only an orphan (`warn` says which). */
export async function deleteRemovedMetadataFiles(io: FileIO, base: TableMetadata, next: TableMetadata, warn: (message: string) => void): Promise<void> {
  for (const file of metadataFilesRemovedByCommit(base, next)) {
    try {
      await io.delete(file);
    } catch (e) {
      warn(`could not delete the old metadata file ${file} (write.metadata.delete-after-commit.enabled): ${errorMessage(e)}`);
    }
  }
}
