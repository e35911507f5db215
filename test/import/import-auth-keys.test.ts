/**
 * Several API keys at once (fixtures/openapi/two-keys.yaml): a security requirement naming two
 * apiKey schemes imports as one `api_key` block, the first key as `name`, the other under `also`,
 * and the report says which keys every call sends. Packed and served by a real svc server against
 * a vendor on 127.0.0.1 that refuses a call lacking either header, reads and a create go through
 * with the keys from the environment and from a credentials file entry; a missing one is refused
 * before anything is sent.
 */
import t, { type Test } from 'tap';
import { chmodSync, copyFileSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SvcFailure } from '../../common/errors.js';
import { loadCatalogDir, writeArtifacts } from '../../pack/index.js';
import { AuthResolver, defaultHttpClient } from '../../runtime/index.js';
import { loadCredentials } from '../../server/credentials.js';
import { startFaultVendor, type FaultVendor, type RecordedRequest, type Reply } from '../_helpers/fault-vendor.js';
import { importAndPack } from '../_helpers/import.js';
import { codeOf, openSession, runProgram, startStack, PACKED, type Answer } from '../_helpers/server.js';

type Row = Record<string, unknown>;

const { result, cgs, cgs_hash } = await importAndPack('two-keys.yaml', { entryId: 'memo' });
const report = result.files['import-report.md']!;

t.test('a requirement naming two API keys is one api_key block with the second under also', async (t) => {
  t.same(cgs.auth, {
    scheme: 'api_key',
    in: 'header',
    name: 'X-App-Key',
    env: 'MEMO_API_KEY',
    also: [{ in: 'header', name: 'X-App-Token', env: 'MEMO_APP_TOKEN' }],
  });
  t.match(result.files['catalog.yaml'], /also:\n\s+- in: header\n\s+name: X-App-Token\n\s+env: MEMO_APP_TOKEN/);
  t.match(
    report,
    'Scheme `api_key`. Every call sends the header `X-App-Key` (from `MEMO_API_KEY`) and the header `X-App-Token` (from `MEMO_APP_TOKEN`). Set these environment variables where svc runs: `MEMO_API_KEY`, `MEMO_APP_TOKEN`.',
  );
  t.match(
    report,
    '- auth: schemes `appKey` (API key in the header) and `appToken` (API key in the header) chosen, sent together: the document requires these keys together; also offered: oauth (oauth2)',
    'the whole requirement wins over the key + OAuth2 one, which svc cannot send whole',
  );
});

/** A one-operation document whose `security` is `requirements` over `schemes`. */
function doc(schemes: Record<string, object>, requirements: Array<Record<string, string[]>>): object {
  const rows = { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } } } };
  return {
    openapi: '3.0.3',
    info: { title: 'Pick', version: '1' },
    servers: [{ url: 'https://pick.example' }],
    security: requirements,
    paths: {
      '/things': {
        get: {
          operationId: 'listThings',
          responses: { '200': { description: 'ok', content: { 'application/json': { schema: rows } } } },
        },
      },
    },
    components: { securitySchemes: schemes },
  };
}

async function importDoc(d: object) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-keys-'));
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(d));
  return importAndPack(join(dir, 'openapi.json'));
}

const HEADER = (name: string) => ({ type: 'apiKey', in: 'header', name });
const QUERY = (name: string) => ({ type: 'apiKey', in: 'query', name });

t.test('keys in the header and the query, and a second scheme of the same header', async (t) => {
  const r = await importDoc(
    doc({ 'app-id': QUERY('app_id'), apiKey: HEADER('X-Key'), dup: HEADER('x-key') }, [
      { 'app-id': [], apiKey: [], dup: [] },
    ]),
  );
  t.same(r.cgs.auth, {
    scheme: 'api_key',
    in: 'query',
    name: 'app_id',
    env: 'PICK_API_KEY',
    also: [{ in: 'header', name: 'X-Key', env: 'PICK_API_KEY_2' }],
  });
  t.match(
    r.result.files['import-report.md'],
    'Every call sends the query parameter `app_id` (from `PICK_API_KEY`) and the header `X-Key` (from `PICK_API_KEY_2`).',
  );
  t.match(
    r.result.files['import-report.md'],
    /the document requires `app-id` and `apiKey` and `dup` together, and svc sends `app-id` and `apiKey` only/,
    'the scheme of the same header is not sent, and the report says so',
  );
});

