/**
 * Test helper: a small scriptable vendor for faults json-server cannot produce on demand (status
 * codes, Retry-After, slow or streamed answers, connection resets, malformed or oversized bodies,
 * cursor pagination, an OAuth2 token endpoint). A real node:http server on 127.0.0.1 and a free
 * port; it records every request so tests can assert what was sent, and that nothing was sent.
 *
 * @example
 * const v = await startFaultVendor({ 'GET /items': [{ status: 503 }, { json: [{ id: 1 }] }] });
 * t.teardown(() => v.close());
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileSource, Registry, registryEntry as entryOfCgs, type RegistryEntry } from '../../pack/index.js';

/** One request as the vendor saw it. */
export interface RecordedRequest {
  method: string;
  /** Path and query exactly as received, e.g. `/items?kind=alpha`. */
  url: string;
  path: string;
  query: URLSearchParams;
  /** Values of `:name` segments of the matched route key. */
  params: Record<string, string>;
  /** Lower-case header names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  body: string;
  /** `Date.now()` when the request's headers arrived. */
  at: number;
}

/** How to answer one request. Everything is optional; the default is `200` with an empty JSON object. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** A JSON body (content type application/json unless `contentType` says otherwise). */
  json?: unknown;
  /** A raw body (content type text/plain unless `contentType` says otherwise). */
  text?: string | Buffer;
  contentType?: string;
  /** Wait this long before sending anything (status and headers included). */
  delayMs?: number;
  /** Send the body in these pieces, pausing `chunkDelayMs` between them (chunked encoding). */
  chunks?: Array<string | Buffer>;
  chunkDelayMs?: number;
  /** Destroy the socket: `before` any response byte, or `mid` body (after the headers and half of `json`/`text`). */
  reset?: 'before' | 'mid';
  /** Never answer (the client has to time out or cancel). */
  hang?: boolean;
}

/** `n` counts the requests this route saw before this one (0 for the first). */
export type Handler = (req: RecordedRequest, n: number) => Reply | Promise<Reply>;
/** A fixed reply, a script of replies by attempt (the last one repeats), or a function. */
export type Route = Reply | Reply[] | Handler;
/** Keys are `METHOD /path` or `/path` (any method); `:name` segments match any one segment. */
export type Routes = Record<string, Route>;

export interface FaultVendor {
  /** Base URL, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  url: string;
  /** Every request received, in arrival order (unmatched ones included). */
  requests: RecordedRequest[];
  /** The requests whose path is `path` (and method, when given). */
  hits(path: string, method?: string): RecordedRequest[];
  /** Replace or add routes while the server runs. */
  route(key: string, route: Route): void;
  close(): Promise<void>;
}

interface Compiled {
  method?: string;
  segments: string[];
  route: Route;
  seen: number;
}

function compileKey(key: string, route: Route): Compiled {
  const m = /^(?:([A-Z]+)\s+)?(\/\S*)$/.exec(key.trim());
  if (!m) throw new Error(`fault vendor: bad route key ${JSON.stringify(key)}`);
  return { ...(m[1] ? { method: m[1] } : {}), segments: m[2]!.split('/'), route, seen: 0 };
}

function match(c: Compiled, method: string, path: string): Record<string, string> | undefined {
  if (c.method && c.method !== method) return undefined;
  const segs = path.split('/');
  if (segs.length !== c.segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segs.length; i++) {
    const want = c.segments[i]!;
    const got = segs[i]!;
    if (want.startsWith(':')) params[want.slice(1)] = decodeURIComponent(got);
    else if (want !== got) return undefined;
  }
  return params;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', () => resolve(Buffer.concat(parts).toString('utf8')));
  });
}

