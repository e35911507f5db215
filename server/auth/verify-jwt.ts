/**
 * Verifying a bearer JWT: HS256 with jose, `exp` required, `iss`/`aud` when configured, `exp`,
 * `nbf` and `iat` with one clock skew; `sub` and `tenant_id` (or `tid`) make the principal. Every
 * refusal is a 401 problem naming what is wrong, without echoing the token or a claim value.
 */
import { errors as joseErrors, jwtVerify } from 'jose';
import type { SvcError } from '../../common/errors.js';
import { authProblem } from './auth-problem.js';
import type { Principal } from './principal.js';

/**
 * Clock skew allowed between the token issuer and svc, in seconds, for every time claim: an `exp`
 * up to this far in the past and an `nbf` or `iat` up to this far in the future are accepted.
 */
export const JWT_CLOCK_SKEW_S = 60;

/** The principal of a compact JWT signed with `secret`, or the 401 problem. */
export async function verifyJwt(
  token: string,
  secret: Uint8Array,
  expect: { issuer?: string; audience?: string },
): Promise<Principal | SvcError> {
  try {
    const { payload } = await jwtVerify(token, secret, {
      algorithms: ['HS256'],
      requiredClaims: ['exp'],
      clockTolerance: JWT_CLOCK_SKEW_S,
      ...(expect.issuer ? { issuer: expect.issuer } : {}),
      ...(expect.audience ? { audience: expect.audience } : {}),
    });
    // jose checks only the type of iat (its future check needs maxTokenAge, which would make iat required).
    if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + JWT_CLOCK_SKEW_S) {
      return authProblem(
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

/**
 * The principal of verified claims. `sub` and the tenant must be non-empty strings; the tenant is
 * `tenant_id`, and `tid` only when `tenant_id` is absent: a present but unusable `tenant_id` is
 * refused, never replaced by `tid`.
 */
function principalOf(payload: Record<string, unknown>): Principal | SvcError {
  const has = (k: string) => Object.hasOwn(payload, k);
  const usable = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
  if (!has('sub'))
    return authProblem(
      'auth_missing_claim',
      'the token has no `sub` claim',
      'mint tokens with sub (the subject) and tenant_id',
    );
  if (!usable(payload.sub))
    return authProblem(
      'auth_invalid_claim',
      `the token's \`sub\` claim is ${kindOf(payload.sub)}, not a non-empty string`,
      'mint tokens with sub as a non-empty string naming the subject',
    );
  const claim = has('tenant_id') ? 'tenant_id' : has('tid') ? 'tid' : undefined;
  if (!claim)
    return authProblem(
      'auth_missing_claim',
      'the token has no `tenant_id` (or `tid`) claim',
      'mint tokens with tenant_id (alias tid) naming the tenant',
    );
  const tenant = payload[claim];
  if (!usable(tenant)) {
    const alias = claim === 'tenant_id' && has('tid') ? '; `tid` is not read when tenant_id is present' : '';
    return authProblem(
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
    return authProblem('auth_token_expired', 'the token has expired', 'mint a new token');
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    if (e.claim === 'exp' && e.reason === 'missing')
      return authProblem(
        'auth_missing_claim',
        'the token has no `exp` claim',
        'mint tokens with exp: svc refuses tokens that never expire',
      );
    // reason `invalid`: exp, nbf or iat is not a number.
    if (e.reason === 'invalid')
      return authProblem(
        'auth_malformed_token',
        `the token claim \`${e.claim}\` is not a number of seconds`,
        'mint the token with a JWT library: time claims are NumericDate numbers',
      );
    if (e.claim === 'nbf')
      return authProblem(
        'auth_token_not_yet_valid',
        `the token is not valid yet (nbf, more than ${JWT_CLOCK_SKEW_S} s ahead of this server)`,
        'check the clocks, or mint a token without a future nbf',
      );
    if (e.claim === 'iss')
      return authProblem(
        'auth_bad_issuer',
        'the token issuer (iss) is not the one this server expects',
        'mint the token with the configured issuer',
      );
    if (e.claim === 'aud')
      return authProblem(
        'auth_bad_audience',
        'the token audience (aud) is not the one this server expects',
        'mint the token with the configured audience',
      );
    return authProblem('auth_malformed_token', `the token claim \`${e.claim}\` is invalid`, 'mint a new token');
  }
  if (e instanceof joseErrors.JOSEAlgNotAllowed)
    return authProblem(
      'auth_bad_algorithm',
      'the token is not signed with HS256',
      'sign tokens with HS256 and the shared secret',
    );
  if (e instanceof joseErrors.JWSSignatureVerificationFailed)
    return authProblem(
      'auth_bad_signature',
      'the token signature does not verify',
      'sign tokens with the secret the server has (SVC_AUTH_JWT_SECRET)',
    );
  return authProblem(
    'auth_malformed_token',
    'the bearer token is not a well-formed JWT',
    'send a compact JWS (three base64url parts)',
  );
}
