/**
 * Inbound authentication: `SVC_INCOMING_AUTH_MODE` off (default) / optional / required, HS256 JWTs
 * verified with jose (`sub` and `tenant_id` or `tid` required, `exp` validated, `iss`/`aud` when
 * configured; `exp`, `nbf` and `iat` with one clock skew) and API keys from a JSON file compared
 * in constant time. The resulting principal's tenant scopes execute sessions. Credentials are
 * never echoed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Type, type Static } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import { errors as joseErrors, jwtVerify } from 'jose';
import { svcError, SvcFailure, type ErrorCode, type SvcError } from '../../common/errors.js';
import { check } from '../../pack/ajv.js';
import { errnoCode } from '../../pack/errno.js';

export type AuthMode = 'off' | 'optional' | 'required';

export interface Principal {
  /** How the caller authenticated. */
  method: 'jwt' | 'api_key' | 'anonymous';
  subject?: string;
  /** Tenant scope of execute sessions; '' for anonymous callers. */
  tenant: string;
}

/**
 * The API key file (`SVC_AUTH_API_KEYS_FILE`): a JSON array of principals. Keys are compared
 * exactly, and HTTP drops the white space around a header value, so a key with leading or
 * trailing white space could never be presented: the schema refuses it. Other members of an
 * entry are ignored.
 */
const ApiKeyRowSchema = Type.Object({
  key: Type.String({ minLength: 1, pattern: '^\\S(?:[\\s\\S]*\\S)?$' }),
  tenant_id: Type.String({ minLength: 1 }),
  subject: Type.String({ minLength: 1 }),
});
export const ApiKeyFileSchema = Type.Array(ApiKeyRowSchema, { $id: 'svc:config/api-key-file' });
export type ApiKeyRow = Static<typeof ApiKeyRowSchema>;

export interface InboundAuthConfig {
  mode: AuthMode;
  jwtSecret?: string;
  issuer?: string;
  audience?: string;
  apiKeys?: ApiKeyRow[];
}

export const ANONYMOUS: Principal = { method: 'anonymous', tenant: '' };

/**
 * Clock skew allowed between the token issuer and svc, in seconds, for every time claim: an `exp`
 * up to this far in the past and an `nbf` or `iat` up to this far in the future are accepted.
 */
export const JWT_CLOCK_SKEW_S = 60;

const startupFail = (message: string, hint: string): never => {
  throw new SvcFailure([svcError('auth_config_invalid', message, { hint })]);
};

/** Read the settings from the environment; every startup failure of SPEC is a clear SvcFailure. */
export async function inboundAuthFromEnv(env: Record<string, string | undefined>): Promise<InboundAuth> {
  const mode = (env.SVC_INCOMING_AUTH_MODE ?? 'off').trim() || 'off';
  if (mode !== 'off' && mode !== 'optional' && mode !== 'required')
    startupFail(
      `SVC_INCOMING_AUTH_MODE=${JSON.stringify(mode)} is not off, optional or required`,
      'unset it (off) or set optional or required',
    );
  const cfg: InboundAuthConfig = { mode: mode as AuthMode };
  if (env.SVC_AUTH_JWT_SECRET) cfg.jwtSecret = env.SVC_AUTH_JWT_SECRET;
  if (env.SVC_AUTH_JWT_ISSUER) cfg.issuer = env.SVC_AUTH_JWT_ISSUER;
  if (env.SVC_AUTH_JWT_AUDIENCE) cfg.audience = env.SVC_AUTH_JWT_AUDIENCE;
  if (env.SVC_AUTH_API_KEYS_FILE) cfg.apiKeys = await readKeyFile(env.SVC_AUTH_API_KEYS_FILE);
  if (cfg.mode === 'required' && !cfg.jwtSecret && !cfg.apiKeys) {
    startupFail(
      'SVC_INCOMING_AUTH_MODE=required needs SVC_AUTH_JWT_SECRET or SVC_AUTH_API_KEYS_FILE',
      'set an HS256 secret for JWTs, a JSON key file for API keys, or both',
    );
  }
  return new InboundAuth(cfg);
}

/** The key file: a JSON array of {key, tenant_id, subject}, all non-empty strings, keys unique. */
export async function readKeyFile(path: string): Promise<ApiKeyRow[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    return startupFail(
      `SVC_AUTH_API_KEYS_FILE cannot be read (${errnoCode(e)})`,
      'point it at a JSON file: [{"key": "...", "tenant_id": "...", "subject": "..."}]',
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return startupFail(
      'SVC_AUTH_API_KEYS_FILE is not valid JSON',
      'write a JSON array of {"key", "tenant_id", "subject"} objects',
    );
  }
  const file = check(ApiKeyFileSchema, data);
  if (!file.ok) return keyFileProblem(file.errors);
  const seen = new Map<string, number>();
  file.value.forEach((r, i) => {
    const first = seen.get(r.key);
    if (first !== undefined)
      startupFail(
        `entries ${first} and ${i} of SVC_AUTH_API_KEYS_FILE have the same key`,
        'give every principal its own key; one key cannot name two tenants',
      );
    seen.set(r.key, i);
  });
  return file.value.map((r) => ({ key: r.key, tenant_id: r.tenant_id, subject: r.subject }));
}

