/**
 * What a route handler of `floe catalog serve` gets (the catalog it serves, the parsed request) and
 * returns (a status and a JSON body), plus helpers shared by the handler modules.
 */
import { currentSchema, defaultSpec } from '../../iceberg/spec/table-metadata-json.js';
import type { TableMetadata } from '../../iceberg/spec/table-metadata.js';
import { isFloeError } from '../../util/errors.js';
import type { Catalog, TableIdentifier } from '../../iceberg/metadata/catalog.js';
import { loadTableResultToJson } from '../rest/rest-json.js';
import { badRequest, HttpError, type NotFoundType } from './error-response.js';
import type { ServedTableAccess } from './table-config.js';

export interface HandlerContext {
  catalog: Catalog;
  /** The served catalog's warehouse URI (default table locations of staged creates). */
  warehouse: string;
  access(location: string): ServedTableAccess;
  query: URLSearchParams;
  /** The request body parsed as JSON (exact longs); 400 when absent or malformed. */
  body(): Promise<unknown>;
}

export interface Reply {
  status: number;
  body?: unknown;
}

export const NO_CONTENT: Reply = { status: 204 };

/** Runs `fn`, turning a body that fails to parse into 400 (unknown updates included, as the spec requires). */
export function parseOr400<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof HttpError) throw e;
    throw badRequest(`invalid ${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Re-throws a not-found from a table route with the right 404 type (table vs its namespace). */
export async function tableNotFound(ctx: HandlerContext, identifier: TableIdentifier, e: unknown): Promise<never> {
  if (isFloeError(e, 'not-found')) {
    const nsExists = await ctx.catalog.namespaceExists(identifier.namespace).catch(() => true);
    const type: NotFoundType = nsExists ? 'NoSuchTableException' : 'NoSuchNamespaceException';
    throw new HttpError(404, type, e.message);
  }
  throw e;
}

export function namespaceNotFound(e: unknown): never {
  if (isFloeError(e, 'not-found')) throw new HttpError(404, 'NoSuchNamespaceException', e.message);
  throw e;
}

export function loadResult(ctx: HandlerContext, metadataLocation: string | undefined, metadata: TableMetadata, snapshots: 'all' | 'refs' = 'all'): unknown {
  const access = ctx.access(metadata.location);
  return loadTableResultToJson({ metadataLocation, metadata, config: access.config, storageCredentials: access.storageCredentials }, snapshots);
}

/** The initial state a table created from `metadata` gets from Catalog.createTable. */
export function creationRequestOf(metadata: TableMetadata) {
  return {
    schema: currentSchema(metadata),
    partitionSpec: defaultSpec(metadata),
    sortOrder: metadata.sortOrders.find((o) => o.orderId === metadata.defaultSortOrderId),
    location: metadata.location,
    properties: { ...metadata.properties },
    formatVersion: metadata.formatVersion,
  };
}
