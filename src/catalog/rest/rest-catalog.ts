/**
 * A client of the Iceberg REST catalog protocol (open-api/rest-catalog-open-api.yaml): Polaris,
 * Nessie, Lakekeeper, Gravitino, Unity, S3 Tables, `floe catalog serve`, …
 *
 * - Start-up: `GET /v1/config?warehouse=…`; catalog properties = server defaults, then floe's own,
 *   then server overrides. `prefix` routes every later call (`/v1/{prefix}/…`),
 *   `namespace-separator` encodes multi-level namespaces (default %1F), `endpoints` says what the
 *   server supports (the spec's default set when absent).
 * - Auth: a bearer token, or OAuth2 client credentials with refresh (oauth2.ts).
 * - Commits send the caller's requirements and updates as they are (`POST …/tables/{t}`); the server
 *   checks and applies them. Several tables at once go to `POST /v1/{prefix}/transactions/commit`
 *   when the server advertises it. 409 → 'commit-conflict' (retryable: reload and retry); 5xx or a
 *   lost response → 'commit-state-unknown' (http-client.ts).
 * - Servers may reassign field and partition ids when creating a table (Java servers do), so the
 *   metadata this client returns is always the server's, never the request's.
 * - Files are read and written with a FileIO configured from floe's storage settings plus what the
 *   server returns for the table (table-io.ts).
 */
import type { StorageConfig } from '../../io/file-io-factory.js';
import type { MetadataUpdate, TableRequirement } from '../../iceberg/metadata/metadata-updates.js';
import { commitTableRequestToJson } from '../../iceberg/metadata/metadata-updates-json.js';
import { asArray, asObject } from '../../iceberg/spec/schema-json.js';
import { tableMetadataFromJson } from '../../iceberg/spec/table-metadata-json.js';
import { FloeError, isFloeError } from '../../util/errors.js';
import { identifierToString, type Catalog, type CreateTableRequest, type LoadedTable, type TableCommit, type TableIdentifier } from '../../iceberg/metadata/catalog.js';
import { checkNamespace, checkTableIdentifier, namespaceToString } from '../identifiers.js';
import { RestHttpClient, type RestOperation } from './http-client.js';
import { BearerToken, ClientCredentials, NoAuth, type AuthProvider } from './oauth2.js';
import { DEFAULT_ENDPOINTS, ENDPOINTS, ResourcePaths, UNIT_SEPARATOR_ENCODED } from './rest-paths.js';
import {
  catalogConfigFromJson,
  createTableRequestToJson,
  identifierFromJson,
  identifierToJson,
  loadTableResultFromJson,
  namespaceFromJson,
  stringMapFromJson,
  type LoadTableResultBody,
  type StorageCredential,
} from './rest-json.js';
import { TableIOCache } from './table-io.js';

const SUBSYSTEM = 'catalog.rest';

export interface RestCatalogOptions {
  /** Base URI of the catalog, e.g. `http://localhost:8181` (`/v1/…` is appended). */
  uri: string;
  /** floe's name for this catalog. Default `rest`. */
  name?: string;
  /** Sent as `?warehouse=` on the config call (a location or a server-side warehouse name). */
  warehouse?: string;
  /** A bearer token. */
  token?: string;
  /** OAuth2 client credentials `client_id:client_secret`. */
  credential?: string;
  /** OAuth2 token endpoint. Default `<uri>/v1/oauth/tokens`. */
  oauth2ServerUri?: string;
  /** OAuth2 scope. Default `catalog`. */
  scope?: string;
  /** floe's own storage settings (warehouse.s3), the base under what the server returns. */
  storage?: StorageConfig;
  /** Catalog properties of this client, merged between the server's defaults and overrides. */
  properties?: Record<string, string>;
  timeoutMs?: number;
  /** Clock for token expiry (tests). */
  now?: () => number;
}

interface Session {
  http: RestHttpClient;
  paths: ResourcePaths;
  endpoints: Set<string>;
  properties: Record<string, string>;
  io: TableIOCache;
}

interface TableAccess {
  config: Record<string, string>;
  credentials: StorageCredential[];
}

const PKG_VERSION = '0.1.0';

export class RestCatalog implements Catalog {
  readonly name: string;
  readonly auth: AuthProvider;
  private readonly options: RestCatalogOptions;
  private session: Promise<Session> | undefined;
  /** Table config from the last load/create, reused for the FileIO after commits. */
  private readonly access = new Map<string, TableAccess>();

