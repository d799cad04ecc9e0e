/**
 * Applies REST-style metadata updates to table metadata, with Java `TableMetadata.Builder` semantics, the
 * same way for every catalog (filesystem, SQL, `floe catalog serve`). Pure: returns new metadata, never
 * touches storage. Notable rules, each from the Java builder:
 *
 * - add-snapshot: unique id; sequence number > last-sequence-number (else a retryable conflict); in v3,
 *   first-row-id set and >= next-row-id (retryable), and next-row-id += added-rows;
 * - set-snapshot-ref on `main` moves current-snapshot-id and appends to the snapshot-log (the added
 *   snapshot's timestamp, or now for a rollback); intermediate snapshots of one change set are dropped
 *   from the log, and removing snapshots cuts the log before the last removed entry;
 * - the base's metadata file joins the metadata-log, capped by `write.metadata.previous-versions-max`
 *   (default 100);
 * - add-schema / add-spec / add-sort-order reuse the id of an equal existing one; -1 in
 *   set-current-schema / set-default-spec / set-default-sort-order means "the one added last".
 *
 * Errors: kind 'commit-conflict' (retryable) where Java throws RetryableValidationException, else
 * 'invalid-argument'.
 */
import type { MetadataUpdate } from './metadata-updates.js';
import type { PartitionField, PartitionSpec } from '../spec/partition.js';
import { Schema } from '../spec/schema.js';
import { validateSchemaForFormatVersion } from '../spec/schema-json.js';
import {
  checkSortOrderCompatibility,
  checkSpecCompatibility,
  sameSchema,
  sameSortOrder,
  specsCompatible,
} from '../spec/spec-compatibility.js';
import {
  addSnapshot,
  appendMetadataLog,
  rebuildSnapshotLog,
  removePartitionStatistics,
  removeSnapshots,
  removeStatistics,
  setRef,
  statsSnapshotId,
} from './metadata-builder-snapshots.js';
import { invalid, type Work } from './metadata-builder-work.js';
import { MAIN_BRANCH, RESERVED_PROPERTIES } from '../spec/table-metadata-constants.js';
import { stripTrailingSlash } from '../spec/table-metadata-json.js';
import { validateTableMetadata } from '../spec/table-metadata-validate.js';
import type { SnapshotRef, SortOrder, TableMetadata } from '../spec/table-metadata.js';
import { newUuid } from '../spec/snapshot-ids.js';

export { checkRequirements } from './metadata-requirements.js';
export { newTableMetadata,  } from './new-table-metadata.js';
export { ancestorsOf, currentSnapshot, newSnapshotId,  } from '../spec/snapshot-ids.js';

const SUPPORTED_FORMAT_VERSION = 3;

export interface ApplyOptions {
  /** Location of the metadata file `base` was read from; it is appended to the metadata-log. */
  metadataLocationOfBase?: string;
  /** Clock for last-updated-ms (and rollback snapshot-log entries); defaults to Date.now(). */
  nowMs?: bigint;
}

/** Metadata for a table that does not exist yet (REST create transactions: assert-create + updates). */
function emptyMetadata(nowMs: bigint): TableMetadata {
  return {
    formatVersion: 2,
    tableUuid: '',
    location: '',
    lastSequenceNumber: 0n,
    lastUpdatedMs: nowMs,
    lastColumnId: 0,
    schemas: [],
    currentSchemaId: -1,
    partitionSpecs: [],
    defaultSpecId: -1,
    lastPartitionId: 999,
    properties: {},
    snapshots: [],
    snapshotLog: [],
    metadataLog: [],
    sortOrders: [],
    defaultSortOrderId: -1,
    refs: {},
    statistics: [],
    partitionStatistics: [],
  };
}

/**
 * Applies `updates` to `base` (undefined: a table being created by these updates) and returns the new
 * metadata. With no effective change, returns `base` itself.
 */
