/**
 * Outbound vendor auth: the credential of each call resolved for its caller (credentials/source.ts:
 * a forwarded header, the caller's user or tenant credential from the credentials file, or the
 * catalog's environment variables), applied to the request, and never copied into errors, logs,
 * progress or artifacts. OAuth2 tokens (client credentials, refresh token) are fetched once per
 * credential, shared by concurrent calls, cached until shortly before expiry, and refreshed once
 * on a 401; a rotated refresh token is handed to `onRotate` (the server writes it back).
 */
import { svcError, type SvcError } from '../common/errors.js';
import type { ApiKeyPlace, OutboundAuth } from '../pack/cgs.js';
import { clientCredentials, refreshGrant, TokenError, type Token, type TokenClient } from './credentials/oauth.js';
import { secretNames, sourceOf, type Env, type Source } from './credentials/source.js';
import {
  NO_CALLER,
  NO_CREDENTIALS,
  type Caller,
  type ClientTls,
  type CredentialPlace,
  type CredentialsConfig,
} from './credentials/types.js';
import type { HttpClient, HttpRequest } from './http-client.js';
import { abortReason, type CancelSignal } from './signal.js';

export { secretNames, TokenError };
export type { Env, Source };

/**
 * A `missing_secret` problem when a named variable is unset or empty (checked before any request).
 * A basic password may be empty, not unset: vendors that take a key as the user name want `key:`.
 */
export function checkSecrets(entryId: string, auth: OutboundAuth, env: Env): SvcError | undefined {
  const emptyOk = auth.scheme === 'basic' ? auth.password_env : undefined;
  const missing = secretNames(auth).filter((n) => !env[n] && !(n === emptyOk && env[n] === ''));
  if (missing.length === 0) return undefined;
  return svcError(
    'missing_secret',
    `catalog \`${entryId}\` needs ${missing.map((n) => `\`${n}\``).join(' and ')} in the server's environment`,
    {
      hint: `set ${missing.join(', ')} before starting svc (the ${auth.scheme} credentials of the vendor); nothing was sent`,
    },
  );
}

/** Put one API key in its header or query parameter of `req`. */
function putKey(req: HttpRequest, place: ApiKeyPlace, value: string): void {
  if (place.in === 'header') {
    req.headers[place.name.toLowerCase()] = value;
    return;
  }
  const u = new URL(req.url);
  u.searchParams.set(place.name, value);
  req.url = u.toString();
}

/**
 * A `vendor_credentials_missing` problem when the credential of an `api_key` catalog lacks one of
 * its further keys (`auth.also`): a forwarded header carries one key only, and a credentials file
 * checked against an earlier version of the catalog may lack a key added since (the environment
 * gives all of them or none: `sourceOf`). Nothing is sent.
 */
function lacksAlso(entryId: string, auth: OutboundAuth, s: Source): SvcError | undefined {
  if (auth.scheme !== 'api_key' || !auth.also || s.cred.scheme !== 'api_key') return undefined;
  const have = s.cred.also ?? {};
  const missing = auth.also.filter((k) => !have[k.name]).map((k) => k.name);
  if (missing.length === 0) return undefined;
  const names = missing.map((n) => `\`${n}\``).join(', ');
  return svcError(
    'vendor_credentials_missing',
    `catalog \`${entryId}\` sends ${auth.also.length + 1} keys together, and the credential from ${s.from} lacks ${names}`,
    {
      hint: s.place
        ? `the operator adds also: {${missing.map((n) => `${n}: "..."`).join(', ')}} to that credentials file entry (and sends SIGHUP); nothing was sent`
        : 'a forwarded header carries one key only: the operator gives this caller its keys in the credentials file; nothing was sent',
    },
  );
}

export interface AuthOptions {
  /** The credentials file as loaded (default: none, every call uses the environment). */
  config?: CredentialsConfig;
  /**
   * A refresh token the server rotated: write it back where it came from, over one of `replaces`,
   * the tokens its chain held before (the one loaded first, oldest first).
   */
  onRotate?: (place: CredentialPlace, refreshToken: string, replaces: readonly string[]) => void;
}

type Sending = Exclude<OutboundAuth, { scheme: 'none' }>;

/** Time limit of one token request (its waiters are bounded by their own signals too). */
const TOKEN_TIMEOUT_MS = 30_000;

