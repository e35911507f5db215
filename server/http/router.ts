/**
 * A tiny router over node:http: method + path pattern (`/v1/registry/:id`) -> handler. Unknown
 * paths answer 404, known paths with another method 405 with an `Allow` header.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestUrl } from '../../common/request-target.js';

export type Params = Record<string, string>;
export type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  params: Params,
  url: RequestUrl,
) => Promise<void> | void;

interface Route {
  method: string;
  pattern: string;
  parts: string[];
  handler: Handler;
}

/** `pattern` is the route as registered (`/v1/registry/:id`), whatever spelling the request used. */
export type Match =
  | { kind: 'found'; handler: Handler; params: Params; pattern: string }
  | { kind: 'method'; allow: string[] }
  | { kind: 'none' };

export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, handler: Handler): this {
    this.routes.push({ method, pattern, parts: pattern.split('/').filter(Boolean), handler });
    return this;
  }

  /** Every registered route, as `METHOD /pattern` (for checks that each route is classified). */
  list(): Array<{ method: string; pattern: string }> {
    return this.routes.map((r) => ({ method: r.method, pattern: r.pattern }));
  }

  match(method: string, pathname: string): Match {
    const segs = pathname.split('/').filter(Boolean);
    let allow: Set<string> | undefined; // only for a path known under other methods (405)
    for (const r of this.routes) {
      const params = matchParts(r.parts, segs);
      if (!params) continue;
      if (r.method === method || (method === 'HEAD' && r.method === 'GET'))
        return { kind: 'found', handler: r.handler, params, pattern: r.pattern };
      (allow ??= new Set()).add(r.method);
    }
    return allow ? { kind: 'method', allow: [...allow].sort() } : { kind: 'none' };
  }
}

/**
 * The path as the router sees it: empty segments dropped and each segment percent-decoded, so
 * `/v1//registry/` and `/v1/%72egistry` both read `/v1/registry`. Undefined when a segment does not
 * decode. Decisions about a path (auth, error format) are made on this form, never on the raw one.
 */
export function canonicalPath(pathname: string): string | undefined {
  const out: string[] = [];
  for (const seg of pathname.split('/')) {
    if (!seg) continue;
    try {
      out.push(decodeURIComponent(seg));
    } catch {
      return undefined;
    }
  }
  return '/' + out.join('/');
}

/**
 * The params of `segs` when they match `parts`: literal parts are compared first, so a route of
 * another shape costs no params object; a segment is decoded only when it holds a `%`.
 */
function matchParts(parts: string[], segs: string[]): Params | undefined {
  if (parts.length !== segs.length) return undefined;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.charCodeAt(0) !== COLON && decodeSegment(segs[i]!) !== p) return undefined;
  }
  const params: Params = {};
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.charCodeAt(0) !== COLON) continue;
    const s = decodeSegment(segs[i]!);
    if (s === undefined) return undefined;
    params[p.slice(1)] = s;
  }
  return params;
}

const COLON = 58;

/** A path segment percent-decoded; undefined when it does not decode. */
function decodeSegment(seg: string): string | undefined {
  if (!seg.includes('%')) return seg;
  try {
    return decodeURIComponent(seg);
  } catch {
    return undefined;
  }
}
