/**
 * Where the credential of one vendor call comes from, in this order: the forwarding header the
 * request carried (when the deployment names one for the entry), the caller's user credential,
 * the tenant's, and the catalog's environment variables (unless the entry's fallback is `none`).
 */
import type { OutboundAuth } from '../../pack/cgs.js';
import type { Caller, Credential, CredentialPlace, CredentialsConfig } from './types.js';

export type Env = Record<string, string | undefined>;

export interface Source {
  cred: Credential;
  /** Token cache key ('' for a forwarded value: nothing is cached for it). */
  key: string;
  /** Where it came from, for hints (never the value). */
  from: string;
  /** Its place in the credentials file (to write a rotated refresh token back). */
  place?: CredentialPlace;
}

const own = <T>(o: Record<string, T>, k: string): T | undefined => (Object.hasOwn(o, k) ? o[k] : undefined);

/** The environment variable names an auth scheme needs. */
export function secretNames(auth: OutboundAuth): string[] {
  switch (auth.scheme) {
    case 'none':
      return [];
    case 'api_key':
      return [auth.env, ...(auth.also ?? []).map((k) => k.env)];
    case 'bearer':
      return [auth.env];
    case 'basic':
      return [auth.username_env, auth.password_env];
    case 'oauth2_client_credentials':
      return [auth.client_id_env, auth.client_secret_env];
  }
}

/** The credential of a call, or undefined when the caller has none (never for scheme `none`). */
export function sourceOf(
  config: CredentialsConfig,
  env: Env,
  entryId: string,
  auth: Exclude<OutboundAuth, { scheme: 'none' }>,
  caller: Caller,
): Source | undefined {
  const fwd = caller.forwarded?.[entryId];
  const entry = own(config.entries, entryId);
  if (fwd !== undefined && entry?.forward)
    return {
      // `X-Vendor-Token: Bearer abc` and `X-Vendor-Token: abc` both mean the token abc.
      cred:
        auth.scheme === 'api_key'
          ? { scheme: 'api_key', key: fwd }
          : { scheme: 'bearer', token: fwd.replace(/^Bearer\s+/i, '') },
      key: '',
      from: `the ${entry.forward} header`,
    };
  const tenant = own(config.tenants, caller.tenant);
  if (tenant) {
    const user = caller.subject === undefined ? undefined : own(tenant.users, caller.subject);
    const mine = user && own(user, entryId);
    if (mine)
      return {
        cred: mine,
        key: `u\0${caller.tenant}\0${caller.subject}\0${entryId}`,
        from: `the credentials file (tenants.${caller.tenant}.users.${caller.subject}.credentials.${entryId})`,
        place: { tenant: caller.tenant, subject: caller.subject!, entry: entryId },
      };
    const ours = own(tenant.credentials, entryId);
    if (ours)
      return {
        cred: ours,
        key: `t\0${caller.tenant}\0${entryId}`,
        from: `the credentials file (tenants.${caller.tenant}.credentials.${entryId})`,
        place: { tenant: caller.tenant, entry: entryId },
      };
  }
  if (entry?.fallback === 'none') return undefined;
  return fromEnv(env, entryId, auth);
}

function fromEnv(env: Env, entryId: string, auth: Exclude<OutboundAuth, { scheme: 'none' }>): Source | undefined {
  const from = secretNames(auth).join(', ');
  const key = `e\0${entryId}`;
  switch (auth.scheme) {
    case 'api_key': {
      const k = env[auth.env];
      if (!k) return undefined;
      const also: Record<string, string> = {};
      for (const a of auth.also ?? []) {
        const v = env[a.env];
        if (!v) return undefined;
        also[a.name] = v;
      }
      return { cred: { scheme: 'api_key', key: k, ...(auth.also ? { also } : {}) }, key, from };
    }
    case 'bearer': {
      const token = env[auth.env];
      return token ? { cred: { scheme: 'bearer', token }, key, from } : undefined;
    }
    case 'basic': {
      const username = env[auth.username_env];
      // An empty password is a password: vendors that take a key as the user name want `key:`.
      const password = env[auth.password_env];
      return username && password !== undefined
        ? { cred: { scheme: 'basic', username, password }, key, from }
        : undefined;
    }
    case 'oauth2_client_credentials': {
      const client_id = env[auth.client_id_env];
      const client_secret = env[auth.client_secret_env];
      if (!client_id || !client_secret) return undefined;
      return {
        cred: {
          scheme: 'oauth2_client_credentials',
          client_id,
          client_secret,
          token_url: auth.token_url,
          scopes: auth.scopes,
        },
        // A changed client id (a restart with other settings) never reuses the other client's token.
        key: `${key}\0${client_id}`,
        from,
      };
    }
  }
}
