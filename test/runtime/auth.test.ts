/** Outbound vendor auth against the fault vendor: every scheme, missing secrets, no secret leaks, OAuth2 tokens. */
import t from 'tap';
import { compileProgram } from '../../compiler/index.js';
import type { Registry } from '../../pack/index.js';
import {
  AuthResolver,
  continuePage,
  executePlan,
  PooledHttpClient,
  type ExecuteOptions,
  type ProgressEvent,
  type RetryPolicy,
  type RunResult,
} from '../../runtime/index.js';
import {
  faultRegistry,
  linkedPages,
  oauth2Vendor,
  startFaultVendor,
  type FaultVendor,
  type Routes,
} from '../_helpers/fault-vendor.js';

type Tap = { teardown(fn: () => unknown): void };
type Asserts = Pick<typeof t, 'notOk'>;

const RETRY: RetryPolicy = { retries: 3, baseDelayMs: 5, maxDelayMs: 200, budgetMs: 2000 };
const ITEMS = Array.from({ length: 10 }, (_, i) => ({ id: i + 1, name: `item ${i + 1}`, kind: 'alpha' }));

const KEY = 'sk_live_Q7rT9vX2mK4pL8nW';
const USER = 'svc-robot-user';
const PASS = 'p@ss:w0rd/Zk93+Lq';
const CLIENT_ID = 'client-7f3a9e';
const CLIENT_SECRET = 'cs_Hn2Vb8Rt6Yp4Ws1Q';
const ENV = {
  FAULT_KEY: KEY,
  FAULT_USER: USER,
  FAULT_PASS: PASS,
  FAULT_CLIENT_ID: CLIENT_ID,
  FAULT_CLIENT_SECRET: CLIENT_SECRET,
};
const b64 = (s: string) => Buffer.from(s).toString('base64');

const AUTH = {
  none: '{scheme: none}',
  header: '{scheme: api_key, in: header, name: X-Api-Key, env: FAULT_KEY}',
  query: '{scheme: api_key, in: query, name: api_key, env: FAULT_KEY}',
  bearer: '{scheme: bearer, env: FAULT_KEY}',
  basic: '{scheme: basic, username_env: FAULT_USER, password_env: FAULT_PASS}',
  oauth2: (url: string) =>
    `{scheme: oauth2_client_credentials, token_url: "${url}/oauth/token", client_id_env: FAULT_CLIENT_ID, client_secret_env: FAULT_CLIENT_SECRET, scopes: [items.read, items.write]}`,
};

interface Setup {
  v: FaultVendor;
  reg: Registry;
  http: PooledHttpClient;
  events: ProgressEvent[];
  run(text: string, opts?: ExecuteOptions): Promise<RunResult>;
}

async function setup(t: Tap, auth: string | ((url: string) => string), routes: Routes): Promise<Setup> {
  const v = await startFaultVendor(routes);
  const http = new PooledHttpClient();
  t.teardown(async () => {
    await v.close();
    await http.close();
  });
  const reg = faultRegistry(v.url, typeof auth === 'function' ? auth(v.url) : auth);
  const events: ProgressEvent[] = [];
  return {
    v,
    reg,
    http,
    events,
    run: (text, opts = {}) => {
      const c = compileProgram(text, { registry: reg });
      if (c.kind !== 'plan') throw new Error(`${text} does not compile: ${JSON.stringify(c)}`);
      return executePlan(c.plan, reg, {
        http,
        env: ENV,
        requestTimeoutMs: 2000,
        retry: RETRY,
        onProgress: (e) => events.push(e),
        ...opts,
      });
    },
  };
}

const api = (v: FaultVendor) => v.requests.filter((r) => r.path !== '/oauth/token');

