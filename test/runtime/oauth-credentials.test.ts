/**
 * OAuth2 outbound credentials from the credentials file (issue 22), at the runtime level: an
 * AuthResolver with a parsed credentials config and executePlan, against a real authorization
 * server (oidc-provider, test/_helpers/oidc.ts) and a vendor that checks every bearer token with
 * the server's own store (401 when unknown, expired or revoked) and records whose token it was.
 */
import t, { type Test } from 'tap';
import { compileProgram } from '../../compiler/index.js';
import type { OutboundAuth } from '../../pack/cgs.js';
import {
  AuthResolver,
  executePlan,
  parseCredentials,
  PooledHttpClient,
  type Caller,
  type CredentialPlace,
  type CredentialsConfig,
  type HttpClient,
  type ProgressEvent,
  type RunResult,
} from '../../runtime/index.js';
import { faultRegistry, startFaultVendor } from '../_helpers/fault-vendor.js';
import { startAuthServer, type AuthServer, type AuthServerOptions, type TokenOwner } from '../_helpers/oidc.js';
import { sleep } from '../_helpers/until.js';

const ITEMS = [1, 2, 3].map((id) => ({ id, name: `item ${id}`, kind: 'alpha' }));
const ACME: Caller = { tenant: 'acme' };
const AUD = 'https://api.vendor.test/';

/** Auth servers, a vendor checking every bearer with them (`seen`: whose token each accepted call carried). */
async function world(t: Test, servers: AuthServerOptions[] = [{}], catalogAuth?: (as: AuthServer[]) => string) {
  const as = await Promise.all(servers.map((o) => startAuthServer(o)));
  const seen: Array<TokenOwner & { token: string }> = [];
  const deny = { on: false }; // while on, the vendor answers 401 to every token
  const v = await startFaultVendor({
    'GET /items': async (req) => {
      const h = req.headers.authorization ?? '';
      const token = h.startsWith('Bearer ') ? h.slice(7) : '';
      let owner: TokenOwner | undefined;
      for (const s of as) owner ??= token && !deny.on ? await s.whoIs(token) : undefined;
      if (!owner) return { status: 401, json: { error: 'invalid_token' } };
      seen.push({ ...owner, token });
      return { json: ITEMS };
    },
  });
  const http = new PooledHttpClient();
  t.teardown(async () => {
    await v.close();
    await http.close();
    await Promise.all(as.map((s) => s.close()));
  });
  const reg = faultRegistry(v.url, catalogAuth?.(as) ?? '{scheme: bearer, env: FAULT_TOKEN}');
  const auths = new Map<string, OutboundAuth>(reg.list().map((e) => [e.entry_id, e.cgs.auth]));
  return {
    as: as[0]!,
    servers: as,
    http,
    seen,
    deny,
    /** The credentials file's data parsed against the catalog (as the server does; no TLS here). */
    config: (data: unknown): CredentialsConfig => ({ entries: {}, tenants: parseCredentials(data, auths).tenants }),
    /** One run of `fault:Item` (no retries, no environment), with its progress events. */
    run: async (auth: AuthResolver, caller: Caller, signal?: AbortSignal) => {
      const c = compileProgram('fault:Item', { registry: reg });
      if (c.kind !== 'plan') throw new Error('no plan');
      const events: ProgressEvent[] = [];
      const r = await executePlan(c.plan, reg, {
        ...{ http, env: {}, auth, caller, requestTimeoutMs: 5000 },
        retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 0 },
        onProgress: (e) => events.push(e),
        ...(signal ? { signal } : {}),
      });
      return { ...r, events };
    },
    /** API requests the vendor received (accepted or not). */
    hits: () => v.hits('/items').length,
  };
}

const cc = (as: AuthServer, extra: Record<string, unknown> = {}) => {
  const { client_id, client_secret } = as.clients.credentials;
  return { scheme: 'oauth2_client_credentials', client_id, client_secret, token_url: as.tokenUrl, ...extra };
};
const rt = (as: AuthServer, refresh_token: string) => {
  const { client_id, client_secret } = as.clients.refresh;
  return { scheme: 'oauth2_refresh_token', client_id, client_secret, token_url: as.tokenUrl, refresh_token };
};
/** A file with a tenant credential for acme and a user credential for alice. */
const file = (tenant: object, alice?: object) => ({
  tenants: {
    acme: { credentials: { fault: tenant }, ...(alice ? { users: { alice: { credentials: { fault: alice } } } } : {}) },
  },
});
const all = <T>(n: number, f: () => Promise<T>) => Promise.all(Array.from({ length: n }, f));
const ok = (rs: RunResult[]) => rs.filter((r) => r.status === 'succeeded').length;

