/**
 * Metadata-only commits (no snapshot) with reload-and-retry on conflict (the shared loop of
 * commit-engine.ts): schema evolution through `schema-update.ts`, a new definition for a table
 * without rows, and the unpartitioned spec that global equality deletes need.
 */
import { errorMessage, FloeError } from '../../util/errors.js';
import type { MetadataUpdate } from '../metadata/metadata-updates.js';
import type { PartitionSpec } from '../spec/partition.js';
import { Schema } from '../spec/schema.js';
import { evolveSchema, type SchemaChange } from '../spec/schema-update.js';
import { sameSchema, specsCompatible } from '../spec/spec-compatibility.js';
import { MAIN_BRANCH } from '../spec/table-metadata-constants.js';
import { isPrimitive } from '../spec/types.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import type { CatalogTable } from './catalog-table.js';
import { commitWithRetry, type CommitPlan } from './commit-engine.js';
import type { RetryPolicy } from './commit-retry.js';
import { unpartitionedSpec } from './added-spec.js';

const SUBSYSTEM = 'iceberg.commit';

interface Planned extends CommitPlan {
  /** Whether reloaded metadata already shows this change (after an unknown outcome). */
  landed: (m: TableMetadata) => boolean;
}

/**
 * Commits the change `plan` derives from the current metadata (undefined = nothing to do), re-deriving
 * it from reloaded metadata after a conflict (commit-engine.ts). After an unknown outcome the reloaded
 * metadata is first checked for the change itself (`landed`).
 */
async function commitMetadataChange(table: CatalogTable, plan: (m: TableMetadata) => Planned | undefined, retry: Partial<RetryPolicy> = {}): Promise<CatalogTable> {
  let last: Planned | undefined;
  const result = await commitWithRetry(table, {
    subject: `a metadata change to ${table.identifier.name}`,
    retry,
    plan: (current) => {
      last = plan(current.metadata);
      return last ?? 'skip';
    },
    landed: (m) => last?.landed(m) ?? false,
    gaveUp: (failure, attempts, _policy, unknown) =>
      new FloeError(SUBSYSTEM, unknown ? 'commit-state-unknown' : 'commit-conflict', `gave up a metadata change to ${table.identifier.name} after ${attempts} attempt(s): ${errorMessage(failure)}`, { cause: failure, retryable: false }),
  });
  return result.table;
}

/**
 * Evolves the table's current schema (add column with v3 defaults, rename, drop, widen, make optional,
 * write-default, doc) and commits `add-schema` + `set-current-schema`. The changes are re-applied to
 * the reloaded schema after a conflict, so they must still make sense there (a rename of a column that
 * a concurrent change already renamed fails with schema-update's error). Returns the table after it.
 */
export async function evolveTableSchema(table: CatalogTable, changes: readonly SchemaChange[], retry?: Partial<RetryPolicy>, properties: Readonly<Record<string, string>> = {}): Promise<CatalogTable> {
  // `properties` go into the same commit (set-properties), so that what the caller records about
  // the schema can never disagree with the schema itself.
  const propertiesDiffer = (m: TableMetadata) => Object.entries(properties).some(([k, v]) => m.properties[k] !== v);
  return commitMetadataChange(
    table,
    (m) => {
      const evolution = evolveSchema(m, changes);
      const setProperties = propertiesDiffer(m);
      if (!evolution.changed && !setProperties) return undefined;
      const updates: MetadataUpdate[] = evolution.changed ? [...evolution.updates] : [];
      if (setProperties) updates.push({ action: 'set-properties', updates: { ...properties } });
      return {
        requirements: [{ type: 'assert-table-uuid', uuid: m.tableUuid }, ...(evolution.changed ? evolution.requirements : [])],
        updates,
        landed: (after) => {
          const schema = after.schemas.find((x) => x.schemaId === after.currentSchemaId);
          return (!evolution.changed || (schema !== undefined && sameSchema(schema, evolution.schema))) && !propertiesDiffer(after);
        },
      };
    },
    retry,
  );
}

/** A table's definition: what `replaceTableDefinition` gives a table without rows. */
export interface TableDefinition {
  /** Top-level primitive fields; their ids are reassigned (same name: the table's id, else a fresh one). */
  readonly schema: Schema;
  /** Over `schema`'s ids. */
  readonly spec: PartitionSpec;
  readonly properties: Readonly<Record<string, string>>;
}

/**
 * Gives a table that holds no rows another definition — for a table whose source changed before any
 * of its rows was committed: `schema` becomes the current schema with the ids of the table's
 * same-named fields kept and fresh ids (above last-column-id) for the others, as Java's table
 * replacement assigns them (`TableMetadata.buildReplacement` → `TypeUtil.assignFreshIds(schema,
 * baseSchema, …)`); `spec` becomes the default spec (partition field ids reused or assigned by the
 * builder); `properties` are set. Guarded by the table's head: a snapshot committed meanwhile makes
 * it a conflict, planned again on what the table then holds (the caller's `stillEmpty` decides).
 */
