/**
 * OAuth2 token requests of outbound auth (client credentials, refresh token) with oauth4webapi,
 * sent through svc's own HTTP client (its pools, body limit and timeouts). A refusal carries
 * only the status, never a body that might echo a secret.
 */
import * as oauth from 'oauth4webapi';
import type { HttpClient } from '../http-client.js';

export interface Token {
  value: string;
  /** When to stop using it (a margin before the server's expiry). */
  expiresAt: number;
  /** A rotated refresh token the server sent with it. */
  refresh?: string;
}

/** What a token request needs: the endpoint, the client and its secret. */
export interface TokenClient {
  token_url: string;
  client_id: string;
  client_secret?: string;
  scopes?: string[];
  audience?: string;
}

/** The token endpoint refused or answered garbage; carries only the status, never the body. */
export class TokenError extends Error {
  constructor(readonly status: number) {
    super(`token endpoint answered ${status}`);
  }
}

/** Seconds before the server's expiry a token is no longer used; lifetime when the server says none. */
const MARGIN_SECS = 30;
const DEFAULT_TTL_SECS = 3600;
const MAX_TOKEN_BODY = 64 * 1024;

/** A client-credentials grant. */
export function clientCredentials(http: HttpClient, c: TokenClient, now: number, signal?: AbortSignal): Promise<Token> {
  const params = new URLSearchParams();
  if (c.scopes?.length) params.set('scope', c.scopes.join(' '));
  if (c.audience) params.set('audience', c.audience);
  const { as, client, auth, options } = setup(http, c, signal);
  return grant(now, () =>
    oauth
      .clientCredentialsGrantRequest(as, client, auth, params, options)
      .then((r) => oauth.processClientCredentialsResponse(as, client, r)),
  );
}

/** A refresh-token grant (the answer may rotate the refresh token: `Token.refresh`). */
export function refreshGrant(
  http: HttpClient,
  c: TokenClient,
  refreshToken: string,
  now: number,
  signal?: AbortSignal,
): Promise<Token> {
  const { as, client, auth, options } = setup(http, c, signal);
  const additionalParameters = c.scopes?.length ? { scope: c.scopes.join(' ') } : undefined;
  return grant(now, () =>
    oauth
      .refreshTokenGrantRequest(as, client, auth, refreshToken, {
        ...options,
        ...(additionalParameters ? { additionalParameters } : {}),
      })
      .then((r) => oauth.processRefreshTokenResponse(as, client, r)),
  );
}

async function grant(now: number, send: () => Promise<oauth.TokenEndpointResponse>): Promise<Token> {
  let r: oauth.TokenEndpointResponse;
  try {
    r = await send();
  } catch (e) {
    if (e instanceof oauth.ResponseBodyError || e instanceof oauth.WWWAuthenticateChallengeError)
      throw new TokenError(e.status);
    if (e instanceof oauth.OperationProcessingError || e instanceof TypeError) {
      const status = (e.cause as { status?: unknown } | undefined)?.status;
      throw new TokenError(typeof status === 'number' ? status : 200);
    }
    throw e;
  }
  const ttl = typeof r.expires_in === 'number' && r.expires_in > 0 ? r.expires_in : DEFAULT_TTL_SECS;
  const token: Token = { value: r.access_token, expiresAt: now + Math.max(1, ttl - MARGIN_SECS) * 1000 };
  if (typeof r.refresh_token === 'string' && r.refresh_token) token.refresh = r.refresh_token;
  return token;
}

function setup(http: HttpClient, c: TokenClient, signal: AbortSignal | undefined) {
  const url = new URL(c.token_url);
  const as: oauth.AuthorizationServer = { issuer: url.origin, token_endpoint: c.token_url };
  const client: oauth.Client = { client_id: c.client_id };
  const auth = c.client_secret === undefined ? oauth.None() : oauth.ClientSecretBasic(c.client_secret);
  const options = {
    [oauth.customFetch]: viaClient(http),
    // A plain-http token endpoint is the catalog author's (or operator's) choice, as for the vendor itself.
    [oauth.allowInsecureRequests]: url.protocol === 'http:',
    ...(signal ? { signal } : {}),
  };
  return { as, client, auth, options };
}

/** A fetch for oauth4webapi over svc's HTTP client. */
function viaClient(http: HttpClient): typeof fetch {
  return async (input: string | URL | Request, init?: RequestInit) => {
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => (headers[k] = v));
    const res = await http.request(
      {
        method: init?.method ?? 'POST',
        url: input instanceof Request ? input.url : String(input),
        headers,
        // oauth4webapi sends the form as URLSearchParams.
        ...(typeof init?.body === 'string' || init?.body instanceof URLSearchParams
          ? { body: init.body.toString() }
          : {}),
      },
      { maxBodyBytes: MAX_TOKEN_BODY, ...(init?.signal ? { signal: init.signal } : {}) },
    );
    if (res.status === 204 || res.status === 304)
      return new Response(null, { status: res.status, headers: res.headers });
    const { body, headers: out } = withoutIdToken(res.body, res.headers);
    return new Response(body, { status: res.status, headers: out });
  };
}

/**
 * The token answer without its `id_token` (a refresh with scope `openid` brings one): svc sends only
 * the access token, and oauth4webapi would check the ID token against an issuer svc does not know
 * (the token URL's origin, not e.g. `https://accounts.google.com` or an issuer with a path) and
 * with RS256 only, refusing a token request that succeeded.
 */
function withoutIdToken(
  raw: Buffer,
  headers: Record<string, string>,
): { body: Uint8Array; headers: Record<string, string> } {
  try {
    const j = JSON.parse(raw.toString('utf8')) as unknown;
    if (typeof j === 'object' && j !== null && !Array.isArray(j) && 'id_token' in j) {
      delete (j as Record<string, unknown>).id_token;
      const { 'content-length': _, ...rest } = headers;
      return { body: Buffer.from(JSON.stringify(j)), headers: rest };
    }
  } catch {
    // Not JSON: oauth4webapi refuses it.
  }
  return { body: new Uint8Array(raw), headers };
}