  constructor(options: RestCatalogOptions) {
    this.options = options;
    this.name = options.name ?? 'rest';
    if (options.token !== undefined && options.credential !== undefined) {
      throw new FloeError(SUBSYSTEM, 'config', 'give either catalog.token or catalog.credential, not both');
    }
    const uri = options.uri.replace(/\/+$/, '');
    this.auth = options.token !== undefined
      ? new BearerToken(options.token)
      : options.credential !== undefined
        ? new ClientCredentials({ tokenUri: options.oauth2ServerUri ?? `${uri}/v1/oauth/tokens`, credential: options.credential, scope: options.scope, now: options.now, timeoutMs: options.timeoutMs })
        : new NoAuth();
  }

  /** Fetches the server's config (done lazily by every call; call it to fail fast). */
  async initialize(): Promise<void> {
    await this.ready();
  }

  /** Whether the server advertised an endpoint (an ENDPOINTS value). */
  async supports(endpoint: string): Promise<boolean> {
    return (await this.ready()).endpoints.has(endpoint);
  }

  /** Catalog properties after merging the server's defaults and overrides. */
  async catalogProperties(): Promise<Record<string, string>> {
    return { ...(await this.ready()).properties };
  }

  // ---- namespaces --------------------------------------------------------------------------------

  async createNamespace(namespace: string[], properties: Record<string, string> = {}): Promise<void> {
    checkNamespace(namespace);
    const s = await this.ready();
    await this.call(s, 'POST', s.paths.namespaces(), 'create', `create namespace ${namespaceToString(namespace)}`, { body: { namespace: [...namespace], properties } });
  }

  async listNamespaces(parent: string[] = []): Promise<string[][]> {
    if (parent.length > 0) checkNamespace(parent);
    const s = await this.ready();
    const out: string[][] = [];
    await this.paged(s, s.paths.namespaces(), `list namespaces${parent.length ? ` in ${namespaceToString(parent)}` : ''}`, parent.length ? { parent: s.paths.parentQuery(parent) } : {}, (json) => {
      for (const ns of asArray(asObject(json, 'list namespaces response').namespaces ?? [], 'namespaces')) out.push(namespaceFromJson(ns));
    });
    return out;
  }

  async loadNamespaceProperties(namespace: string[]): Promise<Record<string, string>> {
    checkNamespace(namespace);
    const s = await this.ready();
    const r = await this.call(s, 'GET', s.paths.namespace(namespace), 'read', `load namespace ${namespaceToString(namespace)}`);
    return stringMapFromJson(asObject(r, 'namespace response').properties, 'properties');
  }

  async updateNamespaceProperties(namespace: string[], removals: string[], updates: Record<string, string>): Promise<void> {
    checkNamespace(namespace);
    const s = await this.ready();
    await this.call(s, 'POST', s.paths.namespaceProperties(namespace), 'write', `update properties of namespace ${namespaceToString(namespace)}`, { body: { removals: [...removals], updates: { ...updates } } });
  }

  async namespaceExists(namespace: string[]): Promise<boolean> {
    checkNamespace(namespace);
    const s = await this.ready();
    const method = s.endpoints.has(ENDPOINTS.namespaceExists) ? 'HEAD' : 'GET';
    return this.exists(this.call(s, method, s.paths.namespace(namespace), 'read', `check namespace ${namespaceToString(namespace)}`));
  }

  async dropNamespace(namespace: string[]): Promise<void> {
    checkNamespace(namespace);
    const s = await this.ready();
    await this.call(s, 'DELETE', s.paths.namespace(namespace), 'drop-namespace', `drop namespace ${namespaceToString(namespace)}`);
  }

  // ---- tables ------------------------------------------------------------------------------------

  async listTables(namespace: string[]): Promise<TableIdentifier[]> {
    checkNamespace(namespace);
    const s = await this.ready();
    const out: TableIdentifier[] = [];
    await this.paged(s, s.paths.tables(namespace), `list tables in ${namespaceToString(namespace)}`, {}, (json) => {
      for (const id of asArray(asObject(json, 'list tables response').identifiers ?? [], 'identifiers')) out.push(identifierFromJson(id));
    });
    return out;
  }

