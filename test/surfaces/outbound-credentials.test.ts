/**
 * Outbound credentials per tenant and user (issue 22) with `svc serve` as a real process, inbound
 * auth required (JWT and API keys), MCP transport keys, debug logs, and a vendor that records every
 * header: each tenant and user reaches the vendor with its own credential; a missing one is 424
 * before any vendor call; only the named forwarding header is forwarded (HTTP, MCP, terminal), never
 * svc's own or the transport's credentials; SIGHUP reloads the file (a bad one keeps the old);
 * a read-only tenant writes nothing; bad files stop the start; and no vendor secret (nor its first
 * 8 characters) appears in any answer, log, artifact, workspace file or error.
 */
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, svcOnce } from '../_helpers/cli.js';
import { codeOf } from '../_helpers/server.js';
import { connectMcp, errorCode, openLogical, textOf } from '../_helpers/mcp.js';
import { workspace } from '../_helpers/terminal.js';
import { until } from '../_helpers/until.js';
import {
  filesUnder,
  headerPairs,
  itemsCatalog,
  jwtMinter,
  Keeper,
  onlyForwarded,
  packInto,
  startRecordingVendor,
  writeSecret,
} from '../_helpers/outbound.js';

/** Vendor secrets: distinct, recognisable, distinct first 8 characters. */
const S = {
  env: 'envtok01-rec-fallback-7f3a9c',
  keyedEnv: 'envkey02-keyed-fallback-7f3a9c',
  acme: 'acmetk03-tenant-bearer-7f3a9c',
  globex: 'glbxtk04-tenant-bearer-7f3a9c',
  alice: 'alictk05-user-bearer-7f3a9c',
  acmeKey: 'acmeky06-keyed-api-key-7f3a9c',
  hooli: 'hoolit07-readonly-bearer-7f3a9c',
  rotated: 'acmetk08-rotated-bearer-7f3a9c',
  fwdHttp: 'fwdhtt09-forwarded-http-7f3a9c',
  fwdMcp: 'fwdmcp10-forwarded-mcp-7f3a9c',
  fwdTerm: 'fwdtrm11-forwarded-term-7f3a9c',
  refused: 'refusd12-never-loaded-7f3a9c',
};
/** svc's own credentials and other inbound values: none may reach the vendor. */
const JWT_SECRET = 'svc-outbound-test-hs256-secret-0123456789';
const KEY_BOB = 'svckey-acme-bob-5d1e8f2a';
const KEY_TERM = 'svckey-acme-term-9b7c3e4d';
const TRANSPORT = 'mcp-transport-key-6c2f0a8b1e';
const COOKIE = 'sid=cookie-value-3e8d1f7a';
const OTHER = 'other-header-value-4a9b2c';

