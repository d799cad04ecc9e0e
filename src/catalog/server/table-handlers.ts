/**
 * Table routes of `floe catalog serve`: list, create (and staged create), load (`snapshots=all|refs`),
 * exists, drop (`purgeRequested`), rename, register. Commits are in commit-handlers.ts.
 *
 * A staged create (`stage-create: true`, what Java clients — Trino's CREATE TABLE, Spark's CTAS — use
 * for create transactions) returns the metadata the table would get, without a metadata-location and
 * without creating anything; the client later commits it with `assert-create`.
 */
import { newTableMetadata } from '../../iceberg/metadata/metadata-builder.js';
import { identifierToString, type TableIdentifier } from '../../iceberg/metadata/catalog.js';
import { createTableRequestFromJson, identifierFromJson } from '../rest/rest-json.js';
import { asObject } from '../../iceberg/spec/schema-json.js';
import { isFloeError } from '../../util/errors.js';
import { isS3Uri } from '../../io/s3-location.js';
import { isFileUri, toFileUri } from '../../io/local-path.js';
import { badRequest, HttpError } from './error-response.js';
import { loadResult, namespaceNotFound, NO_CONTENT, parseOr400, tableNotFound, type HandlerContext, type Reply } from './handler-context.js';
import { paginate } from './pagination.js';

export async function listTables(ctx: HandlerContext, namespace: string[]): Promise<Reply> {
  const all = await ctx.catalog.listTables(namespace).catch(namespaceNotFound);
  const page = paginate(all, ctx.query);
  return { status: 200, body: { identifiers: page.items.map((id) => ({ namespace: id.namespace, name: id.name })), 'next-page-token': page.next } };
}

export async function createTable(ctx: HandlerContext, namespace: string[]): Promise<Reply> {
  const raw = await ctx.body();
  const request = parseOr400('create table request', () => createTableRequestFromJson(raw));
  const identifier: TableIdentifier = { namespace, name: request.name };
  if (request.formatVersion === 1) throw new HttpError(400, 'BadRequestException', 'floe creates format v2 and v3 tables only; set format-version to 2 or 3');
  const formatVersion = request.formatVersion;
  if (request.stageCreate) {
    if (!(await ctx.catalog.namespaceExists(namespace))) throw new HttpError(404, 'NoSuchNamespaceException', `namespace ${namespace.join('.')} does not exist`);
    if (await ctx.catalog.tableExists(identifier)) throw new HttpError(409, 'AlreadyExistsException', `table ${identifierToString(identifier)} already exists`);
    const metadata = newTableMetadata({
      schema: request.schema,
      spec: request.partitionSpec,
      sortOrder: request.writeOrder,
      location: request.location ?? [ctx.warehouse, ...namespace, request.name].join('/'),
      properties: request.properties,
      formatVersion,
    });
    return { status: 200, body: loadResult(ctx, undefined, metadata) };
  }
  const created = await ctx.catalog
    .createTable(identifier, {
      schema: request.schema,
      partitionSpec: request.partitionSpec,
      sortOrder: request.writeOrder,
      location: request.location,
      properties: request.properties,
      formatVersion,
    })
    .catch(namespaceNotFound);
  return { status: 200, body: loadResult(ctx, created.metadataLocation, created.metadata) };
}

export async function loadTable(ctx: HandlerContext, identifier: TableIdentifier): Promise<Reply> {
  const snapshots = ctx.query.get('snapshots') ?? 'all';
  if (snapshots !== 'all' && snapshots !== 'refs') throw new HttpError(400, 'BadRequestException', `snapshots must be all or refs, found ${JSON.stringify(snapshots)}`);
  const table = await ctx.catalog.loadTable(identifier).catch((e: unknown) => tableNotFound(ctx, identifier, e));
  return { status: 200, body: loadResult(ctx, table.metadataLocation, table.metadata, snapshots) };
}

export async function tableExists(ctx: HandlerContext, identifier: TableIdentifier): Promise<Reply> {
  if (!(await ctx.catalog.tableExists(identifier))) throw new HttpError(404, 'NoSuchTableException', `table ${identifierToString(identifier)} does not exist`);
  return NO_CONTENT;
}

