/**
 * REST JSON of table updates and requirements (open-api/rest-catalog-open-api.yaml `TableUpdate`,
 * `TableRequirement`, `CommitTableRequest`), as Java's `MetadataUpdateParser` and
 * `UpdateRequirementParser` write and read them. The REST catalog client sends these; `floe catalog
 * serve` reads them. An update or requirement floe does not model is refused with kind 'unsupported'
 * (a REST server answers 400), never dropped.
 */
import { FloeError } from '../../util/errors.js';
import { asInt, asLong, type JsonValue } from '../../util/json.js';
import type { MetadataUpdate, TableRequirement } from './metadata-updates.js';
import {
  asArray,
  asObject,
  asString,
  partitionSpecFromJson,
  partitionSpecToJson,
  schemaFromJson,
  schemaToJson,
  sortOrderFromJson,
  sortOrderToJson,
} from '../spec/schema-json.js';
import { snapshotFromJson, snapshotRefFromJson, snapshotToJson } from '../spec/snapshot-json.js';
import type { FormatVersion } from '../spec/table-metadata.js';

type JsonObject = { [key: string]: JsonValue | undefined };

const SUBSYSTEM = 'iceberg.rest-json';

function unsupported(what: string, found: unknown): FloeError {
  return new FloeError(SUBSYSTEM, 'unsupported', `${what} ${JSON.stringify(found)} is not supported by floe`);
}

// ---------------------------------------------------------------------------------------------------
// updates

export function metadataUpdateToJson(u: MetadataUpdate): JsonObject {
  switch (u.action) {
    case 'assign-uuid':
      return { action: u.action, uuid: u.uuid };
    case 'upgrade-format-version':
      return { action: u.action, 'format-version': u.formatVersion };
    case 'add-schema':
      // Java still writes the deprecated last-column-id (AddSchema.lastColumnId).
      return { action: u.action, schema: schemaToJson(u.schema), 'last-column-id': u.lastColumnId ?? u.schema.highestFieldId() };
    case 'set-current-schema':
      return { action: u.action, 'schema-id': u.schemaId };
    case 'add-spec':
      return { action: u.action, spec: partitionSpecToJson(u.spec) };
    case 'set-default-spec':
      return { action: u.action, 'spec-id': u.specId };
    case 'add-sort-order':
      return { action: u.action, 'sort-order': sortOrderToJson(u.sortOrder) };
    case 'set-default-sort-order':
      return { action: u.action, 'sort-order-id': u.sortOrderId };
    case 'add-snapshot':
      return { action: u.action, snapshot: snapshotToJson(u.snapshot) };
    case 'set-snapshot-ref':
      return {
        action: u.action,
        'ref-name': u.refName,
        'snapshot-id': u.snapshotId,
        type: u.type,
        'min-snapshots-to-keep': u.minSnapshotsToKeep,
        'max-snapshot-age-ms': u.maxSnapshotAgeMs,
        'max-ref-age-ms': u.maxRefAgeMs,
      };
    case 'remove-snapshots':
      return { action: u.action, 'snapshot-ids': [...u.snapshotIds] };
    case 'remove-snapshot-ref':
      return { action: u.action, 'ref-name': u.refName };
    case 'set-location':
      return { action: u.action, location: u.location };
    case 'set-properties':
      return { action: u.action, updates: { ...u.updates } };
    case 'remove-properties':
      return { action: u.action, removals: [...u.removals] };
    case 'set-statistics':
      return { action: u.action, statistics: u.statistics as JsonObject };
    case 'remove-statistics':
      return { action: u.action, 'snapshot-id': u.snapshotId };
    case 'set-partition-statistics':
      return { action: u.action, 'partition-statistics': u.partitionStatistics as JsonObject };
    case 'remove-partition-statistics':
      return { action: u.action, 'snapshot-id': u.snapshotId };
    case 'remove-partition-specs':
      return { action: u.action, 'spec-ids': [...u.specIds] };
    case 'remove-schemas':
      return { action: u.action, 'schema-ids': [...u.schemaIds] };
  }
}

function stringMap(v: unknown, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(asObject(v, what))) out[k] = asString(x, `${what}.${k}`);
  return out;
}

