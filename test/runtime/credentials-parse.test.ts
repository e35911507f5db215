/** The credentials file's content checked against the loaded catalogs (runtime/credentials/parse.ts). */
import t from 'tap';
import type { OutboundAuth } from '../../pack/index.js';
import { parseCredentials } from '../../runtime/index.js';
import { SvcFailure as Failure } from '../../common/errors.js';

const AUTHS = new Map<string, OutboundAuth>([
  ['gh', { scheme: 'bearer', env: 'GH_TOKEN' }],
  ['keyed', { scheme: 'api_key', in: 'header', name: 'X-Key', env: 'KEYED_KEY' }],
  [
    'pair',
    {
      scheme: 'api_key',
      in: 'header',
      name: 'X-App-Key',
      env: 'PAIR_KEY',
      also: [
        { in: 'header', name: 'X-App-Token', env: 'PAIR_TOKEN' },
        { in: 'query', name: 'app_id', env: 'PAIR_APP' },
      ],
    },
  ],
  ['basic', { scheme: 'basic', username_env: 'U', password_env: 'P' }],
  ['open', { scheme: 'none' }],
  [
    'oa',
    {
      scheme: 'oauth2_client_credentials',
      token_url: 'https://auth.test/token',
      client_id_env: 'I',
      client_secret_env: 'S',
      scopes: ['r'],
    },
  ],
]);

/** The message of the problem `data` is refused with. */
function problem(data: unknown): string {
  try {
    parseCredentials(data, AUTHS);
  } catch (e) {
    if (e instanceof Failure) {
      t.equal(e.errors[0]?.code, 'credentials_config_invalid');
      t.ok(e.errors[0]?.hint, 'with a hint');
      return e.errors[0]!.message;
    }
    throw e;
  }
  return 'accepted';
}

t.test('a file with every part is read', async (t) => {
  const c = parseCredentials(
    {
      entries: {
        gh: { fallback: 'none', forward: { header: 'X-Vendor-Token' }, tls: { cert: '/c.pem', key: '/k.pem' } },
      },
      tenants: {
        acme: {
          read_only: true,
          credentials: { gh: { scheme: 'bearer', token: 'tok-acme' }, keyed: { scheme: 'api_key', key: 'k' } },
          users: {
            alice: {
              credentials: {
                gh: { scheme: 'oauth2_refresh_token', client_id: 'c', refresh_token: 'r', token_url: 'https://a/t' },
              },
            },
          },
        },
        globex: {
          credentials: {
            oa: { scheme: 'oauth2_client_credentials', client_id: 'i', client_secret: 's', audience: 'api' },
          },
        },
      },
    },
    AUTHS,
  );
  t.same(c.entries.gh, { fallback: 'none', forward: 'x-vendor-token', tls: { cert: '/c.pem', key: '/k.pem' } });
  t.equal(c.tenants.acme?.read_only, true);
  t.equal(c.tenants.globex?.read_only, false);
  t.same(c.tenants.acme?.credentials.gh, { scheme: 'bearer', token: 'tok-acme' });
  t.equal(c.tenants.acme?.users.alice?.gh?.scheme, 'oauth2_refresh_token');
  t.same(parseCredentials(null, AUTHS), { entries: {}, tenants: {} }, 'an empty file is no credentials');
});

