/**
 * `floe catalog serve`: the Iceberg REST catalog protocol (open-api/rest-catalog-open-api.yaml) over
 * any of floe's catalogs — the filesystem catalog (a local directory or an S3 warehouse) or the SQL
 * catalog — with Node's http module, so that Trino (`iceberg.catalog.type=rest`), Spark, DuckDB and
 * PyIceberg can attach to a floe warehouse with no other service.
 *
 * Served: `GET /v1/config` (with the `endpoints` list, the warehouse's S3 settings in `defaults`
 * (table-config.ts), and `overrides.prefix` when a prefix is configured), the token endpoint (when client credentials are configured), namespaces (list with
 * pagination, create, load, HEAD, drop, properties), tables (list, create and staged create, load,
 * HEAD, commit, drop with purgeRequested, rename, register — over a catalog that stores metadata
 * pointers, i.e. the SQL catalog, and only for metadata inside the warehouse), and multi-table
 * `transactions/commit` (commit-handlers.ts says when that is atomic). Not served: views, scan planning,
 * credentials and signing endpoints (406); metrics reports are accepted and dropped (204).
 * Errors use the spec's ErrorModel (error-response.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StorageConfig } from '../../io/file-io-factory.js';
import { errorMessage } from '../../util/errors.js';
import { parseJson, stringifyJson } from '../../util/json.js';
import type { Catalog } from '../../iceberg/metadata/catalog.js';
import { ENDPOINTS } from '../rest/rest-paths.js';
import { errorResponseToJson } from '../rest/rest-json.js';
import { commitTable, commitTransaction } from './commit-handlers.js';
import { badRequest, errorModelFor, HttpError } from './error-response.js';
import type { HandlerContext, Reply } from './handler-context.js';
import { createNamespace, dropNamespace, listNamespaces, loadNamespace, namespaceExists, updateNamespaceProperties } from './namespace-handlers.js';
import { matchRoute, ROUTE_METHODS, type Route } from './routes.js';
import { ServerAuth, type ClientSecret } from './server-auth.js';
import { ACCESS_DELEGATION_HEADER, asksForVendedCredentials, storageDefaults, tableAccessFor, type TableConfigOptions } from './table-config.js';
import { createTable, dropTable, listTables, loadTable, registerTable, renameTable, tableExists } from './table-handlers.js';

interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  durationMs: number;
}

export interface RestCatalogServerOptions {
  /** The catalog to serve. The server does not close it. */
  catalog: Catalog;
  /** The served catalog's warehouse URI: default locations of staged creates (`<warehouse>/<ns…>/<table>`). */
  warehouse: string;
  /** A routing prefix (`/v1/{prefix}/…`), advertised in `overrides.prefix`. Default none. */
  prefix?: string;
  /** A static bearer token every request must carry. */
  token?: string;
  /** OAuth2 clients allowed to fetch tokens at `/v1/oauth/tokens`. */
  clients?: ClientSecret[];
  tokenLifetimeSeconds?: number;
  /** floe's storage settings; their S3 part is what LoadTableResult.config tells clients. */
  storage?: StorageConfig;
  /** The S3 endpoint clients should use, when it differs from floe's (e.g. outside Docker). */
  advertisedS3Endpoint?: string;
  /** Put floe's S3 credentials into the LoadTableResults of requests that ask for them. Default false. */
  vendCredentials?: boolean;
  /** Largest accepted request body. Default 64 MiB. */
  maxBodyBytes?: number;
  now?: () => number;
  /** Called once per request (method, path without query, status, duration); never with bodies. */
  log?: (entry: RequestLogEntry) => void;
}

/** Endpoints this server advertises in GET /v1/config. */
const SERVED_ENDPOINTS: readonly string[] = [
  ENDPOINTS.listNamespaces,
  ENDPOINTS.createNamespace,
  ENDPOINTS.loadNamespace,
  ENDPOINTS.namespaceExists,
  ENDPOINTS.dropNamespace,
  ENDPOINTS.updateNamespace,
  ENDPOINTS.listTables,
  ENDPOINTS.createTable,
  ENDPOINTS.loadTable,
  ENDPOINTS.tableExists,
  ENDPOINTS.updateTable,
  ENDPOINTS.dropTable,
  ENDPOINTS.renameTable,
  ENDPOINTS.commitTransaction,
];

export class RestCatalogServer {
  readonly auth: ServerAuth;
  private readonly options: RestCatalogServerOptions;
  private readonly server: http.Server;
  private address: AddressInfo | undefined;

  constructor(options: RestCatalogServerOptions) {
    this.options = options;
    this.auth = new ServerAuth({ token: options.token, clients: options.clients, tokenLifetimeSeconds: options.tokenLifetimeSeconds, now: options.now });
    this.server = http.createServer((req, res) => void this.handle(req, res));
  }