t.test('a single secret still wins over several keys; a mixed requirement is sent in part, said so', async (t) => {
  const one = await importDoc(
    doc({ k: HEADER('X-Key'), tok: HEADER('X-Token'), b: { type: 'http', scheme: 'bearer' } }, [
      { k: [], tok: [] },
      { b: [] },
    ]),
  );
  t.same(one.cgs.auth, { scheme: 'bearer', env: 'PICK_TOKEN' }, 'bearer alone over two keys together');
  const mixed = await importDoc(doc({ k: HEADER('X-Key'), b: { type: 'http', scheme: 'bearer' } }, [{ b: [], k: [] }]));
  t.same(mixed.cgs.auth, { scheme: 'bearer', env: 'PICK_TOKEN' }, "today's preference within the requirement");
  t.match(
    mixed.result.files['import-report.md'],
    /the document requires `b` and `k` together, and svc sends `b` only: calls may be refused until the catalog's auth is written by hand/,
  );
});

const KEY = 'ak_live_R4nd0mAppKey1';
const TOKEN = 'at_live_S3cr3tAppTok2';

/** Notes behind two headers: 401 unless a call carries both, with the values `keys` says. */
async function startNotesVendor(keys: { key: string; token: string }): Promise<FaultVendor> {
  const notes: Row[] = [
    { id: 1, title: 'Groceries', tag: 'home' },
    { id: 2, title: 'Standup', tag: 'work' },
  ];
  const guard =
    (inner: (req: RecordedRequest) => Reply) =>
    (req: RecordedRequest): Reply =>
      req.headers['x-app-key'] === keys.key && req.headers['x-app-token'] === keys.token
        ? inner(req)
        : { status: 401, json: { message: 'Invalid security scheme: X-App-Key and X-App-Token are both required' } };
  return startFaultVendor({
    'GET /notes': guard((req) => {
      const tag = req.query.get('tag');
      return { json: notes.filter((n) => tag === null || n.tag === tag) };
    }),
    'GET /notes/:id': guard((req) => {
      const n = notes.find((x) => String(x.id) === req.params.id);
      return n ? { json: n } : { status: 404, json: { message: 'not found' } };
    }),
    'POST /notes': guard((req) => {
      const row = { id: notes.length + 1, ...(JSON.parse(req.body) as Row) };
      notes.push(row);
      return { status: 201, json: row };
    }),
  });
}

/** A catalog directory holding the packed fixtures and the imported memo catalog. */
async function catalogDir(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-keys-live-'));
  for (const f of readdirSync(PACKED)) copyFileSync(join(PACKED, f), join(dir, f));
  await writeArtifacts(cgs, cgs_hash, dir);
  return dir;
}

/** Reads and a reviewed create through a real svc server whose outbound auth is `auth`. */
async function serve(
  t: Test,
  vendor: FaultVendor,
  dir: string,
  runtime: { env: Record<string, string>; auth?: AuthResolver },
) {
  const stack = await startStack(t, {
    vendorUrl: vendor.url,
    catalogDir: dir,
    loadOptions: { backendOverrides: { memo: vendor.url } },
    runtime,
  });
  const { path } = await openSession(stack.url, { entry_id: 'memo', seeds: ['memo:Note'] });
  return (program: string, query = '') => runProgram(stack.url, path, program, query);
}

