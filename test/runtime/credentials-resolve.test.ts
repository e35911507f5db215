/** Where a call's credential comes from (runtime/credentials/source.ts via AuthResolver): the order, the misses, forwarding. */
import t from 'tap';
import type { OutboundAuth } from '../../pack/index.js';
import {
  AuthResolver,
  parseCredentials,
  PooledHttpClient,
  type CredentialsConfig,
  type HttpRequest,
} from '../../runtime/index.js';

const BEARER: OutboundAuth = { scheme: 'bearer', env: 'GH_TOKEN' };
const KEYED: OutboundAuth = { scheme: 'api_key', in: 'query', name: 'key', env: 'K_KEY' };
const AUTHS = new Map<string, OutboundAuth>([
  ['gh', BEARER],
  ['k', KEYED],
]);
const http = new PooledHttpClient();
t.teardown(() => http.close());

function config(data: unknown): CredentialsConfig {
  const c = parseCredentials(data, AUTHS);
  return { entries: c.entries as CredentialsConfig['entries'], tenants: c.tenants };
}

const FILE = config({
  entries: { gh: { forward: { header: 'X-Vendor-Token' } }, k: { fallback: 'none' } },
  tenants: {
    acme: {
      credentials: { gh: { scheme: 'bearer', token: 'acme-token' }, k: { scheme: 'api_key', key: 'acme-key' } },
      users: { alice: { credentials: { gh: { scheme: 'bearer', token: 'alice-token' } } } },
    },
    ro: { read_only: true },
  },
});

/** The request a call would send for `caller` (or the error code when there is no credential). */
async function sent(r: AuthResolver, entry: string, caller: Parameters<AuthResolver['source']>[2]): Promise<string> {
  const auth = AUTHS.get(entry)!;
  const s = r.source(entry, auth, caller);
  if (!s) return 'none';
  if ('code' in s) return s.code;
  const req: HttpRequest = { method: 'GET', url: 'http://vendor.test/items', headers: {} };
  await r.apply(s, auth as Exclude<OutboundAuth, { scheme: 'none' }>, req);
  return req.headers.authorization ?? req.url;
}

t.test('the order: forwarded header, user, tenant, environment', async (t) => {
  const r = new AuthResolver({ GH_TOKEN: 'env-token', K_KEY: 'env-key' }, http, Date.now, { config: FILE });
  const fwd = (v: string) =>
    r.forwarded((h) => (h === 'x-vendor-token' ? v : h === 'authorization' ? 'Bearer svc' : undefined));
  t.equal(await sent(r, 'gh', { tenant: 'acme', subject: 'alice', forwarded: fwd('own-token') }), 'Bearer own-token');
  t.equal(
    await sent(r, 'gh', { tenant: 'acme', forwarded: fwd('Bearer own-2') }),
    'Bearer own-2',
    'a Bearer prefix is not doubled',
  );
  t.equal(await sent(r, 'gh', { tenant: 'acme', subject: 'alice' }), 'Bearer alice-token');
  t.equal(await sent(r, 'gh', { tenant: 'acme', subject: 'bob' }), 'Bearer acme-token');
  t.equal(await sent(r, 'gh', { tenant: 'globex' }), 'Bearer env-token', 'fallback: environment');
  t.equal(await sent(r, 'k', { tenant: 'acme' }), 'http://vendor.test/items?key=acme-key');
  t.same(fwd('x'), { gh: 'x' }, 'only the header the file names is read, for its entry');
  t.equal(
    r.forwarded(() => '   '),
    undefined,
    'a blank header forwards nothing',
  );
});

t.test('a caller without a credential is refused before any call', async (t) => {
  const r = new AuthResolver({ GH_TOKEN: 'env-token' }, http, Date.now, { config: FILE });
  t.equal(await sent(r, 'k', { tenant: 'globex' }), 'vendor_credentials_missing', 'fallback: none');
  const e = r.source('k', KEYED, { tenant: 'globex' });
  t.match(e, {
    message: /catalog `k` has no credentials for tenant `globex`/,
    hint: /tenants\.globex\.credentials\.k/,
  });
  t.notMatch(JSON.stringify(e), /acme-key|env-/);
  const bare = new AuthResolver({}, http, Date.now, { config: config({}) });
  const m = bare.source('gh', BEARER, { tenant: '' });
  t.match(m, { code: 'vendor_credentials_missing', message: /for anonymous callers/, hint: /set GH_TOKEN/ });
  const noFile = new AuthResolver({}, http);
  t.match(noFile.source('gh', BEARER, { tenant: 'acme' }), { code: 'missing_secret' }, 'no file: as before');
});

