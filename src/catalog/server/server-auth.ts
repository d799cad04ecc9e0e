/**
 * Who may call `floe catalog serve`: nobody is checked when neither a token nor client credentials
 * are configured; otherwise every route except the token endpoint needs `Authorization: Bearer …`
 * with the configured static token or a token this server issued and that has not expired.
 *
 * The token endpoint (`POST /v1/oauth/tokens`, deprecated in the spec but what Java, PyIceberg and
 * DuckDB call by default) implements OAuth2 client credentials (RFC 6749 §4.4; id and secret in the
 * form body or HTTP Basic) and the token exchange Java clients use to refresh (RFC 8693, subject
 * token = a valid token of ours). Issued tokens live in memory: a restart invalidates them and
 * clients fetch new ones after their 401.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

export interface ClientSecret {
  clientId: string;
  clientSecret: string;
}

export interface ServerAuthOptions {
  token?: string;
  clients?: ClientSecret[];
  /** Lifetime of issued tokens. Default 3600 s. */
  tokenLifetimeSeconds?: number;
  now?: () => number;
}

export interface TokenResponse {
  status: number;
  body: Record<string, unknown>;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class ServerAuth {
  private readonly issued = new Map<string, number>();
  private readonly now: () => number;
  private readonly lifetimeSeconds: number;

  constructor(private readonly options: ServerAuthOptions) {
    this.now = options.now ?? Date.now;
    this.lifetimeSeconds = options.tokenLifetimeSeconds ?? 3600;
  }

  get enabled(): boolean {
    return this.options.token !== undefined || (this.options.clients?.length ?? 0) > 0;
  }

  get issuesTokens(): boolean {
    return (this.options.clients?.length ?? 0) > 0;
  }

  /** Whether the Authorization header value grants access. */
  allows(authorization: string | undefined): boolean {
    if (!this.enabled) return true;
    const token = /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1]?.trim();
    if (token === undefined) return false;
    return this.valid(token);
  }

  /** The token endpoint: a form-encoded request → an OAuthTokenResponse or OAuthError. */
  tokenRequest(form: URLSearchParams, authorization: string | undefined): TokenResponse {
    if (!this.issuesTokens) return this.oauthError(400, 'unsupported_grant_type', 'this server issues no tokens; use the configured bearer token');
    const grant = form.get('grant_type');
    if (grant === 'client_credentials') {
      let id = form.get('client_id') ?? undefined;
      let secret = form.get('client_secret') ?? undefined;
      const basic = /^Basic\s+(.+)$/i.exec(authorization ?? '')?.[1];
      if (basic !== undefined && (id === undefined || secret === undefined)) {
        const decoded = Buffer.from(basic, 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon >= 0) {
          id = decodeURIComponent(decoded.slice(0, colon));
          secret = decodeURIComponent(decoded.slice(colon + 1));
        }
      }
      const known = this.options.clients!.some((c) => (id === undefined || same(c.clientId, id)) && secret !== undefined && same(c.clientSecret, secret));
      if (!known) return this.oauthError(401, 'invalid_client', 'unknown client id or wrong secret');
      return this.issue(form.get('scope') ?? undefined);
    }
    if (grant === 'urn:ietf:params:oauth:grant-type:token-exchange') {
      const subject = form.get('subject_token');
      if (subject === null || !this.valid(subject)) return this.oauthError(401, 'invalid_grant', 'the subject token is not a valid token of this server');
      return this.issue(form.get('scope') ?? undefined);
    }
    return this.oauthError(400, 'unsupported_grant_type', `grant_type ${JSON.stringify(grant)} is not supported; use client_credentials`);
  }

  private valid(token: string): boolean {
    if (this.options.token !== undefined && same(token, this.options.token)) return true;
    const expires = this.issued.get(token);
    if (expires === undefined) return false;
    if (this.now() >= expires) {
      this.issued.delete(token);
      return false;
    }
    return true;
  }

  private issue(scope: string | undefined): TokenResponse {
    const now = this.now();
    for (const [t, expires] of this.issued) if (now >= expires) this.issued.delete(t);
    const token = randomBytes(24).toString('base64url');
    this.issued.set(token, now + this.lifetimeSeconds * 1000);
    return {
      status: 200,
      body: {
        access_token: token,
        token_type: 'bearer',
        expires_in: this.lifetimeSeconds,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        ...(scope !== undefined ? { scope } : {}),
      },
    };
  }

  private oauthError(status: number, error: string, description: string): TokenResponse {
    return { status, body: { error, error_description: description } };
  }
}
