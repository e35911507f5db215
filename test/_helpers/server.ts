/**
 * Test helpers for the HTTP surface: a real svc server on 127.0.0.1 (port 0) over the packed
 * fixture catalogs, pointed at the real json-server demo vendor (or any base URL), and small
 * clients (`call` over fetch, `raw` for request targets fetch would rewrite).
 */
import type { Test } from 'tap';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { loadCatalogDir, type LoadOptions } from '../../pack/index.js';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { MemoryArtifactStore, type ArtifactStore } from '../../runtime/artifacts/index.js';
import { SvcApp, type AppOptions } from '../../server/app.js';
import { listen, type Timeouts } from '../../server/serve.js';

export const ROOT = join(import.meta.dirname, '..', '..');
export const PACKED = join(ROOT, 'fixtures', 'packed');

export interface Stack {
  /** Base URL of the svc server, e.g. http://127.0.0.1:41234 */
  url: string;
  /** Base URL of the vendor the catalogs point at. */
  vendorUrl: string;
  app: SvcApp;
  artifacts: ArtifactStore;
  /** Stop the server now (as a shutdown with `graceMs` would); teardown does it otherwise. */
  close(graceMs?: number): Promise<void>;
}

export interface StackOptions extends Partial<Omit<AppOptions, 'registry' | 'artifacts'>> {
  /** Vendor base URL; default: a fresh json-server demo vendor (closed at teardown). */
  vendorUrl?: string;
  /** Catalog directory to load (default fixtures/packed). Passed to the app as `catalogDir`. */
  catalogDir?: string;
  loadOptions?: LoadOptions;
  /** The run artifact store (default: a memory store, closed at teardown). */
  artifacts?: ArtifactStore;
  /** Socket timeouts of the server. */
  timeouts?: Partial<Timeouts>;
}

/** Starts a vendor (unless given) and an svc server; both close when `t` ends. */
export async function startStack(t: Test, opts: StackOptions = {}): Promise<Stack> {
  let vendorUrl = opts.vendorUrl;
  if (!vendorUrl) {
    const vendor = await startDemoVendor();
    t.teardown(() => vendor.close());
    vendorUrl = vendor.url;
  }
  const dir = opts.catalogDir ?? PACKED;
  const loadOptions: LoadOptions = {
    ...opts.loadOptions,
    backendOverrides: { brewery: vendorUrl, helpdesk: vendorUrl, ...opts.loadOptions?.backendOverrides },
  };
  const { registry } = await loadCatalogDir(dir, loadOptions);
  const artifacts = opts.artifacts ?? new MemoryArtifactStore({ retentionSecs: 3600, gcIntervalSecs: 3600 });
  const { vendorUrl: _v, catalogDir: _c, loadOptions: _l, artifacts: _a, timeouts, ...rest } = opts;
  const app = new SvcApp({
    ...rest,
    registry,
    artifacts,
    loadOptions,
    ...(opts.catalogDir ? { catalogDir: opts.catalogDir } : {}),
  });
  const l = await listen(app, 0, '127.0.0.1', timeouts);
  let closed: Promise<void> | undefined;
  const close = (graceMs = 500) => (closed ??= l.close(graceMs).then(() => artifacts.close()));
  t.teardown(() => close());
  return { url: l.url, vendorUrl, app, artifacts, close };
}

export interface Answer {
  status: number;
  text: string;
  headers: Headers;
  /** Parsed JSON when the answer is one JSON document, else {}. */
  body: Record<string, any>;
}

export interface CallInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Content type of the body. */
  type?: string;
  /** Accept header (default application/json). */
  accept?: string;
}

/** One request over fetch; Accept defaults to application/json. */
export async function call(base: string, path: string, init: CallInit = {}): Promise<Answer> {
  const headers: Record<string, string> = {
    accept: init.accept ?? 'application/json',
    ...(init.type ? { 'content-type': init.type } : {}),
    ...init.headers,
  };
  const res = await fetch(base + path, {
    method: init.method ?? (init.body !== undefined ? 'POST' : 'GET'),
    headers,
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  const text = await res.text();
  let body: Record<string, any> = {};
  if ((res.headers.get('content-type') ?? '').includes('json')) {
    try {
      body = JSON.parse(text) as Record<string, any>;
    } catch {
      /* not one JSON document */
    }
  }
  return { status: res.status, text, headers: res.headers, body };
}

/** The error code of a JSON answer: `code` (JSON routes) or `errors[0].code` (execute routes). */
export function codeOf(a: Answer): string | undefined {
  if (typeof a.body.code === 'string') return a.body.code;
  const errs = a.body.errors as Array<{ code?: string }> | undefined;
  return errs?.[0]?.code;
}

/** Opens an execute session; returns its base path `/execute/{prompt_hash}/{session}` and the answer. */
export async function openSession(
  base: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ path: string; answer: Answer }> {
  const answer = await call(base, '/execute', { body: JSON.stringify(body), type: 'application/json', headers });
  if (answer.status !== 201) throw new Error(`POST /execute answered ${answer.status}: ${answer.text}`);
  return { path: `/execute/${answer.body.prompt_hash}/${answer.body.session}`, answer };
}

/** Runs a program (plain-text body) on a session path; `query` like `mode=plan&force=true`. */
export function runProgram(
  base: string,
  sessionPath: string,
  program: string,
  query = '',
  init: CallInit = {},
): Promise<Answer> {
  return call(base, sessionPath + (query ? `?${query}` : ''), {
    ...init,
    method: 'POST',
    body: program,
    type: init.type ?? 'text/plain',
  });
}

/** A request with a raw request target and raw body (fetch would normalise either). */
export function raw(
  base: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: u.hostname, port: u.port, method, path: target, headers: { accept: 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}
