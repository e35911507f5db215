/**
 * DNS-rebinding protection of `/mcp`: a browser page on another site must not reach a local MCP
 * server through a name that resolves to 127.0.0.1. `Host` must name an allowed host: the list of
 * `SVC_MCP_ALLOWED_HOSTS`, or, when unset and the server listens on loopback, a loopback name
 * (`localhost`, `127.0.0.1`, `[::1]`); a server on a public address with no list accepts any Host.
 * An `Origin`, when sent, must be one of `SVC_MCP_ALLOWED_ORIGINS` or name an allowed host (with no
 * host list on a public address: the request's own Host).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { McpConfig } from './config.js';

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

function hostnameOf(hostHeader: string): string | undefined {
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === 'localhost' || host.startsWith('127.');
}

/** Why a request is refused (a message), or undefined when it may pass. */
export function checkHostAndOrigin(
  headers: IncomingHttpHeaders,
  config: Pick<McpConfig, 'allowedHosts' | 'allowedOrigins'>,
  listening: { host: string } | undefined,
): string | undefined {
  const host = headers.host ? hostnameOf(headers.host) : undefined;
  if (!host) return 'missing or malformed Host header';
  const allowed =
    config.allowedHosts?.map((h) => h.toLowerCase()) ??
    (listening && isLoopback(listening.host) ? LOOPBACK : undefined);
  if (allowed && !allowed.includes(host))
    return `Host ${host} is not allowed on /mcp (set SVC_MCP_ALLOWED_HOSTS to allow it)`;
  const origin = headers.origin;
  if (origin === undefined) return undefined;
  if (config.allowedOrigins?.includes(origin)) return undefined;
  let originHost: string | undefined;
  try {
    originHost = new URL(origin).hostname.toLowerCase();
  } catch {
    originHost = undefined;
  }
  const ok = originHost !== undefined && (allowed ? allowed.includes(originHost) : originHost === host);
  return ok
    ? undefined
    : `Origin ${origin.slice(0, 100)} is not allowed on /mcp (set SVC_MCP_ALLOWED_ORIGINS to allow it)`;
}
