/**
 * Singleton reads (fixtures/openapi/singletons.yaml): a GET answering one object at a path that
 * does not end with a parameter (`GET /me`, `GET /repos/{owner}/{repo}/readme`, a wrapped
 * `GET /account`, an inline `GET /rate_limit`) imports as a `singleton: true` get of the entity of
 * its schema, reported as `get (singleton)`; an entity read only so has no id. Packed and served
 * by a real svc server against a vendor on 127.0.0.1: `x = m1()` reads the one row, a relation
 * follows from it, the wrapped row is read at its path, and an answer carrying none of the
 * entity's fields is response_shape_mismatch.
 */
import t, { type Test } from 'tap';
import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeArtifacts } from '../../pack/index.js';
import { startFaultVendor } from '../_helpers/fault-vendor.js';
import { importAndPack } from '../_helpers/import.js';
import { call, codeOf, openSession, runProgram, startStack, PACKED, type Answer } from '../_helpers/server.js';

type Row = Record<string, unknown>;

const { result, cgs, cgs_hash } = await importAndPack('singletons.yaml', { entryId: 'desk' });
const cap = (name: string) => cgs.capabilities.find((c) => c.name === name);
const entity = (name: string) => cgs.entities.find((e) => e.name === name)!;
const report = result.files['import-report.md']!;

t.test('each GET of one object without an id at the end is a singleton get of its entity', async (t) => {
  t.match(cap('getMe'), { kind: 'get', singleton: true, entity: 'User', returns: 'row', params: [] });
  t.match(cap('getReadme'), { kind: 'get', singleton: true, entity: 'Readme', http: { response: { path: '' } } });
  t.same(
    cap('getReadme')!.params.map((p) => [p.name, p.required]),
    [
      ['owner', true],
      ['repo', true],
    ],
  );
  t.match(cap('getAccount'), { singleton: true, entity: 'Account', http: { response: { path: 'data' } } });
  t.match(cap('getRateLimit'), { singleton: true, entity: 'RateLimit' });
  for (const name of ['getMe', 'getReadme', 'getAccount', 'getRateLimit']) t.notOk(cap(name)!.id_param, name);
  t.match(cap('getUser'), { kind: 'get', id_param: 'login' });
  t.notOk('singleton' in cap('getUser')!, 'a get by id is no singleton');
  t.same(result.log.skipped, [], 'nothing skipped');
});

t.test('an entity read only by a singleton has no id field; one with a get keeps its id', async (t) => {
  t.equal(entity('User').id_field, 'login');
  t.same(
    entity('RateLimit').fields.map((f) => f.name),
    ['limit', 'remaining', 'reset'],
  );
  t.notMatch(result.files['entities.yaml']!, /RateLimit:\n\s+id:/, 'no id written');
  t.match(report, /\| RateLimit \| - \| 3 \| - \| inline schema at \/rate_limit \|/);
});

t.test('the report says get (singleton)', async (t) => {
  t.match(report, /\| getMe \| get \(singleton\) \| User \| `GET \/me \(getMe\)` \|/);
  t.match(report, /\| getAccount \| get \(singleton\) \| Account \|/);
  t.match(report, /\| getUser \| get \| User \|/);
  t.match(report, /\| getAccount \| row under `data` \|/, 'the wrapped row is an envelope');
});

const USERS = [
  { login: 'ada', name: 'Ada', followers: 12 },
  { login: 'bob', name: 'Bob', followers: 3 },
];
const REPOS: Record<string, Row[]> = {
  ada: [
    { id: 1, name: 'engine', stars: 40 },
    { id: 2, name: 'notes', stars: 2 },
  ],
};