export async function dropTable(ctx: HandlerContext, identifier: TableIdentifier): Promise<Reply> {
  const purge = (ctx.query.get('purgeRequested') ?? 'false').toLowerCase() === 'true';
  await ctx.catalog.dropTable(identifier, purge).catch((e: unknown) => tableNotFound(ctx, identifier, e));
  return NO_CONTENT;
}

export async function renameTable(ctx: HandlerContext): Promise<Reply> {
  const raw = await ctx.body();
  const { source, destination } = parseOr400('rename table request', () => {
    const o = asObject(raw, 'rename table request');
    return { source: identifierFromJson(o.source, 'source'), destination: identifierFromJson(o.destination, 'destination') };
  });
  try {
    await ctx.catalog.renameTable(source, destination);
  } catch (e) {
    if (isFloeError(e, 'not-found')) {
      const sourceExists = await ctx.catalog.tableExists(source).catch(() => false);
      throw new HttpError(404, sourceExists ? 'NoSuchNamespaceException' : 'NoSuchTableException', e.message);
    }
    throw e;
  }
  return NO_CONTENT;
}

/**
 * `POST /v1/{prefix}/namespaces/{ns}/register` (`RegisterTableRequest`: name, metadata-location):
 * puts an existing table into the catalog, e.g. a Hadoop-layout table directory, so that clients
 * without a filesystem catalog (Trino) can read it. Only metadata inside the served warehouse is
 * accepted: the server must not become a way to read any file the process can reach.
 */
export async function registerTable(ctx: HandlerContext, namespace: string[]): Promise<Reply> {
  const raw = await ctx.body();
  const request = parseOr400('register table request', () => {
    const o = asObject(raw, 'register table request');
    if (typeof o.name !== 'string' || o.name === '') throw new Error('name must be a non-empty string');
    const location = o['metadata-location'];
    if (typeof location !== 'string' || location === '') throw new Error('metadata-location must be a non-empty string');
    if (o.overwrite !== undefined && o.overwrite !== false) throw new Error('overwrite is not supported: drop the table first');
    return { name: o.name, metadataLocation: location };
  });
  const register = ctx.catalog.registerTable?.bind(ctx.catalog);
  if (register === undefined) {
    throw new HttpError(406, 'UnsupportedOperationException', 'this catalog cannot register tables: the filesystem catalog finds a table by its directory, not through a pointer; serve a sql catalog to register tables, or place the table at <warehouse>/<namespace>/<name>');
  }
  const location = metadataLocationInside(ctx.warehouse, request.metadataLocation);
  const identifier: TableIdentifier = { namespace, name: request.name };
  const registered = await register(identifier, location).catch((e: unknown) => {
    // A missing or unparsable metadata file is the request's fault, not the server's.
    if (isFloeError(e, 'invalid-data')) throw badRequest(e.message);
    return namespaceNotFound(e);
  });
  return { status: 200, body: loadResult(ctx, registered.metadataLocation, registered.metadata) };
}

/** `location` as a URI when it lies under `warehouse` (no `..` escapes); 400 otherwise. */
function metadataLocationInside(warehouse: string, location: string): string {
  if (!/\.metadata\.json$/.test(location)) throw badRequest(`metadata-location must name a table metadata file (*.metadata.json), found ${location}`);
  if (!isS3Uri(location) && !isFileUri(location) && !location.startsWith('/')) {
    throw badRequest(`metadata-location must be absolute (a path, a file: URI or an s3:// URI), found ${location}`);
  }
  let uri: string;
  try {
    uri = isS3Uri(location) ? location : toFileUri(location);
  } catch (e) {
    throw badRequest(`metadata-location ${location} is neither a local path, a file: URI nor an s3:// URI: ${e instanceof Error ? e.message : String(e)}`);
  }
  const root = warehouse.replace(/\/+$/, '') + '/';
  const segments = uri.slice(uri.indexOf('//') + 2).split('/');
  if (!uri.startsWith(root) || segments.includes('..') || segments.includes('.')) {
    throw badRequest(`metadata-location ${location} is outside this catalog's warehouse ${warehouse}: only tables under the warehouse can be registered`);
  }
  return uri;
}
