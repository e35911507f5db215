/**
 * Vendor credentials the terminal hands to the server for forwarding: each environment variable
 * `SVC_VENDOR_HEADER_<NAME>` becomes the request header `<name>` (underscores as dashes), e.g.
 * `SVC_VENDOR_HEADER_X_VENDOR_TOKEN=...` → `x-vendor-token: ...`. The server forwards only the
 * headers its credentials file names (docs/auth.md "Forwarding"); svc's own credential headers
 * cannot be set this way.
 */
import { TerminalError, TERMINAL_EXIT } from './errors.js';

const PREFIX = 'SVC_VENDOR_HEADER_';
const OWN = new Set(['authorization', 'x-api-key', 'cookie', 'proxy-authorization', 'host', 'content-type', 'accept']);

export function vendorHeaders(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (!k.startsWith(PREFIX) || !v) continue;
    const name = k.slice(PREFIX.length).toLowerCase().replace(/_/g, '-');
    if (!/^[a-z0-9][a-z0-9-]*$/.test(name) || OWN.has(name))
      throw new TerminalError(
        'bad_arguments',
        `${k} does not name a vendor header svc can forward`,
        'name the header the server forwards, e.g. SVC_VENDOR_HEADER_X_VENDOR_TOKEN',
        TERMINAL_EXIT.usage,
      );
    if (/[\r\n]/.test(v))
      throw new TerminalError(
        'bad_arguments',
        `${k} holds a line break`,
        'set it to the token alone',
        TERMINAL_EXIT.usage,
      );
    out[name] = v.trim();
  }
  return out;
}