t.test('every scheme sends its credentials the way the catalog says', async (t) => {
  t.test('none', async (t) => {
    const s = await setup(t, AUTH.none, { 'GET /items': { json: ITEMS } });
    t.equal((await s.run('fault:Item')).status, 'succeeded');
    t.notOk(s.v.requests[0]?.headers.authorization);
  });

  t.test('api_key in a header', async (t) => {
    const s = await setup(t, AUTH.header, { 'GET /items': { json: ITEMS } });
    t.equal((await s.run('fault:Item(kind="alpha")')).status, 'succeeded');
    const r = s.v.requests[0]!;
    t.equal(r.headers['x-api-key'], KEY);
    t.notOk(r.headers.authorization);
    t.same([...r.query.keys()], ['kind'], 'the key is not in the query');
  });

  t.test('api_key in the query', async (t) => {
    const s = await setup(t, AUTH.query, { 'GET /items': { json: ITEMS } });
    t.equal((await s.run('fault:Item(kind="alpha")')).status, 'succeeded');
    const r = s.v.requests[0]!;
    t.equal(r.query.get('api_key'), KEY);
    t.equal(r.query.get('kind'), 'alpha', 'the other query parameters stay');
    t.notOk(r.headers['x-api-key']);
    t.notOk(r.headers.authorization);
  });

  t.test('bearer', async (t) => {
    const s = await setup(t, AUTH.bearer, { 'GET /items': { json: ITEMS } });
    t.equal((await s.run('fault:Item')).status, 'succeeded');
    t.equal(s.v.requests[0]?.headers.authorization, `Bearer ${KEY}`);
  });

  t.test('basic', async (t) => {
    const s = await setup(t, AUTH.basic, { 'GET /items': { json: ITEMS } });
    t.equal((await s.run('fault:Item')).status, 'succeeded');
    t.equal(s.v.requests[0]?.headers.authorization, `Basic ${b64(`${USER}:${PASS}`)}`);
  });

  t.test('basic with an empty password (a key as the user name)', async (t) => {
    const s = await setup(t, AUTH.basic, { 'GET /items': { json: ITEMS } });
    const r = await s.run('fault:Item', { env: { FAULT_USER: KEY, FAULT_PASS: '' } });
    t.equal(r.status, 'succeeded', JSON.stringify(r.errors));
    t.equal(s.v.requests[0]?.headers.authorization, `Basic ${b64(`${KEY}:`)}`);
  });

  t.test('oauth2 client credentials', async (t) => {
    const o = oauth2Vendor(CLIENT_ID, CLIENT_SECRET);
    const s = await setup(t, AUTH.oauth2, { 'POST /oauth/token': o.token, 'GET /items': o.guard({ json: ITEMS }) });
    const r = await s.run('fault:Item');
    t.equal(r.status, 'succeeded');
    t.equal(r.returns[0]?.rows.length, 10);
    t.equal(o.tokenRequests, 1);
    const tok = s.v.hits('/oauth/token')[0]!;
    t.equal(tok.method, 'POST');
    t.match(tok.headers['content-type'], /^application\/x-www-form-urlencoded/);
    // RFC 6749 2.3.1: id and secret form-encoded, then Basic (a stricter encoder may escape more).
    const basic = /^Basic (.+)$/.exec(tok.headers.authorization ?? '')?.[1] ?? '';
    const pair = Buffer.from(basic, 'base64').toString('utf8').split(':').map(decodeURIComponent);
    t.same(pair, [CLIENT_ID, CLIENT_SECRET], 'client credentials in HTTP Basic auth');
    const form = new URLSearchParams(tok.body);
    t.equal(form.get('grant_type'), 'client_credentials');
    t.equal(form.get('scope'), 'items.read items.write');
    t.notOk(form.has('client_secret'), 'the secret is not also in the body');
    t.equal(s.v.hits('/items')[0]?.headers.authorization, `Bearer ${o.issued[0]}`);
  });
});

