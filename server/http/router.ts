/**
 * A tiny router over node:http: method + path pattern (`/v1/registry/:id`) -> handler. Unknown
 * paths answer 404, known paths with another method 405 with an `Allow` header.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export type Params = Record<string, string>;
export type Handler = (req: IncomingMessage, res: ServerResponse, params: Params, url: URL) => Promise<void> | void;

interface Route {
  method: string;
  parts: string[];
  handler: Handler;
}

export type Match = { kind: 'found'; handler: Handler; params: Params } | { kind: 'method'; allow: string[] } | { kind: 'none' };

export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, handler: Handler): this {
    this.routes.push({ method, parts: pattern.split('/').filter(Boolean), handler });
    return this;
  }

  match(method: string, pathname: string): Match {
    const segs = pathname.split('/').filter(Boolean);
    const allow = new Set<string>();
    for (const r of this.routes) {
      const params = matchParts(r.parts, segs);
      if (!params) continue;
      if (r.method === method || (method === 'HEAD' && r.method === 'GET')) return { kind: 'found', handler: r.handler, params };
      allow.add(r.method);
    }
    return allow.size ? { kind: 'method', allow: [...allow].sort() } : { kind: 'none' };
  }
}

function matchParts(parts: string[], segs: string[]): Params | undefined {
  if (parts.length !== segs.length) return undefined;
  const params: Params = {};
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    let s: string;
    try { s = decodeURIComponent(segs[i]!); } catch { return undefined; }
    if (p.startsWith(':')) params[p.slice(1)] = s;
    else if (p !== s) return undefined;
  }
  return params;
}
