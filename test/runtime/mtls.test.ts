/**
 * mTLS client certificates per entry (issue 22): the credentials file's `entries.<id>.tls` (read by
 * loadCredentials from PEM files) reaches an HTTPS vendor that requires a client certificate signed
 * by the test CA (test/_helpers/tls-ca.ts); a missing or unrelated certificate fails without
 * leaking PEM text; two entries with different certificates to one origin use pools of their own.
 */
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServe } from '../../cli/commands/serve.js';
import { compileProgram } from '../../compiler/index.js';
import { Registry } from '../../pack/index.js';
import {
  AuthResolver,
  executePlan,
  PooledHttpClient,
  type CredentialsConfig,
  type RunResult,
} from '../../runtime/index.js';
import { CREDENTIALS_ENV, loadCredentials } from '../../server/credentials.js';
import { registryEntry } from '../_helpers/fault-vendor.js';
import { openSession, runProgram } from '../_helpers/server.js';
import { makeTestCa, startTlsVendor, type KeyCert } from '../_helpers/tls-ca.js';

const pki = makeTestCa({ unrelated: true });
t.teardown(() => pki.cleanup());
const vendor = await startTlsVendor(pki);
t.teardown(() => vendor.close());

/** A second client certificate of the test CA (CN svc-client-2), made like the helper's. */
function secondClient(): KeyCert {
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: pki.dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const subj = ['-subj', '/CN=svc-client-2', '-config', 'openssl.cnf'];
  run([
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    ...subj,
    '-keyout',
    'c2.key',
    '-out',
    'c2.csr',
  ]);
  const ca = ['-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', '0x5eed2', '-days', '2', '-sha256'];
  run(['x509', '-req', '-in', 'c2.csr', ...ca, '-extfile', 'openssl.cnf', '-extensions', 'client', '-out', 'c2.crt']);
  return { keyPath: join(pki.dir, 'c2.key'), certPath: join(pki.dir, 'c2.crt'), key: '', cert: '' };
}
const client2 = secondClient();
for (const k of [pki.client.keyPath, pki.unrelated!.client.keyPath, client2.keyPath]) chmodSync(k, 0o600);

/** A catalog `id` over the TLS vendor's GET /things. */
const catalog = (id: string) => `
catalog:
  entry_id: ${id}
  version: 1
  label: Things
  description: Things behind mutual TLS.
  backend: {url: "${vendor.url}"}
  auth: {scheme: none}
entities:
  Thing:
    description: A thing.
    fields:
      id: {type: integer, description: Thing id}
      name: {type: string, description: Thing name}
capabilities:
  listThings: {kind: query, entity: Thing, description: List things., params: []}
mappings:
  listThings: GET /things
`;
const REG = new Registry([registryEntry(catalog('things')), registryEntry(catalog('others'))]);

/** `entries.<id>.tls` of a credentials file, written to a 0600 temp file and loaded as the server does. */
async function config(tls: Record<string, { cert: string; key: string; ca?: string }>): Promise<CredentialsConfig> {
  const entries = Object.fromEntries(Object.entries(tls).map(([id, v]) => [id, { tls: v }]));
  const path = join(pki.dir, 'credentials.json');
  writeFileSync(path, JSON.stringify({ entries }));
  chmodSync(path, 0o600);
  return loadCredentials(path, REG);
}
const good = { cert: pki.client.certPath, key: pki.client.keyPath, ca: pki.ca.certPath };

async function run(cfg: CredentialsConfig | undefined, api = 'things'): Promise<RunResult> {
  const http = new PooledHttpClient();
  try {
    return await runWith(http, new AuthResolver({}, http, Date.now, cfg ? { config: cfg } : {}), api);
  } finally {
    await http.close();
  }
}
async function runWith(http: PooledHttpClient, auth: AuthResolver, api: string): Promise<RunResult> {
  const c = compileProgram(`${api}:Thing`, { registry: REG });
  if (c.kind !== 'plan') throw new Error('no plan');
  const retry = { retries: 0, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 0 };
  return executePlan(c.plan, REG, { http, auth, env: {}, requestTimeoutMs: 5000, retry });
}