  /** Starts listening; port 0 picks a free port. Resolves with the base URL (`http://host:port`). */
  async listen(port = 8181, host = '127.0.0.1'): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.address = this.server.address() as AddressInfo;
    return this.url;
  }

  get url(): string {
    if (this.address === undefined) throw new Error('the REST catalog server is not listening');
    const host = this.address.family === 'IPv6' ? `[${this.address.address}]` : this.address.address;
    return `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${this.address.port}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** The request handler (also usable with another http server). */
  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = Date.now();
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', 'http://floe.invalid');
    let reply: Reply;
    let raw: { status: number; contentType: string; text: string } | undefined;
    try {
      const route = matchRoute(url.pathname, this.options.prefix);
      if (!ROUTE_METHODS[route.kind].includes(method)) throw new HttpError(405, 'MethodNotAllowedException', `${method} is not supported on ${url.pathname}`);
      if (route.kind === 'oauth-tokens') {
        const form = new URLSearchParams((await this.readBody(req)).toString('utf8'));
        const token = this.auth.tokenRequest(form, req.headers.authorization);
        raw = { status: token.status, contentType: 'application/json', text: JSON.stringify(token.body) };
        reply = { status: token.status };
      } else {
        if (!this.auth.allows(req.headers.authorization)) {
          throw new HttpError(401, 'NotAuthorizedException', 'missing or invalid bearer token; send Authorization: Bearer <token>');
        }
        reply = await this.dispatch(route, method, this.context(req, url));
      }
    } catch (e) {
      const model = errorModelFor(e);
      reply = { status: model.code, body: errorResponseToJson(model) };
    }
    if (raw !== undefined) {
      res.writeHead(raw.status, { 'Content-Type': raw.contentType, 'Cache-Control': 'no-store' });
      res.end(raw.text);
    } else if (reply.body === undefined || method === 'HEAD') {
      res.writeHead(reply.status);
      res.end();
    } else {
      let text: string;
      try {
        text = stringifyJson(reply.body);
      } catch (e) {
        reply = { status: 500, body: errorResponseToJson({ code: 500, type: 'InternalServerError', message: `cannot serialize the response: ${errorMessage(e)}` }) };
        text = stringifyJson(reply.body);
      }
      res.writeHead(reply.status, { 'Content-Type': 'application/json' });
      res.end(text);
    }
    this.options.log?.({ method, path: url.pathname, status: reply.status, durationMs: Date.now() - started });
  }

  private context(req: http.IncomingMessage, url: URL): HandlerContext {
    let body: Promise<unknown> | undefined;
    return {
      catalog: this.options.catalog,
      warehouse: this.options.warehouse.replace(/\/+$/, ''),
      access: (location) => tableAccessFor(location, this.storageOptions(), asksForVendedCredentials(req.headers[ACCESS_DELEGATION_HEADER])),
      query: url.searchParams,
      body: () =>
        (body ??= this.readBody(req).then((buf) => {
          const text = buf.toString('utf8');
          if (text.trim() === '') throw badRequest('the request needs a JSON body');
          try {
            return parseJson(text);
          } catch (e) {
            throw badRequest(`the request body is not JSON: ${errorMessage(e)}`);
          }
        })),
    };
  }

  private storageOptions(): TableConfigOptions {
    return { s3: this.options.storage?.s3, advertisedS3Endpoint: this.options.advertisedS3Endpoint, vendCredentials: this.options.vendCredentials };
  }

  private async dispatch(route: Route, method: string, ctx: HandlerContext): Promise<Reply> {
    switch (route.kind) {
      case 'config':
        return {
          status: 200,
          body: {
            // a client's own settings win over these (spec: defaults apply before client configuration)
            defaults: storageDefaults(this.options.warehouse, this.storageOptions()),
            overrides: this.options.prefix ? { prefix: this.options.prefix } : {},
            endpoints: this.options.catalog.registerTable !== undefined ? [...SERVED_ENDPOINTS, ENDPOINTS.registerTable] : [...SERVED_ENDPOINTS],
          },
        };
      case 'namespaces':
        return method === 'GET' ? listNamespaces(ctx) : createNamespace(ctx);
      case 'namespace':
        if (method === 'GET') return loadNamespace(ctx, route.namespace);
        if (method === 'HEAD') return namespaceExists(ctx, route.namespace);
        return dropNamespace(ctx, route.namespace);
      case 'namespace-properties':
        return updateNamespaceProperties(ctx, route.namespace);
      case 'tables':
        return method === 'GET' ? listTables(ctx, route.namespace) : createTable(ctx, route.namespace);
      case 'table':
        if (method === 'GET') return loadTable(ctx, route.identifier);
        if (method === 'HEAD') return tableExists(ctx, route.identifier);
        if (method === 'POST') return commitTable(ctx, route.identifier);
        return dropTable(ctx, route.identifier);
      case 'table-metrics':
        await ctx.body().catch(() => undefined); // accepted and dropped
        return { status: 204 };
      case 'rename':
        return renameTable(ctx);
      case 'register':
        return registerTable(ctx, route.namespace);
      case 'transactions-commit':
        return commitTransaction(ctx);
      case 'unsupported':
        throw new HttpError(406, 'UnsupportedOperationException', `floe catalog serve does not support ${route.what}`);
      case 'oauth-tokens':
        throw new HttpError(500, 'InternalServerError', 'unreachable');
    }
  }

  private readBody(req: http.IncomingMessage): Promise<Buffer> {
    const limit = this.options.maxBodyBytes ?? 64 * 1024 * 1024;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limit) {
          reject(new HttpError(413, 'BadRequestException', `request body larger than ${limit} bytes`));
          req.destroy();
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => resolve(Buffer.concat(chunks)));
      req.on('error', reject);
    });
  }
}
