/**
 * The problems inbound auth answers with (a 401 SvcError with a hint) and the `WWW-Authenticate`
 * header that goes with one. Credentials are never echoed.
 */
import { svcError, type ErrorCode, type SvcError } from '../../common/errors.js';

/** An inbound auth problem: its code, what is wrong, and how to fix it. */
export function authProblem(code: ErrorCode, message: string, hint: string): SvcError {
  return svcError(code, message, { hint });
}

/** `WWW-Authenticate` of a 401 (RFC 6750 style; no token content). */
export function wwwAuthenticate(e: SvcError): string {
  const kind =
    e.code === 'bad_authorization_header' || e.code === 'auth_ambiguous' ? 'invalid_request' : 'invalid_token';
  const error = e.code === 'auth_required' ? '' : `, error="${kind}", error_description="${e.code}"`;
  return `Bearer realm="svc"${error}, ApiKey realm="svc", header="X-API-Key"`;
}