t.test('a missing secret: missing_secret naming the variable, nothing sent', async (t) => {
  const cases: Array<[string, string | ((url: string) => string), Record<string, string>, string[], string[]]> = [
    ['api_key header', AUTH.header, {}, ['FAULT_KEY'], []],
    ['api_key query', AUTH.query, { FAULT_KEY: '' }, ['FAULT_KEY'], []],
    ['bearer', AUTH.bearer, { OTHER: 'x' }, ['FAULT_KEY'], []],
    ['basic without a password', AUTH.basic, { FAULT_USER: USER }, ['FAULT_PASS'], ['FAULT_USER']],
    ['basic without both', AUTH.basic, {}, ['FAULT_USER', 'FAULT_PASS'], []],
    [
      'oauth2 without the secret',
      AUTH.oauth2,
      { FAULT_CLIENT_ID: CLIENT_ID },
      ['FAULT_CLIENT_SECRET'],
      ['FAULT_CLIENT_ID'],
    ],
  ];
  for (const [name, auth, env, missing, present] of cases) {
    t.test(name, async (t) => {
      const o = oauth2Vendor(CLIENT_ID, CLIENT_SECRET);
      const s = await setup(t, auth, { 'POST /oauth/token': o.token, 'GET /items': { json: ITEMS } });
      const r = await s.run('fault:Item', { env });
      t.equal(r.status, 'failed');
      t.equal(r.errors.length, 1);
      const e = r.errors[0]!;
      t.equal(e.code, 'missing_secret');
      for (const m of missing) {
        t.match(e.message, m, `the message names ${m}`);
        t.match(e.hint, m, `the hint names ${m}`);
      }
      for (const p of present) t.notMatch(e.message, p, `${p} is set and not blamed`);
      t.match(e.hint, /nothing was sent/);
      t.equal(s.v.requests.length, 0, 'the vendor saw no request');
      const c = compileProgram('fault:Item', { registry: s.reg });
      if (c.kind !== 'plan') throw new Error('no plan');
      const page = await continuePage(
        {
          api: 'fault',
          cgs_hash: s.reg.get('fault')!.cgs_hash,
          capability: 'listItems',
          values: {},
          cursor: {},
          size: 3,
          fetched: 3,
        },
        s.reg,
        { http: s.http, env },
      );
      t.equal(page.error?.code, 'missing_secret', 'continuePage checks too');
      t.equal(s.v.requests.length, 0);
    });
  }
});

/** Everything a client could see of a run, as one string. */
function visible(
  r: RunResult | { rows: unknown[]; error?: unknown; page?: unknown },
  events: ProgressEvent[] = [],
): string {
  const errors = 'errors' in r ? r.errors : r.error ? [r.error] : [];
  return [
    JSON.stringify(r),
    JSON.stringify(events),
    ...errors.map((e) => `${(e as { message: string }).message} ${(e as { hint?: string }).hint ?? ''}`),
  ].join('\n');
}

function noSecret(t: Asserts, text: string, secrets: string[], where: string): void {
  for (const s of secrets) t.notOk(text.includes(s), `${where}: no ${s.slice(0, 6)}... in the output`);
}

