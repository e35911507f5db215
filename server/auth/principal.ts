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