export function metadataUpdateFromJson(json: unknown): MetadataUpdate {
  const o = asObject(json, 'table update');
  const action = asString(o.action, 'table update action').toLowerCase();
  const what = `update ${action}`;
  switch (action) {
    case 'assign-uuid':
      return { action, uuid: asString(o.uuid, `${what} uuid`) };
    case 'upgrade-format-version': {
      const v = asInt(o['format-version'], `${what} format-version`);
      if (v < 1 || v > 3) throw new FloeError(SUBSYSTEM, 'unsupported', `${what}: format-version ${v} is not supported; expected 1, 2 or 3`);
      return { action, formatVersion: v as FormatVersion };
    }
    case 'add-schema': {
      const u: MetadataUpdate = { action, schema: schemaFromJson(o.schema) };
      if (o['last-column-id'] !== undefined && o['last-column-id'] !== null) u.lastColumnId = asInt(o['last-column-id'], `${what} last-column-id`);
      return u;
    }
    case 'set-current-schema':
      return { action, schemaId: asInt(o['schema-id'], `${what} schema-id`) };
    case 'add-spec':
      return { action, spec: partitionSpecFromJson(o.spec, 0, true) };
    case 'set-default-spec':
      return { action, specId: asInt(o['spec-id'], `${what} spec-id`) };
    case 'add-sort-order':
      return { action, sortOrder: sortOrderFromJson(o['sort-order']) };
    case 'set-default-sort-order':
      return { action, sortOrderId: asInt(o['sort-order-id'], `${what} sort-order-id`) };
    case 'add-snapshot':
      return { action, snapshot: snapshotFromJson(o.snapshot) };
    case 'set-snapshot-ref': {
      const refName = asString(o['ref-name'], `${what} ref-name`);
      const ref = snapshotRefFromJson(o, refName);
      const u: MetadataUpdate = { action, refName, type: ref.type, snapshotId: ref.snapshotId };
      if (ref.minSnapshotsToKeep !== undefined) u.minSnapshotsToKeep = ref.minSnapshotsToKeep;
      if (ref.maxSnapshotAgeMs !== undefined) u.maxSnapshotAgeMs = ref.maxSnapshotAgeMs;
      if (ref.maxRefAgeMs !== undefined) u.maxRefAgeMs = ref.maxRefAgeMs;
      return u;
    }
    case 'remove-snapshots':
      return { action, snapshotIds: asArray(o['snapshot-ids'], `${what} snapshot-ids`).map((x) => asLong(x, `${what} snapshot-ids[]`)) };
    case 'remove-snapshot-ref':
      return { action, refName: asString(o['ref-name'], `${what} ref-name`) };
    case 'set-location':
      return { action, location: asString(o.location, `${what} location`) };
    case 'set-properties':
      // Java still accepts the pre-1.0 name "updated"
      return { action, updates: stringMap(o.updates ?? o.updated, `${what} updates`) };
    case 'remove-properties':
      return { action, removals: asArray(o.removals ?? o.removed, `${what} removals`).map((x) => asString(x, `${what} removals[]`)) };
    case 'set-statistics': {
      const statistics = asObject(o.statistics, `${what} statistics`);
      asLong(statistics['snapshot-id'], `${what} statistics.snapshot-id`);
      return { action, statistics };
    }
    case 'remove-statistics':
      return { action, snapshotId: asLong(o['snapshot-id'], `${what} snapshot-id`) };
    case 'set-partition-statistics': {
      const partitionStatistics = asObject(o['partition-statistics'], `${what} partition-statistics`);
      asLong(partitionStatistics['snapshot-id'], `${what} partition-statistics.snapshot-id`);
      return { action, partitionStatistics };
    }
    case 'remove-partition-statistics':
      return { action, snapshotId: asLong(o['snapshot-id'], `${what} snapshot-id`) };
    case 'remove-partition-specs':
      return { action, specIds: asArray(o['spec-ids'], `${what} spec-ids`).map((x) => asInt(x, `${what} spec-ids[]`)) };
    case 'remove-schemas':
      return { action, schemaIds: asArray(o['schema-ids'], `${what} schema-ids`).map((x) => asInt(x, `${what} schema-ids[]`)) };
    default:
      throw unsupported('table update action', o.action);
  }
}

