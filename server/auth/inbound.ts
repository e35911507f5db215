/**
 * Inbound authentication's settings: reading `SVC_INCOMING_AUTH_MODE`, the JWT secret, issuer and
 * audience, and the API key file from the environment into an InboundAuth, where every startup
 * problem is a clear `auth_config_invalid`. Verifying credentials is inbound-auth.ts (API keys)
 * and verify-jwt.ts (JWTs); this module also re-exports them for the server and the CLI.
 */
import { readKeyFile } from './api-key-file.js';
import { InboundAuth, type AuthMode, type InboundAuthConfig } from './inbound-auth.js';
import { startupFail } from './startup-fail.js';

export { ApiKeyFileSchema, readKeyFile, type ApiKeyRow } from './api-key-file.js';
export { wwwAuthenticate } from './auth-problem.js';
export { InboundAuth, type AuthMode, type InboundAuthConfig } from './inbound-auth.js';
export { ANONYMOUS, type Principal } from './principal.js';
export { JWT_CLOCK_SKEW_S } from './verify-jwt.js';

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