t.test('secrets never appear in errors, hints, progress events or the RunResult', async (t) => {
  const secrets = [KEY, encodeURIComponent(KEY), PASS, encodeURIComponent(PASS), b64(`${USER}:${PASS}`), CLIENT_SECRET];

  t.test('ordinary failures and successes with every static scheme', async (t) => {
    for (const [name, auth] of Object.entries({
      header: AUTH.header,
      query: AUTH.query,
      bearer: AUTH.bearer,
      basic: AUTH.basic,
    })) {
      const s = await setup(t, auth, {
        'GET /items': (req) => {
          const k = req.query.get('kind');
          if (k === 'alpha') return { status: 500, json: { message: 'boom' } };
          if (k === 'beta') return { delayMs: 500, json: [] };
          if (k === 'gamma') return { reset: 'before' };
          return { text: '{oops', contentType: 'application/json' };
        },
        'GET /items/:id': { status: 404, json: { message: 'no such item' } },
        'GET /feed': { json: { items: ITEMS.slice(0, 3), next_cursor: 'c3' } },
      });
      for (const p of [
        'fault:Item(kind="alpha")',
        'fault:Item(kind="beta")',
        'fault:Item(kind="gamma")',
        'fault:Item',
        'fault:Item(4)',
        'fault:feedItems',
      ]) {
        s.events.length = 0;
        const r = await s.run(p, { requestTimeoutMs: 200, retry: { ...RETRY, retries: 1 } });
        if (p !== 'fault:feedItems') t.equal(r.status, 'failed', `${name} ${p} fails`);
        noSecret(t, visible(r, s.events), secrets, `${name} ${p}`);
      }
    }
  });

  t.test('a vendor that echoes the credential in its error message', async (t) => {
    const s = await setup(t, AUTH.query, {
      'GET /items': (req) => ({ status: 401, json: { message: `invalid api_key ${req.query.get('api_key') ?? ''}` } }),
    });
    const r = await s.run('fault:Item');
    t.equal(r.errors[0]?.code, 'vendor_error');
    t.equal(r.errors[0]?.cause, '401');
    noSecret(t, visible(r, s.events), [KEY], 'echoed key');
    const b = await setup(t, AUTH.bearer, {
      'GET /items': (req) => ({
        status: 403,
        json: { message: `token ${req.headers.authorization ?? ''} lacks scope items.read` },
      }),
    });
    const rb = await b.run('fault:Item');
    t.equal(rb.errors[0]?.cause, '403');
    t.match(rb.errors[0]?.hint, /FAULT_KEY/, 'the hint names the variable, not its value');
    noSecret(t, visible(rb, b.events), [KEY], 'echoed bearer token');
  });

  t.test(
    'an echoed credential across the cuts of the excerpt: no piece of it survives (redact, then cut)',
    async (t) => {
      // The excerpt keeps 197 characters (+ "...") of the first 4096 decoded bytes. A credential that
      // starts just before either cut must be redacted whole, not cut first and missed.
      const prefixes = (s: string) => [...Array(s.length - 3).keys()].map((i) => s.slice(0, i + 4));
      const placements: Array<[string, string, number, 'json' | 'text']> = [
        ['x', 'around the 200-character cut (JSON message)', 185, 'json'],
        ['x', 'around the 200-character cut (text body)', 185, 'text'],
        ['\n', 'around the 4096-byte cut (control characters collapse into one space)', 4080, 'text'],
        ['\t', 'around the 4096-byte cut, in a JSON body too long to decode', 4064, 'text'],
      ];
      for (const [scheme, auth, echoed] of [
        ['api_key header', AUTH.header, KEY],
        ['bearer', AUTH.bearer, `Bearer ${KEY}`],
        ['api_key query', AUTH.query, KEY],
      ] as const) {
        for (const [pad, where, start, form] of placements) {
          for (let shift = 0; shift <= KEY.length + 8; shift += 4) {
            const at = start + shift;
            const s = await setup(t, auth, {
              'GET /items': (req) => {
                const cred = req.headers['x-api-key'] ?? req.headers.authorization ?? req.query.get('api_key') ?? '';
                const text = `${pad.repeat(at)}${String(cred)} was refused; see the docs`;
                return form === 'json'
                  ? { status: 400, json: { message: text } }
                  : { status: 400, text: where.includes('JSON body') ? `{"message": "${text}` : text };
              },
            });
            const r = await s.run('fault:Item');
            t.equal(r.errors[0]?.code, 'vendor_error');
            t.equal(
              s.v.hits('/items')[0]?.headers.authorization ??
                s.v.hits('/items')[0]?.headers['x-api-key'] ??
                s.v.hits('/items')[0]?.query.get('api_key'),
              echoed,
              'the credential was sent and echoed',
            );
            const seen = visible(r, s.events);
            t.same(
              prefixes(KEY).filter((p) => seen.includes(p)),
              [],
              `${scheme}, ${where}, key at ${at}: no piece of the key`,
            );
          }
        }
      }
    },
  );

  t.test('a Link header that repeats the api_key query parameter', async (t) => {
    const s = await setup(t, AUTH.query, { 'GET /linked': linkedPages(ITEMS, 3) });
    const r = await s.run('fault:linkItems');
    t.equal(r.status, 'succeeded');
    t.ok(r.returns[0]?.page, 'there is a next page');
    t.equal(s.v.hits('/linked')[0]?.query.get('api_key'), KEY);
    noSecret(t, visible(r, s.events), [KEY], 'RunResult with a page state');
    if (r.returns[0]?.page) {
      const next = await continuePage(r.returns[0].page, s.reg, { http: s.http, env: ENV });
      t.same(
        next.rows.map((x) => x.id),
        [4, 5, 6],
      );
      t.same(s.v.hits('/linked')[1]?.query.getAll('api_key'), [KEY], 'the key is sent once on the next page');
      noSecret(t, visible(next), [KEY], 'continuePage result');
    }
  });

  t.test('OAuth2: token endpoint failures and the tokens themselves', async (t) => {
    const o = oauth2Vendor(CLIENT_ID, 'some-other-secret');
    const s = await setup(t, AUTH.oauth2, { 'POST /oauth/token': o.token, 'GET /items': o.guard({ json: ITEMS }) });
    const r = await s.run('fault:Item');
    t.equal(r.errors[0]?.code, 'vendor_auth_failed');
    noSecret(
      t,
      visible(r, s.events),
      [
        CLIENT_SECRET,
        encodeURIComponent(CLIENT_SECRET),
        b64(`${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(CLIENT_SECRET)}`),
      ],
      'refused token',
    );
    const ok = oauth2Vendor(CLIENT_ID, CLIENT_SECRET);
    const s2 = await setup(t, AUTH.oauth2, {
      'POST /oauth/token': ok.token,
      'GET /items': ok.guard({ status: 500, json: { message: 'boom' } }),
    });
    const r2 = await s2.run('fault:Item');
    t.equal(r2.errors[0]?.code, 'vendor_error');
    noSecret(t, visible(r2, s2.events), [CLIENT_SECRET, ...ok.issued], 'vendor error after a token');
    t.equal(ok.issued.length, 1);
  });
});

