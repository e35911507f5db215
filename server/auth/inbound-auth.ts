/**
 * Inbound authentication of a request: `SVC_INCOMING_AUTH_MODE` off (default) / optional /
 * required, a bearer JWT (see verify-jwt.ts) or an API key compared in constant time against
 * every key of the key file. The resulting principal's tenant scopes execute sessions.
 * Credentials are never echoed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { SvcError } from '../../common/errors.js';
import type { ApiKeyRow } from './api-key-file.js';
import { authProblem } from './auth-problem.js';
import { ANONYMOUS, type Principal } from './principal.js';
import { verifyJwt } from './verify-jwt.js';

export type AuthMode = 'off' | 'optional' | 'required';

export interface InboundAuthConfig {
  mode: AuthMode;
  jwtSecret?: string;
  issuer?: string;
  audience?: string;
  apiKeys?: ApiKeyRow[];
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
      return authProblem(
        'auth_ambiguous',
        'send either Authorization: Bearer or X-API-Key, not both',
        'keep one credential',
      );
    if (authz !== undefined) return this.bearer(String(authz));
    if (apiKey !== undefined) return this.apiKey(String(apiKey));
    if (this.mode === 'required')
      return authProblem(
        'auth_required',
        'this server requires credentials',
        'send Authorization: Bearer <JWT> or X-API-Key: <key> (see docs/auth.md)',
      );
    return ANONYMOUS;
  }

  private async bearer(header: string): Promise<Principal | SvcError> {
    const m = /^Bearer +(\S+)$/i.exec(header);
    if (!m)
      return authProblem(
        'bad_authorization_header',
        'the Authorization header is not `Bearer <token>`',
        'write Authorization: Bearer <JWT>',
      );
    if (!this.secret)
      return authProblem(
        'auth_method_unavailable',
        'this server does not accept JWTs',
        'use X-API-Key, or ask the operator to set SVC_AUTH_JWT_SECRET',
      );
    return verifyJwt(m[1]!, this.secret, this.config);
  }

  private apiKey(given: string): Principal | SvcError {
    const d = digest(given);
    let found: ApiKeyRow | undefined;
    // Every key is compared, in constant time, whatever matched before.
    for (const k of this.keys) if (timingSafeEqual(d, k.digest) && !found) found = k.row;
    if (!this.keys.length)
      return authProblem(
        'auth_method_unavailable',
        'this server does not accept API keys',
        'use Authorization: Bearer <JWT>, or ask the operator to set SVC_AUTH_API_KEYS_FILE',
      );
    if (!found)
      return authProblem(
        'auth_unknown_key',
        'the X-API-Key is not a known key',
        'check the key: it is compared exactly, character for character and case-sensitively',
      );
    return { method: 'api_key', subject: found.subject, tenant: found.tenant_id };
  }
}
