/**
 * One Host/Origin policy for every route (issue 41 item 1, DNS rebinding) and one credential
 * header per request (item 9), over real sockets on the real server: a foreign `Host` is 421
 * `host_not_allowed` on the execute routes (a forced vendor write included: nothing reaches the
 * vendor), the SSE stream, the playground, `/v1/health` and `/mcp` (there as a JSON-RPC error);
 * loopback names, the connection's own address and `SVC_ALLOWED_HOSTS` (and its older name) pass;
 * a page of another origin, `Origin: null` included, is 403 `origin_not_allowed` unless
 * `SVC_ALLOWED_ORIGINS` lists it; a repeated `Authorization` or `X-API-Key` is 400
 * `ambiguous_credentials` and never answered with the first.
 */
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { playgroundDir } from '../../../cli/package-root.js';
import { startServe } from '../../../cli/commands/serve.js';
import { InboundAuth } from '../../../server/auth/inbound.js';
import { allowedHostsFromEnv } from '../../../server/http/host-policy.js';
import { TenantScopes, TransportKeys } from '../../../server/mcp/config.js';
import { listen } from '../../../server/serve.js';
import { SvcFailure } from '../../../common/errors.js';
import { openSession, PACKED, startStack } from '../../_helpers/server.js';
import { INIT } from '../mcp/_shared.js';

const UI = playgroundDir();
if (!existsSync(join(UI, 'manifest.json'))) throw new Error(`${UI} has no build: run npm run build first`);

interface Wire {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
  /** The JSON body ({} when there is none). */
  body: Record<string, any>;
}

/**
 * One request with its header lines exactly as given (`Host` too, repeats kept), as a browser
 * after DNS rebinding or a sloppy client would send them; `base` only says where to connect.
 */