t.test('client credentials: one token for 20 concurrent runs, cached across runs, renewed once', async (t) => {
  const w = await world(t, [{ accessTokenTtlSecs: 32 }]);
  const config = w.config(file(cc(w.as)));
  const auth = new AuthResolver({}, w.http, Date.now, { config });
  t.equal(ok(await all(20, () => w.run(auth, ACME))), 20, '20 concurrent runs succeed');
  t.equal(w.as.grants('client_credentials'), 1, 'exactly one token request for 20 concurrent calls');
  t.equal(new Set(w.seen.map((s) => s.token)).size, 1, 'all 20 calls carried the one token');
  t.same([w.seen[0]?.clientId, w.seen[0]?.accountId], ['svc-cc', undefined], "the client's own token");
  t.equal((await w.run(auth, ACME)).status, 'succeeded');
  t.equal(w.as.grants('client_credentials'), 1, 'the shared resolver keeps the token across runs');
  // ttl 32 s less the 30 s margin: usable for 2 s, while the server would still accept it.
  await sleep(2100);
  t.equal(ok(await all(20, () => w.run(auth, ACME))), 20);
  t.equal(w.as.grants('client_credentials'), 2, 'expired: exactly one new token request for 20 concurrent calls');
  t.equal(new Set(w.seen.slice(21).map((s) => s.token)).size, 1);
  t.not(w.seen.at(-1)?.token, w.seen[0]?.token, 'a new token');
  t.equal((await w.run(new AuthResolver({}, w.http, Date.now, { config }), ACME)).status, 'succeeded');
  t.equal(w.as.grants('client_credentials'), 3, 'another resolver has a cache of its own');
});

t.test('the cache margin with a fake clock: used until 30 s before expiry, then fetched once', async (t) => {
  const w = await world(t);
  const start = Date.now();
  let clock = start;
  const auth = new AuthResolver({}, w.http, () => clock, { config: w.config(file(cc(w.as))) });
  t.equal((await w.run(auth, ACME)).status, 'succeeded');
  clock = start + 3569_000;
  t.equal((await w.run(auth, ACME)).status, 'succeeded');
  t.equal(w.as.grants('client_credentials'), 1, '31 s before the expiry (3600 s) the token is still used');
  clock = start + 3571_000;
  t.equal(ok(await all(5, () => w.run(auth, ACME))), 5);
  t.equal(w.as.grants('client_credentials'), 2, '29 s before: one new token request');
});

t.test('scopes and audience reach the token; the catalog token URL and scopes are the default', async (t) => {
  const w = await world(t, [{}], ([as]) => {
    const url = as!.tokenUrl;
    return `{scheme: oauth2_client_credentials, token_url: "${url}", client_id_env: ID, client_secret_env: SECRET, scopes: [read, write]}`;
  });
  const { client_id, client_secret } = w.as.clients.credentials;
  const config = w.config({
    tenants: {
      acme: { credentials: { fault: cc(w.as, { scopes: ['read'], audience: AUD }) } },
      globex: { credentials: { fault: { scheme: 'oauth2_client_credentials', client_id, client_secret } } },
    },
  });
  const auth = new AuthResolver({}, w.http, Date.now, { config });
  t.equal((await w.run(auth, ACME)).status, 'succeeded');
  t.same(w.seen.at(-1), { clientId: 'svc-cc', scope: 'read', audience: AUD, token: w.seen.at(-1)?.token });
  t.equal((await w.run(auth, { tenant: 'globex' })).status, 'succeeded', "globex: the catalog's token URL");
  t.same([w.seen.at(-1)?.scope, w.seen.at(-1)?.audience], ['read write', undefined], "the catalog's scopes");
  t.equal(w.as.grants('client_credentials'), 2, 'one token per tenant');
  const none = await w.run(auth, { tenant: 'initech' });
  t.equal(none.errors[0]?.code, 'vendor_credentials_missing', 'a tenant without a credential, no environment');
  t.equal(w.hits(), 2, 'it sent nothing');
});

