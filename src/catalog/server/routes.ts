/**
 * Request path → route of the REST catalog protocol. Paths are `/v1/config`, `/v1/oauth/tokens`, and
 * `/v1[/{prefix}]/…` for everything else; path segments are decoded here (namespaces split on `%1F`
 * or the advertised separator, rest-paths.ts), so handlers see plain levels and names.
 */
import type { TableIdentifier } from '../../iceberg/metadata/catalog.js';
import { decodeName, decodeNamespace } from '../rest/rest-paths.js';
import { HttpError } from './error-response.js';

export type Route =
  | { kind: 'config' }
  | { kind: 'oauth-tokens' }
  | { kind: 'namespaces' }
  | { kind: 'namespace'; namespace: string[] }
  | { kind: 'namespace-properties'; namespace: string[] }
  | { kind: 'tables'; namespace: string[] }
  | { kind: 'table'; identifier: TableIdentifier }
  | { kind: 'table-metrics'; identifier: TableIdentifier }
  | { kind: 'register'; namespace: string[] }
  | { kind: 'rename' }
  | { kind: 'transactions-commit' }
  | { kind: 'unsupported'; what: string };

/** The methods each route kind answers. */
export const ROUTE_METHODS: Record<Route['kind'], readonly string[]> = {
  config: ['GET'],
  'oauth-tokens': ['POST'],
  namespaces: ['GET', 'POST'],
  namespace: ['GET', 'HEAD', 'DELETE'],
  'namespace-properties': ['POST'],
  tables: ['GET', 'POST'],
  table: ['GET', 'HEAD', 'POST', 'DELETE'],
  'table-metrics': ['POST'],
  register: ['POST'],
  rename: ['POST'],
  'transactions-commit': ['POST'],
  unsupported: ['GET', 'HEAD', 'POST', 'DELETE'],
};

function notFound(path: string): HttpError {
  return new HttpError(404, 'NotFoundException', `no such endpoint ${path}; see GET /v1/config for the endpoints this server supports`);
}

/** `prefix`: the configured routing prefix (one or more segments), or undefined for none. */
export function matchRoute(pathname: string, prefix: string | undefined, separator?: string): Route {
  const raw = pathname.split('/').slice(1);
  if (raw[0] !== 'v1') throw notFound(pathname);
  let rest = raw.slice(1);
  if (rest.length === 1 && rest[0] === 'config') return { kind: 'config' };
  if (rest.length === 2 && rest[0] === 'oauth' && rest[1] === 'tokens') return { kind: 'oauth-tokens' };
  if (prefix !== undefined && prefix !== '') {
    const want = prefix.split('/');
    const got = rest.slice(0, want.length).map(decodeName);
    if (got.length !== want.length || got.some((g, i) => g !== want[i])) throw notFound(pathname);
    rest = rest.slice(want.length);
  }
  const [a, b, c, d, e, ...more] = rest;
  if (a === 'namespaces') {
    if (b === undefined) return { kind: 'namespaces' };
    const namespace = decodeNamespace(b, separator);
    if (c === undefined) return { kind: 'namespace', namespace };
    if (c === 'properties' && d === undefined) return { kind: 'namespace-properties', namespace };
    if (c === 'tables') {
      if (d === undefined) return { kind: 'tables', namespace };
      const identifier = { namespace, name: decodeName(d) };
      if (e === undefined) return { kind: 'table', identifier };
      if (e === 'metrics' && more.length === 0) return { kind: 'table-metrics', identifier };
      return { kind: 'unsupported', what: `table ${e} endpoints` };
    }
    if (c === 'register' && d === undefined) return { kind: 'register', namespace };
    if (c === 'views' || c === 'register-view' || c === 'functions') return { kind: 'unsupported', what: `${c} endpoints` };
    throw notFound(pathname);
  }
  if (a === 'tables' && b === 'rename' && c === undefined) return { kind: 'rename' };
  if (a === 'transactions' && b === 'commit' && c === undefined) return { kind: 'transactions-commit' };
  if (a === 'views') return { kind: 'unsupported', what: 'view endpoints' };
  throw notFound(pathname);
}