function wire(base: string, method: string, path: string, headers: string[], body?: string): Promise<Wire> {
  const u = new URL(base);
  const lines = [...headers, ...(body !== undefined ? ['content-length', String(Buffer.byteLength(body))] : [])];
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method, path, headers: lines, setHost: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        let parsed: Record<string, any> = {};
        try {
          parsed = JSON.parse(text) as Record<string, any>;
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode ?? 0, text, headers: res.headers, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The svc code of an answer: JSON routes, execute routes, or a JSON-RPC error's data. */
const codeOf = (a: Wire): string | undefined =>
  a.body.code ?? a.body.errors?.[0]?.code ?? a.body.error?.data?.code ?? a.body._meta?.svc?.code;

const stack = await startStack(t, { ui: { dir: UI } });
const port = new URL(stack.url).port;
const HOME = `127.0.0.1:${port}`;
const JSON_BODY = ['content-type', 'application/json', 'accept', 'application/json'];
const OPEN = JSON.stringify({ entry_id: 'brewery', seeds: ['Brewery', 'Beer'] });
const MCP_HEADERS = ['content-type', 'application/json', 'accept', 'application/json, text/event-stream'];
const asset = (JSON.parse(readFileSync(join(UI, 'manifest.json'), 'utf8')) as { assets: string[] }).assets[0]!;

/** The vendor's brewery b-5, read directly. */
const brewery = async () => (await (await fetch(`${stack.vendorUrl}/breweries/b-5`)).json()) as { city: string };

t.test('a foreign Host is refused on every route before anything runs (421 host_not_allowed)', async (t) => {
  const { path } = await openSession(stack.url, JSON.parse(OPEN) as Record<string, unknown>);
  const before = await brewery();
  const write = 'e1("b-5").m2(city="Rebound")';
  const cases: Array<[string, string, string[], string?]> = [
    ['POST', '/execute', JSON_BODY, OPEN],
    ['POST', `${path}?force=true`, ['content-type', 'text/plain', 'accept', 'application/json'], write],
    ['GET', `${path}/operations/o1/stream`, ['accept', 'text/event-stream']],
    ['GET', '/', []],
    ['GET', `/ui/${asset}`, []],
    ['GET', '/v1/health', []],
    ['GET', '/v1/registry', []],
    ['POST', '/internal/catalog-registry/v1/reload', []],
    ['GET', '/no/such/route', []],
  ];
  for (const host of ['attacker.example', `attacker.example:${port}`, `127.0.0.1.attacker.example:${port}`]) {
    for (const [method, target, headers, body] of cases) {
      const what = `${method} ${target.slice(0, 40)} Host ${host}`;
      const a = await wire(stack.url, method, target, ['host', host, ...headers], body);
      t.equal(a.status, 421, `${what}: 421`);
      t.equal(codeOf(a), 'host_not_allowed', `${what}: the code`);
      t.match(a.text, /SVC_ALLOWED_HOSTS/, `${what}: the hint names the setting`);
    }
  }
  t.equal((await brewery()).city, before.city, 'the forced write never reached the vendor');
  const m = await wire(stack.url, 'POST', '/mcp', ['host', 'attacker.example', ...MCP_HEADERS], JSON.stringify(INIT));
  t.equal(m.status, 421, '/mcp: 421');
  t.equal(m.body.jsonrpc, '2.0', '/mcp: a JSON-RPC error');
  t.equal(m.body.id, null);
  t.equal(m.body.error?.code, -32600);
  t.equal(m.body.error?.data?.code, 'host_not_allowed');
  t.match(m.body.error?.message, /SVC_ALLOWED_HOSTS/);
  t.notOk(m.headers['mcp-session-id'], '/mcp: no session');

  const huge = `${'a'.repeat(4000)}.example`;
  const h = await wire(stack.url, 'GET', '/v1/health', ['host', huge]);
  t.equal(h.status, 421);
  t.ok(h.text.length < 1000, 'a huge Host is not echoed whole');
  t.notMatch(h.text, /\bat .*\.(ts|js):\d+/, 'no stack trace');
  for (const bad of ['', 'localhost@attacker.example', 'localhost/x', 'localhost:http']) {
    const b = await wire(stack.url, 'GET', '/v1/health', ['host', bad]);
    t.equal(b.status, 421, `Host ${JSON.stringify(bad)}: 421`);
    t.equal(codeOf(b), 'host_not_allowed');
  }
});

t.test('loopback names pass, in any case, with or without a port', async (t) => {
  for (const host of [HOME, `localhost:${port}`, 'localhost', `LocalHost:${port}`, `[::1]:${port}`, '127.0.0.1']) {
    const h = await wire(stack.url, 'GET', '/v1/health', ['host', host]);
    t.equal(h.status, 200, `Host ${host}: health`);
    const o = await wire(stack.url, 'POST', '/execute', ['host', host, ...JSON_BODY], OPEN);
    t.equal(o.status, 201, `Host ${host}: a session`);
  }
  const ui = await wire(stack.url, 'GET', '/', ['host', `localhost:${port}`]);
  t.equal(ui.status, 200, 'the playground');
  const m = await wire(stack.url, 'POST', '/mcp', ['host', HOME, ...MCP_HEADERS], JSON.stringify(INIT));
  t.equal(m.status, 200, '/mcp');
});

t.test('a page of another origin is refused (403 origin_not_allowed); the same or a loopback one passes', async (t) => {
  const { path } = await openSession(stack.url, JSON.parse(OPEN) as Record<string, unknown>);
  const before = await brewery();
  for (const origin of [
    'http://attacker.example',
    `http://attacker.example:${port}`,
    'https://localhost.attacker.example',
    'null',
    'NULL',
    'not a url',
    'file:///tmp/x.html',
  ]) {
    const o = await wire(stack.url, 'POST', '/execute', ['host', HOME, 'origin', origin, ...JSON_BODY], OPEN);
    t.equal(o.status, 403, `Origin ${origin}: 403`);
    t.equal(codeOf(o), 'origin_not_allowed', `Origin ${origin}: the code`);
    t.match(o.text, /SVC_ALLOWED_ORIGINS/, `Origin ${origin}: the hint names the setting`);
    const w = await wire(
      stack.url,
      'POST',
      `${path}?force=true`,
      ['host', HOME, 'origin', origin, 'content-type', 'text/plain'],
      'e1("b-5").m2(city="Crossed")',
    );
    t.equal(w.status, 403, `Origin ${origin}: a forced write is 403`);
    const m = await wire(
      stack.url,
      'POST',
      '/mcp',
      ['host', HOME, 'origin', origin, ...MCP_HEADERS],
      JSON.stringify(INIT),
    );
    t.equal(m.status, 403, `Origin ${origin}: /mcp 403`);
    t.equal(m.body.error?.data?.code, 'origin_not_allowed');
  }
  t.equal((await brewery()).city, before.city, 'no write reached the vendor');
  for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, 'http://localhost:5173']) {
    const o = await wire(stack.url, 'POST', '/execute', ['host', HOME, 'origin', origin, ...JSON_BODY], OPEN);
    t.equal(o.status, 201, `Origin ${origin}: passes`);
  }
  const none = await wire(stack.url, 'POST', '/execute', ['host', HOME, ...JSON_BODY], OPEN);
  t.equal(none.status, 201, 'no Origin (curl, the CLI) passes');
});

