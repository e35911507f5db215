/**
 * Helpers of the outbound-credentials tests (test/surfaces/outbound-credentials.test.ts): a
 * recording vendor, a node:http server on 127.0.0.1 that records every request (method, path, all
 * headers, body) and serves items: `GET .../items` a few rows (`?name=echo` answers 400 echoing the
 * Authorization or X-Rec-Key header it got), `POST .../items` 201 with the created row; the
 * catalogs that point at it, packed into a catalog directory as `svc pack` would; and a client of
 * a running svc that keeps every answer it got (to grep all of them for secrets).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import type { Test } from 'tap';
import { compileSource, writeArtifacts } from '../../pack/index.js';
import { call, openSession, type Answer, type CallInit } from './server.js';
import { term, type Ran } from './terminal.js';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The raw header lines as received (names as sent, repeated headers kept). */
  rawHeaders: string[];
  body: string;
}

export interface RecordingVendor {
  url: string;
  /** Every request received, in order. */
  seen: Recorded[];
  /** What `fn` returned, and the requests received while it ran. */
  during<T>(fn: () => Promise<T>): Promise<[T, Recorded[]]>;
  /** The Authorization header of the one request `fn` makes (else how many it made). */
  authOf(fn: () => Promise<unknown>): Promise<string | undefined>;
  close(): Promise<void>;
}

export const ROWS = [
  { id: 1, name: 'anvil', kind: 'alpha' },
  { id: 2, name: 'bolt', kind: 'beta' },
  { id: 3, name: 'cog', kind: 'alpha' },
];

export async function startRecordingVendor(): Promise<RecordingVendor> {
  const seen: Recorded[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body,
      });
      const u = new URL(req.url ?? '/', 'http://vendor');
      const send = (status: number, data: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(data));
      };
      if (!u.pathname.endsWith('/items')) return send(404, { error: 'no such path' });
      if (req.method === 'POST') {
        let row: Record<string, unknown> = {};
        try {
          row = JSON.parse(body || '{}') as Record<string, unknown>;
        } catch {
          return send(400, { error: 'not JSON' });
        }
        return send(201, { id: 99, kind: 'gamma', ...row });
      }
      if (u.searchParams.get('name') === 'echo') {
        // A careless vendor: its error message repeats the credential it was sent.
        const got = req.headers.authorization ?? req.headers['x-rec-key'] ?? '';
        return send(400, { error: `bad token ${String(got)}` });
      }
      send(200, ROWS);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const during = async <T>(fn: () => Promise<T>): Promise<[T, Recorded[]]> => {
    const n = seen.length;
    const v = await fn();
    return [v, seen.slice(n)];
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    during,
    authOf: async (fn) => {
      const [, got] = await during(fn);
      return got.length === 1 ? got[0]!.headers.authorization : `${got.length} requests`;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A catalog of the recording vendor's items, named `entryId`, with `auth` (YAML flow text). */
export function itemsCatalog(entryId: string, url: string, auth: string): string {
  return `
catalog:
  entry_id: ${entryId}
  version: 1
  label: ${entryId} items
  description: Items served by the recording vendor.
  backend: {url: "${url}"}
  auth: ${auth}
entities:
  Item:
    description: An item.
    fields:
      id: {type: integer, description: Item id}
      name: {type: string, description: Item name}
      kind: {type: enum, values: [alpha, beta, gamma], description: Kind of item}
capabilities:
  listItems: {kind: query, entity: Item, description: List items., params: [name, kind]}
  createItem:
    kind: create
    entity: Item
    description: Create an item.
    params: {name: {required: true}, kind: null}
mappings:
  listItems: {method: GET, path: /items, query: [name, kind]}
  createItem: POST /items
`;
}

/** Compile catalog sources and write each packed catalog into `dir` (as `svc pack --out dir`). */
export async function packInto(dir: string, sources: string[]): Promise<void> {
  for (const text of sources) {
    const c = compileSource([{ file: 'catalog.yaml', text }]);
    if (!c.cgs || !c.cgs_hash)
      throw new Error(`test catalog does not compile: ${JSON.stringify(c.diagnostics, null, 1)}`);
    await writeArtifacts(c.cgs, c.cgs_hash, dir);
  }
}

/** Every header name and value the vendor received, lower-cased names (for "nothing else" checks). */
export function headerPairs(seen: Recorded[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const r of seen)
    for (let i = 0; i + 1 < r.rawHeaders.length; i += 2)
      out.push([r.rawHeaders[i]!.toLowerCase(), r.rawHeaders[i + 1]!]);
  return out;
}

/**
 * Check that the vendor requests `got` carry the forwarded token `fwd` as their only Authorization
 * and none of the headers svc must never forward, nor any of the values `never` in any header.
 */
export function onlyForwarded(t: Test, got: Recorded[], fwd: string, never: string[]): void {
  const pairs = headerPairs(got);
  const names = new Set(pairs.map(([k]) => k));
  for (const n of ['x-api-key', 'cookie', 'mcp-session-id', 'x-other', 'x-vendor-token', 'proxy-authorization'])
    t.notOk(names.has(n), `the vendor never gets ${n}`);
  const auths = pairs.filter(([k]) => k === 'authorization').map(([, v]) => v);
  t.same(
    auths,
    got.map(() => `Bearer ${fwd}`),
    'one Authorization per request: the forwarded token',
  );
  t.same(
    pairs.filter(([, v]) => never.some((s) => v.includes(s))),
    [],
    'no inbound credential or value in any header',
  );
}

/** Write a file holding secrets with `mode` (default 0600), also when it exists. */
export async function writeSecret(path: string, text: string, mode = 0o600): Promise<void> {
  await writeFile(path, text, { mode });
  await chmod(path, mode);
}

/** Every file under `root`: path and text. */
export async function filesUnder(root: string): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  for (const e of await readdir(root, { recursive: true, withFileTypes: true }))
    if (e.isFile()) out.push([join(e.parentPath, e.name), await readFile(join(e.parentPath, e.name), 'utf8')]);
  return out;
}

/** A minter of HS256 JWTs (`tenant_id`, `sub`) as Authorization headers; `minted` lists every token. */
export function jwtMinter(secret: string) {
  const minted: string[] = [];
  const jwt = async (tenant: string, sub: string): Promise<Record<string, string>> => {
    const token = await new SignJWT({ tenant_id: tenant })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(sub)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode(secret));
    minted.push(token);
    return { authorization: `Bearer ${token}` };
  };
  return { jwt, minted };
}