/** `p`, or the abort of `signal` if that comes first (`p` goes on for its other waiters). */
function untilAborted<T>(p: Promise<T>, signal: CancelSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export class AuthResolver {
  private config: CredentialsConfig;
  /** Whether a credentials file is in force (a missing credential is then `vendor_credentials_missing`). */
  private fromFile: boolean;
  private loadedAt: number;
  private readonly tokens = new Map<string, Token>();
  private readonly inflight = new Map<string, Promise<Token>>();
  /**
   * Refresh tokens rotated by the server, by cache key: the earlier tokens of the chain (the
   * file's, then those written back; the first and the last few), and the one to use now.
   */
  private readonly rotated = new Map<string, { from: string[]; to: string }>();
  private readonly onRotate: AuthOptions['onRotate'];

  constructor(
    private readonly env: Env,
    private readonly http: HttpClient,
    private readonly now: () => number = Date.now,
    opts: AuthOptions = {},
  ) {
    this.config = opts.config ?? NO_CREDENTIALS;
    this.fromFile = opts.config !== undefined;
    this.loadedAt = now();
    this.onRotate = opts.onRotate;
  }

  /** Put another credentials file in force (SIGHUP): cached access tokens are dropped. */
  use(config: CredentialsConfig): void {
    this.config = config;
    this.fromFile = true;
    this.loadedAt = this.now();
    this.tokens.clear();
  }

  /** For /v1/health: whether a credentials file is in force, since when, and how much it holds (never a value). */
  stats(): { credentials_file: boolean; loaded_at?: string; tenants: number; cached_tokens: number } {
    return {
      credentials_file: this.fromFile,
      ...(this.fromFile ? { loaded_at: new Date(this.loadedAt).toISOString() } : {}),
      tenants: Object.keys(this.config.tenants).length,
      cached_tokens: this.tokens.size,
    };
  }

  /** Whether callers of `tenant` may only read (the file's `read_only`). */
  readOnly(tenant: string): boolean {
    return Object.hasOwn(this.config.tenants, tenant) && this.config.tenants[tenant]!.read_only;
  }

  /** The forwarded credentials of a request: entry id -> the value of its forwarding header. */
  forwarded(header: (name: string) => string | undefined): Record<string, string> | undefined {
    let out: Record<string, string> | undefined;
    for (const [id, e] of Object.entries(this.config.entries)) {
      const v = e.forward ? header(e.forward)?.trim() : undefined;
      if (v) (out ??= {})[id] = v;
    }
    return out;
  }

  /** The client TLS (mTLS) of an entry's vendor connections. */
  tls(entryId: string): ClientTls | undefined {
    return Object.hasOwn(this.config.entries, entryId) ? this.config.entries[entryId]!.tls : undefined;
  }

  /**
   * The credential of a call for `caller`, or the problem that there is none (checked before
   * any request: nothing is sent without one).
   */
  source(entryId: string, auth: OutboundAuth, caller: Caller = NO_CALLER): Source | SvcError | undefined {
    if (auth.scheme === 'none') return undefined;
    const s = sourceOf(this.config, this.env, entryId, auth, caller);
    if (s) return lacksAlso(entryId, auth, s) ?? s;
    if (!this.fromFile) return checkSecrets(entryId, auth, this.env);
    return this.missing(entryId, auth, caller);
  }

  /** Add the credential to `req` (headers or query); the bearer token sent, when there is one. */
  async apply(source: Source, auth: Sending, req: HttpRequest, signal?: CancelSignal): Promise<string | undefined> {
    const c = source.cred;
    switch (c.scheme) {
      case 'api_key':
        if (auth.scheme !== 'api_key') req.headers.authorization = c.key;
        else {
          putKey(req, auth, c.key);
          // Every further key goes with the first (`source` checked that the credential has each).
          for (const k of auth.also ?? []) putKey(req, k, c.also?.[k.name] ?? '');
        }
        return undefined;
      case 'bearer':
        req.headers.authorization = `Bearer ${c.token}`;
        return c.token;
      case 'basic':
        req.headers.authorization = `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
        return undefined;
      default: {
        const t = await this.token(source, auth, signal);
        req.headers.authorization = `Bearer ${t.value}`;
        return t.value;
      }
    }
  }

  /** Whether applying this credential may send a token request (no valid token cached). */
  mayFetch(source: Source): boolean {
    if (!this.refreshable(source)) return false;
    const t = this.tokens.get(source.key);
    return !t || t.expiresAt <= this.now();
  }

  /** Whether a 401 with this credential is worth one token refresh. */
  refreshable(source: Source): boolean {
    return source.cred.scheme === 'oauth2_client_credentials' || source.cred.scheme === 'oauth2_refresh_token';
  }

  /**
   * Forget a cached token after the vendor answered 401 with it. When `stale` is given, only
   * that token is dropped: a late 401 must not throw away a token refreshed meanwhile.
   */
  invalidate(source: Source, stale?: string): void {
    const cur = this.tokens.get(source.key);
    if (cur && (stale === undefined || cur.value === stale)) this.tokens.delete(source.key);
  }

  /** Every secret value a credential uses now (for redaction of vendor messages). */
  secretValues(source: Source | undefined): string[] {
    if (!source) return [];
    const c = source.cred;
    const out: string[] = [];
    if (c.scheme === 'api_key') out.push(c.key, ...Object.values(c.also ?? {}));
    else if (c.scheme === 'bearer') out.push(c.token);
    else if (c.scheme === 'basic')
      out.push(c.username, c.password, Buffer.from(`${c.username}:${c.password}`).toString('base64'));
    else {
      if (c.client_secret) out.push(c.client_secret);
      if (c.scheme === 'oauth2_refresh_token') out.push(this.refreshNow(source));
    }
    const token = this.tokens.get(source.key)?.value;
    if (token) out.push(token);
    return out.filter(Boolean);
  }

  private missing(entryId: string, auth: Sending, caller: Caller): SvcError {
    const entry = Object.hasOwn(this.config.entries, entryId) ? this.config.entries[entryId] : undefined;
    const who = caller.tenant ? `tenant \`${caller.tenant}\`` : 'anonymous callers';
    const ways = [`add tenants.${caller.tenant || '""'}.credentials.${entryId} to the credentials file`];
    if (entry?.fallback !== 'none') ways.push(`set ${secretNames(auth).join(', ')} in the server's environment`);
    if (entry?.forward) ways.push(`or the caller sends its own in the ${entry.forward} header`);
    return svcError('vendor_credentials_missing', `catalog \`${entryId}\` has no credentials for ${who}`, {
      hint: `the operator can ${ways.join(', or ')}; nothing was sent`,
    });
  }

  private refreshNow(source: Source): string {
    const c = source.cred as Extract<Source['cred'], { scheme: 'oauth2_refresh_token' }>;
    const r = this.rotated.get(source.key);
    // The file holds a token of this chain (its first or one written back, maybe not yet the newest):
    // the newest is the one to use. A token the chain never had is a new one from the operator.
    return r && (r.to === c.refresh_token || r.from.includes(c.refresh_token)) ? r.to : c.refresh_token;
  }

  private async token(source: Source, auth: Sending, signal?: CancelSignal): Promise<Token> {
    const cached = this.tokens.get(source.key);
    if (cached && cached.expiresAt > this.now()) return cached;
    let p = this.inflight.get(source.key);
    if (!p) {
      // Shared by every waiter, so bounded by a time limit of its own, not by the first waiter's
      // signal: one run cancelled (or its attempt timed out) must not fail the others waiting.
      const key = source.key;
      p = this.fetchToken(source, auth, AbortSignal.timeout(TOKEN_TIMEOUT_MS))
        .then((t) => {
          if (key) this.tokens.set(key, t);
          return t;
        })
        .finally(() => this.inflight.delete(key));
      p.catch(() => undefined); // a failure nobody waits for any more is no unhandled rejection
      this.inflight.set(key, p);
    }
    return signal ? untilAborted(p, signal) : p;
  }

  private async fetchToken(source: Source, auth: Sending, signal?: AbortSignal): Promise<Token> {
    const c = source.cred;
    if (c.scheme !== 'oauth2_client_credentials' && c.scheme !== 'oauth2_refresh_token')
      throw new Error('not an OAuth2 credential');
    const fromCatalog = auth.scheme === 'oauth2_client_credentials' ? auth : undefined;
    const client: TokenClient = {
      token_url: c.token_url ?? fromCatalog?.token_url ?? '',
      client_id: c.client_id,
      ...(c.client_secret !== undefined ? { client_secret: c.client_secret } : {}),
      ...((c.scopes ?? fromCatalog?.scopes) ? { scopes: c.scopes ?? fromCatalog!.scopes } : {}),
      ...(c.scheme === 'oauth2_client_credentials' && c.audience ? { audience: c.audience } : {}),
    };
    if (c.scheme === 'oauth2_client_credentials') return clientCredentials(this.http, client, this.now(), signal);
    const used = this.refreshNow(source);
    const t = await refreshGrant(this.http, client, used, this.now(), signal);
    if (t.refresh && t.refresh !== used) {
      const prev = this.rotated.get(source.key);
      const from = prev?.to === used ? [...prev.from, used] : [used];
      this.rotated.set(source.key, { from: from.length > 9 ? [from[0]!, ...from.slice(-8)] : from, to: t.refresh });
      if (source.place) this.onRotate?.(source.place, t.refresh, from);
    }
    return t;
  }
}