export function applyUpdates(base: TableMetadata | undefined, updates: readonly MetadataUpdate[], options: ApplyOptions = {}): TableMetadata {
  const nowMs = options.nowMs ?? BigInt(Date.now());
  const start = base ?? emptyMetadata(nowMs);
  const w: Work = {
    m: {
      ...start,
      schemas: [...start.schemas],
      partitionSpecs: [...start.partitionSpecs],
      sortOrders: [...start.sortOrders],
      properties: { ...start.properties },
      snapshots: [...start.snapshots],
      snapshotLog: [...start.snapshotLog],
      metadataLog: [...start.metadataLog],
      refs: { ...start.refs },
      statistics: [...(start.statistics ?? [])],
      partitionStatistics: [...(start.partitionStatistics ?? [])],
    },
    changed: base === undefined,
    addedSnapshotIds: new Set(),
    mainSetTo: [],
    removedSnapshots: false,
    nowMs,
  };
  for (const u of updates) applyOne(w, u);
  if (!w.changed && base !== undefined) return base;

  const m = w.m;
  if (!m.tableUuid) m.tableUuid = newUuid();
  if (m.formatVersion >= 3 && m.nextRowId === undefined) m.nextRowId = 0n;
  m.lastUpdatedMs = nowMs;
  m.snapshotLog = rebuildSnapshotLog(w);
  if (base !== undefined && options.metadataLocationOfBase !== undefined) {
    m.metadataLog = appendMetadataLog(m.metadataLog, options.metadataLocationOfBase, base.lastUpdatedMs, m.properties);
  }
  if (!m.location) throw invalid('table location is not set; add a set-location update');
  const schema = m.schemas.find((s) => s.schemaId === m.currentSchemaId);
  if (!schema) throw invalid(`current schema ${m.currentSchemaId} does not exist; add a schema and set-current-schema`);
  const spec = m.partitionSpecs.find((s) => s.specId === m.defaultSpecId);
  if (!spec) throw invalid(`default partition spec ${m.defaultSpecId} does not exist; add a spec and set-default-spec`);
  checkSpecCompatibility(spec, schema);
  const order = m.sortOrders.find((o) => o.orderId === m.defaultSortOrderId);
  if (!order) throw invalid(`default sort order ${m.defaultSortOrderId} does not exist; add a sort order and set-default-sort-order`);
  checkSortOrderCompatibility(order, schema);
  validateTableMetadata(m, { forWrite: true });
  return m;
}