t.test('live: singleton reads through the svc server against the vendor', async (t) => {
  let rateShape: 'bare' | 'wrapped' = 'bare';
  const rate = { limit: 5000, remaining: 4990, reset: '2026-01-01T00:00:00Z' };
  const vendor = await startFaultVendor({
    'GET /me': { json: USERS[0] },
    'GET /users': { json: USERS },
    'GET /users/:login': (req) => {
      const u = USERS.find((x) => x.login === req.params.login);
      return u ? { json: u } : { status: 404, json: { message: 'no such user' } };
    },
    'GET /users/:login/repos': (req) => ({ json: REPOS[req.params.login!] ?? [] }),
    'GET /repos/:owner/:repo/readme': (req) => ({
      json: { path: 'README.md', size: 11, content: `${req.params.owner}/${req.params.repo}` },
    }),
    'GET /account': { json: { data: { plan: 'team', seats: 5, owner: 'ada' } } },
    'GET /rate_limit': () => ({ json: rateShape === 'bare' ? rate : { resources: { core: rate } } }),
  });
  t.teardown(() => vendor.close());
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-singletons-'));
  for (const f of readdirSync(PACKED)) copyFileSync(join(PACKED, f), join(dir, f));
  await writeArtifacts(cgs, cgs_hash, dir);
  const stack = await startStack(t, {
    vendorUrl: vendor.url,
    catalogDir: dir,
    loadOptions: { backendOverrides: { desk: vendor.url } },
  });
  const seeds = ['desk:User', 'desk:Repo', 'desk:Readme', 'desk:Account', 'desk:RateLimit'];
  const { path, answer } = await openSession(stack.url, { entry_id: 'desk', seeds });
  const run = (program: string) => runProgram(stack.url, path, program);
  const wave = String(answer.body.wave).split('\n');
  /** The m# the wave teaches for the singleton described so (`m1()\tget e1 (the one row, no id): ...`). */
  const sym = (description: string) => {
    const line = wave.find((l) => /^m\d+\(/.test(l) && l.includes(`(the one row, no id): ${description}`));
    t.ok(line, `the wave teaches ${description}`);
    return /^(m\d+)\(/.exec(line ?? '')?.[1] ?? 'm0';
  };
  const me = sym('The signed-in user');

  t.same(ok(t, await run(`${me}()`), 'the signed-in user'), [USERS[0]]);
  t.same(ok(t, await run(`x = ${me}()\nx.repos(limit=10)[name]`), 'a relation followed from the row'), [
    { name: 'engine' },
    { name: 'notes' },
  ]);
  t.same(ok(t, await run(`x = ${me}()\ne1(x.login)[name]`), 'a field of the row as an argument'), [{ name: 'Ada' }]);
  t.same(ok(t, await run('e1("bob")'), 'e1("<id>") is still the get by id'), [USERS[1]]);
  t.same(ok(t, await run(`${sym('The readme of a repository')}(owner="ada", repo="engine")[content]`), 'readme'), [
    { content: 'ada/engine' },
  ]);
  t.same(ok(t, await run(`${sym('Your plan and seats')}()`), 'the wrapped row'), [
    { plan: 'team', seats: 5, owner: 'ada' },
  ]);
  const limit = sym('Requests left this hour');
  t.same(ok(t, await run(`${limit}()`), 'rate limit'), [rate]);
  t.equal(vendor.hits('/repos/ada/engine/readme', 'GET').length, 1, 'the path parameters are in the URL');
  const model = await call(stack.url, '/v1/registry/desk/tool-model?focus=single&entity=User');
  t.equal(model.status, 200, model.text.slice(0, 300));
  const verbs = (model.body.entities?.User?.verbs ?? []) as Row[];
  t.match(
    verbs.find((v) => v.name === 'getMe'),
    { kind: 'get', returns: 'row', default: false, singleton: true },
    'the tool model says singleton',
  );
  t.match(
    verbs.find((v) => v.name === 'getUser'),
    { default: true, id_param: 'login' },
  );
  t.notOk('singleton' in (verbs.find((v) => v.name === 'getUser') ?? {}));

  rateShape = 'wrapped';
  const bad = await run(`${limit}()`);
  t.equal(bad.status, 502, bad.text.slice(0, 300));
  t.equal(codeOf(bad), 'response_shape_mismatch');
});

function ok(t: Test, a: Answer, what: string): Row[] {
  t.equal(a.status, 200, `${what}: 200 ${a.status === 200 ? '' : a.text.slice(0, 300)}`);
  return (a.body.rows ?? []) as Row[];
}
