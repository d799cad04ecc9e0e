/**
 * Resource paths and endpoint names of the Iceberg REST catalog protocol
 * (open-api/rest-catalog-open-api.yaml; Java `ResourcePaths`, `Endpoint`, `RESTUtil`), shared by the
 * client (rest-catalog.ts) and `floe catalog serve` (server/).
 *
 * Namespaces in a path segment: each level percent-encoded, levels joined by the separator — the
 * unit separator 0x1F, url-encoded `%1F`, unless the server advertises `namespace-separator` (given
 * url-encoded). Servers must accept `%1F` as well as their advertised separator. Java encodes levels
 * with `URLEncoder` (form encoding: a space becomes `+`), so decoding turns `+` into a space; other
 * clients encode `+` itself as `%2B`, which decodes back to `+`.
 */
import { FloeError } from '../../util/errors.js';

const UNIT_SEPARATOR = '\u001f';
export const UNIT_SEPARATOR_ENCODED = '%1F';

/** Endpoint strings as the config response lists them ("<VERB> <path template>"). */
export const ENDPOINTS = {
  listNamespaces: 'GET /v1/{prefix}/namespaces',
  createNamespace: 'POST /v1/{prefix}/namespaces',
  loadNamespace: 'GET /v1/{prefix}/namespaces/{namespace}',
  namespaceExists: 'HEAD /v1/{prefix}/namespaces/{namespace}',
  dropNamespace: 'DELETE /v1/{prefix}/namespaces/{namespace}',
  updateNamespace: 'POST /v1/{prefix}/namespaces/{namespace}/properties',
  listTables: 'GET /v1/{prefix}/namespaces/{namespace}/tables',
  createTable: 'POST /v1/{prefix}/namespaces/{namespace}/tables',
  loadTable: 'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  tableExists: 'HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  updateTable: 'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  dropTable: 'DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  renameTable: 'POST /v1/{prefix}/tables/rename',
  commitTransaction: 'POST /v1/{prefix}/transactions/commit',
  registerTable: 'POST /v1/{prefix}/namespaces/{namespace}/register',
  reportMetrics: 'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics',
} as const;

/** What a server that sends no `endpoints` list supports (the spec's default set, getConfig). */
export const DEFAULT_ENDPOINTS: readonly string[] = [
  ENDPOINTS.listNamespaces,
  ENDPOINTS.createNamespace,
  ENDPOINTS.loadNamespace,
  ENDPOINTS.dropNamespace,
  ENDPOINTS.updateNamespace,
  ENDPOINTS.listTables,
  ENDPOINTS.createTable,
  ENDPOINTS.loadTable,
  ENDPOINTS.updateTable,
  ENDPOINTS.dropTable,
  ENDPOINTS.registerTable,
  ENDPOINTS.reportMetrics,
  ENDPOINTS.renameTable,
  ENDPOINTS.commitTransaction,
];

/** Java's URLEncoder.encode(…, UTF-8): form encoding, space as `+`. */
function encodeLevel(level: string): string {
  return encodeURIComponent(level).replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replace(/%20/g, '+');
}

function decodeLevel(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new FloeError('catalog.rest', 'invalid-argument', `malformed percent-encoding in ${JSON.stringify(text)}`);
  }
}

/** A namespace as one path segment. `separator` is the url-encoded separator (default `%1F`). */
export function encodeNamespace(namespace: readonly string[], separator = UNIT_SEPARATOR_ENCODED): string {
  return namespace.map(encodeLevel).join(separator);
}

/**
 * A raw (still percent-encoded) path segment → namespace levels. Splits on the advertised separator
 * and on `%1F` (either case), as the spec requires of servers.
 */
export function decodeNamespace(segment: string, separator = UNIT_SEPARATOR_ENCODED): string[] {
  const separators = new Set([UNIT_SEPARATOR_ENCODED, UNIT_SEPARATOR_ENCODED.toLowerCase(), separator, UNIT_SEPARATOR]);
  let parts = [segment];
  for (const sep of separators) parts = parts.flatMap((p) => p.split(sep));
  return parts.map(decodeLevel);
}

/** A path segment that is a single name (table). */
export function decodeName(segment: string): string {
  return decodeLevel(segment);
}

/** The `parent` query parameter (already url-decoded by URLSearchParams) → levels. */
export function namespaceFromQuery(value: string, separator = UNIT_SEPARATOR_ENCODED): string[] {
  let decodedSeparator: string;
  try {
    decodedSeparator = decodeURIComponent(separator);
  } catch {
    decodedSeparator = UNIT_SEPARATOR;
  }
  let parts = [value];
  for (const sep of new Set([UNIT_SEPARATOR, decodedSeparator])) parts = parts.flatMap((p) => p.split(sep));
  return parts;
}

/** Builds `/v1/{prefix}/…` paths; the prefix is omitted when empty (Java ResourcePaths). */
export class ResourcePaths {
  constructor(
    private readonly prefix: string | undefined,
    private readonly separator = UNIT_SEPARATOR_ENCODED,
  ) {}

  private base(): string {
    return this.prefix ? `/v1/${this.prefix.split('/').map(encodeURIComponent).join('/')}` : '/v1';
  }

  namespaces(): string {
    return `${this.base()}/namespaces`;
  }

  namespace(ns: readonly string[]): string {
    return `${this.namespaces()}/${encodeNamespace(ns, this.separator)}`;
  }

  namespaceProperties(ns: readonly string[]): string {
    return `${this.namespace(ns)}/properties`;
  }

  tables(ns: readonly string[]): string {
    return `${this.namespace(ns)}/tables`;
  }

  table(ns: readonly string[], name: string): string {
    return `${this.tables(ns)}/${encodeLevel(name)}`;
  }

  register(ns: readonly string[]): string {
    return `${this.namespace(ns)}/register`;
  }

  rename(): string {
    return `${this.base()}/tables/rename`;
  }

  commitTransaction(): string {
    return `${this.base()}/transactions/commit`;
  }

  /** The `parent` query value (raw; URLSearchParams encodes it). */
  parentQuery(ns: readonly string[]): string {
    let sep: string;
    try {
      sep = decodeURIComponent(this.separator);
    } catch {
      sep = UNIT_SEPARATOR;
    }
    return ns.join(sep);
  }
}