/** Start the fault vendor on 127.0.0.1 and a free port. */
export async function startFaultVendor(routes: Routes = {}): Promise<FaultVendor> {
  const table: Compiled[] = Object.entries(routes).map(([k, r]) => compileKey(k, r));
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let closing = false;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      if (ms <= 0 || closing) return resolve();
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = Date.now();
    const u = new URL(req.url ?? '/', 'http://vendor.invalid');
    const body = await readBody(req);
    const method = req.method ?? 'GET';
    let found: { c: Compiled; params: Record<string, string> } | undefined;
    for (const c of table) {
      const params = match(c, method, u.pathname);
      if (params) {
        found = { c, params };
        break;
      }
    }
    const rec: RecordedRequest = {
      method,
      url: req.url ?? '/',
      path: u.pathname,
      query: u.searchParams,
      params: found?.params ?? {},
      headers: req.headers,
      body,
      at,
    };
    requests.push(rec);
    if (!found) return send(res, { status: 404, json: { message: `no route for ${method} ${u.pathname}` } });
    const n = found.c.seen++;
    const r = found.c.route;
    const reply =
      typeof r === 'function' ? await r(rec, n) : Array.isArray(r) ? (r[Math.min(n, r.length - 1)] ?? {}) : r;
    await play(req, res, reply);
  }

  async function play(req: IncomingMessage, res: ServerResponse, reply: Reply): Promise<void> {
    if (reply.hang) return; // the socket stays open until the client gives up or the server closes
    if (reply.delayMs) await pause(reply.delayMs);
    if (closing || req.socket.destroyed) return;
    if (reply.reset === 'before') {
      req.socket.destroy();
      return;
    }
    send(res, reply);
  }

  function send(res: ServerResponse, reply: Reply): void {
    const payload: Buffer =
      reply.json !== undefined
        ? Buffer.from(JSON.stringify(reply.json))
        : reply.text !== undefined
          ? Buffer.from(reply.text)
          : reply.chunks
            ? Buffer.alloc(0)
            : Buffer.from('{}');
    const type =
      reply.contentType ??
      (reply.json !== undefined || (reply.text === undefined && !reply.chunks) ? 'application/json' : 'text/plain');
    const headers: Record<string, string> = { 'content-type': type, ...reply.headers };
    if (reply.chunks) {
      res.writeHead(reply.status ?? 200, headers);
      void stream(res, reply.chunks, reply.chunkDelayMs ?? 0);
      return;
    }
    headers['content-length'] = String(payload.length);
    res.writeHead(reply.status ?? 200, headers);
    if (reply.reset === 'mid') {
      // Headers and half the body reach the client, then the connection dies.
      res.write(payload.subarray(0, Math.max(1, payload.length >> 1)), () => {
        const t = setTimeout(() => {
          timers.delete(t);
          res.socket?.destroy();
        }, 10);
        timers.add(t);
      });
      return;
    }
    res.end(payload);
  }

  async function stream(res: ServerResponse, chunks: Array<string | Buffer>, gap: number): Promise<void> {
    for (const [i, c] of chunks.entries()) {
      if (i > 0) await pause(gap);
      if (closing || res.destroyed) return;
      res.write(c);
    }
    res.end();
  }

  const server = createServer((req, res) => {
    answer(req, res).catch((e: unknown) => {
      if (!res.headersSent) send(res, { status: 500, json: { message: `fault vendor handler failed: ${String(e)}` } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    hits: (path, method) => requests.filter((r) => r.path === path && (!method || r.method === method)),
    route(key, route) {
      const c = compileKey(key, route);
      const i = table.findIndex((x) => x.method === c.method && x.segments.join('/') === c.segments.join('/'));
      if (i >= 0) table[i] = c;
      else table.unshift(c);
    },
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Cursor pagination over `items`: `?cursor=` (opaque, absent for the first page) and `?limit=`
 * (default `pageSize`); the body is `{items, next_cursor}` with `next_cursor: null` on the last page.
 * An unknown cursor answers 400.
 */
export function cursorFeed(items: unknown[], pageSize = 3): Handler {
  return (req) => {
    const c = req.query.get('cursor');
    const start = c === null ? 0 : /^c(\d+)$/.test(c) ? Number(c.slice(1)) : NaN;
    if (!Number.isInteger(start) || start > items.length)
      return { status: 400, json: { message: `unknown cursor ${c}` } };
    const size = Number(req.query.get('limit') ?? pageSize);
    const page = items.slice(start, start + size);
    const next = start + page.length < items.length ? `c${start + page.length}` : null;
    return { json: { items: page, next_cursor: next } };
  };
}

/**
 * Link-header pagination over `items` with `?page=` (from 1) and `?per_page=`. The next link repeats
 * every query parameter of the request (as many vendors do) with the page advanced. `form` makes
 * it absolute at this vendor (default), relative (`/linked?...`), or absolute at another origin.
 */
export function linkedPages(
  items: unknown[],
  pageSize = 3,
  form: 'absolute' | 'relative' | { origin: string } = 'absolute',
): Handler {
  return (req) => {
    const page = Number(req.query.get('page') ?? 1);
    const size = Number(req.query.get('per_page') ?? pageSize);
    const rows = items.slice((page - 1) * size, page * size);
    const headers: Record<string, string> = { 'x-total-count': String(items.length) };
    if (page * size < items.length) {
      const q = new URLSearchParams(req.query);
      q.set('page', String(page + 1));
      const rel = `${req.path}?${q.toString()}`;
      const at =
        form === 'relative' ? rel : `${form === 'absolute' ? `http://${req.headers.host}` : form.origin}${rel}`;
      headers.link = `<${at}>; rel="next"`;
    }
    return { json: rows, headers };
  };
}

export interface OAuth2Vendor {
  /** Route for the token endpoint (POST, client credentials in HTTP Basic auth). */
  token: Handler;
  /** Wrap a route so it answers 401 unless the request carries a live access token. */
  guard(route: Route): Handler;
  /** Token requests received, accepted or not. */
  readonly tokenRequests: number;
  /** Access tokens handed out, in order. */
  readonly issued: string[];
  /** Make every token handed out so far stale: the API answers 401 for it from now on. */
  expireAll(): void;
  /** While true the token endpoint refuses every request with 401 `invalid_client`. */
  refuse: boolean;
}

/** An OAuth2 client-credentials server: `clientId`/`clientSecret` are the only accepted pair. */
export function oauth2Vendor(clientId: string, clientSecret: string, expiresIn = 3600): OAuth2Vendor {
  const live = new Set<string>();
  const issued: string[] = [];
  let tokenRequests = 0;
  const state = {
    refuse: false,
    get tokenRequests() {
      return tokenRequests;
    },
    issued,
    expireAll() {
      live.clear();
    },
    token: ((req) => {
      tokenRequests++;
      const auth = req.headers.authorization ?? '';
      const pair = auth.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString('utf8') : '';
      const i = pair.indexOf(':');
      const [id, secret] =
        i < 0 ? ['', ''] : [decodeURIComponent(pair.slice(0, i)), decodeURIComponent(pair.slice(i + 1))];
      const form = new URLSearchParams(req.body);
      if (req.method !== 'POST' || form.get('grant_type') !== 'client_credentials')
        return { status: 400, json: { error: 'unsupported_grant_type' } };
      if (state.refuse || id !== clientId || secret !== clientSecret)
        return { status: 401, json: { error: 'invalid_client' } };
      const value = `tok-${issued.length + 1}-${randomBytes(6).toString('hex')}`;
      issued.push(value);
      live.add(value);
      return { json: { access_token: value, token_type: 'Bearer', expires_in: expiresIn } };
    }) as Handler,
    guard(route: Route): Handler {
      let n = 0;
      return (req) => {
        const auth = req.headers.authorization ?? '';
        if (!auth.startsWith('Bearer ') || !live.has(auth.slice(7)))
          return { status: 401, json: { error: 'invalid_token' } };
        const i = n++;
        return typeof route === 'function'
          ? route(req, i)
          : Array.isArray(route)
            ? (route[Math.min(i, route.length - 1)] ?? {})
            : route;
      };
    },
  };
  return state;
}

/** YAML of the outbound auth block, or `scheme: none`. */
export type AuthYaml = string;

/**
 * The `fault` catalog pointed at `url`: entity `Item` (id integer, name, kind enum alpha|beta|gamma,
 * price number, active boolean, parentId integer) with `listItems` (GET /items, query kind, parentId,
 * name; rows are the body), `getItem` (GET /items/{id}), `createItem` (POST /items), `updateItem`
 * (PATCH /items/{id}), `feedItems` (GET /feed, cursor pagination, 3 rows a page, rows at `items`)
 * and `linkItems` (GET /linked, Link rel="next" pagination with `page`/`per_page`, 3 rows a page).
 * `auth` is the YAML of the catalog's auth block (one line of flow style).
 */
export function faultRegistry(url: string, auth: AuthYaml = '{scheme: none}'): Registry {
  const text = `
catalog:
  entry_id: fault
  version: 1
  label: Fault vendor
  description: Items served by the scriptable fault vendor.
  backend: {url: "${url}"}
  auth: ${auth}
entities:
  Item:
    description: An item.
    fields:
      id: {type: integer, description: Item id}
      name: {type: string, description: Item name}
      kind: {type: enum, values: [alpha, beta, gamma], description: Kind of item}
      price: {type: number, description: Price}
      active: {type: boolean, description: Whether it is active}
      parentId: {type: integer, description: Parent item id}
capabilities:
  listItems: {kind: query, entity: Item, description: List items., params: [kind, parentId, name]}
  getItem: {kind: get, entity: Item, description: One item., params: [id]}
  createItem:
    kind: create
    entity: Item
    description: Create an item.
    params: {name: {required: true}, kind: null}
  updateItem: {kind: update, entity: Item, description: Change an item., params: [id, name]}
  feedItems: {kind: query, entity: Item, description: Items of the cursor feed., params: [kind]}
  linkItems: {kind: query, entity: Item, description: Items paged by Link headers., params: [kind]}
mappings:
  listItems: {method: GET, path: /items, query: [kind, parentId, name]}
  getItem: GET /items/{id}
  createItem: POST /items
  updateItem: PATCH /items/{id}
  feedItems:
    method: GET
    path: /feed
    query: [kind]
    pagination: {style: cursor, cursor_param: cursor, next_cursor: next_cursor, size_param: limit, page_size: 3, max_page_size: 3}
    response: {path: items}
  linkItems:
    method: GET
    path: /linked
    query: [kind]
    pagination: {style: link, page_param: page, size_param: per_page, page_size: 3, max_page_size: 3}
`;
  return new Registry([registryEntry(text)]);
}

/** Compile one catalog source text into a registry entry; throws with the diagnostics when it does not compile. */
export function registryEntry(text: string, file = 'catalog.yaml'): RegistryEntry {
  const c = compileSource([{ file, text }]);
  if (!c.cgs || !c.cgs_hash)
    throw new Error(`test catalog does not compile: ${JSON.stringify(c.diagnostics, null, 1)}`);
  return entryOfCgs(c.cgs, c.cgs_hash, `${c.cgs.entry_id}.cgs.json`);
}
