/**
 * Authentication of the REST catalog client: a fixed bearer token, or OAuth2 client credentials
 * (RFC 6749 §4.4) exchanged at the token endpoint — the configured `oauth2ServerUri`, else the
 * catalog's deprecated-but-common `<uri>/v1/oauth/tokens` (what Java, PyIceberg and DuckDB default
 * to). The client id and secret go in the form body, as Java's `OAuth2Util` sends them.
 *
 * A token is refreshed before it expires (at the earlier of 5 minutes before expiry and half its
 * lifetime), by asking for a new one with the same credentials; a 401 from the catalog also discards
 * the token so the next request fetches a fresh one. Secrets never appear in errors.
 */
import { errorMessage, FloeError } from '../../util/errors.js';

const SUBSYSTEM = 'catalog.rest.oauth2';

export interface AuthProvider {
  /** The Authorization header value, or undefined for none. */
  authorization(): Promise<string | undefined>;
  /** The catalog answered 401: forget the current token. Returns whether a retry may help. */
  rejected(): boolean;
}

export class NoAuth implements AuthProvider {
  async authorization(): Promise<string | undefined> {
    return undefined;
  }
  rejected(): boolean {
    return false;
  }
}

export class BearerToken implements AuthProvider {
  constructor(private readonly token: string) {}
  async authorization(): Promise<string> {
    return `Bearer ${this.token}`;
  }
  rejected(): boolean {
    return false;
  }
}

export interface ClientCredentialsOptions {
  tokenUri: string;
  /** `client_id:client_secret`, or a bare secret (then no client id is sent, as Java allows). */
  credential: string;
  scope?: string;
  /** Clock in milliseconds (tests). Default Date.now. */
  now?: () => number;
  timeoutMs?: number;
}

interface Token {
  value: string;
  refreshAtMs: number;
}

export class ClientCredentials implements AuthProvider {
  private token: Token | undefined;
  private inFlight: Promise<Token> | undefined;
  private readonly now: () => number;
  /** Tokens fetched so far (for tests and logs). */
  fetchCount = 0;

  constructor(private readonly options: ClientCredentialsOptions) {
    this.now = options.now ?? Date.now;
  }

  async authorization(): Promise<string> {
    if (this.token === undefined || this.now() >= this.token.refreshAtMs) {
      this.inFlight ??= this.fetchToken().finally(() => {
        this.inFlight = undefined;
      });
      this.token = await this.inFlight;
    }
    return `Bearer ${this.token.value}`;
  }

  rejected(): boolean {
    this.token = undefined;
    return true;
  }

  private async fetchToken(): Promise<Token> {
    const colon = this.options.credential.indexOf(':');
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (colon >= 0) {
      form.set('client_id', this.options.credential.slice(0, colon));
      form.set('client_secret', this.options.credential.slice(colon + 1));
    } else {
      form.set('client_secret', this.options.credential);
    }
    form.set('scope', this.options.scope ?? 'catalog');
    let response: Response;
    try {
      response = await fetch(this.options.tokenUri, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
    } catch (e) {
      throw new FloeError(SUBSYSTEM, 'io', `cannot reach the OAuth2 token endpoint ${this.options.tokenUri}: ${errorMessage(e)}`, { cause: e, retryable: true });
    }
    const text = await response.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // reported below
    }
    if (!response.ok) {
      const why = typeof body.error === 'string' ? `${body.error}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}` : `HTTP ${response.status}`;
      throw new FloeError(SUBSYSTEM, 'config', `the OAuth2 token endpoint ${this.options.tokenUri} refused the client credentials (${why}); check catalog.credential (client_id:client_secret) and catalog.scope`);
    }
    if (typeof body.access_token !== 'string' || body.access_token === '') {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `the OAuth2 token endpoint ${this.options.tokenUri} answered without an access_token (expected {"access_token": "...", "token_type": "bearer", "expires_in": …})`);
    }
    this.fetchCount++;
    const issuedAt = this.now();
    const lifetimeMs = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in * 1000 : undefined;
    const refreshAtMs = lifetimeMs === undefined ? Number.POSITIVE_INFINITY : issuedAt + lifetimeMs - Math.min(5 * 60_000, lifetimeMs / 2);
    return { value: body.access_token, refreshAtMs };
  }
}