  async tableExists(identifier: TableIdentifier): Promise<boolean> {
    checkTableIdentifier(identifier);
    const s = await this.ready();
    const method = s.endpoints.has(ENDPOINTS.tableExists) ? 'HEAD' : 'GET';
    return this.exists(this.call(s, method, s.paths.table(identifier.namespace, identifier.name), 'read', `check table ${identifierToString(identifier)}`));
  }

  async createTable(identifier: TableIdentifier, request: CreateTableRequest): Promise<LoadedTable> {
    checkTableIdentifier(identifier);
    const s = await this.ready();
    const body = createTableRequestToJson({
      name: identifier.name,
      schema: request.schema,
      location: request.location,
      partitionSpec: request.partitionSpec,
      writeOrder: request.sortOrder,
      properties: request.properties ?? {},
      formatVersion: request.formatVersion,
    });
    const json = await this.call(s, 'POST', s.paths.tables(identifier.namespace), 'create', `create table ${identifierToString(identifier)}`, { body });
    return this.fromLoadResult(s, identifier, loadTableResultFromJson(json));
  }

  async loadTable(identifier: TableIdentifier): Promise<LoadedTable> {
    checkTableIdentifier(identifier);
    const s = await this.ready();
    const json = await this.call(s, 'GET', s.paths.table(identifier.namespace, identifier.name), 'read', `load table ${identifierToString(identifier)}`, { query: { snapshots: 'all' } });
    return this.fromLoadResult(s, identifier, loadTableResultFromJson(json));
  }

