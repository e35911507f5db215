/**
 * Outbound vendor auth from environment variables named by the catalog. Secrets are read at call
 * time, applied to the request, and never copied into errors, logs, progress or artifacts.
 * OAuth2 client-credentials tokens are fetched once, cached until shortly before expiry, and
 * refreshed once on a 401.
 */
import { svcError, type SvcError } from '../common/errors.js';
import type { OutboundAuth } from '../pack/cgs.js';
import type { HttpClient, HttpRequest } from './http-client.js';

export type Env = Record<string, string | undefined>;

/** The environment variable names an auth scheme needs. */
export function secretNames(auth: OutboundAuth): string[] {
  switch (auth.scheme) {
    case 'none':
      return [];
    case 'api_key':
    case 'bearer':
      return [auth.env];
    case 'basic':
      return [auth.username_env, auth.password_env];
    case 'oauth2_client_credentials':
      return [auth.client_id_env, auth.client_secret_env];
  }
}

/** A `missing_secret` problem when a named variable is unset or empty (checked before any request). */
export function checkSecrets(entryId: string, auth: OutboundAuth, env: Env): SvcError | undefined {
  const missing = secretNames(auth).filter((n) => !env[n]);
  if (missing.length === 0) return undefined;
  return svcError(
    'missing_secret',
    `catalog \`${entryId}\` needs ${missing.map((n) => `\`${n}\``).join(' and ')} in the server's environment`,
    {
      hint: `set ${missing.join(', ')} before starting svc (the ${auth.scheme} credentials of the vendor); nothing was sent`,
    },
  );
}

interface Token {
  value: string;
  expiresAt: number;
}

export class AuthResolver {
  private readonly tokens = new Map<string, Token>();
  private readonly inflight = new Map<string, Promise<Token>>();

  constructor(
    private readonly env: Env,
    private readonly http: HttpClient,
    private readonly now: () => number = Date.now,
  ) {}

  /** Add the credentials of `auth` to `req` (headers or query). */
  async apply(entryId: string, auth: OutboundAuth, req: HttpRequest, signal?: AbortSignal): Promise<void> {
    switch (auth.scheme) {
      case 'none':
        return;
      case 'api_key': {
        const key = this.env[auth.env] ?? '';
        if (auth.in === 'header') req.headers[auth.name.toLowerCase()] = key;
        else {
          const u = new URL(req.url);
          u.searchParams.set(auth.name, key);
          req.url = u.toString();
        }
        return;
      }
      case 'bearer':
        req.headers.authorization = `Bearer ${this.env[auth.env] ?? ''}`;
        return;
      case 'basic':
        req.headers.authorization = `Basic ${Buffer.from(`${this.env[auth.username_env] ?? ''}:${this.env[auth.password_env] ?? ''}`).toString('base64')}`;
        return;
      case 'oauth2_client_credentials': {
        const t = await this.token(entryId, auth, signal);
        req.headers.authorization = `Bearer ${t.value}`;
        return;
      }
    }
  }

  /**
   * Forget a cached token after the vendor answered 401 with it. When `stale` is given, only
   * that token is dropped: a late 401 must not throw away a token refreshed meanwhile.
   */
  invalidate(entryId: string, stale?: string): void {
    const cur = this.tokens.get(entryId);
    if (cur && (stale === undefined || cur.value === stale)) this.tokens.delete(entryId);
  }

  /** Every secret value the auth of an entry uses now (for redaction of vendor messages). */
  secretValues(entryId: string, auth: OutboundAuth): string[] {
    const out = secretNames(auth)
      .map((n) => this.env[n] ?? '')
      .filter(Boolean);
    if (auth.scheme === 'basic')
      out.push(
        Buffer.from(`${this.env[auth.username_env] ?? ''}:${this.env[auth.password_env] ?? ''}`).toString('base64'),
      );
    const token = this.tokens.get(entryId)?.value;
    if (token) out.push(token);
    return out;
  }

  private async token(
    entryId: string,
    auth: Extract<OutboundAuth, { scheme: 'oauth2_client_credentials' }>,
    signal?: AbortSignal,
  ): Promise<Token> {
    const cached = this.tokens.get(entryId);
    if (cached && cached.expiresAt > this.now()) return cached;
    let p = this.inflight.get(entryId);
    if (!p) {
      p = this.fetchToken(auth, signal).finally(() => this.inflight.delete(entryId));
      this.inflight.set(entryId, p);
    }
    const t = await p;
    this.tokens.set(entryId, t);
    return t;
  }

  private async fetchToken(
    auth: Extract<OutboundAuth, { scheme: 'oauth2_client_credentials' }>,
    signal?: AbortSignal,
  ): Promise<Token> {
    const id = this.env[auth.client_id_env] ?? '';
    const secret = this.env[auth.client_secret_env] ?? '';
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (auth.scopes.length) form.set('scope', auth.scopes.join(' '));
    const res = await this.http.request(
      {
        method: 'POST',
        url: auth.token_url,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`,
        },
        body: form.toString(),
      },
      { maxBodyBytes: 64 * 1024, ...(signal ? { signal } : {}) },
    );
    let body: { access_token?: unknown; expires_in?: unknown } = {};
    try {
      body = JSON.parse(res.body.toString('utf8')) as typeof body;
    } catch {
      /* reported below */
    }
    if (res.status !== 200 || typeof body.access_token !== 'string') {
      throw new TokenError(res.status);
    }
    const ttl = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600;
    return { value: body.access_token, expiresAt: this.now() + Math.max(1, ttl - 30) * 1000 };
  }
}

/** The token endpoint refused or answered garbage; carries only the status, never the body. */
export class TokenError extends Error {
  constructor(readonly status: number) {
    super(`token endpoint answered ${status}`);
  }
}
