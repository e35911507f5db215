/**
 * DNS-rebinding protection of every route (HTTP, SSE, the playground, `/mcp`, `/v1/health`): a page
 * of another site must not reach svc through a name of its own that resolves to svc's address,
 * where it would run programs with the operator's vendor credentials. A browser always sends the
 * page's host name in `Host`, and its origin in `Origin` on cross-origin requests; neither can be
 * forged by a page. So:
 * - `Host` must name the server: a loopback name (`localhost`, `127.0.0.1`, `[::1]`), the address
 *   the connection came in on (what a probe on the pod IP sends), or a name of `SVC_ALLOWED_HOSTS`;
 *   a server listening on another address than loopback with no list answers any Host (as before).
 *   Names compare case-insensitively, without their port.
 * - `Origin`, when sent, must be listed in `SVC_ALLOWED_ORIGINS` or name the request's own host or
 *   an allowed one; `Origin: null` (sandboxed frames, `file:`) only passes when `null` is listed.
 *   No `Origin` (curl, the CLI, SDK clients, same-origin navigations) passes.
 * `SVC_MCP_ALLOWED_HOSTS` / `SVC_MCP_ALLOWED_ORIGINS` are older names of the same lists.
 */
import type { IncomingMessage } from 'node:http';
import { svcError, SvcFailure, type SvcError } from '../../common/errors.js';

/** The allow lists, as given (names with or without a port; origins like `https://app.example`). */
export interface AllowedHosts {
  hosts?: readonly string[];
  origins?: readonly string[];
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Characters that never belong in a Host value but would make the URL parser read another host. */
const NOT_A_HOST = /[/?#@\\\s]/;

/** The host name of a `Host` value (`Name:port`, `[v6]:port`), lower case; undefined when malformed. */
export function hostnameOf(value: string): string | undefined {
  if (!value || NOT_A_HOST.test(value)) return undefined;
  try {
    return new URL(`http://${value}`).hostname.toLowerCase() || undefined;
  } catch {
    return undefined;
  }
}

/** True when a listening address only takes connections from this machine. */
function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase();
  return a === 'localhost' || a === '::1' || a === '[::1]' || a.startsWith('127.');
}

/** The local address of a connection as a Host names it (`::ffff:10.0.0.5` → `10.0.0.5`, `::1` → `[::1]`). */
function addressAsHost(address: string | undefined): string | undefined {
  if (!address) return undefined;
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  return address.includes(':') ? `[${address.toLowerCase()}]` : address;
}

/** A header value as an error message shows it: at most 100 characters. */
function shown(v: string): string {
  return JSON.stringify(v.length > 100 ? `${v.slice(0, 100)}…` : v);
}

export class HostPolicy {
  private readonly hosts: ReadonlySet<string>;
  private readonly origins: ReadonlySet<string>;
  /** Any Host passes: set once the server listens on a non-loopback address with no host list. */
  private anyHost = false;

  /** Until `listeningOn` says otherwise the server counts as loopback-only (the strict policy). */
  constructor(allowed: AllowedHosts = {}) {
    this.hosts = new Set((allowed.hosts ?? []).map((h) => hostnameOf(h) ?? h.toLowerCase()));
    this.origins = new Set((allowed.origins ?? []).map((o) => originOf(o) ?? o.toLowerCase()));
  }

  /** The server listens on `address` (its `--host`). */
  listeningOn(address: string): void {
    this.anyHost = this.hosts.size === 0 && !isLoopbackAddress(address);
  }

  /** Why a request is refused (`host_not_allowed`, `origin_not_allowed`), or undefined. */
  check(req: IncomingMessage): SvcError | undefined {
    const value = req.headers.host ?? '';
    const host = hostnameOf(value);
    if (!this.anyHost && !(host !== undefined && this.hostAllowed(host, req)))
      return svcError(
        'host_not_allowed',
        host === undefined
          ? `the Host header ${value ? `${shown(value)} is malformed` : 'is missing'}`
          : `this server does not answer the host name ${shown(host)} (DNS-rebinding protection)`,
        {
          hint: 'call it by a loopback name (localhost, 127.0.0.1, [::1]); a proxy that forwards another name needs it in SVC_ALLOWED_HOSTS (a comma list, docs/deploy.md)',
        },
      );
    const origin = req.headers.origin;
    if (origin === undefined || this.originAllowed(origin, host, req)) return undefined;
    return svcError('origin_not_allowed', `requests from the page origin ${shown(origin)} are refused`, {
      hint: 'a page of another site may not call svc; to allow one, add its origin (https://app.example) to SVC_ALLOWED_ORIGINS (a comma list, docs/http.md)',
    });
  }

  private hostAllowed(host: string, req: IncomingMessage): boolean {
    return LOOPBACK_NAMES.has(host) || this.hosts.has(host) || host === addressAsHost(req.socket.localAddress);
  }

  private originAllowed(origin: string, host: string | undefined, req: IncomingMessage): boolean {
    const o = origin.toLowerCase();
    if (this.origins.has(o)) return true;
    if (o === 'null') return false;
    let url: URL;
    try {
      url = new URL(o);
    } catch {
      return false;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    if (this.origins.has(url.origin)) return true;
    return url.hostname === host || this.hostAllowed(url.hostname, req);
  }
}

/**
 * An origin of the allow list as browsers send it (lower case, no default port), `null` as is;
 * undefined when the entry is not an http(s) origin (a bare name, a path, a query).
 */
function originOf(entry: string): string | undefined {
  const e = entry.trim().toLowerCase();
  if (e === 'null') return e;
  try {
    const u = new URL(e);
    const bare = u.pathname === '/' && !u.search && !u.hash && !u.username && !u.password;
    return (u.protocol === 'http:' || u.protocol === 'https:') && bare ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/**
 * The allow lists of an environment: `SVC_ALLOWED_HOSTS` and `SVC_ALLOWED_ORIGINS` (comma lists),
 * merged with their older names `SVC_MCP_ALLOWED_HOSTS` and `SVC_MCP_ALLOWED_ORIGINS`. An entry
 * that is not a host name (`https://svc.example`) or not an origin (`svc.example`, a path) stops
 * the start-up with `bad_arguments`.
 */
export function allowedHostsFromEnv(env: Record<string, string | undefined>): AllowedHosts {
  const hosts: string[] = [];
  const origins: string[] = [];
  for (const name of ['SVC_ALLOWED_HOSTS', 'SVC_MCP_ALLOWED_HOSTS'])
    for (const h of list(env[name])) {
      if (hostnameOf(h) === undefined)
        throw new SvcFailure([
          svcError('bad_arguments', `${name}: ${shown(h)} is not a host name`, {
            hint: `write host names, optionally with a port, comma separated: ${name}=svc.example.com,svc.internal:7311`,
          }),
        ]);
      hosts.push(h);
    }
  for (const name of ['SVC_ALLOWED_ORIGINS', 'SVC_MCP_ALLOWED_ORIGINS'])
    for (const o of list(env[name])) {
      if (originOf(o) === undefined)
        throw new SvcFailure([
          svcError('bad_arguments', `${name}: ${shown(o)} is not an origin`, {
            hint: `write origins as browsers send them, scheme and host (and port), comma separated: ${name}=https://app.example,http://localhost:5173`,
          }),
        ]);
      origins.push(o);
    }
  return { ...(hosts.length ? { hosts } : {}), ...(origins.length ? { origins } : {}) };
}