t.test('SVC_ALLOWED_HOSTS / SVC_ALLOWED_ORIGINS admit a proxy name and a page origin', async (t) => {
  const s = await startStack(t, {
    vendorUrl: stack.vendorUrl,
    allowed: allowedHostsFromEnv({
      SVC_ALLOWED_HOSTS: 'svc.example.com, Proxy.Internal:8080',
      SVC_ALLOWED_ORIGINS: 'https://app.example/, null',
    }),
  });
  const p = new URL(s.url).port;
  for (const host of ['svc.example.com', 'SVC.EXAMPLE.COM:443', 'proxy.internal:80', `localhost:${p}`]) {
    const o = await wire(s.url, 'POST', '/execute', ['host', host, ...JSON_BODY], OPEN);
    t.equal(o.status, 201, `Host ${host}: passes`);
  }
  const other = await wire(s.url, 'GET', '/v1/health', ['host', 'other.example']);
  t.equal(other.status, 421, 'a name not listed: 421');
  for (const origin of ['https://app.example', 'null', 'https://svc.example.com']) {
    const o = await wire(s.url, 'POST', '/execute', ['host', 'svc.example.com', 'origin', origin, ...JSON_BODY], OPEN);
    t.equal(o.status, 201, `Origin ${origin}: passes`);
  }
  const o = await wire(
    s.url,
    'POST',
    '/execute',
    ['host', 'svc.example.com', 'origin', 'https://evil.example', ...JSON_BODY],
    OPEN,
  );
  t.equal(o.status, 403, 'an origin not listed: 403');

  for (const [env, name] of [
    [{ SVC_ALLOWED_HOSTS: 'https://svc.example.com' }, 'SVC_ALLOWED_HOSTS'],
    [{ SVC_MCP_ALLOWED_HOSTS: 'svc.example.com/path' }, 'SVC_MCP_ALLOWED_HOSTS'],
    [{ SVC_ALLOWED_ORIGINS: 'app.example' }, 'SVC_ALLOWED_ORIGINS'],
    [{ SVC_ALLOWED_ORIGINS: 'https://app.example/path' }, 'SVC_ALLOWED_ORIGINS'],
  ] as const) {
    const e = (() => {
      try {
        allowedHostsFromEnv(env);
      } catch (x) {
        return x;
      }
    })();
    t.type(e, SvcFailure, `${JSON.stringify(env)}: refused`);
    t.equal((e as SvcFailure).errors[0]!.code, 'bad_arguments');
    t.match((e as SvcFailure).errors[0]!.message, name);
  }
});

t.test('svc serve reads SVC_ALLOWED_HOSTS and its older name SVC_MCP_ALLOWED_HOSTS for every route', async (t) => {
  const running = await startServe(
    { catalogDir: PACKED, port: 0, host: '127.0.0.1' },
    { SVC_ALLOWED_HOSTS: 'svc.example.com', SVC_MCP_ALLOWED_HOSTS: 'legacy.example', SVC_LOG_LEVEL: 'error' },
    () => undefined,
  );
  t.teardown(() => running.stop());
  const url = running.listening.url;
  for (const host of ['svc.example.com', 'legacy.example']) {
    t.equal((await wire(url, 'GET', '/v1/health', ['host', host])).status, 200, `${host}: health`);
    const m = await wire(url, 'POST', '/mcp', ['host', host, ...MCP_HEADERS], JSON.stringify(INIT));
    t.equal(m.status, 200, `${host}: /mcp`);
  }
  t.equal((await wire(url, 'GET', '/v1/health', ['host', 'attacker.example'])).status, 421);
});