const vendor = await startRecordingVendor();
t.teardown(() => vendor.close());
const dir = await mkdtemp(join(tmpdir(), 'svc-outbound-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const catalogs = join(dir, 'catalogs');
await packInto(catalogs, [
  itemsCatalog('rec', vendor.url, '{scheme: bearer, env: REC_TOKEN}'),
  itemsCatalog('keyed', `${vendor.url}/k`, '{scheme: api_key, in: header, name: X-Rec-Key, env: KEYED_KEY}'),
]);
const credsFile = join(dir, 'credentials.yaml');
const credsYaml = (acme: string) => `entries:
  rec: {fallback: environment, forward: {header: X-Vendor-Token}}
  keyed: {fallback: none}
tenants:
  acme:
    credentials:
      rec: {scheme: bearer, token: "${acme}"}
      keyed: {scheme: api_key, key: "${S.acmeKey}"}
    users:
      alice: {credentials: {rec: {scheme: bearer, token: "${S.alice}"}}}
  globex: {credentials: {rec: {scheme: bearer, token: "${S.globex}"}}}
  hooli: {read_only: true, credentials: {rec: {scheme: bearer, token: "${S.hooli}"}}}
`;
await writeSecret(credsFile, credsYaml(S.acme));
const keysFile = join(dir, 'api-keys.json');
const keys = [KEY_BOB, KEY_TERM].map((key, i) => ({ key, tenant_id: 'acme', subject: ['bob', 'ci-bot'][i] }));
await writeFile(keysFile, JSON.stringify(keys));
const transportFile = join(dir, 'transport-keys.json');
await writeFile(transportFile, JSON.stringify([{ key: TRANSPORT, label: 'tests' }]));
const baseEnv = { REC_TOKEN: S.env, KEYED_KEY: S.keyedEnv, SVC_LOG_LEVEL: 'debug' };
const SERVE = ['--catalog-dir', catalogs, '--port', '0', '--host', '127.0.0.1'];
const server = await serve(t, SERVE, {
  ...baseEnv,
  SVC_INCOMING_AUTH_MODE: 'required',
  SVC_AUTH_JWT_SECRET: JWT_SECRET,
  SVC_AUTH_API_KEYS_FILE: keysFile,
  SVC_OUTBOUND_CREDENTIALS_FILE: credsFile,
  SVC_MCP_TRANSPORT_KEYS_FILE: transportFile,
  // The artifact GC pass logs at debug: with it every second the debug level is exercised too.
  SVC_RUN_ARTIFACTS_GC_INTERVAL_SECS: '1',
});
const BASE = server.url;

/** Every answer, tool result, terminal output and file of the scenario, grepped for secrets at the end. */
const k = new Keeper(BASE);
const { jwt, minted: jwts } = jwtMinter(JWT_SECRET);
const ECHO = 'e1(name="echo", limit=5)[name]';
/** Every header name the vendor may see: those svc's HTTP client sets itself. */
const VENDOR_HEADERS = ['host', 'connection', 'accept', 'authorization', 'x-rec-key', 'content-type', 'content-length'];
/** What the vendor must never see: svc's own and the transport's credentials, other inbound values. */
const never = () => [...jwts, KEY_BOB, KEY_TERM, TRANSPORT, COOKIE, 'cookie-value', OTHER];
const READ = 'e1(limit=5)[name]';
const acmeBob = await jwt('acme', 'bob');
const acmeAlice = await jwt('acme', 'alice');
const globex = await jwt('globex', 'gina');

t.test('two tenants, one vendor: each tenant its own token; a user override', async (t) => {
  for (const [who, headers, token] of [
    ['acme bob', acmeBob, S.acme],
    ['acme alice (her own token)', acmeAlice, S.alice],
    ['globex', globex, S.globex],
    ['acme bob by API key', { 'x-api-key': KEY_BOB }, S.acme],
  ] as const) {
    const path = await k.open('rec', headers);
    const [a, got] = await vendor.during(() => k.run(path, READ, headers));
    t.equal(a.status, 200, `${who}: ${a.text}`);
    t.equal(got.length, 1, `${who}: one vendor call`);
    t.equal(got[0]?.headers.authorization, `Bearer ${token}`, `${who}: the vendor sees its own token`);
  }
  // The api_key catalog: acme's key in its header (alice has no key of her own there).
  for (const headers of [acmeBob, acmeAlice]) {
    const path = await k.open('keyed', headers);
    const [, got] = await vendor.during(() => k.run(path, READ, headers));
    t.equal(got.length, 1);
    t.match(got, [{ url: '/k/items', headers: { 'x-rec-key': S.acmeKey } }], "acme's key in X-Rec-Key");
    t.notOk(got[0]?.headers.authorization, 'no Authorization to an api_key vendor');
  }
});

t.test('a tenant without credentials: fallback none refuses (424), fallback environment uses the env', async (t) => {
  const initech = await jwt('initech', 'ivan');
  const keyed = await k.open('keyed', initech);
  const [a, got] = await vendor.during(() => k.run(keyed, READ, initech));
  t.equal(a.status, 424, a.text);
  t.equal(codeOf(a), 'vendor_credentials_missing');
  t.match(a.body.errors[0].message, /`keyed`.*tenant `initech`/);
  t.match(a.body.errors[0].hint, /tenants\.initech\.credentials\.keyed/, 'the hint names the entry');
  t.notMatch(a.body.errors[0].hint, /KEYED_KEY/, 'fallback none: no env variable offered');
  t.same(got, [], 'the vendor received nothing');
  const rec = await k.open('rec', initech);
  t.equal(
    await vendor.authOf(() => k.run(rec, READ, initech)),
    `Bearer ${S.env}`,
    'REC_TOKEN for a tenant not in the file',
  );
});

t.test('forwarding: only X-Vendor-Token, on HTTP, MCP and the terminal', async (t) => {
  const extra = { 'x-vendor-token': S.fwdHttp, cookie: COOKIE, 'x-other': OTHER };
  const byJwt = await k.open('rec', acmeBob);
  const byKey = await k.open('rec', { 'x-api-key': KEY_BOB });
  const [, httpGot] = await vendor.during(async () => {
    t.equal((await k.run(byJwt, READ, { ...acmeAlice, ...extra })).status, 200, 'HTTP with a JWT');
    t.equal((await k.run(byKey, READ, { 'x-api-key': KEY_BOB, ...extra })).status, 200, 'HTTP with an API key');
  });
  onlyForwarded(t, httpGot, S.fwdHttp, never());
  const keyed = await k.open('keyed', acmeBob);
  const [, notNamed] = await vendor.during(() => k.run(keyed, READ, { ...acmeBob, ...extra }));
  t.equal(notNamed[0]?.headers['x-rec-key'], S.acmeKey, 'an entry without forward ignores the header');

  const mcp = await connectMcp(t, BASE, {
    headers: { authorization: `Bearer ${TRANSPORT}`, 'x-vendor-token': S.fwdMcp, cookie: COOKIE, 'x-other': OTHER },
  });
  const [, mcpGot] = await vendor.during(async () => {
    const auth = await mcp.tool('svc_incoming_auth', { bearer_token: acmeAlice.authorization!.slice(7) });
    t.notOk(auth.isError, textOf(auth));
    k.keep('MCP svc_incoming_auth', JSON.stringify(auth));
    const { ref, result } = await openLogical(mcp, [{ api: 'rec', entity: 'Item' }], 'forwarding');
    k.keep('MCP svc_context', JSON.stringify(result));
    const r = await mcp.tool('svc', { logical_session_ref: ref, program: READ });
    k.keep('MCP svc', JSON.stringify(r));
    t.match(textOf(r), /anvil/, textOf(r));
    const echo = await mcp.tool('svc', { logical_session_ref: ref, program: ECHO });
    k.keep('MCP svc echo', JSON.stringify(echo));
    t.equal(errorCode(echo), 'vendor_error');
    t.match(textOf(echo), /bad token Bearer \*\*\*/, 'MCP: the echoed forwarded token is redacted');
  });
  t.equal(mcpGot.length, 2, 'MCP: two vendor calls');
  onlyForwarded(t, mcpGot, S.fwdMcp, [...never(), mcp.transport.sessionId!]);

  const ws = await workspace(t);
  await k.term(t, ws, ['init', '--server', BASE, '--api-key', KEY_TERM]);
  await k.term(t, ws, ['context', 'rec:Item']);
  const fwdEnv = { SVC_VENDOR_HEADER_X_VENDOR_TOKEN: S.fwdTerm, SVC_VENDOR_HEADER_X_OTHER: OTHER };
  const [, termGot] = await vendor.during(async () => {
    t.match((await k.term(t, ws, ['run', '-e', READ], fwdEnv)).stdout, /anvil/);
    const echo = await k.term(t, ws, ['run', '-e', ECHO], fwdEnv, 1);
    t.match(echo.stderr + echo.stdout, /bad token Bearer \*\*\*/, 'terminal: the echoed token is redacted');
  });
  t.equal(termGot.length, 2, 'terminal: two vendor calls');
  onlyForwarded(t, termGot, S.fwdTerm, never());
  const plain = await vendor.authOf(() => k.term(t, ws, ['run', '-e', 'e1(kind="alpha", limit=5)[name]']));
  t.equal(plain, `Bearer ${S.acme}`, "without the variable: the tenant's token");
  for (const [where, text] of await filesUnder(ws)) k.keep(`workspace ${where}`, text);
});

t.test('read-only tenant from the file: a write is refused, another tenant commits', async (t) => {
  const hooli = await jwt('hooli', 'hank');
  const ro = await k.open('rec', hooli);
  const rw = await k.open('rec', globex);
  const taught = async (path: string, headers: Record<string, string>) =>
    String((await k.http(`${path}/symbols`, { headers })).body.teaching);
  const m = /^(m\d+)\(name=\$.*\tcreate /m.exec(await taught(rw, globex))?.[1];
  t.ok(m, `globex is taught the create as ${m}`);
  t.notMatch(await taught(ro, hooli), /\tcreate /, 'hooli is taught no write');
  const write = `${m}(name="widget")`;
  const [a, none] = await vendor.during(() => k.run(ro, write, hooli, 'force=true'));
  t.equal(a.status, 403, a.text);
  t.equal(codeOf(a), 'read_only');
  t.same(none, [], 'no POST reached the vendor');
  t.equal(await vendor.authOf(() => k.run(ro, READ, hooli)), `Bearer ${S.hooli}`, 'the read-only tenant still reads');
  const dry = await k.run(rw, write, globex, 'mode=plan');
  t.equal(dry.status, 200, dry.text);
  const pc = dry.body._meta.svc.plan_commit_ref as string;
  t.match(pc, /^pc\d+$/);
  const [live, got] = await vendor.during(() => k.run(rw, write, globex, `plan_commit_ref=${pc}`));
  t.equal(live.status, 200, live.text);
  t.equal(got.length, 1, 'one vendor call: the POST');
  t.match(got, [{ method: 'POST', url: '/items', headers: { authorization: `Bearer ${S.globex}` } }]);
  t.match(JSON.parse(got[0]!.body), { name: 'widget' });
});

t.test('SIGHUP reloads the file; a bad file keeps the one in force', async (t) => {
  const path = await k.open('rec', acmeBob);
  const logged = (s: string) => server.stderr.split(s).length - 1;
  const hup = async (text: string, line: string) => {
    const before = logged(line);
    await writeSecret(credsFile, text);
    process.kill(server.child.pid!, 'SIGHUP');
    await until(line, () => logged(line) > before);
  };
  await hup(credsYaml(S.rotated), 'outbound credentials reloaded');
  t.equal(await vendor.authOf(() => k.run(path, READ, acmeBob)), `Bearer ${S.rotated}`, 'the new token, no restart');
  await hup(`tenants:\n  acme: {credentials: {rec: {scheme: bearer, token: "${S.refused}"`, 'not reloaded');
  t.match(server.stderr, /"code":"credentials_config_invalid"[^\n]*"msg":"outbound credentials not reloaded/);
  t.equal(await vendor.authOf(() => k.run(path, READ, acmeBob)), `Bearer ${S.rotated}`, 'the file in force stays');
  const alice = await k.open('rec', acmeAlice);
  t.equal(await vendor.authOf(() => k.run(alice, READ, acmeAlice)), `Bearer ${S.alice}`, 'and its users');
});

t.test('a bad credentials file stops the start', async (t) => {
  const bad = credsYaml(S.refused);
  const bearerForKey = /credentials\.keyed is a bearer credential, and the catalog's auth scheme is api_key/;
  const cases: Array<[string, string, number, RegExp]> = [
    ['mode 0644', bad, 0o644, /mode 0644.*\n.*hint: .*chmod 600/],
    ['malformed YAML', `tenants:\n  acme: {credentials: [${S.refused}`, 0o600, /not valid JSON or YAML \(line \d+/],
    ['unknown entry', bad.replace('keyed: {scheme', 'nope: {scheme'), 0o600, /credentials\.nope names catalog/],
    ['unknown scheme', bad.replace('bearer', 'magic'), 0o600, /credentials\.rec\.scheme names an unknown/],
    ['bearer for the api_key catalog', bad.replace('api_key, key', 'bearer, token'), 0o600, bearerForKey],
  ];
  await Promise.all(
    cases.map(async ([what, text, mode, place], i) => {
      const file = join(dir, `bad-${i}.yaml`);
      await writeSecret(file, text, mode);
      const r = await svcOnce(t, ['serve', ...SERVE], { ...baseEnv, SVC_OUTBOUND_CREDENTIALS_FILE: file });
      k.keep(`refused start: ${what}`, `${r.stdout}${r.stderr}`);
      t.not(r.code, 0, `${what}: exits non-zero`);
      t.notMatch(r.stdout, /listening on/, `${what}: never listens`);
      t.match(r.stderr, /credentials_config_invalid: the credentials file/, `${what}: the code`);
      t.match(r.stderr, /\n {2}hint: /, `${what}: a hint`);
      t.match(r.stderr, place, `${what}: names the place`);
    }),
  );
});

t.test('vendor errors echoing the credential are redacted; no secret in any output', async (t) => {
  for (const [entry, headers] of [
    ['rec', acmeBob],
    ['rec', { ...acmeBob, 'x-vendor-token': S.fwdHttp }],
    ['keyed', acmeAlice],
  ] as const) {
    const a = await k.run(await k.open(entry, headers), ECHO, headers);
    t.equal(codeOf(a), 'vendor_error', `${entry}: the vendor's 400 is an error`);
    t.match(a.text, /bad token (Bearer )?\*\*\*/, `${entry}: the echoed credential is redacted`);
  }
  for (const headers of [{}, acmeBob]) await k.http('/v1/health', { headers });
  for (const r of k.runs) {
    await k.http(`${r.path}/runs`, { headers: r.headers });
    t.equal((await k.http(`${r.path}/artifacts/${r.id}`, { headers: r.headers })).status, 200, `artifact ${r.id}`);
  }
  t.ok(k.runs.length >= 15, `${k.runs.length} run artifacts read`);
  const echoed = k.outputs.filter(([w, x]) => w.includes('/artifacts/') && x.includes('bad token Bearer ***'));
  t.equal(echoed.length, 2, 'the run artifacts of the echoes hold the redacted message');
  k.keep('server stdout', server.stdout);
  k.keep('server stderr', server.stderr);
  t.match(server.stderr, /"level":"debug"/, 'debug logs were on');
  const pairs = headerPairs(vendor.seen);
  const odd = [...new Set(pairs.map(([n]) => n))].filter((n) => !VENDOR_HEADERS.includes(n));
  t.same(odd, [], 'the vendor only ever got the headers svc makes itself');
  const inbound = pairs.filter(([, v]) => never().some((x) => v.includes(x)));
  t.same(inbound, [], 'nor any inbound value, ever');
  const rows = k.leaks({ rows: 'anvil' }).join('\n'); // the control: rows the vendor served are seen everywhere
  for (const w of ['/artifacts/', 'in MCP svc', 'in terminal run', '/out/']) t.match(rows, w, `the grep reads ${w}`);
  for (const [name, secret] of Object.entries(S))
    t.same(k.leaks({ [name]: secret }), [], `${name}: neither it nor its first 8 characters appear anywhere`);
});
