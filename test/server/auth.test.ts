/**
 * Inbound authentication over real sockets (SPEC "Authentication", "Principal (inbound)"; issue 7):
 * a matrix of bad credentials (each 401 with its code, a WWW-Authenticate header and no echo of
 * the credential), good JWTs and API keys, the modes off / optional / required, the protected and
 * public routes, and tenant isolation on every execute session route. Hardening issue: a present
 * but unusable `tenant_id` is refused (never replaced by `tid`), and `exp`, `nbf` and `iat` share
 * one clock skew of 60 s (an `iat` further in the future is refused).
 */
import t, { type Test } from 'tap';
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, generateKeyPair } from 'jose';
import { loadCatalogDir } from '../../pack/index.js';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { MemoryArtifactStore } from '../../runtime/artifacts/index.js';
import { SvcApp } from '../../server/app.js';
import { listen } from '../../server/serve.js';
import { ApiKeyFileSchema, inboundAuthFromEnv, readKeyFile, type ApiKeyRow } from '../../server/auth/inbound.js';
import { conforms } from '../../pack/ajv.js';
import { SvcFailure } from '../../common/errors.js';
import { RESOLVED_PLAN_TYPE } from '../../server/execute/resolved-plan.js';
import { compileProgram, SymbolTable, type SymbolTableJson } from '../../compiler/index.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SECRET = 'svc-test-hs256-secret-0123456789abcdef';
const ISSUER = 'https://issuer.svc.test';
const AUDIENCE = 'svc-api';
const KEYS = [
  { key: 'key-acme-4f9c2a7e1b', tenant_id: 'acme', subject: 'ci-bot' },
  { key: 'key-globex-8d1e5c3a90', tenant_id: 'globex', subject: 'ops' },
];
const KEY_ACME = KEYS[0]!.key;
const KEY_GLOBEX = KEYS[1]!.key;
const NOW = () => Math.floor(Date.now() / 1000);

// ---------------------------------------------------------------- setup

const vendor = await startDemoVendor();
t.teardown(() => vendor.close());
const { registry } = await loadCatalogDir(join(ROOT, 'fixtures', 'packed'), {
  backendOverrides: { brewery: vendor.url, helpdesk: vendor.url },
});
const dir = await mkdtemp(join(tmpdir(), 'svc-auth-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const keysFile = join(dir, 'keys.json');
await writeFile(keysFile, JSON.stringify(KEYS));

/** A server whose inbound auth is read from `env` exactly as `svc serve` reads it. */
async function serve(env: Record<string, string>): Promise<string> {
  const auth = await inboundAuthFromEnv(env);
  const artifacts = new MemoryArtifactStore({ retentionSecs: 3600, gcIntervalSecs: 3600 });
  const app = new SvcApp({ registry, artifacts, auth });
  const l = await listen(app, 0, '127.0.0.1');
  t.teardown(async () => {
    await l.close(200);
    await artifacts.close();
  });
  return l.url;
}

/** Required; JWT with iss/aud configured; API keys. */
const FULL = await serve({
  SVC_INCOMING_AUTH_MODE: 'required',
  SVC_AUTH_JWT_SECRET: SECRET,
  SVC_AUTH_JWT_ISSUER: ISSUER,
  SVC_AUTH_JWT_AUDIENCE: AUDIENCE,
  SVC_AUTH_API_KEYS_FILE: keysFile,
});
/** Required; JWT only, no iss/aud configured. */
const JWT_ONLY = await serve({ SVC_INCOMING_AUTH_MODE: 'required', SVC_AUTH_JWT_SECRET: SECRET });
/** Required; API keys only. */
const KEYS_ONLY = await serve({ SVC_INCOMING_AUTH_MODE: 'required', SVC_AUTH_API_KEYS_FILE: keysFile });
/** Optional; JWT and keys. */
const OPTIONAL = await serve({
  SVC_INCOMING_AUTH_MODE: 'optional',
  SVC_AUTH_JWT_SECRET: SECRET,
  SVC_AUTH_API_KEYS_FILE: keysFile,
});
/** Off (explicitly), with a secret and keys configured: credentials are ignored. */
const OFF = await serve({
  SVC_INCOMING_AUTH_MODE: 'off',
  SVC_AUTH_JWT_SECRET: SECRET,
  SVC_AUTH_API_KEYS_FILE: keysFile,
});
/** Default mode (variable unset). */
const DEFAULT = await serve({});

// ---------------------------------------------------------------- tokens

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** The standard claims of a good token on FULL; `undefined` in `over` drops a claim. */
function claims(over: Record<string, unknown> = {}): Record<string, unknown> {
  const c: Record<string, unknown> = {
    sub: 'alice',
    tenant_id: 'acme',
    iss: ISSUER,
    aud: AUDIENCE,
    iat: NOW(),
    exp: NOW() + 3600,
    ...over,
  };
  for (const [k, v] of Object.entries(c)) if (v === undefined) delete c[k];
  return c;
}

/** A jose-minted token. */
async function mint(
  payload: Record<string, unknown>,
  alg = 'HS256',
  key: Parameters<SignJWT['sign']>[0] = new TextEncoder().encode(SECRET),
): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg, typ: 'JWT' }).sign(key);
}

/** A hand-built HS256 token (for payloads jose refuses to build: non-JSON, claims of wrong types). */
function handSigned(header: unknown, payload: unknown, secret = SECRET): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