t.test('two tenants with different clients: the vendor sees each tenant as its own client', async (t) => {
  const w = await world(t, [
    { clients: { credentials: { client_id: 'acme-robot', client_secret: 'acme-Kx83' } } },
    { clients: { credentials: { client_id: 'globex-robot', client_secret: 'globex-Pq27' } } },
  ]);
  const [a, g] = w.servers as [AuthServer, AuthServer];
  const config = w.config({ tenants: { ...file(cc(a)).tenants, globex: { credentials: { fault: cc(g) } } } });
  const auth = new AuthResolver({}, w.http, Date.now, { config });
  const runs = await Promise.all([
    ...Array.from({ length: 10 }, () => w.run(auth, ACME)),
    ...Array.from({ length: 10 }, () => w.run(auth, { tenant: 'globex' })),
  ]);
  t.equal(ok(runs), 20);
  t.same([a.grants('client_credentials'), g.grants('client_credentials')], [1, 1], 'one token per tenant');
  t.equal(w.seen.filter((s) => s.clientId === 'acme-robot').length, 10, 'acme called as acme-robot');
  t.equal(w.seen.filter((s) => s.clientId === 'globex-robot').length, 10, 'globex as globex-robot');
  t.equal((await w.run(auth, { tenant: 'globex' })).status, 'succeeded');
  t.equal(w.seen.at(-1)?.clientId, 'globex-robot');
});

t.test('refresh token of user alice: her account, rotation to onRotate, the rotated token next', async (t) => {
  const w = await world(t);
  const rt0 = await w.as.refreshTokenFor('alice');
  const config = w.config(file(cc(w.as), rt(w.as, rt0)));
  const rotations: Array<[CredentialPlace, string]> = [];
  const start = Date.now();
  let clock = start;
  const auth = new AuthResolver({}, w.http, () => clock, { config, onRotate: (p, r) => rotations.push([p, r]) });
  const alice: Caller = { tenant: 'acme', subject: 'alice' };
  t.equal(ok(await all(20, () => w.run(auth, alice))), 20, '20 concurrent runs as alice');
  t.equal(w.as.grants('refresh_token'), 1, 'one refresh for 20 concurrent calls (a second would be a replay)');
  t.ok(
    w.seen.every((s) => s.accountId === 'alice' && s.clientId === 'svc-rt'),
    'the vendor saw account alice',
  );
  t.equal(rotations.length, 1);
  t.same(rotations[0]?.[0], { tenant: 'acme', subject: 'alice', entry: 'fault' }, 'the place in the file');
  const rt1 = rotations[0]![1];
  t.ok(rt1 && rt1 !== rt0, 'a new refresh token');

  clock = start + 3600_000; // the access token expired (for the resolver)
  t.equal((await w.run(auth, alice)).status, 'succeeded', 'a second refresh succeeds: it used the rotated token');
  t.same([w.as.grants('refresh_token'), rotations.length], [2, 2]);
  t.notOk([rt0, rt1].includes(rotations[1]![1]), 'rotated again');
  await w.as.revoke(w.seen.at(-1)!.token);
  const before = w.hits();
  t.equal((await w.run(auth, alice)).status, 'succeeded', 'a third (after a vendor 401): the newest token again');
  t.equal(w.hits() - before, 2, 'the 401 and the retry');
  t.same([w.as.grants('refresh_token'), rotations.length], [3, 3]);

  // A reload (SIGHUP) of a file holding a token of the chain, written back before the last rotations.
  auth.use(w.config(file(cc(w.as), rt(w.as, rt1))));
  t.equal((await w.run(auth, alice)).status, 'succeeded', 'after a reload with an older token of the chain');
  t.same([w.as.grants('refresh_token'), rotations.length], [4, 4], 'the newest was used (rt1 would be a replay)');
  // A reload with a token the operator provisioned anew: that one is used.
  const fresh = await w.as.refreshTokenFor('alice');
  auth.use(w.config(file(cc(w.as), rt(w.as, fresh))));
  t.equal((await w.run(auth, alice)).status, 'succeeded', 'a new token from the operator');
  t.equal(rotations.length, 5);

  const carol = await w.run(auth, { tenant: 'acme', subject: 'carol' });
  t.same([carol.status, w.seen.at(-1)?.clientId, w.seen.at(-1)?.accountId], ['succeeded', 'svc-cc', undefined]);
  const secrets = [rt0, fresh, ...rotations.map(([, r]) => r), w.as.clients.refresh.client_secret];
  const text = JSON.stringify(carol) + JSON.stringify(await w.run(auth, alice));
  t.same(
    secrets.filter((s) => text.includes(s)),
    [],
    'no refresh token and no secret in the results',
  );

  // What a resolver that ignored the rotation would do: replay the token of the file.
  const stale = await w.run(new AuthResolver({}, w.http, Date.now, { config }), alice);
  t.equal(stale.errors[0]?.code, 'vendor_auth_failed', 'the original token is refused');
  t.notOk(JSON.stringify(stale).includes(rt0), 'the refused token is not in the result');
});

