/**
 * The REST catalog client's HTTP layer: JSON in and out with exact longs (util/json.ts), the
 * Authorization header from the auth provider (one retry after a 401 with a fresh token), a timeout
 * per request, and the mapping of the protocol's error responses (IcebergErrorResponse) to FloeError
 * kinds, which depends on the operation:
 *
 * | response                 | commit                          | other operations               |
 * |--------------------------|---------------------------------|--------------------------------|
 * | 400, 422                 | invalid-argument                | invalid-argument               |
 * | 401, 403, 419            | config (credentials)            | config                         |
 * | 404                      | not-found                       | not-found                      |
 * | 406                      | unsupported                     | unsupported                    |
 * | 409                      | commit-conflict (retryable)     | already-exists; for a namespace drop: invalid-argument (not empty) |
 * | 5xx, timeout, reset      | commit-state-unknown            | io (retryable)                 |
 *
 * 5xx and lost responses on a commit mean the outcome is unknown (REST spec `updateTable` responses
 * 500/502/504; docs/iceberg-writer-checklist.md §6.1): the delivery guarantee weakens there, and callers must reload and
 * look rather than retry blindly. A connection that was refused never carried the request, so it is a
 * plain retryable 'io' error even for commits.
 */
import { errorMessage, FloeError, type ErrorKind } from '../../util/errors.js';
import { parseJson, stringifyJson } from '../../util/json.js';
import type { AuthProvider } from './oauth2.js';
import { errorModelFromJson } from './rest-json.js';

const SUBSYSTEM = 'catalog.rest';

export type RestOperation = 'read' | 'write' | 'create' | 'commit' | 'drop-namespace';

export interface RestRequest {
  method: 'GET' | 'HEAD' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  operation: RestOperation;
  /** What is being done, for messages: "load table db.t". */
  what: string;
}

export interface RestResponse {
  status: number;
  /** Parsed body (lossless longs), undefined for an empty body. */
  json?: unknown;
}

export interface RestHttpClientOptions {
  /** Catalog base URI, e.g. http://localhost:8181 (a path prefix such as /api/catalog is kept). */
  uri: string;
  auth: AuthProvider;
  /** Per-request timeout. Default 60 s. */
  timeoutMs?: number;
  headers?: Record<string, string>;
}

/** Connection failures where the request cannot have reached the server. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function causeCode(e: unknown): string | undefined {
  let c: unknown = e;
  for (let i = 0; i < 4 && c; i++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    c = (c as { cause?: unknown }).cause;
  }
  return undefined;
}

export class RestHttpClient {
  readonly uri: string;
  private readonly auth: AuthProvider;
  private readonly timeoutMs: number;
  private readonly headers: Record<string, string>;

  constructor(options: RestHttpClientOptions) {
    this.uri = options.uri.replace(/\/+$/, '');
    this.auth = options.auth;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.headers = options.headers ?? {};
  }

  async request(req: RestRequest): Promise<RestResponse> {
    let response = await this.sendWithStaleSocketRetry(req);
    if (response.status === 401 && this.auth.rejected()) response = await this.send(req);
    const text = await response.text();
    let json: unknown;
    if (text.length > 0) {
      try {
        json = parseJson(text);
      } catch (e) {
        if (response.ok) throw new FloeError(SUBSYSTEM, 'invalid-data', `${req.what}: the catalog at ${this.uri} answered ${req.method} ${req.path} with a body that is not JSON (${errorMessage(e)})`);
      }
    }
    if (response.ok) return { status: response.status, json };
    throw this.errorFor(req, response.status, json, text);
  }

  /**
   * A pooled keep-alive connection the server has closed (a restart, an idle timeout) fails the next
   * request with a reset. GET and HEAD are safe to send once more; other methods are not, because
   * the request may have been processed (http-client's table above decides what that means).
   */
  private async sendWithStaleSocketRetry(req: RestRequest): Promise<Response> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return this.send(req);
    try {
      return await this.send(req);
    } catch (e) {
      const code = causeCode(e);
      if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE') return this.send(req);
      throw e;
    }
  }

  private async send(req: RestRequest): Promise<Response> {
    const url = new URL(this.uri + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const headers: Record<string, string> = { Accept: 'application/json', ...this.headers };
    const authorization = await this.auth.authorization();
    if (authorization !== undefined) headers.Authorization = authorization;
    if (req.body !== undefined) headers['Content-Type'] = 'application/json';
    try {
      return await fetch(url, {
        method: req.method,
        headers,
        body: req.body === undefined ? undefined : stringifyJson(req.body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      const code = causeCode(e);
      const why = `${errorMessage(e)}${code ? ` (${code})` : ''}`;
      if (req.operation === 'commit' && (code === undefined || !NOT_SENT.has(code))) {
        // Delivery guarantee weakens here: the request may have been processed.
        throw new FloeError(SUBSYSTEM, 'commit-state-unknown', `${req.what}: the request to ${this.uri} failed after it may have been sent: ${why}; the commit may or may not have landed: do not delete its files, reload the table and look for its snapshot before retrying`, { cause: e, retryable: false });
      }
      throw new FloeError(SUBSYSTEM, 'io', `${req.what}: cannot reach the REST catalog at ${this.uri}: ${why}; check catalog.uri and that the catalog is running`, { cause: e, retryable: true });
    }
  }

  private errorFor(req: RestRequest, status: number, json: unknown, text: string): FloeError {
    const model = errorModelFromJson(json);
    const detail = model ? `${model.type ? `${model.type}: ` : ''}${model.message}` : text.slice(0, 300) || `HTTP ${status}`;
    const message = `${req.what}: the REST catalog at ${this.uri} answered ${status} (${detail})`;
    let kind: ErrorKind;
    let retryable = false;
    let hint = '';
    if (status === 400 || status === 422) kind = 'invalid-argument';
    else if (status === 401 || status === 403 || status === 419) {
      kind = 'config';
      hint = '; check catalog.token or catalog.credential and the catalog\'s access rules';
    } else if (status === 404) kind = 'not-found';
    else if (status === 406) kind = 'unsupported';
    else if (status === 409) {
      if (req.operation === 'commit') {
        kind = 'commit-conflict';
        retryable = true;
        hint = '; reload the table and retry';
      } else if (req.operation === 'drop-namespace') kind = 'invalid-argument';
      else kind = 'already-exists';
    } else if (status >= 500 && req.operation === 'commit') {
      return new FloeError(SUBSYSTEM, 'commit-state-unknown', `${message}; the commit may or may not have landed: do not delete its files, reload the table and look for its snapshot before retrying`, { retryable: false });
    } else if (status >= 500) {
      kind = 'io';
      retryable = true;
    } else kind = 'internal';
    return new FloeError(SUBSYSTEM, kind, `${message}${hint}`, { retryable });
  }
}