export async function replaceTableDefinition(table: CatalogTable, definition: TableDefinition, stillEmpty: (m: TableMetadata) => boolean, retry?: Partial<RetryPolicy>): Promise<CatalogTable> {
  return commitMetadataChange(
    table,
    (m) => {
      if (!stillEmpty(m)) throw new FloeError(SUBSYSTEM, 'commit-conflict', `${table.identifier.name}: rows were committed to the table while its definition was being replaced; start again (it now has rows to keep)`, { retryable: false });
      const base = m.schemas.find((x) => x.schemaId === m.currentSchemaId);
      if (!base) throw new FloeError(SUBSYSTEM, 'invalid-data', `${table.identifier.name}: current schema ${m.currentSchemaId} is missing from its metadata`);
      let lastColumnId = m.lastColumnId;
      const ids = new Map<number, number>();
      const fields = definition.schema.fields.map((f) => {
        if (!isPrimitive(f.type)) throw new FloeError(SUBSYSTEM, 'invalid-argument', `replacing the definition of ${table.identifier.name}: column ${f.name} is a ${f.type.kind}; only primitive columns are supported`);
        const id = base.fields.find((b) => b.name === f.name)?.id ?? ++lastColumnId;
        ids.set(f.id, id);
        return { ...f, id };
      });
      const schemaId = m.schemas.reduce((max, x) => Math.max(max, x.schemaId + 1), 0);
      const schema = new Schema(schemaId, fields, definition.schema.identifierFieldIds.map((id) => ids.get(id)!));
      const spec: PartitionSpec = { specId: -1, fields: definition.spec.fields.map((f) => ({ ...f, sourceId: ids.get(f.sourceId)!, fieldId: -1 })) };
      const defaultSpec = m.partitionSpecs.find((x) => x.specId === m.defaultSpecId);
      const sameSpec = defaultSpec !== undefined && specsCompatible(defaultSpec, spec);
      const updates: MetadataUpdate[] = [
        { action: 'add-schema', schema, lastColumnId },
        { action: 'set-current-schema', schemaId: -1 },
        ...(sameSpec ? [] : ([{ action: 'add-spec', spec }, { action: 'set-default-spec', specId: -1 }] as MetadataUpdate[])),
        { action: 'set-properties', updates: { ...definition.properties } },
      ];
      return {
        requirements: [
          { type: 'assert-table-uuid', uuid: m.tableUuid },
          { type: 'assert-ref-snapshot-id', ref: MAIN_BRANCH, snapshotId: m.refs[MAIN_BRANCH]?.snapshotId ?? null },
          { type: 'assert-current-schema-id', currentSchemaId: m.currentSchemaId },
          { type: 'assert-last-assigned-field-id', lastAssignedFieldId: m.lastColumnId },
          { type: 'assert-default-spec-id', defaultSpecId: m.defaultSpecId },
        ],
        updates,
        landed: (after) => {
          const current = after.schemas.find((x) => x.schemaId === after.currentSchemaId);
          return current !== undefined && sameSchema(current, new Schema(current.schemaId, fields, schema.identifierFieldIds));
        },
      };
    },
    retry,
  );
}

/**
 * Makes sure the table has an unpartitioned partition spec (adding one with `add-spec` if needed,
 * without changing the default spec) and returns it with the table. Equality deletes written under
 * an unpartitioned spec apply to every partition (spec "Scan Planning": global deletes) — what an
 * upsert into a partitioned table needs when a row's partition can change with an update.
 */
export async function ensureUnpartitionedSpec(table: CatalogTable, retry?: Partial<RetryPolicy>): Promise<{ table: CatalogTable; spec: PartitionSpec }> {
  const updated = await commitMetadataChange(
    table,
    (m) => {
      if (unpartitionedSpec(m)) return undefined;
      return {
        requirements: [
          { type: 'assert-table-uuid', uuid: m.tableUuid },
          { type: 'assert-last-assigned-partition-id', lastAssignedPartitionId: m.lastPartitionId },
        ],
        updates: [{ action: 'add-spec', spec: { specId: -1, fields: [] } }],
        landed: (after) => unpartitionedSpec(after) !== undefined,
      };
    },
    retry,
  );
  const spec = unpartitionedSpec(updated.metadata);
  if (!spec) throw new FloeError(SUBSYSTEM, 'internal', `added an unpartitioned spec to ${updated.identifier.name} but the committed metadata has none`);
  return { table: updated, spec };
}