t.test('read-only tenants, reload and health figures', async (t) => {
  const r = new AuthResolver({}, http, Date.now, { config: FILE });
  t.equal(r.readOnly('ro'), true);
  t.equal(r.readOnly('acme'), false);
  t.equal(r.readOnly('constructor'), false, 'own keys only');
  t.match(r.stats(), { credentials_file: true, tenants: 2, cached_tokens: 0 });
  r.use(config({ tenants: { acme: { credentials: { gh: { scheme: 'bearer', token: 'rotated' } } } } }));
  t.equal(await sent(r, 'gh', { tenant: 'acme' }), 'Bearer rotated', 'the reloaded file applies to the next call');
  t.equal(r.readOnly('ro'), false);
  t.notMatch(JSON.stringify(r.stats()), /rotated|acme/, 'no value and no tenant name in the figures');
  t.same(new AuthResolver({}, http).stats(), { credentials_file: false, tenants: 0, cached_tokens: 0 });
});

t.test('further keys (also): every one is sent; a credential lacking one is refused before any call', async (t) => {
  const PAIR: Exclude<OutboundAuth, { scheme: 'none' }> = {
    scheme: 'api_key',
    in: 'header',
    name: 'X-App-Key',
    env: 'P_KEY',
    also: [
      { in: 'header', name: 'X-App-Token', env: 'P_TOKEN' },
      { in: 'query', name: 'app_id', env: 'P_APP' },
    ],
  };
  const send = async (r: AuthResolver, caller: Parameters<AuthResolver['source']>[2]) => {
    const s = r.source('pair', PAIR, caller);
    if (!s || 'code' in s) return s;
    const req: HttpRequest = { method: 'GET', url: 'http://vendor.test/items', headers: {} };
    await r.apply(s, PAIR, req);
    return { url: req.url, headers: req.headers, secrets: r.secretValues(s) };
  };
  const env = new AuthResolver({ P_KEY: 'k-env', P_TOKEN: 't-env', P_APP: 'a-env' }, http);
  t.same(await send(env, { tenant: '' }), {
    url: 'http://vendor.test/items?app_id=a-env',
    headers: { 'x-app-key': 'k-env', 'x-app-token': 't-env' },
    secrets: ['k-env', 't-env', 'a-env'],
  });
  t.match(
    await send(new AuthResolver({ P_KEY: 'k-env', P_TOKEN: 't-env' }, http), { tenant: '' }),
    { code: 'missing_secret', message: /`P_APP`/ },
    'the environment gives every key or none',
  );
  // A file checked against the catalog before it had further keys (a catalog reload added them).
  const stale: CredentialsConfig = {
    entries: { pair: { fallback: 'none', forward: 'x-vendor-key' } },
    tenants: {
      acme: {
        read_only: false,
        credentials: { pair: { scheme: 'api_key', key: 'k-acme', also: { 'X-App-Token': 't-acme' } } },
        users: {},
      },
    },
  };
  const r = new AuthResolver({}, http, Date.now, { config: stale });
  const e = await send(r, { tenant: 'acme' });
  t.match(e, {
    code: 'vendor_credentials_missing',
    message:
      /catalog `pair` sends 3 keys together, and the credential from the credentials file \(tenants\.acme\.credentials\.pair\) lacks `app_id`/,
    hint: /adds also: \{app_id: "\.\.\."\} to that credentials file entry/,
  });
  t.notMatch(JSON.stringify(e), /k-acme|t-acme/, 'never a value');
  t.match(await send(r, { tenant: 'acme', forwarded: { pair: 'k-own' } }), {
    code: 'vendor_credentials_missing',
    hint: /a forwarded header carries one key only/,
  });
});
