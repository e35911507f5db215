/**
 * Secrets never reach a client of the HTTP server (hardening issue, items 1 and 2), over real
 * sockets: a backend URL that carries `user:password` (from `--backend`, from
 * `SVC_BACKEND_URL_<ENTRY>` or from the catalog itself) shows up in no answer, no hint, no stored
 * run artifact, no registry or tool-model answer and no reload answer, and agent-facing errors
 * name the entry instead of the URL; a vendor that echoes the API key or the bearer token across
 * the cuts of its error excerpt (200 characters kept, 4096 bytes decoded) leaks no piece of it.
 * The healthy vendor is json-server; the echoing vendor is the fault vendor (json-server cannot
 * echo a credential on demand).
 */
import t, { type Test } from 'tap';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeArtifacts } from '../../../pack/index.js';
import { faultRegistry, startFaultVendor, type Routes } from '../../_helpers/fault-vendor.js';
import { call, openSession, PACKED, runProgram, startStack, type Answer, type Stack } from '../../_helpers/server.js';

const RELOAD = '/internal/catalog-registry/v1/reload';
const CONTROL = 'secrets-reload-secret-31c9';
const PASSWORD = 'pw-SECRET-7d2e91';
const KEY = 'sk_live_Hq4Tz8Wm2Rv6Np1X';
const ENV = { FAULT_KEY: KEY };

async function tmp(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-secrets-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A URL nothing listens on (a fault vendor, closed again). */
async function closedUrl(): Promise<string> {
  const v = await startFaultVendor({});
  await v.close();
  return v.url;
}

/** `http://host:port` with `admin:<PASSWORD>@` in front of the host. */
const withUserinfo = (url: string) => url.replace('://', `://admin:${PASSWORD}@`);

/** Every piece of the password (and the userinfo) that must never show. */
function noPassword(t: Test, text: string, where: string): void {
  t.notOk(text.includes(PASSWORD.slice(0, 6)), `${where}: no piece of the password`);
  t.notOk(text.includes('admin:'), `${where}: no userinfo`);
}

/** No prefix of `secret` of 4 or more characters (a cut secret leaks its first characters). */
function noPiece(t: Test, text: string, secret: string, where: string): void {
  const leaked = [...Array(secret.length - 3).keys()]
    .map((i) => secret.slice(0, i + 4))
    .filter((p) => text.includes(p));
  t.same(leaked, [], `${where}: no piece of the secret`);
}

/** Every way an agent reads a failed run: the JSON answer, the plain answer, the stored artifact. */
async function failedRun(
  t: Test,
  stack: Stack,
  path: string,
  program: string,
): Promise<{ json: Answer; plain: Answer; artifact: Answer }> {
  // force: an unfiltered list needs review (unbounded_list); the test is about what comes back.
  const json = await runProgram(stack.url, path, program, 'force=true', { accept: 'application/json' });
  const plain = await runProgram(stack.url, path, program, 'force=true', { accept: 'text/plain' });
  const runId = String(json.body._meta?.svc?.run_id ?? '');
  t.match(runId, /^pr[0-9a-f]{64}$/, 'the failed run is stored');
  const artifact = await call(stack.url, `${path}/artifacts/${runId}`);
  t.equal(artifact.status, 200, 'the artifact is served');
  return { json, plain, artifact };
}

t.test('a --backend URL with user:password: named by entry, never shown', async (t) => {
  const dead = withUserinfo(await closedUrl());
  const dir = await tmp(t);
  await cp(PACKED, dir, { recursive: true });
  const stack = await startStack(t, {
    catalogDir: dir,
    controlPlaneSecret: CONTROL,
    loadOptions: { backendOverrides: { brewery: dead } },
  });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const { json, plain, artifact } = await failedRun(t, stack, path, 'e1(city="Berlin")[name]');
  t.equal(json.body.errors?.[0]?.code, 'vendor_unreachable');
  t.match(json.body.errors[0].hint, /backend of `brewery`/, 'the hint names the entry');
  t.match(json.body.errors[0].hint, /--backend brewery=<url>/, 'and how the operator repoints it');
  t.notMatch(json.body.errors[0].hint, /127\.0\.0\.1/, 'not the URL');
  noPassword(t, json.text, 'JSON answer');
  noPassword(t, plain.text, 'plain answer');
  noPassword(t, artifact.text, 'run artifact');
  for (const route of [
    '/v1/registry',
    '/v1/registry/brewery',
    '/v1/registry/brewery?include_cgs=true',
    '/v1/registry/brewery/tool-model',
    '/v1/discover?q=beer',
    '/v1/health',
    `${path}/status`,
  ]) {
    const a = await call(stack.url, route);
    t.equal(a.status, 200, route);
    noPassword(t, a.text, route);
  }
  const reload = await call(stack.url, RELOAD, { method: 'POST', headers: { 'x-svc-control-plane-secret': CONTROL } });
  t.equal(reload.status, 200);
  noPassword(t, reload.text, 'reload answer');
  const warned = (reload.body.problems as Array<{ code: string; message: string }>).filter(
    (p) => p.code === 'backend_userinfo_ignored',
  );
  t.equal(warned.length, 1, 'the reload answer warns once');
  t.match(warned[0]?.message, /backend of brewery carries user:password in its URL; svc does not send it/);
});

t.test('SVC_BACKEND_URL_<ENTRY> with user:password reaches the vendor without it, and is shown nowhere', async (t) => {
  const vendor = await startFaultVendor({ 'GET /items': { status: 503, json: { message: 'down for maintenance' } } });
  t.teardown(() => vendor.close());
  const stack = await faultStack(t, '{scheme: none}', {
    loadOptions: { env: { SVC_BACKEND_URL_FAULT: withUserinfo(vendor.url) } },
  });
  const { path } = await openSession(stack.url, { entry_id: 'fault' });
  const { json, plain, artifact } = await failedRun(t, stack, path, 'e1[name]');
  t.equal(json.body.errors?.[0]?.code, 'vendor_error', 'the vendor was reached');
  t.ok(vendor.hits('/items').length >= 1);
  for (const r of vendor.requests)
    t.equal(r.headers.authorization, undefined, 'svc sends no credential it was not told to');
  noPassword(t, json.text + plain.text + artifact.text, 'answers and artifact');
});

/** The fault catalog (auth `auth`) packed into a fresh directory and served; the vendor URL comes from `opts`. */
async function faultStack(
  t: Test,
  auth: string,
  opts: { vendorUrl?: string; loadOptions?: { env?: Record<string, string> } } = {},
): Promise<Stack> {
  const dir = await tmp(t);
  const entry = faultRegistry(opts.vendorUrl ?? 'http://127.0.0.1:9', auth).get('fault')!;
  await writeArtifacts(entry.cgs, entry.cgs_hash, dir);
  return startStack(t, {
    catalogDir: dir,
    vendorUrl: opts.vendorUrl ?? 'http://127.0.0.1:9',
    runtime: { env: ENV, retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 1 } },
    loadOptions: { env: {}, ...opts.loadOptions },
  });
}