function applyOne(w: Work, u: MetadataUpdate): void {
  const m = w.m;
  switch (u.action) {
    case 'assign-uuid':
      if (m.tableUuid && m.tableUuid.toLowerCase() !== u.uuid.toLowerCase()) {
        throw invalid(`cannot reassign table uuid: table has ${m.tableUuid}, update asks for ${u.uuid}`);
      }
      if (m.tableUuid !== u.uuid) {
        m.tableUuid = u.uuid;
        w.changed = true;
      }
      return;
    case 'upgrade-format-version':
      if (u.formatVersion > SUPPORTED_FORMAT_VERSION) throw invalid(`cannot upgrade table to unsupported format version v${u.formatVersion} (supported: v${SUPPORTED_FORMAT_VERSION})`);
      if (u.formatVersion < m.formatVersion) throw invalid(`cannot downgrade a v${m.formatVersion} table to v${u.formatVersion}`);
      if (u.formatVersion === m.formatVersion) return;
      m.formatVersion = u.formatVersion;
      // Spec App. E: when a table is upgraded to v3, next-row-id starts at 0
      if (m.formatVersion >= 3 && m.nextRowId === undefined) m.nextRowId = 0n;
      w.changed = true;
      return;
    case 'add-schema':
      return addSchema(w, u.schema, u.lastColumnId);
    case 'set-current-schema': {
      const id = u.schemaId === -1 ? w.lastAddedSchemaId : u.schemaId;
      if (id === undefined) throw invalid('cannot set last added schema: no schema has been added');
      if (!m.schemas.some((s) => s.schemaId === id)) throw invalid(`cannot set current schema to unknown schema ${id}`);
      if (m.currentSchemaId !== id) {
        m.currentSchemaId = id;
        w.changed = true;
      }
      return;
    }
    case 'add-spec':
      return addSpec(w, u.spec);
    case 'set-default-spec': {
      const id = u.specId === -1 ? w.lastAddedSpecId : u.specId;
      if (id === undefined) throw invalid('cannot set last added spec: no spec has been added');
      if (!m.partitionSpecs.some((s) => s.specId === id)) throw invalid(`cannot set default partition spec to unknown spec ${id}`);
      if (m.defaultSpecId !== id) {
        m.defaultSpecId = id;
        w.changed = true;
      }
      return;
    }
    case 'add-sort-order':
      return addSortOrder(w, u.sortOrder);
    case 'set-default-sort-order': {
      const id = u.sortOrderId === -1 ? w.lastAddedOrderId : u.sortOrderId;
      if (id === undefined) throw invalid('cannot set last added sort order: no sort order has been added');
      if (!m.sortOrders.some((o) => o.orderId === id)) throw invalid(`cannot set default sort order to unknown sort order ${id}`);
      if (m.defaultSortOrderId !== id) {
        m.defaultSortOrderId = id;
        w.changed = true;
      }
      return;
    }
    case 'add-snapshot':
      return addSnapshot(w, u.snapshot);
    case 'set-snapshot-ref': {
      const ref: SnapshotRef = { snapshotId: u.snapshotId, type: u.type };
      if (u.minSnapshotsToKeep !== undefined) ref.minSnapshotsToKeep = u.minSnapshotsToKeep;
      if (u.maxSnapshotAgeMs !== undefined) ref.maxSnapshotAgeMs = u.maxSnapshotAgeMs;
      if (u.maxRefAgeMs !== undefined) ref.maxRefAgeMs = u.maxRefAgeMs;
      return setRef(w, u.refName, ref);
    }
    case 'remove-snapshots':
      return removeSnapshots(w, new Set(u.snapshotIds));
    case 'remove-snapshot-ref':
      if (u.refName === MAIN_BRANCH) m.currentSnapshotId = undefined;
      if (m.refs[u.refName] !== undefined) {
        delete m.refs[u.refName];
        w.changed = true;
      }
      return;
    case 'set-location': {
      const location = stripTrailingSlash(u.location);
      if (!location) throw invalid('set-location: expected a non-empty location');
      if (m.location !== location) {
        m.location = location;
        w.changed = true;
      }
      return;
    }
    case 'set-properties': {
      const reserved = Object.keys(u.updates).filter((k) => RESERVED_PROPERTIES.has(k));
      if (reserved.length > 0) {
        throw invalid(`set-properties: ${reserved.join(', ')} ${reserved.length > 1 ? 'are' : 'is'} reserved and cannot be stored as properties; use upgrade-format-version / assign-uuid instead`);
      }
      if (Object.keys(u.updates).length === 0) return;
      Object.assign(m.properties, u.updates);
      w.changed = true;
      return;
    }
    case 'remove-properties':
      if (u.removals.length === 0) return;
      for (const k of u.removals) delete m.properties[k];
      w.changed = true;
      return;
    case 'set-statistics': {
      const id = BigInt(u.statistics['snapshot-id'] as bigint | number);
      m.statistics = [...(m.statistics ?? []).filter((s) => statsSnapshotId(s) !== id), u.statistics];
      w.changed = true;
      return;
    }
    case 'remove-statistics':
      removeStatistics(w, u.snapshotId);
      return;
    case 'set-partition-statistics': {
      const id = BigInt(u.partitionStatistics['snapshot-id'] as bigint | number);
      m.partitionStatistics = [...(m.partitionStatistics ?? []).filter((s) => statsSnapshotId(s) !== id), u.partitionStatistics];
      w.changed = true;
      return;
    }
    case 'remove-partition-statistics':
      removePartitionStatistics(w, u.snapshotId);
      return;
    case 'remove-partition-specs': {
      if (u.specIds.includes(m.defaultSpecId)) throw invalid(`cannot remove the default partition spec ${m.defaultSpecId}`);
      const before = m.partitionSpecs.length;
      m.partitionSpecs = m.partitionSpecs.filter((s) => !u.specIds.includes(s.specId));
      if (m.partitionSpecs.length !== before) w.changed = true;
      return;
    }
    case 'remove-schemas': {
      if (u.schemaIds.includes(m.currentSchemaId)) throw invalid(`cannot remove the current schema ${m.currentSchemaId}`);
      const before = m.schemas.length;
      m.schemas = m.schemas.filter((s) => !u.schemaIds.includes(s.schemaId));
      if (m.schemas.length !== before) w.changed = true;
      return;
    }
  }
}

