/**
 * Checks REST-style commit requirements against the table's current metadata (Java
 * `UpdateRequirement.validate`). Every catalog runs this before applying updates, so a commit based on
 * stale metadata fails with kind 'commit-conflict' (retryable: reload, re-check idempotency, retry).
 * Messages follow pyiceberg's "Requirement failed: branch main has changed: expected id 12, found 15".
 */
import { FloeError } from '../../util/errors.js';
import type { TableRequirement } from './metadata-updates.js';
import type { TableMetadata } from '../spec/table-metadata.js';

function conflict(message: string): FloeError {
  return new FloeError('iceberg.commit', 'commit-conflict', `requirement failed: ${message}; reload the table and retry`, { retryable: true });
}

/** `base` undefined = the table does not exist (yet). */
export function checkRequirements(base: TableMetadata | undefined, requirements: readonly TableRequirement[]): void {
  for (const r of requirements) {
    if (r.type === 'assert-create') {
      if (base !== undefined) throw conflict(`table already exists (uuid ${base.tableUuid}), expected it not to`);
      continue;
    }
    if (base === undefined) throw conflict(`${r.type}: expected an existing table, found none`);
    switch (r.type) {
      case 'assert-table-uuid':
        if (base.tableUuid.toLowerCase() !== r.uuid.toLowerCase()) throw conflict(`table uuid does not match: expected ${r.uuid}, found ${base.tableUuid}`);
        break;
      case 'assert-ref-snapshot-id': {
        const ref = base.refs[r.ref];
        if (ref === undefined) {
          if (r.snapshotId !== null) throw conflict(`branch or tag ${r.ref} is missing: expected id ${r.snapshotId}, found no ref`);
        } else if (r.snapshotId === null) {
          throw conflict(`${ref.type} ${r.ref} was created concurrently: expected no ref, found id ${ref.snapshotId}`);
        } else if (ref.snapshotId !== r.snapshotId) {
          throw conflict(`${ref.type} ${r.ref} has changed: expected id ${r.snapshotId}, found ${ref.snapshotId}`);
        }
        break;
      }
      case 'assert-last-assigned-field-id':
        if (base.lastColumnId !== r.lastAssignedFieldId) throw conflict(`last assigned field id changed: expected ${r.lastAssignedFieldId}, found ${base.lastColumnId}`);
        break;
      case 'assert-current-schema-id':
        if (base.currentSchemaId !== r.currentSchemaId) throw conflict(`current schema changed: expected id ${r.currentSchemaId}, found ${base.currentSchemaId}`);
        break;
      case 'assert-last-assigned-partition-id':
        if (base.lastPartitionId !== r.lastAssignedPartitionId) {
          throw conflict(`last assigned partition id changed: expected ${r.lastAssignedPartitionId}, found ${base.lastPartitionId}`);
        }
        break;
      case 'assert-default-spec-id':
        if (base.defaultSpecId !== r.defaultSpecId) throw conflict(`default partition spec changed: expected id ${r.defaultSpecId}, found ${base.defaultSpecId}`);
        break;
      case 'assert-default-sort-order-id':
        if (base.defaultSortOrderId !== r.defaultSortOrderId) {
          throw conflict(`default sort order changed: expected id ${r.defaultSortOrderId}, found ${base.defaultSortOrderId}`);
        }
        break;
    }
  }
}