/** A client of the svc at `base` that keeps every answer (`outputs`) and every stored run (`runs`). */
export class Keeper {
  /** What was seen where: an answer's status, headers and body; anything `keep` is given. */
  readonly outputs: Array<[string, string]> = [];
  readonly runs: Array<{ path: string; id: string; headers: Record<string, string> }> = [];
  constructor(readonly base: string) {}

  keep(where: string, text: string): void {
    this.outputs.push([where, text]);
  }

  async http(path: string, init: CallInit = {}): Promise<Answer> {
    const a = await call(this.base, path, init);
    this.keep(`HTTP ${path}`, `${a.status}\n${JSON.stringify([...a.headers])}\n${a.text}`);
    return a;
  }

  /** Open an execute session on `entry` seeded with its Item; the session path. */
  async open(entry: string, headers: Record<string, string>): Promise<string> {
    const { path, answer } = await openSession(this.base, { entry_id: entry, seeds: [`${entry}:Item`] }, headers);
    this.keep(`open ${entry}`, answer.text);
    return path;
  }

  /** POST a program; a stored run (`svc-run-id`) is remembered for its artifact. */
  async run(path: string, program: string, headers: Record<string, string>, query = ''): Promise<Answer> {
    const target = path + (query ? `?${query}` : '');
    const a = await this.http(target, { method: 'POST', body: program, type: 'text/plain', headers });
    const id = a.headers.get('svc-run-id');
    if (id) this.runs.push({ path, id, headers });
    return a;
  }

  /** Run `svc <args>` in workspace `ws` with `env`; the exit status must be `code`. */
  async term(t: Test, ws: string, args: string[], env: Record<string, string> = {}, code = 0): Promise<Ran> {
    const r = await term(ws, args, '', env);
    const said = `exit ${r.code}\n${r.stdout}${r.stderr}`;
    this.keep(`terminal ${args.join(' ')}`, said);
    t.equal(r.code, code, said);
    return r;
  }

  /** Where each of `secrets` (whole or by its first 8 characters) was seen. */
  leaks(secrets: Record<string, string>): string[] {
    const out: string[] = [];
    for (const [name, secret] of Object.entries(secrets))
      for (const form of [secret, secret.slice(0, 8)])
        for (const [where, text] of this.outputs) if (text.includes(form)) out.push(`${name} (${form}) in ${where}`);
    return out;
  }
}