function addSchema(w: Work, schema: Schema, requestedLastColumnId: number | undefined): void {
  const m = w.m;
  const newLastColumnId = requestedLastColumnId ?? Math.max(m.lastColumnId, schema.highestFieldId());
  if (newLastColumnId < m.lastColumnId) throw invalid(`invalid last column id ${newLastColumnId}: below the table's last column id ${m.lastColumnId}`);
  if (newLastColumnId < schema.highestFieldId()) {
    throw invalid(`invalid last column id ${newLastColumnId}: below the schema's highest field id ${schema.highestFieldId()}`);
  }
  validateSchemaForFormatVersion(schema, m.formatVersion);
  const existing = m.schemas.find((s) => sameSchema(s, schema));
  if (existing && newLastColumnId === m.lastColumnId) {
    w.lastAddedSchemaId = existing.schemaId;
    return;
  }
  m.lastColumnId = newLastColumnId;
  const id = existing ? existing.schemaId : m.schemas.reduce((max, s) => Math.max(max, s.schemaId + 1), 0);
  if (!existing) m.schemas.push(schema.schemaId === id ? schema : new Schema(id, schema.fields, schema.identifierFieldIds));
  w.lastAddedSchemaId = id;
  w.changed = true;
}

function addSpec(w: Work, spec: PartitionSpec): void {
  const m = w.m;
  const existing = m.partitionSpecs.find((s) => specsCompatible(s, spec));
  if (existing) {
    w.lastAddedSpecId = existing.specId;
    return;
  }
  const schema = m.schemas.find((s) => s.schemaId === m.currentSchemaId);
  if (!schema) throw invalid('cannot add a partition spec before the table has a current schema');
  const id = m.partitionSpecs.reduce((max, s) => Math.max(max, s.specId + 1), 0);
  // Spec "Partition Evolution": partition field ids are reused for equivalent fields and new ones come
  // after last-partition-id; -1 (REST clients may omit ids) asks for exactly that.
  let next = m.lastPartitionId;
  const fields: PartitionField[] = spec.fields.map((f) => {
    if (f.fieldId >= 0) return f;
    const same = m.partitionSpecs.flatMap((s) => s.fields).find((g) => g.sourceId === f.sourceId && g.transform.kind === f.transform.kind && JSON.stringify(g.transform) === JSON.stringify(f.transform));
    return { ...f, fieldId: same ? same.fieldId : ++next };
  });
  const fresh: PartitionSpec = { specId: id, fields };
  checkSpecCompatibility(fresh, schema);
  if (m.formatVersion === 1 && !fields.every((f, i) => f.fieldId === 1000 + i)) {
    throw invalid(`partition spec does not use the sequential field ids (1000, 1001, …) that format v1 requires`);
  }
  m.lastPartitionId = Math.max(m.lastPartitionId, ...fields.map((f) => f.fieldId));
  m.partitionSpecs.push(fresh);
  w.lastAddedSpecId = id;
  w.changed = true;
}

function addSortOrder(w: Work, order: SortOrder): void {
  const m = w.m;
  if (order.fields.length === 0) {
    // the unsorted order is always id 0
    if (!m.sortOrders.some((o) => o.orderId === 0)) {
      m.sortOrders.push({ orderId: 0, fields: [] });
      w.changed = true;
    }
    w.lastAddedOrderId = 0;
    return;
  }
  const existing = m.sortOrders.find((o) => sameSortOrder(o, order));
  if (existing) {
    w.lastAddedOrderId = existing.orderId;
    return;
  }
  const schema = m.schemas.find((s) => s.schemaId === m.currentSchemaId);
  if (!schema) throw invalid('cannot add a sort order before the table has a current schema');
  const id = m.sortOrders.reduce((max, o) => Math.max(max, o.orderId + 1), 1);
  const fresh: SortOrder = { orderId: id, fields: order.fields };
  checkSortOrderCompatibility(fresh, schema);
  m.sortOrders.push(fresh);
  w.lastAddedOrderId = id;
  w.changed = true;
}