t.test('OAuth2 client credentials', async (t) => {
  t.test('one token for several calls, also across runs with a shared resolver', async (t) => {
    const o = oauth2Vendor(CLIENT_ID, CLIENT_SECRET);
    const s = await setup(t, AUTH.oauth2, {
      'POST /oauth/token': o.token,
      'GET /items': o.guard((req) => ({ json: req.query.has('kind') ? ITEMS.slice(0, 4) : ITEMS })),
      'GET /items/:id': o.guard((req) => ({ json: ITEMS[Number(req.params.id) - 1] })),
    });
    const r = await s.run('a = fault:Item(kind="alpha")\nfault:getItem(id=a.id)');
    t.equal(r.status, 'succeeded');
    t.equal(r.returns[0]?.rows.length, 4);
    t.equal(api(s.v).length, 5, 'one list and four concurrent gets');
    t.equal(o.tokenRequests, 1, 'one token request for all of them');
    t.ok(api(s.v).every((x) => x.headers.authorization === `Bearer ${o.issued[0]}`));

    const resolver = new AuthResolver(ENV, s.http);
    await s.run('fault:Item', { auth: resolver });
    await s.run('fault:Item', { auth: resolver });
    t.equal(o.tokenRequests, 2, 'a shared resolver keeps its token across runs');
  });

  t.test('a stale token is refreshed once after a 401', async (t) => {
    const o = oauth2Vendor(CLIENT_ID, CLIENT_SECRET);
    const s = await setup(t, AUTH.oauth2, { 'POST /oauth/token': o.token, 'GET /items': o.guard({ json: ITEMS }) });
    const resolver = new AuthResolver(ENV, s.http);
    t.equal((await s.run('fault:Item', { auth: resolver })).status, 'succeeded');
    o.expireAll();
    const r = await s.run('fault:Item', { auth: resolver });
    t.equal(r.status, 'succeeded');
    t.equal(r.returns[0]?.rows.length, 10);
    t.equal(o.tokenRequests, 2, 'one refresh');
    const sent = s.v.hits('/items').map((x) => x.headers.authorization);
    t.same(
      sent,
      [`Bearer ${o.issued[0]}`, `Bearer ${o.issued[0]}`, `Bearer ${o.issued[1]}`],
      'the stale token, then the fresh one',
    );
  });

  t.test('a vendor that keeps answering 401: one refresh, then vendor_error', async (t) => {
    const o = oauth2Vendor(CLIENT_ID, CLIENT_SECRET);
    const s = await setup(t, AUTH.oauth2, {
      'POST /oauth/token': o.token,
      'GET /items': { status: 401, json: { error: 'invalid_token' } },
    });
    const r = await s.run('fault:Item');
    t.equal(r.status, 'failed');
    t.equal(r.errors[0]?.code, 'vendor_error');
    t.equal(r.errors[0]?.cause, '401');
    t.match(r.errors[0]?.hint, /FAULT_CLIENT_ID/);
    t.equal(o.tokenRequests, 2, 'exactly one refresh');
    t.equal(s.v.hits('/items').length, 2);
  });

  t.test('a fan-out whose token went stale refreshes it once', async (t) => {
    const o = oauth2Vendor(CLIENT_ID, CLIENT_SECRET);
    const list = o.guard({ json: ITEMS.slice(0, 5) });
    const get = o.guard((req) => ({ json: ITEMS[Number(req.params.id) - 1] }));
    let stale = 0;
    let renewed!: () => void;
    const refreshed = new Promise<void>((resolve) => {
      renewed = resolve;
    });
    const s = await setup(t, AUTH.oauth2, {
      'POST /oauth/token': o.token,
      // The list succeeds, then the token goes stale under the five concurrent gets.
      'GET /items': async (req, i) => {
        const r = await list(req, i);
        if (r.status === undefined) o.expireAll();
        return r;
      },
      // The first 401 comes back at once; the others are held until a get carrying the refreshed
      // token arrived, so they reach the runtime after the refresh (by cause, not by a delay).
      'GET /items/:id': async (req, i) => {
        if (o.issued.length > 1 && req.headers.authorization === `Bearer ${o.issued[1]}`) renewed();
        const r = await get(req, i);
        if (r.status === 401 && stale++ > 0) await refreshed;
        return r;
      },
    });
    const r = await s.run('a = fault:Item\nfault:getItem(id=a.id)');
    t.equal(r.status, 'succeeded');
    t.equal(r.returns[0]?.rows.length, 5);
    t.equal(s.v.hits('/items/1').length, 2, 'each get is sent again after the refresh');
    t.equal(
      o.tokenRequests,
      2,
      'the first token and one refresh: a late 401 for the old token does not throw away the new one',
    );
  });

  t.test('the token endpoint refuses: vendor_auth_failed, the API sees nothing', async (t) => {
    const o = oauth2Vendor(CLIENT_ID, CLIENT_SECRET);
    o.refuse = true;
    const s = await setup(t, AUTH.oauth2, { 'POST /oauth/token': o.token, 'GET /items': o.guard({ json: ITEMS }) });
    const r = await s.run('fault:Item');
    t.equal(r.status, 'failed');
    const e = r.errors[0]!;
    t.equal(e.code, 'vendor_auth_failed');
    t.match(e.message, /401/);
    t.match(e.hint, /FAULT_CLIENT_ID/);
    t.match(e.hint, /FAULT_CLIENT_SECRET/);
    t.equal(api(s.v).length, 0, 'no API request without a token');
    t.equal(o.tokenRequests, 1, 'a refused token request is not retried');
  });

  t.test('a token endpoint that answers garbage: vendor_auth_failed', async (t) => {
    const s = await setup(t, AUTH.oauth2, {
      'POST /oauth/token': { json: { token_type: 'Bearer' } },
      'GET /items': { json: ITEMS },
    });
    const r = await s.run('fault:Item');
    t.equal(r.errors[0]?.code, 'vendor_auth_failed');
    t.equal(api(s.v).length, 0);
  });
});