/** No PEM text of any certificate or key in `text`. */
function noPem(t: Test, text: string, what: string) {
  const pems = [pki.client.key, pki.client.cert, pki.ca.cert, pki.unrelated!.client.key];
  const lines = pems.flatMap((p) => p.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----')));
  t.notOk(text.includes('-----BEGIN'), `${what}: no PEM header`);
  t.same(
    lines.filter((l) => text.includes(l)),
    [],
    `${what}: no line of a certificate or key`,
  );
}

t.test('the client certificate of the file reaches the vendor', async (t) => {
  const cfg = await config({ things: good });
  t.match(cfg.entries.things?.tls, { cert: pki.client.cert, key: pki.client.key, ca: pki.ca.cert }, 'PEM files read');
  const before = vendor.requests.length;
  const r = await run(cfg);
  t.equal(r.status, 'succeeded', JSON.stringify(r.errors));
  t.same(r.returns[0]?.rows, [{ id: 1, name: 'a' }]);
  t.same(
    vendor.requests.slice(before).map((q) => [q.path, q.cn]),
    [['/things', 'svc-client']],
    'the vendor recorded CN svc-client',
  );
  noPem(t, JSON.stringify(r), 'a success');
});

t.test('no client certificate, or one of another CA: vendor_unreachable, no PEM text', async (t) => {
  const before = vendor.requests.length;
  const unrelated = { cert: pki.unrelated!.client.certPath, key: pki.unrelated!.client.keyPath, ca: pki.ca.certPath };
  const cases: Array<[string, CredentialsConfig | undefined]> = [
    ['no credentials file', undefined],
    ['a file without tls for the entry', await config({ others: good })],
    ['the client certificate of an unrelated CA', await config({ things: unrelated })],
    [
      'the right certificate, the unrelated CA as trust anchor',
      await config({ things: { ...good, ca: pki.unrelated!.ca.certPath } }),
    ],
  ];
  for (const [what, cfg] of cases) {
    const r = await run(cfg);
    t.equal(r.status, 'failed', what);
    t.equal(r.errors[0]?.code, 'vendor_unreachable', what);
    noPem(t, JSON.stringify(r), what);
  }
  t.equal(vendor.requests.length, before, 'no request got through');
});

t.test('two entries with different client certificates to one origin: a pool each', async (t) => {
  const cfg = await config({
    things: good,
    others: { cert: client2.certPath, key: client2.keyPath, ca: pki.ca.certPath },
  });
  t.not(cfg.entries.things?.tls?.id, cfg.entries.others?.tls?.id, 'two TLS ids');
  const http = new PooledHttpClient();
  t.teardown(() => http.close());
  const auth = new AuthResolver({}, http, Date.now, { config: cfg });
  const cn = async (api: string) => {
    const before = vendor.requests.length;
    const r = await runWith(http, auth, api);
    t.equal(r.status, 'succeeded', `${api}: ${JSON.stringify(r.errors)}`);
    return vendor.requests.slice(before).map((q) => q.cn);
  };
  t.same(await cn('things'), ['svc-client']);
  t.same(await cn('others'), ['svc-client-2'], 'the other entry, the same origin: its own certificate');
  t.same(await cn('things'), ['svc-client'], 'and back (a kept-alive connection of its own pool)');
  const before = vendor.requests.length;
  const apis = ['things', 'others', 'things', 'others', 'things', 'others', 'things', 'others'];
  const rs = await Promise.all(apis.map((api) => runWith(http, auth, api)));
  t.ok(rs.every((r) => r.status === 'succeeded'));
  const cns = vendor.requests.slice(before).map((q) => q.cn);
  t.same(
    [cns.filter((c) => c === 'svc-client').length, cns.filter((c) => c === 'svc-client-2').length],
    [4, 4],
    'concurrent runs: each entry with its own certificate',
  );
});

t.test('through a real server (startServe) with the credentials file', async (t) => {
  const schema = join(pki.dir, 'things.cgs.json');
  writeFileSync(schema, JSON.stringify(REG.get('things')!.cgs));
  const path = join(pki.dir, 'server-credentials.yaml');
  writeFileSync(path, `entries:\n  things:\n    tls: {cert: "${good.cert}", key: "${good.key}", ca: "${good.ca}"}\n`);
  chmodSync(path, 0o600);
  const running = await startServe(
    { schema, port: 0, host: '127.0.0.1' },
    { [CREDENTIALS_ENV]: path, SVC_LOG_LEVEL: 'error' },
    () => {},
  );
  t.teardown(() => running.stop());
  const base = running.listening.url;
  const before = vendor.requests.length;
  const { path: session } = await openSession(base, { entry_id: 'things' });
  const a = await runProgram(base, session, 'things:Thing', 'force=true');
  t.equal(a.status, 200, a.text);
  t.same(a.body.rows, [{ id: 1, name: 'a' }]);
  t.same(
    vendor.requests.slice(before).map((q) => q.cn),
    ['svc-client'],
  );
  noPem(t, a.text, 'the HTTP answer');
});
