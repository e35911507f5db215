/**
 * Outbound credentials: what a deployment provides per entry, tenant and user (the credentials
 * file, docs/auth.md "Outbound credentials"), and who a vendor call is made for (`Caller`).
 */

/** One credential, named by the scheme it is (each fits some catalog auth schemes, see `FITS`). */
export type Credential =
  /** `also`: the values of the catalog's further keys (`auth.also`), by their `name`. */
  | { scheme: 'api_key'; key: string; also?: Record<string, string> }
  | { scheme: 'bearer'; token: string }
  | { scheme: 'basic'; username: string; password: string }
  | {
      scheme: 'oauth2_client_credentials';
      client_id: string;
      client_secret: string;
      token_url?: string;
      scopes?: string[];
      audience?: string;
    }
  | {
      scheme: 'oauth2_refresh_token';
      client_id: string;
      client_secret?: string;
      token_url?: string;
      scopes?: string[];
      refresh_token: string;
    };

export type CredentialScheme = Credential['scheme'];

/** Which credentials a catalog's auth scheme takes (a token credential goes out as `Bearer`). */
export const FITS: Record<string, readonly CredentialScheme[]> = {
  none: [],
  api_key: ['api_key'],
  basic: ['basic'],
  bearer: ['bearer', 'oauth2_client_credentials', 'oauth2_refresh_token'],
  oauth2_client_credentials: ['bearer', 'oauth2_client_credentials', 'oauth2_refresh_token'],
};

/** Client TLS of an entry's vendor connections (mTLS): PEM texts, and an id naming this set. */
export interface ClientTls {
  id: string;
  cert: string;
  key: string;
  ca?: string;
}

/** Deployment-wide settings of one entry. */
export interface EntrySettings {
  /** `environment` (default): callers without a credential of their own use the catalog's env variables; `none`: they are refused. */
  fallback: 'environment' | 'none';
  /** An inbound header (lower case) whose value is this entry's credential for that request. */
  forward?: string;
  tls?: ClientTls;
}

export interface TenantSettings {
  read_only: boolean;
  credentials: Record<string, Credential>;
  users: Record<string, Record<string, Credential>>;
}

/** The credentials file as loaded (validated against the catalogs, TLS files read). */
export interface CredentialsConfig {
  entries: Record<string, EntrySettings>;
  tenants: Record<string, TenantSettings>;
}

export const NO_CREDENTIALS: CredentialsConfig = { entries: {}, tenants: {} };

/**
 * Who a vendor call is made for: the tenant and subject inbound auth decided, and the values of the
 * forwarding headers the request carried, by entry id (only headers the deployment names).
 */
export interface Caller {
  tenant: string;
  subject?: string;
  forwarded?: Readonly<Record<string, string>>;
}

export const NO_CALLER: Caller = { tenant: '' };

/** Where a refresh-token credential sits in the file (to write a rotated token back). */
export interface CredentialPlace {
  tenant: string;
  subject?: string;
  entry: string;
}