t.test('a vendor 401: exactly one refresh and one retry, never a loop', async (t) => {
  const w = await world(t);
  const auth = new AuthResolver({}, w.http, Date.now, { config: w.config(file(cc(w.as))) });
  t.equal((await w.run(auth, ACME)).status, 'succeeded');
  const first = w.seen.at(-1)!.token;
  await w.as.revoke(first);
  let before = w.hits();
  t.equal((await w.run(auth, ACME)).status, 'succeeded', 'the revoked token is replaced');
  t.equal(w.hits() - before, 2, 'the 401, then the retry');
  t.equal(w.as.grants('client_credentials'), 2, 'one new token');
  t.not(w.seen.at(-1)?.token, first);

  w.deny.on = true;
  before = w.hits();
  const denied = await w.run(auth, ACME);
  t.equal(denied.status, 'failed');
  t.same([denied.errors[0]?.code, denied.errors[0]?.cause], ['vendor_error', '401']);
  t.match(denied.errors[0]?.hint, /tenants\.acme\.credentials\.fault/, 'the hint names where the credential is');
  t.equal(w.hits() - before, 2, 'two vendor hits: the call and one retry');
  t.equal(w.as.grants('client_credentials'), 3, 'one refresh');
  const text = JSON.stringify(denied);
  t.notOk(text.includes(w.as.clients.credentials.client_secret), 'no client secret');
  t.notOk(
    w.seen.some((s) => text.includes(s.token)),
    'no access token',
  );
});

t.test('the token endpoint refuses: vendor_auth_failed, the secret nowhere, the vendor untouched', async (t) => {
  const w = await world(t);
  const wrong = 'wrong-Zq8vN3kP1xR7tY5w';
  const badRt = 'rt-not-issued-Hq2Lm9Vc4Xe6';
  const config = w.config(file(cc(w.as, { client_secret: wrong }), rt(w.as, badRt)));
  const auth = new AuthResolver({}, w.http, Date.now, { config });
  for (const [who, caller, secret] of [
    ['a wrong client secret', ACME, wrong],
    ['an unknown refresh token', { tenant: 'acme', subject: 'alice' }, badRt],
  ] as const) {
    for (const round of [1, 2]) {
      const r = await w.run(auth, caller);
      t.equal(r.status, 'failed', `${who}, run ${round}`);
      t.equal(r.errors[0]?.code, 'vendor_auth_failed', who);
      t.match(r.errors[0]?.hint, /credentials file \(tenants\.acme\./, 'the hint names the place');
      const text = JSON.stringify(r);
      t.notOk(text.includes(secret), `${who}: not in the result`);
      t.notOk(text.includes(secret.slice(0, 8)), `${who}: nor its first 8 characters`);
    }
  }
  t.equal(w.hits(), 0, 'no API request without a token');
  t.equal(w.as.grants('client_credentials') + w.as.grants('refresh_token'), 0);
});

t.test('a run cancelled while it waits for the token does not fail the others waiting for it', async (t) => {
  const w = await world(t);
  const slow: HttpClient = {
    request: async (req, o) => {
      if (req.url === w.as.tokenUrl) await sleep(200);
      return w.http.request(req, o);
    },
    close: () => Promise.resolve(),
  };
  const auth = new AuthResolver({}, slow, Date.now, { config: w.config(file(cc(w.as))) });
  const cancel = new AbortController();
  const first = w.run(auth, ACME, cancel.signal);
  await sleep(20); // its token request is under way
  const others = all(5, () => w.run(auth, ACME));
  setTimeout(() => cancel.abort(), 30);
  t.equal((await first).errors[0]?.code, 'cancelled');
  t.equal(ok(await others), 5, 'the others get the token the cancelled run asked for');
  t.equal(w.as.grants('client_credentials'), 1);
});