// ---------------------------------------------------------------------------------------------------
// requirements

export function tableRequirementToJson(r: TableRequirement): JsonObject {
  switch (r.type) {
    case 'assert-create':
      return { type: r.type };
    case 'assert-table-uuid':
      return { type: r.type, uuid: r.uuid };
    case 'assert-ref-snapshot-id':
      // snapshot-id is required in the object; null means "the ref must not exist"
      return { type: r.type, ref: r.ref, 'snapshot-id': r.snapshotId };
    case 'assert-last-assigned-field-id':
      return { type: r.type, 'last-assigned-field-id': r.lastAssignedFieldId };
    case 'assert-current-schema-id':
      return { type: r.type, 'current-schema-id': r.currentSchemaId };
    case 'assert-last-assigned-partition-id':
      return { type: r.type, 'last-assigned-partition-id': r.lastAssignedPartitionId };
    case 'assert-default-spec-id':
      return { type: r.type, 'default-spec-id': r.defaultSpecId };
    case 'assert-default-sort-order-id':
      return { type: r.type, 'default-sort-order-id': r.defaultSortOrderId };
  }
}

export function tableRequirementFromJson(json: unknown): TableRequirement {
  const o = asObject(json, 'table requirement');
  const type = asString(o.type, 'table requirement type').toLowerCase();
  const what = `requirement ${type}`;
  switch (type) {
    case 'assert-create':
      return { type };
    case 'assert-table-uuid':
      return { type, uuid: asString(o.uuid, `${what} uuid`) };
    case 'assert-ref-snapshot-id': {
      const id = o['snapshot-id'];
      return { type, ref: asString(o.ref, `${what} ref`), snapshotId: id === null || id === undefined ? null : asLong(id, `${what} snapshot-id`) };
    }
    case 'assert-last-assigned-field-id':
      return { type, lastAssignedFieldId: asInt(o['last-assigned-field-id'], `${what} last-assigned-field-id`) };
    case 'assert-current-schema-id':
      return { type, currentSchemaId: asInt(o['current-schema-id'], `${what} current-schema-id`) };
    case 'assert-last-assigned-partition-id':
      return { type, lastAssignedPartitionId: asInt(o['last-assigned-partition-id'], `${what} last-assigned-partition-id`) };
    case 'assert-default-spec-id':
      return { type, defaultSpecId: asInt(o['default-spec-id'], `${what} default-spec-id`) };
    case 'assert-default-sort-order-id':
      return { type, defaultSortOrderId: asInt(o['default-sort-order-id'], `${what} default-sort-order-id`) };
    default:
      throw unsupported('table requirement type', o.type);
  }
}

// ---------------------------------------------------------------------------------------------------
// commit request

export interface CommitTableRequestBody {
  identifier?: { namespace: string[]; name: string };
  requirements: TableRequirement[];
  updates: MetadataUpdate[];
}

/** `CommitTableRequest` body: `{identifier?, requirements, updates}`. */
export function commitTableRequestToJson(req: CommitTableRequestBody): JsonObject {
  return {
    identifier: req.identifier ? { namespace: [...req.identifier.namespace], name: req.identifier.name } : undefined,
    requirements: req.requirements.map(tableRequirementToJson),
    updates: req.updates.map(metadataUpdateToJson),
  };
}

export function commitTableRequestFromJson(json: unknown): CommitTableRequestBody {
  const o = asObject(json, 'commit table request');
  const body: CommitTableRequestBody = {
    requirements: o.requirements == null ? [] : asArray(o.requirements, 'requirements').map(tableRequirementFromJson),
    updates: o.updates == null ? [] : asArray(o.updates, 'updates').map(metadataUpdateFromJson),
  };
  if (o.identifier != null) {
    const id = asObject(o.identifier, 'identifier');
    body.identifier = {
      namespace: asArray(id.namespace, 'identifier.namespace').map((x) => asString(x, 'identifier.namespace[]')),
      name: asString(id.name, 'identifier.name'),
    };
  }
  return body;
}