const good = await mint(claims());
const { privateKey: rsaKey } = await generateKeyPair('RS256');
const tampered = (() => {
  const [h, , s] = good.split('.');
  return `${h}.${b64(claims({ tenant_id: 'globex' }))}.${s}`;
})();

// ---------------------------------------------------------------- HTTP

interface Answer {
  status: number;
  text: string;
  headers: Headers;
  body: Record<string, unknown>;
}

async function call(
  base: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; type?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(init.type ? { 'content-type': init.type } : {}),
    ...init.headers,
  };
  const res = await fetch(base + path, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  if ((res.headers.get('content-type') ?? '').includes('json')) {
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      /* not one JSON document */
    }
  }
  return { status: res.status, text, headers: res.headers, body };
}

/** The error code of a JSON answer: `code` (JSON routes) or `errors[0].code` (execute routes). */
function codeOf(a: Answer): unknown {
  if (typeof a.body.code === 'string') return a.body.code;
  const errs = a.body.errors as Array<{ code?: string }> | undefined;
  return errs?.[0]?.code;
}

/** A request with a raw request target (fetch would not keep every spelling of a path). */
function raw(
  base: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; text: string }> {
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
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const apiKey = (key: string) => ({ 'x-api-key': key });
const PLAIN_CHALLENGE = 'Bearer realm="svc", ApiKey realm="svc", header="X-API-Key"';

/** The parts of a credential that must never come back (whole value and each long piece). */
function pieces(credential: string): string[] {
  return [credential, ...credential.split(/[.\s]/)].filter((p) => p.length >= 8);
}

/** A 401 with this code, the challenge header, and no trace of the credential. */
function checkRejected(t: Test, a: Answer, code: string, credential: string): void {
  t.equal(a.status, 401, 'status 401');
  t.equal(codeOf(a), code, `code ${code}`);
  const challenge = a.headers.get('www-authenticate') ?? '';
  t.match(challenge, /^Bearer realm="svc"/, 'WWW-Authenticate names the Bearer scheme');
  t.match(challenge, /ApiKey realm="svc", header="X-API-Key"/, 'WWW-Authenticate names the API key header');
  if (code === 'auth_required') t.equal(challenge, PLAIN_CHALLENGE, 'no error attribute when nothing was sent');
  else
    t.match(
      challenge,
      `error="${code === 'bad_authorization_header' || code === 'auth_ambiguous' ? 'invalid_request' : 'invalid_token'}", error_description="${code}"`,
      'the challenge carries the code (invalid_request for a malformed request, RFC 6750 3.1)',
    );
  for (const p of pieces(credential)) {
    t.notOk(a.text.includes(p), 'the body does not echo the credential');
    t.notOk(challenge.includes(p), 'the challenge does not echo the credential');
  }
}

// ---------------------------------------------------------------- the matrix

interface Bad {
  name: string;
  headers: Record<string, string>;
  code: string;
  credential: string;
  server?: string;
}

const bad: Bad[] = [];
const addJwt = (name: string, token: string, code: string, server?: string) =>
  bad.push({ name, headers: bearer(token), code, credential: token, ...(server ? { server } : {}) });

addJwt('alg none (unsigned)', `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.`, 'auth_bad_algorithm');
addJwt('HS384 with the right secret', await mint(claims(), 'HS384'), 'auth_bad_algorithm');
addJwt('HS512 with the right secret', await mint(claims(), 'HS512'), 'auth_bad_algorithm');
addJwt('RS256 (asymmetric)', await mint(claims(), 'RS256', rsaKey), 'auth_bad_algorithm');
addJwt(
  'HS256 with a wrong secret',
  await mint(claims(), 'HS256', new TextEncoder().encode('not-the-secret-0123456789abcdef')),
  'auth_bad_signature',
);
addJwt('payload changed after signing (tenant swapped)', tampered, 'auth_bad_signature');
addJwt(
  'expired (exp 5 min ago, beyond the clock skew)',
  await mint(claims({ iat: NOW() - 3600, exp: NOW() - 300 })),
  'auth_token_expired',
);
addJwt('not yet valid (nbf in 1 h)', await mint(claims({ nbf: NOW() + 3600 })), 'auth_token_not_yet_valid');
addJwt(
  'not yet valid (nbf in 5 min, beyond the clock skew)',
  await mint(claims({ nbf: NOW() + 300 })),
  'auth_token_not_yet_valid',
);
addJwt(
  'issued in the future (iat in 1 h)',
  await mint(claims({ iat: NOW() + 3600, exp: NOW() + 7200 })),
  'auth_token_not_yet_valid',
);
addJwt(
  'issued in the future (iat in 5 min, beyond the clock skew)',
  await mint(claims({ iat: NOW() + 300 })),
  'auth_token_not_yet_valid',
);
addJwt(
  'exp is not a number',
  handSigned({ alg: 'HS256', typ: 'JWT' }, claims({ exp: 'tomorrow' })),
  'auth_malformed_token',
);
addJwt(
  'iat is not a number',
  handSigned({ alg: 'HS256', typ: 'JWT' }, claims({ iat: 'yesterday' })),
  'auth_malformed_token',
);
addJwt('nbf is not a number', handSigned({ alg: 'HS256', typ: 'JWT' }, claims({ nbf: 'now' })), 'auth_malformed_token');
addJwt('missing sub', await mint(claims({ sub: undefined })), 'auth_missing_claim');
addJwt('empty sub', await mint(claims({ sub: '' })), 'auth_invalid_claim');
addJwt('sub is a number', await mint(claims({ sub: 7 })), 'auth_invalid_claim');
addJwt('missing tenant_id and tid', await mint(claims({ tenant_id: undefined })), 'auth_missing_claim');
addJwt('missing exp (a token that never expires)', await mint(claims({ exp: undefined })), 'auth_missing_claim');
addJwt('empty tenant_id', await mint(claims({ tenant_id: '' })), 'auth_invalid_claim');
addJwt('tenant_id is a number', await mint(claims({ tenant_id: 42 })), 'auth_invalid_claim');
addJwt(
  'tenant_id is a number and tid names another tenant',
  await mint(claims({ tenant_id: 123, tid: 'globex' })),
  'auth_invalid_claim',
);
addJwt(
  'tenant_id is null and tid names another tenant',
  await mint(claims({ tenant_id: null, tid: 'globex' })),
  'auth_invalid_claim',
);
addJwt(
  'tenant_id is empty and tid names another tenant',
  await mint(claims({ tenant_id: '', tid: 'globex' })),
  'auth_invalid_claim',
);
addJwt('tenant_id is an array holding a tenant', await mint(claims({ tenant_id: ['globex'] })), 'auth_invalid_claim');
addJwt('no tenant_id and tid is a number', await mint(claims({ tenant_id: undefined, tid: 5 })), 'auth_invalid_claim');
addJwt('wrong iss (issuer configured)', await mint(claims({ iss: 'https://evil.test' })), 'auth_bad_issuer');
addJwt('no iss (issuer configured)', await mint(claims({ iss: undefined })), 'auth_bad_issuer');
addJwt('wrong aud (audience configured)', await mint(claims({ aud: 'another-api' })), 'auth_bad_audience');
addJwt('no aud (audience configured)', await mint(claims({ aud: undefined })), 'auth_bad_audience');
addJwt('garbage token', 'not-a-jwt-at-all-zzzzzzzz', 'auth_malformed_token');
addJwt('two-part token', good.split('.').slice(0, 2).join('.'), 'auth_malformed_token');
addJwt('four-part token (junk appended after a dot)', `${good}.junkjunk`, 'auth_malformed_token');
addJwt('payload is not JSON', handSigned({ alg: 'HS256', typ: 'JWT' }, 'this is not json'), 'auth_malformed_token');
addJwt('junk appended to the signature', `${good}AAAA`, 'auth_bad_signature');
addJwt('a JWT when only API keys are configured', good, 'auth_method_unavailable', KEYS_ONLY);
bad.push(
  {
    name: 'Authorization: Basic',
    headers: { authorization: `Basic ${Buffer.from('alice:password123').toString('base64')}` },
    code: 'bad_authorization_header',
    credential: Buffer.from('alice:password123').toString('base64'),
  },
  {
    name: 'Bearer with no token',
    headers: { authorization: 'Bearer' },
    code: 'bad_authorization_header',
    credential: 'Bearer',
  },
  {
    name: 'Bearer followed by spaces only',
    headers: { authorization: 'Bearer    ' },
    code: 'bad_authorization_header',
    credential: 'Bearer',
  },
  {
    name: 'token with trailing junk after a space',
    headers: { authorization: `Bearer ${good} extra` },
    code: 'bad_authorization_header',
    credential: good,
  },
  {
    name: 'token without the scheme',
    headers: { authorization: good },
    code: 'bad_authorization_header',
    credential: good,
  },
  { name: 'empty X-API-Key', headers: apiKey(''), code: 'auth_unknown_key', credential: '' },
  {
    name: 'key with a trailing space and more',
    headers: apiKey(`${KEY_ACME} x`),
    code: 'auth_unknown_key',
    credential: KEY_ACME,
  },
  {
    name: 'key with one character more',
    headers: apiKey(`${KEY_ACME}0`),
    code: 'auth_unknown_key',
    credential: KEY_ACME,
  },
  {
    name: 'key missing its last character',
    headers: apiKey(KEY_ACME.slice(0, -1)),
    code: 'auth_unknown_key',
    credential: KEY_ACME.slice(0, -1),
  },
  {
    name: 'key in another case',
    headers: apiKey(KEY_ACME.toUpperCase()),
    code: 'auth_unknown_key',
    credential: KEY_ACME.toUpperCase(),
  },
  {
    name: 'unknown key',
    headers: apiKey('key-nobody-0000000000'),
    code: 'auth_unknown_key',
    credential: 'key-nobody-0000000000',
  },
  { name: 'a JWT sent as X-API-Key', headers: apiKey(good), code: 'auth_unknown_key', credential: good },
  {
    name: 'both headers (both valid)',
    headers: { ...bearer(good), ...apiKey(KEY_ACME) },
    code: 'auth_ambiguous',
    credential: good,
  },
  {
    name: 'both headers (key unknown)',
    headers: { ...bearer(good), ...apiKey('key-nobody-0000000000') },
    code: 'auth_ambiguous',
    credential: 'key-nobody-0000000000',
  },
  {
    name: 'an API key when only JWT is configured',
    headers: apiKey(KEY_ACME),
    code: 'auth_method_unavailable',
    credential: KEY_ACME,
    server: JWT_ONLY,
  },
);

t.test(`bad credentials: ${bad.length} cases, each 401 with its code, a challenge and no echo`, async (t) => {
  t.ok(bad.length >= 20, 'at least 20 cases');
  for (const b of bad) {
    await t.test(b.name, async (t) => {
      const server = b.server ?? FULL;
      checkRejected(t, await call(server, '/v1/incoming-auth/context', { headers: b.headers }), b.code, b.credential);
      checkRejected(t, await call(server, '/v1/registry', { headers: b.headers }), b.code, b.credential);
      const ex = await call(server, '/execute', {
        method: 'POST',
        headers: b.headers,
        type: 'application/json',
        body: JSON.stringify({ entry_id: 'brewery' }),
      });
      checkRejected(t, ex, b.code, b.credential);
      t.equal(
        (ex.body._meta as { svc?: { code?: string } } | undefined)?.svc?.code,
        b.code,
        'execute routes also carry the code in _meta.svc.code',
      );
    });
  }
  await t.test('execute errors in the default format (text/toon) carry the code and the challenge too', async (t) => {
    const token = await mint(claims({ exp: NOW() - 300, iat: NOW() - 1000 }));
    const a = await call(FULL, '/execute', {
      method: 'POST',
      headers: { ...bearer(token), accept: '*/*' },
      type: 'application/json',
      body: '{"entry_id":"brewery"}',
    });
    t.equal(a.status, 401);
    t.match(a.headers.get('content-type'), /^text\/toon/);
    t.match(a.text, /auth_token_expired/);
    t.match(a.headers.get('www-authenticate'), 'error_description="auth_token_expired"');
    for (const p of pieces(token)) t.notOk(a.text.includes(p), 'no echo');
  });
});

t.test('a key sent with surrounding white space is the key: HTTP strips it (RFC 9110 5.5)', async (t) => {
  // Both fetch and node's parser drop leading/trailing spaces of a field value, so the server
  // cannot tell `key ` from `key`; inner characters are compared exactly (see the matrix).
  for (const v of [`${KEY_ACME} `, ` ${KEY_ACME}`, `${KEY_ACME}\t`]) {
    const r = await raw(FULL, 'GET', '/v1/incoming-auth/context', apiKey(v));
    t.equal(r.status, 200, JSON.stringify(v));
    t.match(JSON.parse(r.text), { method: 'api_key', tenant_id: 'acme' });
  }
});

// ---------------------------------------------------------------- good credentials

t.test('good credentials', async (t) => {
  await t.test('HS256 with sub, tenant_id, iss and aud (all configured)', async (t) => {
    const a = await call(FULL, '/v1/incoming-auth/context', { headers: bearer(good) });
    t.equal(a.status, 200);
    t.same(a.body, { mode: 'required', authenticated: true, method: 'jwt', subject: 'alice', tenant_id: 'acme' });
    for (const p of pieces(good)) t.notOk(a.text.includes(p), 'the context never carries the credential');
    t.equal((await call(FULL, '/v1/registry', { headers: bearer(good) })).status, 200, 'a protected route answers');
  });
  await t.test('aud given as an array holding the configured audience', async (t) => {
    const a = await call(FULL, '/v1/incoming-auth/context', {
      headers: bearer(await mint(claims({ aud: ['other-api', AUDIENCE] }))),
    });
    t.equal(a.status, 200);
    t.match(a.body, { method: 'jwt', tenant_id: 'acme' });
  });
  await t.test(
    'the scheme is case-insensitive and may be followed by several spaces (RFC 9110 11.1, RFC 6750 2.1)',
    async (t) => {
      for (const h of [`bearer ${good}`, `BEARER ${good}`, `Bearer   ${good}`]) {
        const a = await call(FULL, '/v1/incoming-auth/context', { headers: { authorization: h } });
        t.equal(a.status, 200, h.slice(0, 9));
        t.match(a.body, { method: 'jwt', tenant_id: 'acme' });
      }
    },
  );
  await t.test('`tid` is an alias of tenant_id', async (t) => {
    const a = await call(JWT_ONLY, '/v1/incoming-auth/context', {
      headers: bearer(await mint(claims({ tenant_id: undefined, tid: 'initech', sub: 'bob' }))),
    });
    t.equal(a.status, 200);
    t.same(a.body, { mode: 'required', authenticated: true, method: 'jwt', subject: 'bob', tenant_id: 'initech' });
  });
  await t.test('tenant_id wins over tid when both are present', async (t) => {
    const a = await call(JWT_ONLY, '/v1/incoming-auth/context', {
      headers: bearer(await mint(claims({ tenant_id: 'acme', tid: 'globex' }))),
    });
    t.match(a.body, { tenant_id: 'acme' });
  });
  await t.test(
    'a refused tenant_id names the claim and the reason, not the value, and never falls back to tid',
    async (t) => {
      const a = await call(JWT_ONLY, '/v1/incoming-auth/context', {
        headers: bearer(await mint(claims({ tenant_id: 123, tid: 'globex' }))),
      });
      t.equal(a.status, 401);
      t.equal(codeOf(a), 'auth_invalid_claim');
      t.match(
        a.body.message,
        /`tenant_id` claim is a number, not a non-empty string; `tid` is not read when tenant_id is present/,
      );
      t.match(a.body.hint, /tenant_id as a non-empty string/);
      t.notMatch(a.text, /globex|123/, 'no claim value is echoed');
    },
  );
  await t.test('a clock skew of 60 s (JWT_CLOCK_SKEW_S) is tolerated on exp, nbf and iat', async (t) => {
    const skewed = await mint(claims({ exp: NOW() - 20, nbf: NOW() + 20, iat: NOW() + 20 }));
    const a = await call(JWT_ONLY, '/v1/incoming-auth/context', { headers: bearer(skewed) });
    t.equal(a.status, 200, 'exp 20 s ago, nbf and iat 20 s ahead');
    t.match(a.body, { method: 'jwt', tenant_id: 'acme' });
  });
  await t.test('iss and aud are not checked when they are not configured', async (t) => {
    const a = await call(JWT_ONLY, '/v1/incoming-auth/context', {
      headers: bearer(await mint(claims({ iss: 'https://anyone.test', aud: 'anything' }))),
    });
    t.equal(a.status, 200);
    const b = await call(JWT_ONLY, '/v1/incoming-auth/context', {
      headers: bearer(await mint(claims({ iss: undefined, aud: undefined }))),
    });
    t.equal(b.status, 200);
  });
  await t.test('a token minted for FULL is still refused by a server with another secret', async (t) => {
    const other = await call(JWT_ONLY, '/v1/incoming-auth/context', {
      headers: bearer(await mint(claims(), 'HS256', new TextEncoder().encode('x'.repeat(40)))),
    });
    t.equal(codeOf(other), 'auth_bad_signature');
  });
  await t.test('API keys: each key gives its tenant and subject', async (t) => {
    for (const k of KEYS) {
      for (const server of [FULL, KEYS_ONLY]) {
        const a = await call(server, '/v1/incoming-auth/context', { headers: apiKey(k.key) });
        t.equal(a.status, 200);
        t.same(a.body, {
          mode: 'required',
          authenticated: true,
          method: 'api_key',
          subject: k.subject,
          tenant_id: k.tenant_id,
        });
        t.notOk(a.text.includes(k.key), 'the context never carries the key');
      }
    }
  });
});

// ---------------------------------------------------------------- modes

/** Every protected route (SPEC rule 4 and the routes below /execute/), with a real session. */
async function protectedRoutes(
  owner: Record<string, string>,
  base: string,
): Promise<Array<{ method: string; path: string; body?: string; type?: string }>> {
  const s = await openSession(base, owner);
  return [
    { method: 'GET', path: '/v1/registry' },
    { method: 'GET', path: '/v1/registry/brewery' },
    { method: 'GET', path: '/v1/registry/brewery?include_cgs=true' },
    { method: 'GET', path: '/v1/registry/brewery/tool-model' },
    { method: 'GET', path: '/v1/discover?intent=beer' },
    { method: 'GET', path: '/v1/incoming-auth/context' },
    { method: 'POST', path: '/execute', type: 'application/json', body: '{"entry_id":"brewery"}' },
    ...sessionRoutes(s).map(({ name: _n, ...r }) => r),
    { method: 'POST', path: '/execute/0000000000000000/0000000000000000', type: 'text/plain', body: 'e1[name]' },
  ];
}

t.test('mode required: every protected route answers 401 without credentials; /v1/health stays public', async (t) => {
  for (const server of [FULL, JWT_ONLY, KEYS_ONLY]) {
    const owner = server === JWT_ONLY ? bearer(good) : apiKey(KEY_ACME);
    const routes = await protectedRoutes(owner, server);
    for (const r of routes) {
      const a = await call(server, r.path, {
        method: r.method,
        ...(r.type ? { type: r.type } : {}),
        ...(r.body ? { body: r.body } : {}),
      });
      t.equal(a.status, 401, `${r.method} ${r.path}: 401`);
      t.equal(codeOf(a), 'auth_required', `${r.method} ${r.path}: auth_required`);
      t.equal(a.headers.get('www-authenticate'), PLAIN_CHALLENGE, `${r.method} ${r.path}: challenge`);
    }
    const h = await call(server, '/v1/health');
    t.equal(h.status, 200, 'GET /v1/health without credentials');
    t.equal(h.body.status, 'ok');
    t.equal(
      (await call(server, '/v1/health', { headers: bearer('garbage') })).status,
      200,
      'health ignores credentials, even bad ones',
    );
    t.equal((await call(server, '/v1/health', { method: 'HEAD' })).status, 200, 'HEAD /v1/health');
  }
});

t.test('mode required: other spellings of a protected path are protected too', async (t) => {
  // The router ignores empty segments and percent-decodes each segment, so these reach the same
  // handlers as the canonical paths; none may answer without credentials.
  const variants: Array<[string, string, string?]> = [
    ['GET', '/v1/registry/'],
    ['GET', '/v1//registry'],
    ['GET', '/v1/%72egistry'],
    ['GET', '/v1/registry/brewery/'],
    ['GET', '/v1/registry//brewery/tool-model'],
    ['GET', '/v1/discover/'],
    ['GET', '/v1/%64iscover'],
    ['GET', '/v1/incoming-auth/context/'],
    ['POST', '/execute/', '{"entry_id":"brewery"}'],
    ['POST', '/%65xecute', '{"entry_id":"brewery"}'],
    ['POST', '/execute%2F', '{"entry_id":"brewery"}'],
  ];
  for (const [method, target, body] of variants) {
    const r = await raw(FULL, method, target, body ? { 'content-type': 'application/json' } : {}, body);
    t.ok(
      r.status === 401 || r.status === 404,
      `${method} ${target}: ${r.status} (must be 401 or 404, never an answer)`,
    );
  }
});

t.test('mode optional', async (t) => {
  await t.test('no credentials: anonymous, routes answer', async (t) => {
    const a = await call(OPTIONAL, '/v1/incoming-auth/context');
    t.equal(a.status, 200);
    t.same(a.body, { mode: 'optional', authenticated: false, method: 'anonymous', subject: null, tenant_id: null });
    t.equal((await call(OPTIONAL, '/v1/registry')).status, 200);
    t.equal(
      (await call(OPTIONAL, '/execute', { method: 'POST', type: 'application/json', body: '{"entry_id":"brewery"}' }))
        .status,
      201,
    );
  });
  await t.test('bad credentials are still refused (never downgraded to anonymous)', async (t) => {
    const cases: Array<[Record<string, string>, string, string]> = [
      [bearer(await mint(claims({ exp: NOW() - 300, iat: NOW() - 1000 }))), 'auth_token_expired', ''],
      [
        bearer(await mint(claims(), 'HS256', new TextEncoder().encode('wrong-secret-0123456789abcdef'))),
        'auth_bad_signature',
        '',
      ],
      [bearer(await mint(claims(), 'HS384')), 'auth_bad_algorithm', ''],
      [bearer(await mint(claims({ tenant_id: undefined }))), 'auth_missing_claim', ''],
      [bearer('garbage.token'), 'auth_malformed_token', 'garbage.token'],
      [{ authorization: 'Basic YWxpY2U6cHc=' }, 'bad_authorization_header', 'YWxpY2U6cHc='],
      [apiKey('key-nobody-0000000000'), 'auth_unknown_key', 'key-nobody-0000000000'],
      [apiKey(''), 'auth_unknown_key', ''],
      [{ ...bearer(good), ...apiKey(KEY_ACME) }, 'auth_ambiguous', KEY_ACME],
    ];
    for (const [headers, code, credential] of cases) {
      const cred = credential || (headers.authorization ?? '').replace(/^Bearer /, '');
      checkRejected(t, await call(OPTIONAL, '/v1/incoming-auth/context', { headers }), code, cred);
      checkRejected(
        t,
        await call(OPTIONAL, '/execute', {
          method: 'POST',
          headers,
          type: 'application/json',
          body: '{"entry_id":"brewery"}',
        }),
        code,
        cred,
      );
    }
  });
  await t.test('good credentials give the tenant', async (t) => {
    t.same(
      (
        await call(OPTIONAL, '/v1/incoming-auth/context', {
          headers: bearer(await mint(claims({ iss: undefined, aud: undefined }))),
        })
      ).body,
      { mode: 'optional', authenticated: true, method: 'jwt', subject: 'alice', tenant_id: 'acme' },
    );
    t.same((await call(OPTIONAL, '/v1/incoming-auth/context', { headers: apiKey(KEY_GLOBEX) })).body, {
      mode: 'optional',
      authenticated: true,
      method: 'api_key',
      subject: 'ops',
      tenant_id: 'globex',
    });
  });
});

t.test('mode off (explicit and default): no credentials needed, credentials ignored', async (t) => {
  for (const server of [OFF, DEFAULT]) {
    for (const headers of [
      {},
      bearer(good),
      bearer('garbage'),
      apiKey(KEY_ACME),
      apiKey('key-nobody'),
      { ...bearer(good), ...apiKey(KEY_ACME) },
      { authorization: 'Basic YWxpY2U6cHc=' },
    ]) {
      const a = await call(server, '/v1/incoming-auth/context', { headers });
      t.equal(a.status, 200, `context with ${Object.keys(headers).join('+') || 'nothing'}`);
      t.same(a.body, { mode: 'off', authenticated: false, method: 'anonymous', subject: null, tenant_id: null });
      t.equal((await call(server, '/v1/registry', { headers })).status, 200);
    }
    t.equal(
      (await call(server, '/execute', { method: 'POST', type: 'application/json', body: '{"entry_id":"brewery"}' }))
        .status,
      201,
      'POST /execute without credentials',
    );
  }
});

// ---------------------------------------------------------------- tenant isolation

interface Session {
  base: string;
  ph: string;
  sid: string;
  op: string;
  run: string;
  plan: unknown;
}

/** Open a session as `owner`, run a program, start a background operation, compile a plan locally. */
async function openSession(server: string, owner: Record<string, string>): Promise<Session> {
  const o = await call(server, '/execute', {
    method: 'POST',
    headers: owner,
    type: 'application/json',
    body: JSON.stringify({ entry_id: 'brewery' }),
  });
  if (o.status !== 201) throw new Error(`POST /execute: ${o.status} ${o.text}`);
  const ph = String(o.body.prompt_hash);
  const sid = String(o.body.session);
  const base = `/execute/${ph}/${sid}`;
  const run = await call(server, base, { method: 'POST', headers: owner, type: 'text/plain', body: 'e1[name]' });
  if (run.status !== 200) throw new Error(`program: ${run.status} ${run.text}`);
  const runId = String((run.body._meta as { svc: { run_id: string } }).svc.run_id);
  const bg = await call(server, `${base}?wait=false`, {
    method: 'POST',
    headers: owner,
    type: 'text/plain',
    body: 'e1[name]',
  });
  if (bg.status !== 202) throw new Error(`wait=false: ${bg.status} ${bg.text}`);
  const op = String((bg.body._meta as { svc: { op: { n: string } } }).svc.op.n);
  // Let the background run end (its run record lands now, not in the middle of a later check).
  const ended = await call(server, `${base}/operations/${op}/stream`, { headers: owner });
  if (!/event: terminal/.test(ended.text)) throw new Error(`stream: ${ended.status} ${ended.text}`);
  const sym = await call(server, `${base}/symbols`, { headers: owner });
  const compiled = compileProgram('e1[name]', {
    registry,
    symbols: SymbolTable.fromJSON(sym.body as unknown as SymbolTableJson),
  });
  if (compiled.kind !== 'plan') throw new Error('the program did not compile');
  return { base, ph, sid, op, run: runId, plan: compiled.plan };
}

function sessionRoutes(
  s: Session,
): Array<{ name: string; method: string; path: string; body?: string; type?: string }> {
  return [
    { name: 'program', method: 'POST', path: s.base, type: 'text/plain', body: 'e1[name]' },
    {
      name: 'program (JSON body, dry-run)',
      method: 'POST',
      path: `${s.base}?mode=plan`,
      type: 'application/json',
      body: JSON.stringify({ program: 'e1[name]' }),
    },
    { name: 'wait(oN)', method: 'POST', path: s.base, type: 'text/plain', body: `wait(${s.op})` },
    {
      name: 'context',
      method: 'POST',
      path: `${s.base}/context`,
      type: 'application/json',
      body: JSON.stringify({ seeds: ['brewery:Beer'] }),
    },
    {
      name: 'plan',
      method: 'POST',
      path: `${s.base}/plan`,
      type: RESOLVED_PLAN_TYPE,
      body: JSON.stringify({ plan: s.plan }),
    },
    { name: 'stream', method: 'GET', path: `${s.base}/operations/${s.op}/stream` },
    { name: 'artifacts', method: 'GET', path: `${s.base}/artifacts/${s.run}` },
    { name: 'symbols', method: 'GET', path: `${s.base}/symbols` },
    { name: 'status', method: 'GET', path: `${s.base}/status` },
    { name: 'runs', method: 'GET', path: `${s.base}/runs` },
  ];
}

/** Every session route answers 403 `forbidden` to `intruder` and changes nothing. */
async function checkForbidden(
  t: Test,
  server: string,
  s: Session,
  owner: Record<string, string>,
  intruder: Record<string, string>,
  who: string,
): Promise<void> {
  const before = (await call(server, `${s.base}/status`, { headers: owner })).body;
  for (const r of sessionRoutes(s)) {
    const a = await call(server, r.path, {
      method: r.method,
      headers: intruder,
      ...(r.type ? { type: r.type } : {}),
      ...(r.body ? { body: r.body } : {}),
    });
    t.equal(a.status, 403, `${who} -> ${r.name}: 403`);
    t.equal(codeOf(a), 'forbidden', `${who} -> ${r.name}: forbidden`);
    t.notMatch(a.text, /Brewing|rows|teaching|event:/, `${who} -> ${r.name}: nothing of the session leaks`);
  }
  const after = (await call(server, `${s.base}/status`, { headers: owner })).body;
  t.equal(after.runs, before.runs, `${who}: no run was added`);
  t.equal(after.domain_revision, before.domain_revision, `${who}: the context did not change`);
  t.same(after.plan_tokens, before.plan_tokens, `${who}: no plan token was minted`);
}

/** Every session route answers (2xx) to `caller`. */
async function checkAllowed(
  t: Test,
  server: string,
  s: Session,
  caller: Record<string, string>,
  who: string,
): Promise<void> {
  for (const r of sessionRoutes(s)) {
    const a = await call(server, r.path, {
      method: r.method,
      headers: caller,
      ...(r.type ? { type: r.type } : {}),
      ...(r.body ? { body: r.body } : {}),
    });
    t.ok(a.status >= 200 && a.status < 300, `${who} -> ${r.name}: ${a.status}`);
    if (r.name === 'stream') {
      t.match(a.headers.get('content-type'), /^text\/event-stream/);
      t.match(a.text, /event: terminal\ndata: ! o\d+ succeeded/);
    }
  }
}

t.test('tenant isolation on every session route (mode required)', async (t) => {
  const alice = bearer(await mint(claims({ sub: 'alice', tenant_id: 'acme' })));
  const s = await openSession(FULL, alice);
  await checkForbidden(
    t,
    FULL,
    s,
    alice,
    bearer(await mint(claims({ sub: 'mallory', tenant_id: 'globex' }))),
    'globex JWT',
  );
  await checkForbidden(t, FULL, s, alice, apiKey(KEY_GLOBEX), 'globex API key');
  await checkForbidden(
    t,
    FULL,
    s,
    alice,
    bearer(await mint(claims({ sub: 'alice', tenant_id: undefined, tid: 'globex' }))),
    'same subject, tenant globex via tid',
  );
  await checkAllowed(t, FULL, s, apiKey(KEY_ACME), 'acme API key (same tenant, other credential)');
  await checkAllowed(
    t,
    FULL,
    s,
    bearer(await mint(claims({ sub: 'bob', tenant_id: undefined, tid: 'acme' }))),
    'acme JWT of another subject via tid',
  );
  await checkAllowed(t, FULL, s, alice, 'the owner');
  const unknown = await call(FULL, `/execute/${s.ph}/ffffffffffffffff/status`, { headers: apiKey(KEY_GLOBEX) });
  t.equal(unknown.status, 404, 'an unknown session is 404 for anyone');
  t.equal(codeOf(unknown), 'unknown_session');

  await t.test('a session opened with an API key is reachable with a JWT of the same tenant', async (t) => {
    const s2 = await openSession(FULL, apiKey(KEY_GLOBEX));
    await checkAllowed(t, FULL, s2, bearer(await mint(claims({ sub: 'gina', tenant_id: 'globex' }))), 'globex JWT');
    await checkForbidden(t, FULL, s2, apiKey(KEY_GLOBEX), apiKey(KEY_ACME), 'acme API key');
  });
});

t.test('tenant isolation with the anonymous scope (mode optional)', async (t) => {
  const acme = apiKey(KEY_ACME);
  const acmeJwt = bearer(await mint(claims({ iss: undefined, aud: undefined })));
  const anon = await openSession(OPTIONAL, {});
  const tenant = await openSession(OPTIONAL, acme);
  await checkForbidden(t, OPTIONAL, tenant, acme, {}, 'anonymous on a tenant session');
  await checkForbidden(t, OPTIONAL, anon, {}, acme, 'acme API key on an anonymous session');
  await checkForbidden(t, OPTIONAL, anon, {}, acmeJwt, 'acme JWT on an anonymous session');
  await checkAllowed(t, OPTIONAL, tenant, acmeJwt, 'acme JWT on the acme key session');
  await checkAllowed(t, OPTIONAL, anon, {}, 'anonymous on an anonymous session');
  const refused = await call(OPTIONAL, `${anon.base}/status`, { headers: bearer('garbage') });
  t.equal(refused.status, 401, 'a bad credential is 401 even on an anonymous session');
  t.equal(codeOf(refused), 'auth_malformed_token');
});

t.test('mode off: sessions are not tenant-scoped; credentials do not change that', async (t) => {
  const s = await openSession(OFF, {});
  const a = await call(OFF, `${s.base}/status`, { headers: bearer(good) });
  t.equal(a.status, 200, 'a caller with a JWT reaches a session opened without one');
  const s2 = await openSession(OFF, apiKey(KEY_ACME));
  t.equal(
    (await call(OFF, `${s2.base}/status`, { headers: apiKey(KEY_GLOBEX) })).status,
    200,
    'keys are ignored in mode off',
  );
});

// ---------------------------------------------------------------- the key file

/** The message of the SvcFailure readKeyFile rejects with, for a file holding `content`. */
async function keyFileRefusal(name: string, content: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  try {
    await readKeyFile(path);
  } catch (e) {
    if (e instanceof SvcFailure) return e.errors.map((x) => `${x.code}: ${x.message}`).join('\n');
    throw e;
  }
  throw new Error(`${name} was accepted`);
}

t.test('the key file is one TypeBox schema: valid files read, other members of an entry dropped', async (t) => {
  const rows = [
    { key: 'k1', tenant_id: 'acme', subject: 'a', note: 'ignored' },
    { key: 'k 2', tenant_id: 'acme', subject: 'b' },
  ];
  t.ok(conforms(ApiKeyFileSchema, rows), 'the schema takes the file');
  const path = join(dir, 'extra.json');
  await writeFile(path, JSON.stringify(rows));
  const read: ApiKeyRow[] = await readKeyFile(path);
  t.same(
    read,
    [
      { key: 'k1', tenant_id: 'acme', subject: 'a' },
      { key: 'k 2', tenant_id: 'acme', subject: 'b' },
    ],
    'a space inside a key is fine; extra members are not kept',
  );
  t.notOk(conforms(ApiKeyFileSchema, [{ key: 'k', tenant_id: 'acme' }]), 'subject is required');
  const empty = join(dir, 'empty.json');
  await writeFile(empty, '[]');
  t.same(await readKeyFile(empty), [], 'an empty array is a file with no key');
});

t.test('key file refusals name the first bad entry and keep their wording', async (t) => {
  const good = { key: 'k1', tenant_id: 'acme', subject: 'a' };
  const needs = (i: number) =>
    `auth_config_invalid: entry ${i} of SVC_AUTH_API_KEYS_FILE needs non-empty string key, tenant_id and subject`;
  const space = (i: number) =>
    `auth_config_invalid: entry ${i} of SVC_AUTH_API_KEYS_FILE has a key with leading or trailing white space`;
  const cases: Array<[string, unknown, string]> = [
    ['null entry', [good, null], needs(1)],
    ['number entry', [7], needs(0)],
    ['list entry', [good, [good]], needs(1)],
    ['key not a string', [{ ...good, key: 5 }], needs(0)],
    ['empty subject', [{ ...good, subject: '' }], needs(0)],
    ['tab after the key', [good, { ...good, key: 'k2\t' }], space(1)],
    ['newline before the key', [{ ...good, key: '\nk2' }], space(0)],
    ['no-break space', [{ ...good, key: 'k2\u00a0' }], space(0)],
    ['only a space', [{ ...good, key: ' ' }], space(0)],
    ['the first bad entry wins', [good, { ...good, key: ' k3' }, { key: 'k4' }], space(1)],
    ['malformed before white space in one entry', [{ key: ' k', subject: 'a' }], needs(0)],
    ['an object, not an array', { keys: [good] }, 'auth_config_invalid: SVC_AUTH_API_KEYS_FILE must hold a JSON array'],
    ['a string', 'k1', 'auth_config_invalid: SVC_AUTH_API_KEYS_FILE must hold a JSON array'],
    [
      'the same key twice',
      [good, { ...good, tenant_id: 'globex' }],
      'auth_config_invalid: entries 0 and 1 of SVC_AUTH_API_KEYS_FILE have the same key',
    ],
  ];
  for (const [name, content, message] of cases)
    t.equal(await keyFileRefusal(`${name.replace(/\W+/g, '-')}.json`, JSON.stringify(content)), message, name);
});
