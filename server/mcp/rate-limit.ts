/**
 * How many new MCP transport sessions one client address may open: a token bucket per address
 * (`SVC_MCP_NEW_SESSIONS_PER_MIN`), so that one client flooding `initialize` cannot fill the
 * session cap by itself. A bucket holds a minute's worth of sessions and refills evenly over the
 * minute. An IPv6 client is counted by its /64 (one host is usually given a whole /64, and would
 * otherwise get a fresh bucket per address), an IPv4-mapped IPv6 address as its IPv4 address.
 *
 * The buckets are bounded (`maxAddresses`): past that many addresses the least recently seen one
 * is forgotten (it starts full again), so a flood from many addresses costs no memory per
 * address. Behind a reverse proxy every client has the proxy's address and shares one bucket:
 * raise the limit there, or set it to 0 (off).
 */

/** One address's bucket: tokens held at `at` (ms). */
interface Bucket {
  tokens: number;
  at: number;
}

export interface NewSessionLimitOptions {
  /** New sessions per minute per address (also the burst); 0: no limit. */
  perMinute: number;
  /** Addresses remembered at once (default 10 000). */
  maxAddresses?: number;
  now: () => number;
}

/** The answer to one new session: allowed, or refused with the seconds until a token is back and why. */
export type Take = { ok: true } | { ok: false; retryAfterSecs: number; message: string };

export class NewSessionLimit {
  /** Buckets by address key, least recently seen first (a take moves its address last). */
  private readonly buckets = new Map<string, Bucket>();
  private readonly maxAddresses: number;

  constructor(private readonly opts: NewSessionLimitOptions) {
    this.maxAddresses = opts.maxAddresses ?? 10_000;
  }

  /** Addresses remembered now. */
  get size(): number {
    return this.buckets.size;
  }

  /** Take one token of `address`'s bucket (a new session from it). */
  take(address: string | undefined): Take {
    const perMinute = this.opts.perMinute;
    if (perMinute <= 0) return { ok: true };
    const key = addressKey(address);
    const now = this.opts.now();
    const held = this.buckets.get(key);
    const perMs = perMinute / 60_000;
    const tokens = held ? Math.min(perMinute, held.tokens + (now - held.at) * perMs) : perMinute;
    this.buckets.delete(key);
    this.buckets.set(key, { tokens: tokens >= 1 ? tokens - 1 : tokens, at: now });
    if (this.buckets.size > this.maxAddresses) this.buckets.delete(this.buckets.keys().next().value!);
    if (tokens >= 1) return { ok: true };
    const retryAfterSecs = Math.max(1, Math.ceil((1 - tokens) / perMs / 1000));
    const message =
      `too many new MCP sessions from this address (${perMinute} a minute, SVC_MCP_NEW_SESSIONS_PER_MIN); ` +
      `retry after ${retryAfterSecs} s, or keep using the session you have`;
    return { ok: false, retryAfterSecs, message };
  }
}

/**
 * The key an address is counted under: IPv4 as it is, an IPv4-mapped IPv6 address as its IPv4
 * address, other IPv6 by its /64 (the first four groups, expanded), `''` when unknown.
 */
export function addressKey(address: string | undefined): string {
  if (!address) return '';
  const a = address.split('%')[0]!.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped) return mapped[1]!;
  if (!a.includes(':')) return a;
  const [head = '', tail] = a.split('::');
  const groups = head ? head.split(':') : [];
  if (tail !== undefined) {
    const rest = tail ? tail.split(':') : [];
    while (groups.length + rest.length < 8) groups.push('0');
    groups.push(...rest);
  }
  const prefix = groups.slice(0, 4).map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16).toString(16) : g));
  return `${prefix.join(':')}::/64`;
}
