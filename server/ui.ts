/**
 * The playground's files (docs/playground.md): `GET /` answers the page, `GET /ui/<file>` the
 * content-hashed script and stylesheet the web build wrote (scripts/build-web.mjs). Only the files
 * named in the build's manifest are served, looked up by exact name, so no path can reach any other
 * file. Nothing is read until the first request; then the files stay in memory (a few hundred KiB).
 * The page talks to svc through the public HTTP API only.
 */
import { randomBytes } from 'node:crypto';
import type { RequestUrl } from '../common/request-target.js';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip as gzipCb } from 'node:zlib';
import { svcError, SvcFailure } from '../common/errors.js';
import type { Router } from './http/router.js';

const gzip = promisify(gzipCb);

/**
 * The page's Content-Security-Policy: scripts and styles from this origin only, and the styles
 * CodeMirror injects in a `<style>` element allowed by a nonce that is new in every answer.
 */
export function pageCsp(nonce: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** What the assets answer besides their type: nothing runs from them, nothing frames them. */
const ASSET_CSP = "default-src 'none'; frame-ancestors 'none'";
const IMMUTABLE = 'public, max-age=31536000, immutable';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** The manifest written by the web build. */
interface Manifest {
  format: 1;
  index: string;
  assets: string[];
}

interface Asset {
  type: string;
  body: Buffer;
  gzipped: Buffer;
}

interface Loaded {
  /** index.html, split at the nonce placeholder. */
  index: string[];
  assets: Map<string, Asset>;
}

const NONCE_PLACEHOLDER = '{{CSP_NONCE}}';

function notFound(pathname: string, hint = 'see docs/http.md for the routes; public ones are under /v1'): SvcFailure {
  return new SvcFailure([svcError('not_found', `no route ${pathname}`, { hint })]);
}

const extOf = (name: string) => /\.[a-z0-9]+$/.exec(name)?.[0] ?? '';

/** Reads the build's manifest and the files it lists; undefined when the page was not built (or only partly). */
async function load(dir: string): Promise<Loaded | undefined> {
  try {
    return await readBuild(dir);
  } catch {
    return undefined;
  }
}

async function readBuild(dir: string): Promise<Loaded> {
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Manifest;
  const assets = new Map<string, Asset>();
  for (const name of manifest.assets) {
    const type = TYPES[extOf(name)];
    // The build writes flat, hashed names; anything else in a manifest is not served.
    if (!type || !/^[A-Za-z0-9_-]+\.[a-z0-9]+$/.test(name)) continue;
    const body = await readFile(join(dir, 'ui', name));
    assets.set(name, { type, body, gzipped: await gzip(body) });
  }
  const html = await readFile(join(dir, 'index.html'), 'utf8');
  return { index: html.split(NONCE_PLACEHOLDER), assets };
}

/** Whether the client takes gzip (`Accept-Encoding`, not refused with q=0). */
function acceptsGzip(req: IncomingMessage): boolean {
  const h = req.headers['accept-encoding'];
  if (typeof h !== 'string') return false;
  return h.split(',').some((part) => {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find(Boolean);
    return (name === 'gzip' || name === '*') && (q === undefined || Number(q) > 0);
  });
}

function write(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, body: Buffer): void {
  res.writeHead(200, { ...headers, 'content-length': String(body.length) });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** The playground's two routes, over the built files in `dir` (dist/web). */
export class PlaygroundFiles {
  private loading: Promise<Loaded | undefined> | undefined;

  constructor(private readonly dir: string) {}

  /** Registers `GET /` and `GET /ui/:file` (public: the page asks for credentials itself). */
  routes(router: Router): void {
    router.add('GET', '/', (req, res, _p, url) => this.page(req, res, url));
    router.add('GET', '/ui/:file', (req, res, p, url) => this.asset(req, res, p.file ?? '', url));
  }

  private files(): Promise<Loaded | undefined> {
    // A failed read is tried again on the next request (the build may land after the start).
    this.loading ??= load(this.dir).then((l) => {
      if (!l) this.loading = undefined;
      return l;
    });
    return this.loading;
  }

  private async page(req: IncomingMessage, res: ServerResponse, url: RequestUrl): Promise<void> {
    const files = await this.files();
    if (!files) throw notFound(url.pathname, 'the playground is not built: run `npm run build`');
    const nonce = randomBytes(16).toString('base64');
    write(
      req,
      res,
      {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-cache',
        'content-security-policy': pageCsp(nonce),
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'x-frame-options': 'DENY',
        'cross-origin-opener-policy': 'same-origin',
      },
      Buffer.from(files.index.join(nonce)),
    );
  }

  private async asset(req: IncomingMessage, res: ServerResponse, name: string, url: RequestUrl): Promise<void> {
    const files = await this.files();
    const asset = files?.assets.get(name);
    if (!asset) throw notFound(url.pathname);
    const gz = acceptsGzip(req);
    write(
      req,
      res,
      {
        'content-type': asset.type,
        'cache-control': IMMUTABLE,
        'content-security-policy': ASSET_CSP,
        'x-content-type-options': 'nosniff',
        'cross-origin-resource-policy': 'same-origin',
        vary: 'accept-encoding',
        ...(gz ? { 'content-encoding': 'gzip' } : {}),
      },
      gz ? asset.gzipped : asset.body,
    );
  }
}