/** The startup failure for a key file that breaks its schema: the first bad entry, and why. */
function keyFileProblem(errors: ErrorObject[]): never {
  if (errors.some((e) => e.instancePath === ''))
    startupFail(
      'SVC_AUTH_API_KEYS_FILE must hold a JSON array',
      'write [{"key": "...", "tenant_id": "...", "subject": "..."}]',
    );
  const entry = (e: ErrorObject) => Number(e.instancePath.split('/')[1]);
  const i = errors.reduce((min, e) => Math.min(min, entry(e)), Infinity);
  const own = errors.filter((e) => entry(e) === i);
  // Only the white-space rule broken: say so (HTTP would drop the spaces from the header).
  if (own.every((e) => e.instancePath === `/${i}/key` && e.keyword === 'pattern')) {
    startupFail(
      `entry ${i} of SVC_AUTH_API_KEYS_FILE has a key with leading or trailing white space`,
      'remove the white space: HTTP drops it from the X-API-Key header, so that key could never match',
    );
  }
  return startupFail(
    `entry ${i} of SVC_AUTH_API_KEYS_FILE needs non-empty string key, tenant_id and subject`,
    'fix that entry; the server does not start with a malformed key file',
  );
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export class InboundAuth {
  private readonly secret?: Uint8Array;
  private readonly keys: Array<{ digest: Buffer; row: ApiKeyRow }>;

  constructor(readonly config: InboundAuthConfig) {
    if (config.jwtSecret) this.secret = new TextEncoder().encode(config.jwtSecret);
    this.keys = (config.apiKeys ?? []).map((row) => ({ digest: digest(row.key), row }));
  }

  get mode(): AuthMode {
    return this.config.mode;
  }

  /** The principal of a request, or the 401 problem. In mode off every caller is anonymous. */
  async authenticate(headers: Record<string, string | string[] | undefined>): Promise<Principal | SvcError> {
    if (this.mode === 'off') return ANONYMOUS;
    const authz = headers.authorization;
    const apiKey = headers['x-api-key'];
    if (authz !== undefined && apiKey !== undefined)
      return fail('auth_ambiguous', 'send either Authorization: Bearer or X-API-Key, not both', 'keep one credential');
    if (authz !== undefined) return this.bearer(String(authz));
    if (apiKey !== undefined) return this.apiKey(String(apiKey));
    if (this.mode === 'required')
      return fail(
        'auth_required',
        'this server requires credentials',
        'send Authorization: Bearer <JWT> or X-API-Key: <key> (see docs/auth.md)',
      );
    return ANONYMOUS;
  }

  private async bearer(header: string): Promise<Principal | SvcError> {
    const m = /^Bearer +(\S+)$/i.exec(header);
    if (!m)
      return fail(
        'bad_authorization_header',
        'the Authorization header is not `Bearer <token>`',
        'write Authorization: Bearer <JWT>',
      );
    if (!this.secret)
      return fail(
        'auth_method_unavailable',
        'this server does not accept JWTs',
        'use X-API-Key, or ask the operator to set SVC_AUTH_JWT_SECRET',
      );
    try {
      const { payload } = await jwtVerify(m[1]!, this.secret, {
        algorithms: ['HS256'],
        requiredClaims: ['exp'],
        clockTolerance: JWT_CLOCK_SKEW_S,
        ...(this.config.issuer ? { issuer: this.config.issuer } : {}),
        ...(this.config.audience ? { audience: this.config.audience } : {}),
      });
      // jose checks only the type of iat (its future check needs maxTokenAge, which would make iat required).
      if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + JWT_CLOCK_SKEW_S) {
        return fail(
          'auth_token_not_yet_valid',
          `the token was issued in the future (iat, more than ${JWT_CLOCK_SKEW_S} s ahead of this server)`,
          'check the clocks of the token issuer and the server, then mint a new token',
        );
      }
      return principalOf(payload);
    } catch (e) {
      return jwtProblem(e);
    }
  }

  private apiKey(given: string): Principal | SvcError {
    const d = digest(given);
    let found: ApiKeyRow | undefined;
    // Every key is compared, in constant time, whatever matched before.
    for (const k of this.keys) if (timingSafeEqual(d, k.digest) && !found) found = k.row;
    if (!this.keys.length)
      return fail(
        'auth_method_unavailable',
        'this server does not accept API keys',
        'use Authorization: Bearer <JWT>, or ask the operator to set SVC_AUTH_API_KEYS_FILE',
      );
    if (!found)
      return fail(
        'auth_unknown_key',
        'the X-API-Key is not a known key',
        'check the key: it is compared exactly, character for character and case-sensitively',
      );
    return { method: 'api_key', subject: found.subject, tenant: found.tenant_id };
  }
}