t.test('every problem is refused with its place, never a value', async (t) => {
  t.match(problem([]), /must be a mapping/);
  t.match(problem({ tenant: {} }), /unknown key `tenant`/);
  t.match(problem({ entries: { nope: {} } }), /entries\.nope names catalog `nope`, which is not loaded/);
  t.match(problem({ tenants: { a: { credentials: { nope: { scheme: 'bearer', token: 'x' } } } } }), /not loaded/);
  t.match(
    problem({ tenants: { a: { credentials: { gh: { scheme: 'oauth3', token: 'secret-value-1' } } } } }),
    /tenants\.a\.credentials\.gh\.scheme names an unknown scheme `oauth3`/,
  );
  t.match(problem({ tenants: { a: { credentials: { gh: { token: 'x' } } } } }), /scheme is missing/);
  const m = problem({ tenants: { a: { credentials: { keyed: { scheme: 'bearer', token: 'secret-value-2' } } } } });
  t.match(m, /is a bearer credential, and the catalog's auth scheme is api_key/);
  t.notMatch(m, /secret-value/, 'the value is never named');
  t.match(
    problem({ tenants: { a: { credentials: { open: { scheme: 'bearer', token: 'x' } } } } }),
    /auth scheme is none/,
  );
  t.match(
    problem({ tenants: { a: { credentials: { gh: { scheme: 'bearer', token: '' } } } } }),
    /token must be a non-empty string/,
  );
  t.match(
    problem({ tenants: { a: { credentials: { gh: { scheme: 'bearer', token: 'x', extra: 1 } } } } }),
    /unknown key `extra`/,
  );
  t.match(problem({ tenants: { a: { read_only: 'yes' } } }), /read_only must be true or false/);
  t.match(
    problem({
      tenants: {
        a: { credentials: { gh: { scheme: 'oauth2_client_credentials', client_id: 'i', client_secret: 's' } } },
      },
    }),
    /token_url is missing/,
    'a bearer catalog names no token endpoint',
  );
  t.match(
    problem({
      tenants: {
        a: {
          credentials: {
            oa: { scheme: 'oauth2_client_credentials', client_id: 'i', client_secret: 's', token_url: 'ftp://x' },
          },
        },
      },
    }),
    /absolute http\(s\) URL/,
  );
  t.match(problem({ entries: { gh: { fallback: 'sometimes' } } }), /fallback must be environment or none/);
  for (const h of ['Authorization', 'x-api-key', 'Cookie', 'Mcp-Session-Id'])
    t.match(
      problem({ entries: { gh: { forward: { header: h } } } }),
      /carries svc's own or the transport's credentials/,
      h,
    );
  t.match(problem({ entries: { gh: { forward: { header: 'bad header' } } } }), /is not a header name/);
  t.match(
    problem({ entries: { basic: { forward: { header: 'X-T' } } } }),
    /cannot forward to a catalog whose auth scheme is basic/,
  );
  t.match(problem({ entries: { gh: { tls: { cert: '/c' } } } }), /tls\.key must be a non-empty string/);
});

t.test('a basic credential may have an empty password, not an empty user name', async (t) => {
  const c = parseCredentials(
    { tenants: { acme: { credentials: { basic: { scheme: 'basic', username: 'key-123', password: '' } } } } },
    AUTHS,
  );
  t.same(c.tenants.acme?.credentials.basic, { scheme: 'basic', username: 'key-123', password: '' });
  t.match(
    problem({ tenants: { a: { credentials: { basic: { scheme: 'basic', username: '', password: 'p' } } } } }),
    /username must be a non-empty string/,
  );
  t.match(
    problem({ tenants: { a: { credentials: { basic: { scheme: 'basic', username: 'u' } } } } }),
    /password must be a string \(it may be empty\)/,
    'a missing password: the message does not ask for a non-empty one',
  );
  t.match(
    problem({ tenants: { a: { credentials: { basic: { scheme: 'basic', username: 'u', password: 5 } } } } }),
    /password must be a string \(it may be empty\)/,
  );
});

t.test("an api_key credential gives each of the catalog's further keys (also), by name", async (t) => {
  const cred = (c: object) => ({
    tenants: { acme: { credentials: { pair: { scheme: 'api_key', key: 'k-1', ...c } } } },
  });
  const c = parseCredentials(cred({ also: { 'x-app-token': 'tok-1', app_id: 'app-1' } }), AUTHS);
  t.same(
    c.tenants.acme!.credentials.pair,
    { scheme: 'api_key', key: 'k-1', also: { 'X-App-Token': 'tok-1', app_id: 'app-1' } },
    "a header name in any case, stored under the catalog's",
  );
  t.match(
    problem(cred({})),
    /tenants\.acme\.credentials\.pair\.also is missing \(the catalog sends `X-App-Token`, `app_id`/,
  );
  t.match(problem(cred({ also: { 'X-App-Token': 'tok-1' } })), /credentials\.pair\.also lacks `app_id`/);
  t.match(
    problem(cred({ also: { 'X-App-Token': 'tok-1', APP_ID: 'a' } })),
    /has an unknown key `APP_ID`/,
    'a query name is exact',
  );
  t.match(problem(cred({ also: { 'X-App-Token': '', app_id: 'a' } })), /also\.X-App-Token must be a non-empty string/);
  t.match(problem(cred({ also: ['tok-1'] })), /also must be a mapping/);
  t.match(
    problem({ tenants: { acme: { credentials: { keyed: { scheme: 'api_key', key: 'k', also: { x: 'y' } } } } } }),
    /keyed\.also is not used: the catalog sends one key/,
  );
  t.match(
    problem({ entries: { pair: { forward: { header: 'X-Vendor-Key' } } } }),
    /entries\.pair\.forward cannot forward to a catalog that sends 3 API keys together/,
  );
  t.notMatch(problem(cred({ also: { 'X-App-Token': 'tok-SECRET' } })), /tok-SECRET/, 'never a value');
});
