/** The oidc-provider test helper, with plain fetch: client credentials, rotating refresh tokens, whoIs, revoke, expiry. */
import t from 'tap';
import { startAuthServer, type AuthServer } from '../_helpers/oidc.js';
import { sleep } from '../_helpers/until.js';

interface TokenAnswer {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number;
  token_type?: string;
  scope?: string;
  error?: string;
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** POST a form to the token endpoint, authenticating with Basic auth or client_secret_post. */
async function token(
  as: AuthServer,
  form: Record<string, string>,
  client: { client_id: string; client_secret: string },
  auth: 'basic' | 'post' = 'basic',
): Promise<{ status: number; body: TokenAnswer }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const body = new URLSearchParams(form);
  if (auth === 'basic') headers.authorization = basic(client.client_id, client.client_secret);
  else {
    body.set('client_id', client.client_id);
    body.set('client_secret', client.client_secret);
  }
  const res = await fetch(as.tokenUrl, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as TokenAnswer };
}

t.test('client_credentials: an opaque token with expires_in, owned by the client', async (t) => {
  const as = await startAuthServer({ clients: { credentials: { client_id: 'robot', client_secret: 's3:cr/et+' } } });
  t.teardown(() => as.close());
  const disco = (await (await fetch(`${as.issuer}/.well-known/openid-configuration`)).json()) as Record<
    string,
    unknown
  >;
  t.equal(disco.token_endpoint, as.tokenUrl, 'tokenUrl is the advertised token endpoint');

  const cc = as.clients.credentials;
  const got = await token(as, { grant_type: 'client_credentials', scope: 'read write' }, cc);
  t.equal(got.status, 200);
  t.type(got.body.access_token, 'string');
  t.equal(got.body.expires_in, 3600);
  t.equal(got.body.token_type, 'Bearer');
  t.equal(got.body.scope, 'read write');
  t.same(await as.whoIs(got.body.access_token!), { clientId: 'robot', scope: 'read write' });
  t.equal(as.grants('client_credentials'), 1);

  const post = await token(as, { grant_type: 'client_credentials', scope: 'read' }, cc, 'post');
  t.equal(post.status, 200, 'client_secret_post works too');
  t.equal(post.body.scope, 'read');
  t.equal(as.grants('client_credentials'), 2);

  const none = await token(as, { grant_type: 'client_credentials' }, cc);
  t.equal(none.status, 200, 'no scope at all is fine');
  t.equal(none.body.scope, undefined);

  const wrong = await token(as, { grant_type: 'client_credentials' }, { ...cc, client_secret: 'nope' });
  t.equal(wrong.status, 401);
  t.equal(wrong.body.error, 'invalid_client');
  const rt = await token(as, { grant_type: 'refresh_token', refresh_token: 'x' }, cc);
  t.equal(rt.status, 400);
  t.equal(rt.body.error, 'invalid_request', 'the cc client may not use refresh_token');
  t.equal(as.grants('client_credentials'), 3, 'failures are not counted');

  await as.revoke(got.body.access_token!);
  t.equal(await as.whoIs(got.body.access_token!), undefined, 'revoked');
  t.equal(await as.whoIs('not-a-token'), undefined, 'unknown');
});

t.test('client_credentials with a resource or an audience: the token carries it', async (t) => {
  const as = await startAuthServer();
  t.teardown(() => as.close());
  const cc = as.clients.credentials;
  const aud = 'https://api.vendor.test/';
  for (const param of ['resource', 'audience']) {
    const got = await token(as, { grant_type: 'client_credentials', scope: 'read', [param]: aud }, cc);
    t.equal(got.status, 200, param);
    t.equal(got.body.scope, 'read', param);
    t.same(await as.whoIs(got.body.access_token!), { clientId: 'svc-cc', scope: 'read', audience: aud }, param);
  }
  const bad = await token(as, { grant_type: 'client_credentials', resource: 'not a url' }, cc);
  t.equal(bad.body.error, 'invalid_target');
});

t.test('refresh tokens rotate; the old one is refused; revoke and counters', async (t) => {
  const as = await startAuthServer({ clients: { refresh: { client_id: 'app', client_secret: 'app-secret' } } });
  t.teardown(() => as.close());
  const app = as.clients.refresh;
  const first = await as.refreshTokenFor('user-42');
  t.type(first, 'string');

  const a = await token(as, { grant_type: 'refresh_token', refresh_token: first }, app);
  t.equal(a.status, 200);
  t.type(a.body.access_token, 'string');
  t.type(a.body.refresh_token, 'string');
  t.not(a.body.refresh_token, first, 'a NEW refresh token');
  t.equal(a.body.expires_in, 3600);
  t.same(await as.whoIs(a.body.access_token!), {
    clientId: 'app',
    accountId: 'user-42',
    scope: 'openid offline_access',
  });
  t.equal(as.grants('refresh_token'), 1);

  const b = await token(as, { grant_type: 'refresh_token', refresh_token: a.body.refresh_token! }, app, 'post');
  t.equal(b.status, 200, 'the rotated token works (client_secret_post)');
  t.not(b.body.refresh_token, a.body.refresh_token);
  t.equal(as.grants('refresh_token'), 2);

  await as.revoke(b.body.access_token!);
  t.equal(await as.whoIs(b.body.access_token!), undefined, 'revoked');

  const again = await token(as, { grant_type: 'refresh_token', refresh_token: first }, app);
  t.equal(again.status, 400);
  t.equal(again.body.error, 'invalid_grant', 'a used refresh token is refused');
  t.equal(as.grants('refresh_token'), 2);
  // oidc-provider treats a replay as theft: the whole grant goes, the newest refresh token too.
  const after = await token(as, { grant_type: 'refresh_token', refresh_token: b.body.refresh_token! }, app);
  t.equal(after.body.error, 'invalid_grant', 'replay detection revoked the grant');
  t.equal(await as.whoIs(a.body.access_token!), undefined, "and the grant's access tokens");

  const other = await as.refreshTokenFor('user-7');
  const cc = await token(as, { grant_type: 'refresh_token', refresh_token: other }, as.clients.credentials);
  t.equal(cc.body.error, 'invalid_request', 'another client cannot use it (grant type not allowed)');
  t.equal(as.grants('client_credentials'), 0);
});

t.test('a short access token lifetime: whoIs forgets the token once it expired', async (t) => {
  const as = await startAuthServer({ accessTokenTtlSecs: 1 });
  t.teardown(() => as.close());
  const got = await token(as, { grant_type: 'client_credentials', scope: 'read' }, as.clients.credentials);
  t.equal(got.body.expires_in, 1);
  t.ok(await as.whoIs(got.body.access_token!));
  await sleep(2100);
  t.equal(await as.whoIs(got.body.access_token!), undefined, 'expired');
  const fresh = await as.refreshTokenFor('u');
  const r = await token(as, { grant_type: 'refresh_token', refresh_token: fresh }, as.clients.refresh);
  t.equal(r.body.expires_in, 1, 'the ttl applies to user tokens too');
});