function fail(code: ErrorCode, message: string, hint: string): SvcError {
  return svcError(code, message, { hint });
}

/**
 * The principal of verified claims. `sub` and the tenant must be non-empty strings; the tenant is
 * `tenant_id`, and `tid` only when `tenant_id` is absent: a present but unusable `tenant_id` is
 * refused, never replaced by `tid`.
 */
function principalOf(payload: Record<string, unknown>): Principal | SvcError {
  const has = (k: string) => Object.hasOwn(payload, k);
  const usable = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
  if (!has('sub'))
    return fail(
      'auth_missing_claim',
      'the token has no `sub` claim',
      'mint tokens with sub (the subject) and tenant_id',
    );
  if (!usable(payload.sub))
    return fail(
      'auth_invalid_claim',
      `the token's \`sub\` claim is ${kindOf(payload.sub)}, not a non-empty string`,
      'mint tokens with sub as a non-empty string naming the subject',
    );
  const claim = has('tenant_id') ? 'tenant_id' : has('tid') ? 'tid' : undefined;
  if (!claim)
    return fail(
      'auth_missing_claim',
      'the token has no `tenant_id` (or `tid`) claim',
      'mint tokens with tenant_id (alias tid) naming the tenant',
    );
  const tenant = payload[claim];
  if (!usable(tenant)) {
    const alias = claim === 'tenant_id' && has('tid') ? '; `tid` is not read when tenant_id is present' : '';
    return fail(
      'auth_invalid_claim',
      `the token's \`${claim}\` claim is ${kindOf(tenant)}, not a non-empty string${alias}`,
      'mint tokens with tenant_id as a non-empty string naming the tenant',
    );
  }
  return { method: 'jwt', subject: payload.sub, tenant };
}

/** What a claim value is, without echoing it. */
function kindOf(v: unknown): string {
  if (v === '') return 'empty';
  if (v === null) return 'null';
  return Array.isArray(v) ? 'an array' : `a ${typeof v}`;
}

function jwtProblem(e: unknown): SvcError {
  if (e instanceof joseErrors.JWTExpired)
    return fail('auth_token_expired', 'the token has expired', 'mint a new token');
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    if (e.claim === 'exp' && e.reason === 'missing')
      return fail(
        'auth_missing_claim',
        'the token has no `exp` claim',
        'mint tokens with exp: svc refuses tokens that never expire',
      );
    // reason `invalid`: exp, nbf or iat is not a number.
    if (e.reason === 'invalid')
      return fail(
        'auth_malformed_token',
        `the token claim \`${e.claim}\` is not a number of seconds`,
        'mint the token with a JWT library: time claims are NumericDate numbers',
      );
    if (e.claim === 'nbf')
      return fail(
        'auth_token_not_yet_valid',
        `the token is not valid yet (nbf, more than ${JWT_CLOCK_SKEW_S} s ahead of this server)`,
        'check the clocks, or mint a token without a future nbf',
      );
    if (e.claim === 'iss')
      return fail(
        'auth_bad_issuer',
        'the token issuer (iss) is not the one this server expects',
        'mint the token with the configured issuer',
      );
    if (e.claim === 'aud')
      return fail(
        'auth_bad_audience',
        'the token audience (aud) is not the one this server expects',
        'mint the token with the configured audience',
      );
    return fail('auth_malformed_token', `the token claim \`${e.claim}\` is invalid`, 'mint a new token');
  }
  if (e instanceof joseErrors.JOSEAlgNotAllowed)
    return fail(
      'auth_bad_algorithm',
      'the token is not signed with HS256',
      'sign tokens with HS256 and the shared secret',
    );
  if (e instanceof joseErrors.JWSSignatureVerificationFailed)
    return fail(
      'auth_bad_signature',
      'the token signature does not verify',
      'sign tokens with the secret the server has (SVC_AUTH_JWT_SECRET)',
    );
  return fail(
    'auth_malformed_token',
    'the bearer token is not a well-formed JWT',
    'send a compact JWS (three base64url parts)',
  );
}

/** `WWW-Authenticate` of a 401 (RFC 6750 style; no token content). */
export function wwwAuthenticate(e: SvcError): string {
  const kind =
    e.code === 'bad_authorization_header' || e.code === 'auth_ambiguous' ? 'invalid_request' : 'invalid_token';
  const error = e.code === 'auth_required' ? '' : `, error="${kind}", error_description="${e.code}"`;
  return `Bearer realm="svc"${error}, ApiKey realm="svc", header="X-API-Key"`;
}