t.test(
  'on another address than loopback: any Host with no list (as before); with a list, the address itself',
  async (t) => {
    const open = await startStack(t, { vendorUrl: stack.vendorUrl });
    const app = open.app;
    // A second server of the same app on every address (the stack's own stays on loopback).
    const any = await listen(app, 0, '0.0.0.0');
    t.teardown(() => any.close(200));
    const anyUrl = `http://127.0.0.1:${any.port}`;
    const a = await wire(anyUrl, 'GET', '/v1/health', ['host', 'whatever.example']);
    t.equal(a.status, 200, 'no list on 0.0.0.0: any Host');
    const x = await wire(
      anyUrl,
      'POST',
      '/execute',
      ['host', 'svc.lan', 'origin', 'http://evil.example', ...JSON_BODY],
      OPEN,
    );
    t.equal(x.status, 403, 'but a page of another origin is still refused');
    const same = await wire(
      anyUrl,
      'POST',
      '/execute',
      ['host', 'svc.lan:80', 'origin', 'http://svc.lan', ...JSON_BODY],
      OPEN,
    );
    t.equal(same.status, 201, 'and its own origin passes');

    const listed = await startStack(t, { vendorUrl: stack.vendorUrl, allowed: { hosts: ['svc.example.com'] } });
    const pub = await listen(listed.app, 0, '0.0.0.0');
    t.teardown(() => pub.close(200));
    const refused = await wire(`http://127.0.0.1:${pub.port}`, 'GET', '/v1/health', ['host', 'whatever.example']);
    t.equal(refused.status, 421, 'with a list: a name not listed is refused');
    const ip = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    if (!ip) return t.pass('no non-loopback IPv4 address on this machine: the probe case is not checked');
    const probe = await wire(`http://${ip}:${pub.port}`, 'GET', '/v1/health', ['host', `${ip}:${pub.port}`]);
    t.equal(probe.status, 200, 'a probe naming the address it connected to (a pod IP) passes');
    const elsewhere = await wire(`http://${ip}:${pub.port}`, 'GET', '/v1/health', ['host', '10.255.255.1']);
    t.equal(elsewhere.status, 421, 'another address is a name like any other');
  },
);

t.test('a repeated Authorization or X-API-Key is 400 ambiguous_credentials, never its first value', async (t) => {
  const secret = 'svc-test-hs256-secret-0123456789abcdef';
  const jwt = await new SignJWT({ tenant_id: 'acme' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('alice')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(secret));
  const key = 'key-acme-4f9c2a7e1b';
  const transportKey = 't'.repeat(24);
  const s = await startStack(t, {
    vendorUrl: stack.vendorUrl,
    auth: new InboundAuth({
      mode: 'required',
      jwtSecret: secret,
      apiKeys: [{ key, tenant_id: 'acme', subject: 'bot' }],
    }),
    mcp: { keys: new TransportKeys([transportKey]), tenants: new TenantScopes() },
  });
  const h = `127.0.0.1:${new URL(s.url).port}`;
  // Each credential alone works.
  const who = await wire(s.url, 'GET', '/v1/incoming-auth/context', ['host', h, 'authorization', `Bearer ${jwt}`]);
  t.equal(who.status, 200, 'one Authorization: 200');
  const byKey = await wire(s.url, 'GET', '/v1/incoming-auth/context', ['host', h, 'x-api-key', key]);
  t.equal(byKey.status, 200, 'one X-API-Key: 200');
  const cases: Array<[string, string[]]> = [
    ['Authorization twice, the good one first', ['Authorization', `Bearer ${jwt}`, 'authorization', 'Bearer other']],
    ['Authorization twice, the same value', ['authorization', `Bearer ${jwt}`, 'AUTHORIZATION', `Bearer ${jwt}`]],
    ['X-API-Key twice, the good one first', ['X-API-Key', key, 'x-api-key', 'key-other']],
    ['X-API-Key twice, the same value', ['x-api-key', key, 'x-api-key', key]],
  ];
  for (const [what, creds] of cases) {
    for (const [method, target, extra, body] of [
      ['GET', '/v1/incoming-auth/context', [], undefined],
      ['POST', '/execute', JSON_BODY, OPEN],
      ['GET', '/v1/health', [], undefined],
    ] as const) {
      const a = await wire(s.url, method, target, ['host', h, ...creds, ...extra], body);
      t.equal(a.status, 400, `${what}, ${method} ${target}: 400`);
      t.equal(codeOf(a), 'ambiguous_credentials', `${what}, ${method} ${target}: the code`);
      t.match(a.text, /send exactly one/, 'the hint');
      t.notMatch(a.text, new RegExp(`${jwt.slice(-20)}|${key}`), 'no credential echoed');
    }
  }
  // /mcp: a transport key first and another after is not accepted as the first.
  const one = await wire(
    s.url,
    'POST',
    '/mcp',
    ['host', h, 'authorization', `Bearer ${transportKey}`, ...MCP_HEADERS],
    JSON.stringify(INIT),
  );
  t.equal(one.status, 200, '/mcp with one transport key: 200');
  const two = await wire(
    s.url,
    'POST',
    '/mcp',
    ['host', h, 'authorization', `Bearer ${transportKey}`, 'authorization', 'Bearer wrong', ...MCP_HEADERS],
    JSON.stringify(INIT),
  );
  t.equal(two.status, 400, '/mcp with two: 400');
  t.equal(two.body.error?.data?.code, 'ambiguous_credentials', 'as a JSON-RPC error');
  t.notOk(two.headers['mcp-session-id'], 'no session');
});
