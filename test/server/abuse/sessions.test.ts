/**
 * Abuse of execute sessions, over real sockets (the hardening review's reproductions at sizes that
 * still show the effect): one tenant evicting another's sessions, memory held by dry-runs and
 * stored runs, deep or odd request bodies, JSON fields of the wrong type, a stored run after a
 * restart, an expired pcN sent with force, and what a session pinned to a reloaded catalog still
 * answers.
 */
import t, { type Test } from 'tap';
import { cp, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { compileSource, readSourceDir, writeArtifacts } from '../../../pack/index.js';
import { FileArtifactStore, MemoryArtifactStore } from '../../../runtime/artifacts/index.js';
import { InboundAuth } from '../../../server/auth/inbound.js';
import { startFaultVendor } from '../../_helpers/fault-vendor.js';
import { call, codeOf, openSession, PACKED, ROOT, runProgram, startStack, type Answer } from '../../_helpers/server.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const ACME = 'key-acme-5e1f0c7a';
const GLOBEX = 'key-globex-9d3b2a61';
const acme = { 'x-api-key': ACME };
const globex = { 'x-api-key': GLOBEX };
const twoTenants = () =>
  new InboundAuth({
    mode: 'required',
    apiKeys: [
      { key: ACME, tenant_id: 'acme', subject: 'a' },
      { key: GLOBEX, tenant_id: 'globex', subject: 'g' },
    ],
  });

async function tmp(t: Test, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** POST a raw JSON text body. */
function postText(base: string, path: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  return call(base, path, { method: 'POST', body, type: 'application/json', headers });
}

const health = async (base: string) => (await call(base, '/v1/health')).body;

// ---------------------------------------------------------------- sessions per tenant

t.test("10,004 sessions of one tenant do not evict another tenant's session (it loses its own oldest)", async (t) => {
  const stack = await startStack(t, { auth: twoTenants() });
  const theirs = await openSession(stack.url, { entry_id: 'brewery', seeds: ['Brewery'] }, globex);
  const first = await openSession(stack.url, { entry_id: 'brewery', seeds: ['Brewery'] }, acme);
  const body = JSON.stringify({ entry_id: 'brewery', seeds: ['Brewery'] });
  let opened = 1;
  const worker = async () => {
    while (opened < 10_004) {
      opened++;
      const a = await call(stack.url, '/execute', { body, type: 'application/json', headers: acme });
      if (a.status !== 201) throw new Error(`POST /execute answered ${a.status}: ${a.text}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const still = await runProgram(stack.url, theirs.path, 'e1("b-1")[name]', '', { headers: globex });
  t.equal(still.status, 200, "the other tenant's session still answers");
  const gone = await runProgram(stack.url, first.path, 'e1("b-1")[name]', '', { headers: acme });
  t.equal(gone.status, 404, "the busy tenant's own oldest session was evicted");
  t.equal(codeOf(gone), 'unknown_session');
  t.ok(
    (await health(stack.url)).sessions <= stack.app.limits.maxSessionsPerTenant + 1,
    'one tenant holds at most its cap',
  );
});

t.test('a tenant whose sessions all run operations gets too_many_sessions, others are unaffected', async (t) => {
  const vendor = await startFaultVendor({ 'GET /beers': { hang: true } });
  t.teardown(() => vendor.close());
  const stack = await startStack(t, { vendorUrl: vendor.url, auth: twoTenants(), limits: { maxSessionsPerTenant: 2 } });
  for (let i = 0; i < 2; i++) {
    const { path } = await openSession(stack.url, { entry_id: 'brewery' }, acme);
    t.equal((await runProgram(stack.url, path, 'e2[name]', 'wait=false', { headers: acme })).status, 202);
  }
  const third = await call(stack.url, '/execute', {
    body: JSON.stringify({ entry_id: 'brewery' }),
    type: 'application/json',
    headers: acme,
  });
  t.equal(third.status, 429, 'no session runs nothing: refused rather than cutting a running operation');
  t.equal(codeOf(third), 'too_many_sessions');
  t.match(third.body.errors[0].hint, /reuse an open session|cancel/);
  const other = await call(stack.url, '/execute', {
    body: JSON.stringify({ entry_id: 'brewery' }),
    type: 'application/json',
    headers: globex,
  });
  t.equal(other.status, 201, 'another tenant opens sessions as usual');
});

// ---------------------------------------------------------------- memory

t.test('60 dry-runs of a 1 MB program: tokens hold no program, the plan cache stays in its budget', async (t) => {
  const stack = await startStack(t);
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const program = (i: number) => `e1(city=<<EOT\n${String(i).padStart(6, '0')}${'x'.repeat(1_000_000)}\nEOT)[name]`;
  await runProgram(stack.url, path, program(0), 'mode=plan'); // warm-up
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 1; i <= 60; i++) {
    const a = await runProgram(stack.url, path, program(i), 'mode=plan');
    t.equal(a.status, 200, `dry-run ${i}`);
  }
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  t.ok(
    grown < 40 * 1024 * 1024,
    `the heap grew ${Math.round(grown / 1048576)} MB over 60 dry-runs of 1 MB programs (about 110 MB before the fix)`,
  );
  const h = await health(stack.url);
  t.ok(
    h.plan_cache.bytes <= h.plan_cache.max_bytes,
    `plan cache ${h.plan_cache.bytes} of ${h.plan_cache.max_bytes} bytes`,
  );
  const status = await call(stack.url, `${path}/status`);
  t.equal(status.body.plan_tokens.length, 61, 'every dry-run minted its pcN');
});

t.test(
  'the memory artifact store keeps to its byte budget, oldest first; long programs are stored by digest',
  async (t) => {
    const artifacts = new MemoryArtifactStore({ retentionSecs: 3600, gcIntervalSecs: 3600, memoryMaxBytes: 48 * 1024 });
    const stack = await startStack(t, { artifacts });
    const { path } = await openSession(stack.url, { entry_id: 'brewery' });
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const a = await runProgram(stack.url, path, `e2(limit=${20 + i})`);
      t.equal(a.status, 200);
      ids.push(a.body._meta.svc.run_id);
    }
    const h = (await health(stack.url)).artifacts;
    t.equal(h.kind, 'memory');
    t.ok(h.bytes <= h.max_bytes, `the store holds ${h.bytes} of at most ${h.max_bytes} bytes`);
    t.ok(h.count < 40, `older snapshots were dropped (${h.count} held)`);
    t.equal((await call(stack.url, `${path}/artifacts/${ids[0]}`)).status, 404, 'the oldest run went first');
    t.equal((await call(stack.url, `${path}/artifacts/${ids[39]}`)).status, 200, 'the newest run is served');

    const long = `e1(city=<<EOT\n${'y'.repeat(20_000)}\nEOT)[name]`;
    const run = await runProgram(stack.url, path, long);
    const art = await call(stack.url, `${path}/artifacts/${run.body._meta.svc.run_id}`);
    t.equal(art.status, 200);
    t.equal(art.body.program, undefined, 'a 20 KB program is not stored as text');
    t.match(art.body.program_sha256, /^[0-9a-f]{64}$/, 'but by its digest');
    t.equal(art.body.program_bytes, Buffer.byteLength(long));
    const short = await call(stack.url, `${path}/artifacts/${ids[39]}`);
    t.equal(short.body.program, 'e2(limit=59)', 'a short program is stored as text');
  },
);

// ---------------------------------------------------------------- request bodies

t.test('deep or odd seeds are a 400 with a short message, never a 500', async (t) => {
  const stack = await startStack(t);
  const deep = '['.repeat(5000) + ']'.repeat(5000);
  const opened = await postText(stack.url, '/execute', `{"entry_id":"brewery","seeds":${deep}}`);
  t.equal(opened.status, 400, 'POST /execute: 400');
  t.equal(codeOf(opened), 'bad_json');
  t.match(opened.body.errors[0].message, /more than 64 deep/);
  const { path } = await openSession(stack.url, { entry_id: 'brewery', seeds: ['Brewery'] });
  const ctx = await postText(stack.url, `${path}/context`, `{"seeds":${deep}}`);
  t.equal(ctx.status, 400, '/context: 400');
  t.equal(codeOf(ctx), 'bad_json');
  const nested = await postText(
    stack.url,
    '/execute',
    `{"entry_id":"brewery","seeds":[${'['.repeat(40)}1${']'.repeat(40)}]}`,
  );
  t.equal(nested.status, 400);
  t.equal(codeOf(nested), 'bad_seed', 'a seed that is a nested list: bad_seed');
  const long = await postText(
    stack.url,
    '/execute',
    JSON.stringify({ entry_id: 'brewery', seeds: [{ entity: 'x'.repeat(100_000) }] }),
  );
  t.equal(long.status, 400);
  t.ok(long.text.length < 2000, `a 100 KB seed is quoted by a short prefix (${long.text.length} bytes answered)`);
  const longName = await postText(
    stack.url,
    '/execute',
    JSON.stringify({ entry_id: 'brewery', seeds: [`brewery:${'Q'.repeat(300)}`] }),
  );
  t.equal(codeOf(longName), 'bad_seed');
  t.notMatch(longName.text, 'Q'.repeat(100));
  t.equal((await call(stack.url, '/v1/health')).status, 200, 'the server is alive');
});

t.test('every JSON body field of the wrong type is a 400 bad_arguments, and nothing runs', async (t) => {
  const stack = await startStack(t);
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const bad: Array<[string, unknown, RegExp]> = [
    [path, { program: 'e1[name]', mode: ['plan'] }, /`mode` must be/],
    [path, { program: 'e1[name]', mode: 'dry' }, /`mode` must be/],
    [path, { program: 'e1[name]', wait: 'false' }, /`wait` must be true or false/],
    [path, { program: 'e1[name]', force: 1 }, /`force` must be true or false/],
    [path, { program: 'e1[name]', plan_commit_ref: 7 }, /`plan_commit_ref` must be a pcN/],
    [path, { program: ['e1[name]'] }, /`program` must be/],
    [path, { program: 'e1[name]', extra: true }, /unknown body key `extra`/],
    ['/execute', { entry_id: 'brewery', intent: 5 }, /`intent` must be a string/],
    ['/execute', { entry_id: 7 }, /`entry_id` must be/],
    ['/execute', { entry_id: 'brewery', seeds: 'brewery:Beer' }, /`seeds` must be a list/],
    [`${path}/context`, { seeds: ['brewery:Beer'], intent: 'x' }, /unknown body key `intent`/],
  ];
  for (const [where, body, message] of bad) {
    const a = await postText(stack.url, where, JSON.stringify(body));
    t.equal(a.status, 400, `${JSON.stringify(body)}: 400`);
    t.match(codeOf(a), /^bad_(arguments|seed)$/, `${JSON.stringify(body)}: bad_arguments`);
    t.match(a.body.errors?.[0]?.message, message);
  }
  t.same((await call(stack.url, `${path}/runs`)).body.runs, [], 'no request ran anything');
  const nulls = await postText(
    stack.url,
    path,
    JSON.stringify({ program: 'e1("b-1")[name]', wait: null, force: null, mode: null, plan_commit_ref: null }),
  );
  t.equal(nulls.status, 200, 'null counts as absent');
});

// ---------------------------------------------------------------- stored runs after a restart

t.test('a stored run is served after a restart (file store) to its tenant, and only to it', async (t) => {
  const dir = await tmp(t, 'svc-abuse-artifacts-');
  const opts = { retentionSecs: 3600, gcIntervalSecs: 3600 };
  const before = await startStack(t, { auth: twoTenants(), artifacts: await FileArtifactStore.open(dir, opts) });
  const { path } = await openSession(before.url, { entry_id: 'brewery' }, acme);
  const run = await runProgram(before.url, path, 'e1(city="Berlin")[name]', '', { headers: acme });
  t.equal(run.status, 200);
  const id = run.body._meta.svc.run_id as string;
  await before.close();

  const after = await startStack(t, {
    auth: twoTenants(),
    vendorUrl: before.vendorUrl,
    artifacts: await FileArtifactStore.open(dir, opts),
  });
  const art = await call(after.url, `${path}/artifacts/${id}`, { headers: acme });
  t.equal(art.status, 200, 'the run is served by the new process');
  t.same(art.body.steps[0].rows, run.body.rows, 'with the rows answered before the restart');
  t.equal(art.body.session.tenant, 'acme', 'the snapshot names its tenant');
  const other = await call(after.url, `${path}/artifacts/${id}`, { headers: globex });
  t.equal(other.status, 404, 'another tenant: 404, as for any unknown session');
  t.notMatch(other.text, /Berlin|rows/);
  const [, , ph, sid] = path.split('/');
  const elsewhere = await call(
    after.url,
    `/execute/${ph}/${sid!.replace(/.$/, (c) => (c === '0' ? '1' : '0'))}/artifacts/${id}`,
    { headers: acme },
  );
  t.equal(elsewhere.status, 404, 'another session address: 404');
  const program = await runProgram(after.url, path, 'e1[name]', '', { headers: acme });
  t.equal(codeOf(program), 'unknown_session', 'the session itself is gone: new programs need a new session');
});

// ---------------------------------------------------------------- plan tokens

t.test('force=true with an expired pcN reports the token error and writes nothing', async (t) => {
  let clock = Date.parse('2026-11-23T10:00:00Z');
  const stack = await startStack(t, { now: () => clock });
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const create = 'm1(name="Expired Force Brewing", city="Ghent", country="BE")';
  const dry = await runProgram(stack.url, path, create, 'mode=plan');
  const ref = dry.body._meta.svc.plan_commit_ref as string;
  clock += 11 * 60 * 1000;
  const a = await runProgram(stack.url, path, create, `force=true&plan_commit_ref=${ref}`);
  t.equal(a.status, 410);
  t.equal(codeOf(a), 'plan_token_expired');
  const found = await fetch(`${stack.vendorUrl}/breweries?name=${encodeURIComponent('Expired Force Brewing')}`);
  t.same(await found.json(), [], 'nothing was written');
});

// ---------------------------------------------------------------- a session pinned to a reloaded catalog

/** Pack a changed copy of the brewery catalog (a new description) into `dir`, replacing the old files. */
async function repackBrewery(t: Test, dir: string): Promise<void> {
  const src = await tmp(t, 'svc-abuse-src-');
  await cp(join(ROOT, 'fixtures', 'catalogs', 'brewery'), src, { recursive: true });
  const file = join(src, 'catalog.yaml');
  await writeFile(
    file,
    (await readFile(file, 'utf8')).replace(/description: [^\n]*/, 'description: Breweries (reloaded).'),
  );
  const compiled = compileSource(await readSourceDir(src));
  t.same(compiled.diagnostics, []);
  for (const n of await readdir(dir)) if (n.startsWith('brewery.')) await unlink(join(dir, n));
  await writeArtifacts(compiled.cgs!, compiled.cgs_hash!, dir);
}

t.test(
  'after a reload changed its catalog, a session still answers wait, /runs and /artifacts; new programs are refused',
  async (t) => {
    const dir = await tmp(t, 'svc-abuse-reload-');
    await cp(PACKED, dir, { recursive: true });
    const stack = await startStack(t, { catalogDir: dir, controlPlaneSecret: 'reload-secret-0a9b' });
    const { path } = await openSession(stack.url, { entry_id: 'brewery' });
    const read = await runProgram(stack.url, path, 'e1[name]');
    const acc = await runProgram(stack.url, path, 'e1(city="Berlin")[name]', 'wait=false');
    t.equal(acc.status, 202);
    const h = acc.body._meta.svc.op.n as string;
    await stack.app.idle();
    await repackBrewery(t, dir);
    const reload = await call(stack.url, '/internal/catalog-registry/v1/reload', {
      method: 'POST',
      headers: { 'x-svc-control-plane-secret': 'reload-secret-0a9b' },
    });
    t.equal(reload.status, 200);

    const waited = await runProgram(stack.url, path, `wait(${h})`);
    t.equal(waited.status, 200, 'wait(oN) of an operation it started');
    t.equal(waited.body._meta.svc.op['~'], '!');
    t.ok(waited.body.rows.length > 0, 'with its rows');
    const runs = await call(stack.url, `${path}/runs`);
    t.equal(runs.status, 200, '/runs');
    t.equal(runs.body.runs.length, 2);
    const art = await call(stack.url, `${path}/artifacts/${read.body._meta.svc.run_id}`);
    t.equal(art.status, 200, '/artifacts of a run it made');
    const fresh = await runProgram(stack.url, path, 'e1[name]');
    t.equal(fresh.status, 409, 'a new program: 409');
    t.equal(codeOf(fresh), 'session_stale');
    const paging = await runProgram(stack.url, path, `page(${/page\((pg\d+)\)/.exec(read.body.more)![1]})`);
    t.equal(codeOf(paging), 'session_stale', 'a page of the old catalog: refused too');
    const dryWait = await runProgram(stack.url, path, `wait(${h})`, 'mode=plan');
    t.equal(codeOf(dryWait), 'session_stale', 'only the continuations themselves are served');
  },
);

t.test('a write whose run artifact cannot be stored answers its result with a warning, never a 500', async (t) => {
  const dir = await tmp(t, 'svc-abuse-store-');
  const artifacts = await FileArtifactStore.open(join(dir, 'runs'), { retentionSecs: 3600, gcIntervalSecs: 3600 });
  const stack = await startStack(t, { artifacts });
  await rm(join(dir, 'runs'), { recursive: true, force: true }); // the store's directory is gone: every put fails
  const { path } = await openSession(stack.url, { entry_id: 'brewery' });
  const write = 'm1(name="Unstored Brewing", city="Ghent", country="BE")';
  const dry = await runProgram(stack.url, path, write, 'mode=plan');
  const a = await runProgram(stack.url, path, write, `plan_commit_ref=${dry.body._meta.svc.plan_commit_ref}`);
  t.equal(a.status, 200, 'the write happened: its answer is a success');
  t.equal(a.body.rows?.[0]?.name, 'Unstored Brewing', 'with the row the vendor created');
  t.equal(a.body.warnings?.[0]?.code, 'run_not_stored', 'and a warning that its artifact was not stored');
  t.equal(a.body._meta.svc.run_id, undefined, 'no run id to look up');
  const found = await fetch(`${stack.vendorUrl}/breweries?name=${encodeURIComponent('Unstored Brewing')}`);
  t.equal(((await found.json()) as unknown[]).length, 1, 'the vendor has the row');
  t.same((await call(stack.url, `${path}/runs`)).body.runs, [], 'the run is not listed');
  const write2 = 'm1(name="Unstored Brewing 2", city="Ghent", country="BE")';
  const dry2 = await runProgram(stack.url, path, write2, 'mode=plan');
  const plain = await runProgram(stack.url, path, write2, `plan_commit_ref=${dry2.body._meta.svc.plan_commit_ref}`, {
    accept: 'text/plain',
  });
  t.match(plain.text, /^warning run_not_stored: /m, 'plain text shows the warning');
  // A clean read's artifact is written after its answer: the failure is counted, not answered.
  const read = await runProgram(stack.url, path, 'e1("b-1")[name]');
  t.equal(read.status, 200);
  t.equal(read.body.warnings, undefined, 'a clean read answers before its write fails');
  await call(stack.url, `${path}/artifacts/${read.body._meta.svc.run_id}`); // waits for the write to settle
  t.equal((await call(stack.url, '/v1/health')).body.artifacts.failed_writes, 1, '/v1/health counts it');
});
