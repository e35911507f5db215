/**
 * The playground's files over real sockets (server/ui.ts, docs/playground.md): `/` is the page
 * with a strict CSP (a new style nonce each time), `no-cache` and nosniff; `/ui/<hashed file>` has
 * its type and immutable caching (gzip when asked); only files of the build's manifest are served,
 * so traversal spellings and unknown names are the JSON 404 of any unknown route; the page is
 * public even when inbound auth is required (it asks for the credential itself); `svc serve
 * --no-ui` serves no page.
 */
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { playgroundDir } from '../../cli/package-root.js';
import { isProtected, SvcApp } from '../../server/app.js';
import { InboundAuth } from '../../server/auth/inbound-auth.js';
import { Registry } from '../../pack/index.js';
import { MemoryArtifactStore } from '../../runtime/artifacts/index.js';
import { serve } from '../_helpers/cli.js';
import { startStack } from '../_helpers/server.js';

const BUILT = playgroundDir();
if (!existsSync(join(BUILT, 'manifest.json'))) throw new Error(`${BUILT} has no build: run npm run build first`);
const MANIFEST = JSON.parse(readFileSync(join(BUILT, 'manifest.json'), 'utf8')) as { assets: string[] };

interface Got {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** GET (or HEAD) with a raw request target: no normalisation, no decompression. */
function get(base: string, target: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Got> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method, path: target, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const nonceOf = (csp: unknown) => /'nonce-([A-Za-z0-9+/=]+)'/.exec(String(csp))?.[1];

t.test('GET / is the page: html, no-cache, nosniff and a strict CSP with a new style nonce each time', async (t) => {
  const s = await startStack(t, { ui: { dir: BUILT } });
  const a = await get(s.url, '/');
  t.equal(a.status, 200);
  t.equal(a.headers['content-type'], 'text/html; charset=utf-8');
  t.equal(a.headers['cache-control'], 'no-cache');
  t.equal(a.headers['x-content-type-options'], 'nosniff');
  const csp = String(a.headers['content-security-policy']);
  for (const d of [
    "default-src 'self'",
    "script-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ])
    t.ok(csp.split('; ').includes(d), d);
  t.match(csp, /(^|; )style-src 'self' 'nonce-[A-Za-z0-9+/=]{24}'(;|$)/, "style-src 'self' and a nonce");
  t.notMatch(csp, /unsafe-inline|unsafe-eval|\*/, 'no unsafe-inline, no unsafe-eval, no wildcard');
  const html = a.body.toString('utf8');
  const nonce = nonceOf(csp);
  t.ok(html.includes(`<meta name="csp-nonce" content="${nonce}"`), 'the page carries the nonce of its CSP');
  t.notOk(html.includes('{{'), 'no placeholder is left');
  for (const f of MANIFEST.assets) t.ok(html.includes(`ui/${f}`), `the page references ui/${f}`);
  t.notMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/, 'no inline script');
  const again = await get(s.url, '/');
  t.not(nonceOf(again.headers['content-security-policy']), nonce, 'every answer has its own nonce');
  const head = await get(s.url, '/', {}, 'HEAD');
  t.equal(head.status, 200);
  t.equal(head.body.length, 0, 'HEAD has no body');
  t.equal(head.headers['content-type'], 'text/html; charset=utf-8');
});

t.test('assets: their type, immutable caching, nosniff, gzip when asked', async (t) => {
  const s = await startStack(t, { ui: { dir: BUILT } });
  t.ok(MANIFEST.assets.some((f) => f.endsWith('.js')) && MANIFEST.assets.some((f) => f.endsWith('.css')));
  for (const f of MANIFEST.assets) {
    t.match(f, /^[a-z]+-[A-Z0-9]{8}\.(js|css)$/, 'a content-hashed name');
    const file = readFileSync(join(BUILT, 'ui', f));
    const a = await get(s.url, `/ui/${f}`);
    t.equal(a.status, 200, f);
    t.equal(
      a.headers['content-type'],
      f.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
    );
    t.equal(a.headers['cache-control'], 'public, max-age=31536000, immutable');
    t.equal(a.headers['x-content-type-options'], 'nosniff');
    t.equal(a.headers['content-encoding'], undefined, 'not compressed unless asked');
    t.ok(a.body.equals(file), 'the bytes of the build');
    const z = await get(s.url, `/ui/${f}`, { 'accept-encoding': 'gzip, deflate' });
    t.equal(z.headers['content-encoding'], 'gzip');
    t.equal(z.headers.vary, 'accept-encoding');
    t.ok(gunzipSync(z.body).equals(file), 'gzip of the same bytes');
    const refused = await get(s.url, `/ui/${f}`, { 'accept-encoding': 'gzip;q=0' });
    t.equal(refused.headers['content-encoding'], undefined, 'gzip;q=0 is a refusal');
  }
});

t.test('only the files of the manifest: traversal and unknown names are the JSON 404', async (t) => {
  // A build of our own, with files next to it that must never be served and a manifest that lists a bad name.
  const dir = await mkdtemp(join(tmpdir(), 'svc-ui-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'ui'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><meta name="csp-nonce" content="{{CSP_NONCE}}">');
  await writeFile(join(dir, 'ui', 'app-AAAAAAAA.js'), 'export {};\n');
  await writeFile(join(dir, 'ui', 'secret.txt'), 'SECRET-IN-UI');
  await writeFile(join(dir, 'secret.js'), 'SECRET-NEXT-TO-MANIFEST');
  await writeFile(
    join(dir, 'manifest.json'),
    JSON.stringify({ format: 1, index: 'index.html', assets: ['app-AAAAAAAA.js', '../secret.js', 'secret.txt'] }),
  );
  const s = await startStack(t, { ui: { dir } });
  t.equal((await get(s.url, '/ui/app-AAAAAAAA.js')).status, 200, 'a listed file is served');
  const targets = [
    '/ui/../package.json',
    '/ui/..%2Fpackage.json',
    '/ui/..%2fsecret.js',
    '/ui/%2e%2e/package.json',
    '/ui/%2e%2e%2fpackage.json',
    '/ui/.%2e/secret.js',
    '/ui/..%5csecret.js',
    '/ui/..%252Fsecret.js',
    '/ui/../secret.js',
    '/ui/secret.txt',
    '/ui/manifest.json',
    '/ui/index.html',
    '/ui/app-AAAAAAAA.js/',
    '/ui/app-AAAAAAAA.js%00',
    '/ui/x/../../secret.js',
    '/ui//etc/passwd',
    '/ui/%2Fetc%2Fpasswd',
    '/ui/nope.js',
    '/ui/',
    '/ui',
    '/secret.js',
    '/manifest.json',
  ];
  for (const target of targets) {
    const a = await get(s.url, target);
    const text = a.body.toString('utf8');
    if (target === '/ui/app-AAAAAAAA.js/') {
      // Empty segments are dropped (docs/http.md): the same file, never another one.
      t.equal(a.status, 200, target);
      continue;
    }
    t.equal(a.status, 404, target);
    t.equal(a.headers['content-type'], 'application/json; charset=utf-8', `${target}: JSON like any unknown route`);
    t.equal((JSON.parse(text) as { code: string }).code, 'not_found', target);
    t.notMatch(text, /SECRET|"name"\s*:\s*"svc"/, `${target} leaks no file`);
  }
});

t.test('the page is public; the API behind it is not', async (t) => {
  const auth = new InboundAuth({ mode: 'required', apiKeys: [{ key: 'k-1', tenant_id: 'acme', subject: 'a' }] });
  const s = await startStack(t, { ui: { dir: BUILT }, auth });
  t.equal((await get(s.url, '/')).status, 200, 'GET / needs no credential');
  t.equal((await get(s.url, `/ui/${MANIFEST.assets[0]}`)).status, 200, 'nor do the assets');
  t.equal((await get(s.url, '/v1/registry')).status, 401, 'the registry does');
  t.equal((await get(s.url, '/v1/registry', { 'x-api-key': 'k-1' })).status, 200);

  const artifacts = new MemoryArtifactStore({ retentionSecs: 60, gcIntervalSecs: 60 });
  t.teardown(() => artifacts.close());
  const plain = new SvcApp({ registry: new Registry([]), artifacts }).router
    .list()
    .map((r) => `${r.method} ${r.pattern}`);
  const withUi = new SvcApp({ registry: new Registry([]), artifacts, ui: { dir: BUILT } }).router.list();
  const added = withUi.filter((r) => !plain.includes(`${r.method} ${r.pattern}`));
  t.same(
    added.map((r) => `${r.method} ${r.pattern}`),
    ['GET /', 'GET /ui/:file'],
    'the ui adds two GET routes',
  );
  for (const r of added) t.notOk(isProtected(r.pattern), `${r.pattern} is public`);
  const mcpOnly = new SvcApp({
    registry: new Registry([]),
    artifacts,
    ui: { dir: BUILT },
    surfaces: { http: false, mcp: false },
  });
  t.notOk(mcpOnly.router.match('GET', '/').kind === 'found', 'no page without the HTTP surface');
});

t.test('without the ui, or with no build, / is a JSON 404', async (t) => {
  const s = await startStack(t);
  const a = await get(s.url, '/');
  t.equal(a.status, 404);
  t.equal((JSON.parse(a.body.toString()) as { code: string }).code, 'not_found');
  const empty = await mkdtemp(join(tmpdir(), 'svc-ui-empty-'));
  t.teardown(() => rm(empty, { recursive: true, force: true }));
  const u = await startStack(t, { ui: { dir: empty } });
  const b = await get(u.url, '/');
  t.equal(b.status, 404);
  t.match(JSON.parse(b.body.toString()), { code: 'not_found', hint: /npm run build/ });
});

t.test('svc serve serves the page and prints its URL; --no-ui does not', async (t) => {
  const on = await serve(t, ['--catalog-dir', 'fixtures/packed', '--port', '0']);
  await on.waitFor(/^playground: (http:\/\/\S+\/)$/m);
  t.equal((await get(on.url, '/')).status, 200);
  const off = await serve(t, ['--catalog-dir', 'fixtures/packed', '--port', '0', '--no-ui']);
  const a = await get(off.url, '/');
  t.equal(a.status, 404);
  t.equal((JSON.parse(a.body.toString()) as { code: string }).code, 'not_found');
  t.equal((await get(off.url, `/ui/${MANIFEST.assets[0]}`)).status, 404, 'no asset either');
  t.equal((await get(off.url, '/v1/health')).status, 200, 'the rest of the server answers');
  t.notMatch(off.stdout, /playground:/);
  on.child.kill('SIGTERM');
  off.child.kill('SIGTERM');
  await Promise.all([on.exited, off.exited]);
});