  async commitTable(identifier: TableIdentifier, requirements: TableRequirement[], updates: MetadataUpdate[]): Promise<LoadedTable> {
    checkTableIdentifier(identifier);
    const s = await this.ready();
    const body = commitTableRequestToJson({ identifier, requirements, updates });
    const json = await this.call(s, 'POST', s.paths.table(identifier.namespace, identifier.name), 'commit', `commit to table ${identifierToString(identifier)}`, { body });
    const o = asObject(json, 'commit table response');
    const metadataLocation = o['metadata-location'];
    if (typeof metadataLocation !== 'string') {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `commit to table ${identifierToString(identifier)}: the response has no metadata-location; the commit may have landed: reload the table`);
    }
    const metadata = tableMetadataFromJson(o.metadata);
    const access = this.access.get(identifierToString(identifier));
    return { identifier: { namespace: [...identifier.namespace], name: identifier.name }, metadataLocation, metadata, io: s.io.ioFor(metadata.location, access?.config, access?.credentials) };
  }

  /**
   * All-or-nothing commit to several tables through `POST /v1/{prefix}/transactions/commit`; the
   * tables are loaded again afterwards (the endpoint answers 204 without metadata), so the result
   * shows each table as it is right after the commit, including any later commit by others.
   */
  async commitTransaction(changes: TableCommit[]): Promise<LoadedTable[]> {
    const s = await this.ready();
    if (!s.endpoints.has(ENDPOINTS.commitTransaction)) {
      throw new FloeError(SUBSYSTEM, 'unsupported', `the REST catalog at ${s.http.uri} does not advertise ${ENDPOINTS.commitTransaction}; commit the tables one by one`);
    }
    for (const c of changes) checkTableIdentifier(c.identifier);
    const body = { 'table-changes': changes.map((c) => commitTableRequestToJson({ identifier: c.identifier, requirements: c.requirements, updates: c.updates })) };
    await this.call(s, 'POST', s.paths.commitTransaction(), 'commit', `commit a transaction over ${changes.map((c) => identifierToString(c.identifier)).join(', ')}`, { body });
    const out: LoadedTable[] = [];
    for (const c of changes) out.push(await this.loadTable(c.identifier));
    return out;
  }

  /** `POST /v1/{prefix}/namespaces/{ns}/register`: adds an existing table by its metadata file. */
  async registerTable(identifier: TableIdentifier, metadataLocation: string): Promise<LoadedTable> {
    checkTableIdentifier(identifier);
    const s = await this.ready();
    if (!s.endpoints.has(ENDPOINTS.registerTable)) {
      throw new FloeError(SUBSYSTEM, 'unsupported', `the REST catalog at ${s.http.uri} does not advertise ${ENDPOINTS.registerTable}`);
    }
    const body = { name: identifier.name, 'metadata-location': metadataLocation };
    const json = await this.call(s, 'POST', s.paths.register(identifier.namespace), 'create', `register table ${identifierToString(identifier)}`, { body });
    return this.fromLoadResult(s, identifier, loadTableResultFromJson(json));
  }

  async renameTable(from: TableIdentifier, to: TableIdentifier): Promise<void> {
    checkTableIdentifier(from);
    checkTableIdentifier(to);
    const s = await this.ready();
    await this.call(s, 'POST', s.paths.rename(), 'create', `rename table ${identifierToString(from)} to ${identifierToString(to)}`, { body: { source: identifierToJson(from), destination: identifierToJson(to) } });
  }

  async dropTable(identifier: TableIdentifier, purge = false): Promise<void> {
    checkTableIdentifier(identifier);
    const s = await this.ready();
    await this.call(s, 'DELETE', s.paths.table(identifier.namespace, identifier.name), 'write', `drop table ${identifierToString(identifier)}`, { query: { purgeRequested: String(purge) } });
    this.access.delete(identifierToString(identifier));
  }

  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    // a session that failed to open has nothing to close; its error went to the caller that awaited it
    if (session) await (await session.catch(() => undefined))?.io.close();
  }

  // ---- internals ---------------------------------------------------------------------------------

  private ready(): Promise<Session> {
    this.session ??= this.connect().catch((e: unknown) => {
      this.session = undefined;
      throw e;
    });
    return this.session;
  }

  private async connect(): Promise<Session> {
    const http = new RestHttpClient({
      uri: this.options.uri,
      auth: this.auth,
      timeoutMs: this.options.timeoutMs,
      headers: {
        'User-Agent': `floe/${PKG_VERSION}`,
        'X-Client-Version': `floe ${PKG_VERSION}`,
        // Ask for vended credentials; servers that do not vend ignore it.
        'X-Iceberg-Access-Delegation': 'vended-credentials',
      },
    });
    const r = await http.request({ method: 'GET', path: '/v1/config', query: { warehouse: this.options.warehouse }, operation: 'read', what: 'get catalog config' });
    const config = catalogConfigFromJson(r.json ?? {});
    const properties = { ...config.defaults, ...(this.options.properties ?? {}), ...config.overrides };
    const paths = new ResourcePaths(properties.prefix || undefined, properties['namespace-separator'] || UNIT_SEPARATOR_ENCODED);
    return {
      http,
      paths,
      endpoints: new Set(config.endpoints ?? DEFAULT_ENDPOINTS),
      properties,
      io: new TableIOCache(this.options.storage ?? {}, properties),
    };
  }

  private async call(
    s: Session,
    method: 'GET' | 'HEAD' | 'POST' | 'DELETE',
    path: string,
    operation: RestOperation,
    what: string,
    extra: { body?: unknown; query?: Record<string, string | undefined> } = {},
  ): Promise<unknown> {
    return (await s.http.request({ method, path, operation, what, ...extra })).json;
  }

  private async exists(request: Promise<unknown>): Promise<boolean> {
    try {
      await request;
      return true;
    } catch (e) {
      if (isFloeError(e, 'not-found')) return false;
      throw e;
    }
  }

  /** Follows `next-page-token` until the server says the listing is complete. */
  private async paged(s: Session, path: string, what: string, query: Record<string, string>, collect: (json: unknown) => void): Promise<void> {
    let pageToken = '';
    for (let page = 0; page < 100_000; page++) {
      const json = await this.call(s, 'GET', path, 'read', what, { query: { ...query, pageToken } });
      collect(json);
      const next = (json as { 'next-page-token'?: unknown } | undefined)?.['next-page-token'];
      if (typeof next !== 'string' || next === '') return;
      pageToken = next;
    }
    throw new FloeError(SUBSYSTEM, 'invalid-data', `${what}: the server kept returning page tokens (100000 pages); its pagination looks broken`);
  }

  private fromLoadResult(s: Session, identifier: TableIdentifier, result: LoadTableResultBody): LoadedTable {
    if (result.metadataLocation === undefined) {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `table ${identifierToString(identifier)}: the server returned no metadata-location (a staged table); floe does not stage creates`);
    }
    this.access.set(identifierToString(identifier), { config: result.config, credentials: result.storageCredentials });
    return {
      identifier: { namespace: [...identifier.namespace], name: identifier.name },
      metadataLocation: result.metadataLocation,
      metadata: result.metadata,
      io: s.io.ioFor(result.metadata.location, result.config, result.storageCredentials),
    };
  }
}