t.test("a catalog's own backend URL with user:password is refused when packed, without repeating it", async (t) => {
  // A catalog is served as it is (GET /v1/registry/{id}?include_cgs=true): a credential in it
  // would reach every agent, so packing (and loading, which runs the same checks) refuses it.
  const dead = withUserinfo(await closedUrl());
  t.throws(() => faultRegistry(dead), /bad_backend[\s\S]*carries user:password/);
  try {
    faultRegistry(dead);
  } catch (e) {
    noPassword(t, (e as Error).message, 'the refusal');
  }
});

t.test('a vendor that echoes the credential across the cuts of the excerpt leaks no piece of it', async (t) => {
  // The excerpt keeps 197 characters (+ "...") of the first 4096 decoded bytes; the secret starts
  // just before each cut, so cutting first and redacting second leaves its first characters.
  const echo =
    (at: number, padding: string): Routes[string] =>
    (req) => {
      const cred = req.headers['x-api-key'] ?? req.headers.authorization ?? '';
      return {
        status: 400,
        text: `${padding.repeat(at)}${String(cred)} is not valid here, try again`,
        contentType: 'text/plain',
      };
    };
  const cases: Array<[string, number, string]> = [
    ['before the 200-character cut', 190, 'x'],
    ['just before the 200-character cut', 195, 'x'],
    ['before the 4096-byte cut (control characters collapse)', 4090, '\n'],
    ['at the 4096-byte cut', 4093, '\t'],
  ];
  for (const [auth, secret] of [
    ['{scheme: api_key, in: header, name: X-Api-Key, env: FAULT_KEY}', KEY],
    ['{scheme: bearer, env: FAULT_KEY}', `Bearer ${KEY}`],
  ] as const) {
    for (const [name, at, padding] of cases) {
      const vendor = await startFaultVendor({ 'GET /items': echo(at, padding) });
      t.teardown(() => vendor.close());
      const stack = await faultStack(t, auth, { vendorUrl: vendor.url });
      const { path } = await openSession(stack.url, { entry_id: 'fault' });
      const { json, plain, artifact } = await failedRun(t, stack, path, 'e1[name]');
      t.equal(json.body.errors?.[0]?.code, 'vendor_error', `${auth} ${name}: a vendor error`);
      t.equal(
        vendor.hits('/items')[0]?.headers[auth.includes('bearer') ? 'authorization' : 'x-api-key'],
        secret,
        'the credential was sent',
      );
      for (const [where, text] of [
        ['JSON', json.text],
        ['plain', plain.text],
        ['artifact', artifact.text],
      ] as const)
        noPiece(t, text, KEY, `${auth} ${name}: ${where}`);
    }
  }
});