async function readsAndCreate(t: Test, run: (p: string, q?: string) => Promise<Answer>, vendor: FaultVendor) {
  t.same(ok(t, await run('memo:Note(2)'), 'get'), [{ id: 2, title: 'Standup', tag: 'work' }]);
  t.same(ok(t, await run('memo:Note(tag="home")[title]', 'force=true'), 'list'), [{ title: 'Groceries' }]);
  const dry = await run('memo:createNote(title="Call the plumber")', 'mode=plan');
  const ref = dry.body._meta?.svc?.plan_commit_ref as string;
  t.match(ref, /^pc\d+$/, 'the dry-run mints a pcN');
  t.match(ok(t, await run('memo:createNote(title="Call the plumber")', `plan_commit_ref=${ref}`), 'create'), [
    { id: 3, title: 'Call the plumber' },
  ]);
  for (const r of vendor.requests)
    t.match(r.headers, { 'x-app-key': KEY, 'x-app-token': TOKEN }, `${r.method} ${r.url} carries both keys`);
  t.equal(vendor.requests.length, 3, 'get, list and create: one call each (the dry-run calls nothing)');
}

t.test('live: both keys from the environment', async (t) => {
  const vendor = await startNotesVendor({ key: KEY, token: TOKEN });
  t.teardown(() => vendor.close());
  const bare = await fetch(`${vendor.url}/notes`, { headers: { 'x-app-key': KEY } });
  t.equal(bare.status, 401, 'the vendor refuses a call with one key');
  vendor.requests.length = 0;
  const run = await serve(t, vendor, await catalogDir(), { env: { MEMO_API_KEY: KEY, MEMO_APP_TOKEN: TOKEN } });
  await readsAndCreate(t, run, vendor);
});

t.test('live: a missing further key is missing_secret, and nothing is sent', async (t) => {
  const vendor = await startNotesVendor({ key: KEY, token: TOKEN });
  t.teardown(() => vendor.close());
  const run = await serve(t, vendor, await catalogDir(), { env: { MEMO_API_KEY: KEY } });
  const a = await run('memo:Note(2)');
  t.equal(codeOf(a), 'missing_secret');
  t.match(a.text, /MEMO_APP_TOKEN/, 'the variable is named');
  t.notMatch(a.text, KEY, 'the key is not');
  t.equal(vendor.requests.length, 0);
});

t.test('live: both keys from a credentials file entry', async (t) => {
  const vendor = await startNotesVendor({ key: KEY, token: TOKEN });
  t.teardown(() => vendor.close());
  const dir = await catalogDir();
  const { registry } = await loadCatalogDir(dir, { backendOverrides: { memo: vendor.url } });
  const file = (credential: string) => {
    const path = join(mkdtempSync(join(tmpdir(), 'svc-keys-creds-')), 'credentials.yaml');
    writeFileSync(
      path,
      `entries:\n  memo: {fallback: none}\ntenants:\n  "":\n    credentials:\n      memo: ${credential}\n`,
    );
    chmodSync(path, 0o600);
    return path;
  };
  const lacking = await loadCredentials(file(`{scheme: api_key, key: "${KEY}"}`), registry).then(
    () => undefined,
    (e: unknown) => (e instanceof SvcFailure ? e.errors[0] : undefined),
  );
  t.match(lacking, { code: 'credentials_config_invalid', message: /tenants\.\.credentials\.memo\.also is missing/ });
  t.notMatch(JSON.stringify(lacking), KEY, 'the refusal does not repeat the key');
  const config = await loadCredentials(
    file(`{scheme: api_key, key: "${KEY}", also: {x-app-token: "${TOKEN}"}}`),
    registry,
  );
  t.same(config.tenants['']!.credentials.memo, { scheme: 'api_key', key: KEY, also: { 'X-App-Token': TOKEN } });
  // The environment holds other values: the file's credential is the one sent (fallback none).
  const env = { MEMO_API_KEY: 'env-key', MEMO_APP_TOKEN: 'env-token' };
  const run = await serve(t, vendor, dir, {
    env,
    auth: new AuthResolver(env, defaultHttpClient(), Date.now, { config }),
  });
  await readsAndCreate(t, run, vendor);
});

function ok(t: Test, a: Answer, what: string): Row[] {
  t.equal(a.status, 200, `${what}: 200 ${a.status === 200 ? '' : a.text.slice(0, 300)}`);
  return (a.body.rows ?? []) as Row[];
}
