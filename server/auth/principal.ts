/**
 * Who a request comes from, as inbound auth decided: how the caller authenticated, its subject,
 * and the tenant that scopes its execute sessions.
 */

export interface Principal {
  /** How the caller authenticated. */
  method: 'jwt' | 'api_key' | 'anonymous';
  subject?: string;
  /** Tenant scope of execute sessions; '' for anonymous callers. */
  tenant: string;
}

export const ANONYMOUS: Principal = { method: 'anonymous', tenant: '' };

/** Request headers as node or the MCP SDK hands them over. */
export type HeaderBag = Record<string, string | string[] | undefined>;

/**
 * The sender of a request for the execute core: its subject, and a reader of its headers. The
 * core asks only for the forwarding headers the credentials file names (lower-case names).
 */
export function whoOf(
  p: Principal,
  headers: HeaderBag | undefined,
): { subject?: string; header: (name: string) => string | undefined } {
  return {
    ...(p.subject !== undefined ? { subject: p.subject } : {}),
    header: (name) => {
      const v = headers?.[name];
      return Array.isArray(v) ? v[0] : v;
    },
  };
}
