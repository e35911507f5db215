/**
 * Which transport sessions the `/mcp` endpoint may close to keep its cap from locking clients
 * out. A flood of `initialize` requests opens sessions that are never used; so:
 *
 * - a session is **fresh** from its initialize until it sends a request (a JSON-RPC message with
 *   an `id`, other than initialize): a client that initializes and calls nothing, or never sends
 *   `notifications/initialized`, holds a fresh session, which is closed after the short fresh idle
 *   limit (`SVC_MCP_FRESH_IDLE_SECS`) instead of the long one (`SVC_MCP_SESSION_IDLE_SECS`);
 * - at the cap, before a new session is refused, one session is closed to make room: a fresh one
 *   before one in use, each the least recently used first, and never one signed in through
 *   `svc_incoming_auth` or one with a POST in progress (a call running, its event stream open).
 *   Only when no session may go is the new one refused (503).
 */

/** What the cap reads of a transport session. */
export interface CapEntry {
  lastUsed: number;
  fresh: boolean;
  /** POSTs of the session in progress (a standing GET stream does not count). */
  busy: number;
  session: { readonly signedIn: boolean };
}

/** The idle limit that applies to `e`: the fresh one until it sent a request. */
export function idleLimit(e: CapEntry, limits: { idleMs: number; freshIdleMs: number }): number {
  return e.fresh ? Math.min(limits.freshIdleMs, limits.idleMs) : limits.idleMs;
}

/** The session to close to make room at the cap (see the module comment), or undefined when none may go. */
export function evictee<K>(entries: Iterable<[K, CapEntry]>): K | undefined {
  let best: [K, CapEntry] | undefined;
  for (const pair of entries) {
    const e = pair[1];
    if (e.session.signedIn || e.busy > 0) continue;
    const b = best?.[1];
    if (!b || (e.fresh && !b.fresh) || (e.fresh === b.fresh && e.lastUsed < b.lastUsed)) best = pair;
  }
  return best?.[0];
}

/** True when `body` (one message or a batch) holds a request other than initialize: the session is in use. */
export function holdsRequest(body: unknown): boolean {
  for (const m of (Array.isArray(body) ? body : [body]) as unknown[])
    if (typeof m === 'object' && m !== null && 'id' in m && 'method' in m && m.method !== 'initialize') return true;
  return false;
}
