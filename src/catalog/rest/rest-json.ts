/**
 * JSON bodies of the REST catalog protocol that are not table updates (those are in
 * iceberg/metadata/metadata-updates-json.ts): CreateTableRequest, LoadTableResult / CommitTableResponse,
 * CatalogConfig, identifiers, namespace responses, ErrorModel. Wire names (kebab-case) live only here;
 * longs stay exact through util/json.ts (BigInt).
 */
import type { PartitionSpec } from '../../iceberg/spec/partition.js';
import type { Schema } from '../../iceberg/spec/schema.js';
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
} from '../../iceberg/spec/schema-json.js';
import { tableMetadataFromJson, tableMetadataToJson } from '../../iceberg/spec/table-metadata-json.js';
import type { FormatVersion, SortOrder, TableMetadata } from '../../iceberg/spec/table-metadata.js';
import { FloeError } from '../../util/errors.js';
import type { JsonValue } from '../../util/json.js';
import type { TableIdentifier } from '../../iceberg/metadata/catalog.js';

type JsonObject = { [key: string]: JsonValue | undefined };

const SUBSYSTEM = 'catalog.rest';
const FORMAT_VERSION_PROPERTY = 'format-version';

function stringMap(json: unknown, what: string): Record<string, string> {
  if (json === undefined || json === null) return {};
  const o = asObject(json, what);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o)) {
    if (typeof v !== 'string') throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}.${k}: expected a string, found ${JSON.stringify(v)}`);
    // as parseJson does: a "__proto__" key stays data (an assignment would drop it silently)
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

export function namespaceFromJson(json: unknown, what = 'namespace'): string[] {
  return asArray(json, what).map((x, i) => asString(x, `${what}[${i}]`));
}

export function identifierToJson(id: TableIdentifier): JsonObject {
  return { namespace: [...id.namespace], name: id.name };
}

export function identifierFromJson(json: unknown, what = 'identifier'): TableIdentifier {
  const o = asObject(json, what);
  return { namespace: namespaceFromJson(o.namespace, `${what}.namespace`), name: asString(o.name, `${what}.name`) };
}

// ---- CreateTableRequest ----------------------------------------------------------------------------

export interface CreateTableBody {
  name: string;
  schema: Schema;
  location?: string;
  partitionSpec?: PartitionSpec;
  writeOrder?: SortOrder;
  stageCreate?: boolean;
  /** Without `format-version`: that is carried in `formatVersion`. */
  properties: Record<string, string>;
  formatVersion?: FormatVersion;
}

export function createTableRequestToJson(body: CreateTableBody): JsonObject {
  const properties = { ...body.properties };
  if (body.formatVersion !== undefined) properties[FORMAT_VERSION_PROPERTY] = String(body.formatVersion);
  return {
    name: body.name,
    location: body.location,
    schema: schemaToJson(body.schema),
    'partition-spec': body.partitionSpec ? partitionSpecToJson(body.partitionSpec) : undefined,
    'write-order': body.writeOrder ? sortOrderToJson(body.writeOrder) : undefined,
    'stage-create': body.stageCreate ?? false,
    properties,
  };
}

export function createTableRequestFromJson(json: unknown): CreateTableBody {
  const o = asObject(json, 'create table request');
  const properties = stringMap(o.properties, 'properties');
  let formatVersion: FormatVersion | undefined;
  if (FORMAT_VERSION_PROPERTY in properties) {
    const v = Number(properties[FORMAT_VERSION_PROPERTY]);
    if (v !== 1 && v !== 2 && v !== 3) throw new FloeError(SUBSYSTEM, 'invalid-argument', `properties.format-version: expected 1, 2 or 3, found ${JSON.stringify(properties[FORMAT_VERSION_PROPERTY])}`);
    formatVersion = v;
    delete properties[FORMAT_VERSION_PROPERTY];
  }
  const body: CreateTableBody = { name: asString(o.name, 'name'), schema: schemaFromJson(o.schema), properties };
  if (o.location != null) body.location = asString(o.location, 'location');
  // Clients may omit spec and field ids (PyIceberg, Java send them): -1 lets the builder assign.
  if (o['partition-spec'] != null) body.partitionSpec = partitionSpecFromJson(o['partition-spec'], 0, true);
  if (o['write-order'] != null) body.writeOrder = sortOrderFromJson(o['write-order']);
  if (o['stage-create'] != null) {
    // "true" as a string would otherwise create the table for real where a staged create was asked for
    if (typeof o['stage-create'] !== 'boolean') throw new FloeError(SUBSYSTEM, 'invalid-argument', `stage-create: expected true or false, found ${JSON.stringify(o['stage-create']).slice(0, 40)}`);
    body.stageCreate = o['stage-create'];
  }
  if (formatVersion !== undefined) body.formatVersion = formatVersion;
  return body;
}

// ---- LoadTableResult / CommitTableResponse -------------------------------------------------------

export interface StorageCredential {
  prefix: string;
  config: Record<string, string>;
}

export interface LoadTableResultBody {
  /** Undefined for a staged create (not committed yet). */
  metadataLocation?: string;
  metadata: TableMetadata;
  config: Record<string, string>;
  storageCredentials: StorageCredential[];
}

export function loadTableResultToJson(r: LoadTableResultBody, snapshots: 'all' | 'refs' = 'all'): JsonObject {
  const metadata = tableMetadataToJson(r.metadata);
  if (snapshots === 'refs') {
    const referenced = new Set(Object.values(r.metadata.refs).map((ref) => ref.snapshotId));
    metadata.snapshots = (metadata.snapshots as JsonObject[]).filter((s) => referenced.has(BigInt(s['snapshot-id'] as bigint | number)));
  }
  return {
    'metadata-location': r.metadataLocation ?? null,
    metadata,
    config: { ...r.config },
    'storage-credentials': r.storageCredentials.length > 0 ? r.storageCredentials.map((c) => ({ prefix: c.prefix, config: { ...c.config } })) : undefined,
  };
}

export function loadTableResultFromJson(json: unknown): LoadTableResultBody {
  const o = asObject(json, 'load table result');
  const result: LoadTableResultBody = {
    metadata: tableMetadataFromJson(o.metadata),
    config: stringMap(o.config, 'config'),
    storageCredentials: o['storage-credentials'] == null
      ? []
      : asArray(o['storage-credentials'], 'storage-credentials').map((c, i) => {
          const co = asObject(c, `storage-credentials[${i}]`);
          return { prefix: asString(co.prefix, `storage-credentials[${i}].prefix`), config: stringMap(co.config, `storage-credentials[${i}].config`) };
        }),
  };
  if (o['metadata-location'] != null) result.metadataLocation = asString(o['metadata-location'], 'metadata-location');
  return result;
}

// ---- CatalogConfig -------------------------------------------------------------------------------

export interface CatalogConfigBody {
  defaults: Record<string, string>;
  overrides: Record<string, string>;
  /** Undefined when the server sends none (then the spec's default set applies). */
  endpoints?: string[];
}

export function catalogConfigFromJson(json: unknown): CatalogConfigBody {
  const o = asObject(json, 'catalog config');
  const body: CatalogConfigBody = { defaults: stringMap(o.defaults, 'defaults'), overrides: stringMap(o.overrides, 'overrides') };
  if (o.endpoints != null) body.endpoints = asArray(o.endpoints, 'endpoints').map((e, i) => asString(e, `endpoints[${i}]`));
  return body;
}

// ---- ErrorModel ----------------------------------------------------------------------------------

export interface ErrorModel {
  message: string;
  type: string;
  code: number;
}

export function errorResponseToJson(e: ErrorModel): JsonObject {
  return { error: { message: e.message, type: e.type, code: e.code } };
}

/** The ErrorModel of an error response body, when it has that shape. */
export function errorModelFromJson(json: unknown): ErrorModel | undefined {
  const error = (json as { error?: unknown } | null)?.error;
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as Record<string, unknown>;
  return {
    message: typeof e.message === 'string' ? e.message : '',
    type: typeof e.type === 'string' ? e.type : '',
    code: typeof e.code === 'number' ? e.code : 0,
  };
}

export { stringMap as stringMapFromJson };
