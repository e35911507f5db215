/**
 * A singleton get (`GET /user`, `GET /repos/{owner}/{repo}/readme`) in the compiler and the
 * teaching table: never the entity symbol's get (`e1("octo")` stays the get by id), an `m#` of its
 * own taught as `m3()` or `m4(owner=$, repo=$)`, a row that binds, answers fields and follows
 * relations, and an entity whose only read it is taught by it (`one:`, or its form).
 */
import t from 'tap';
import { compileProgram, renderWave, SymbolTable, teachabilityCheck } from '../../compiler/index.js';
import { sourceRegistry } from '../_helpers/registry.js';

const source = `
catalog: {entry_id: forge, version: 1, label: Forge, description: A code forge, backend: {url: "http://127.0.0.1:1"}}
entities:
  User:
    id: login
    fields: {login: string, name: string, repos: integer}
    relations:
      owned: {target: Repo, cardinality: many, capability: listUserRepos, bind: {username: login}}
  Repo:
    fields: {id: integer, name: string, owner: string}
  Readme:
    fields: {path: string, content: string}
  RateLimit:
    fields: {limit: integer, remaining: integer}
capabilities:
  listUsers: {kind: query, entity: User}
  getUser: {kind: get, entity: User, params: [login]}
  getMe: {kind: get, singleton: true, entity: User, description: The signed-in user}
  listUserRepos: {kind: query, entity: Repo, params: {username: {type: string, required: true}}}
  getRepo: {kind: get, entity: Repo, params: [id]}
  getReadme:
    kind: get
    singleton: true
    entity: Readme
    description: The readme of a repository
    params: {owner: {type: string, required: true}, repo: {type: string, required: true}}
  getRateLimit: {kind: get, singleton: true, entity: RateLimit, description: Your rate limit}
mappings:
  listUsers: GET /users
  getUser: GET /users/{login}
  getMe: GET /user
  listUserRepos: GET /users/{username}/repos
  getRepo: GET /repositories/{id}
  getReadme: GET /repos/{owner}/{repo}/readme
  getRateLimit: GET /rate_limit
`;

const { cgs, registry } = sourceRegistry(source, 'forge.yaml');
const symbols = new SymbolTable();
const wave = symbols.expose(registry, [
  { api: 'forge', entity: 'User' },
  { api: 'forge', entity: 'Repo' },
  { api: 'forge', entity: 'Readme' },
  { api: 'forge', entity: 'RateLimit' },
]);
const sym = (capability: string) => symbols.capabilitySymbol('forge', capability)?.sym;
const compile = (program: string) => compileProgram(program, { registry, symbols });

t.test('each singleton has an m#; the entity symbol keeps the get by id', async (t) => {
  t.ok(sym('getMe'));
  t.ok(sym('getReadme'));
  t.ok(sym('getRateLimit'));
  t.notOk(sym('getUser'), 'the get by id is e1("<id>")');
  const r = compile('e1("octo")');
  t.equal(r.kind, 'plan', JSON.stringify(r.kind === 'error' ? r.diagnostics : ''));
  if (r.kind === 'plan') t.equal(r.plan.steps[0]!.capability, 'getUser');
});

t.test('m#() reads the one row; its fields bind and its relations follow', async (t) => {
  const me = sym('getMe')!;
  const r = compile(`x = ${me}()\ne1(x.login)[name]\nx.owned[name]`);
  t.equal(r.kind, 'plan', JSON.stringify(r.kind === 'error' ? r.diagnostics : ''));
  if (r.kind !== 'plan') return;
  t.same(
    r.plan.steps.map((s) => [s.capability, s.op]),
    [
      ['getMe', 'get'],
      ['getUser', 'get'],
      ['listUserRepos', 'query'],
    ],
  );
  const x = { ref: { step: r.plan.steps[0]!.id, field: 'login' } };
  t.same(r.plan.steps[1]!.args, { login: x });
  t.same(r.plan.steps[2]!.args, { username: x });
  const readme = compile(`${sym('getReadme')}(owner="acme", repo="rockets")[path]`);
  t.equal(readme.kind, 'plan', JSON.stringify(readme.kind === 'error' ? readme.diagnostics : ''));
  if (readme.kind === 'plan') t.same(readme.plan.steps[0]!.args, { owner: { lit: 'acme' }, repo: { lit: 'rockets' } });
});

t.test('a singleton takes no id: missing path parameters and positional values are refused', async (t) => {
  t.match(compile(`${sym('getReadme')}(owner="acme")`), {
    kind: 'error',
    diagnostics: [{ code: 'missing_argument', message: /repo/ }],
  });
  t.match(compile(`${sym('getMe')}("octo")`), { kind: 'error', diagnostics: [{ code: 'syntax_error' }] });
  t.match(compile(`e1("octo").${sym('getMe')}()`), { kind: 'error', diagnostics: [{ code: 'not_on_row' }] });
});

t.test('an entity read only by a singleton points at it', async (t) => {
  const rate = sym('getRateLimit')!;
  t.match(compile('e4("x")'), {
    kind: 'error',
    diagnostics: [
      {
        code: 'unknown_argument',
        message: /forge:RateLimit has no get capability to fetch one row by id/,
        hint: `its one row has no id: read it with ${rate}()`,
        span: { line: 1, col: 4 },
      },
    ],
  });
  t.match(compile('e3(owner="acme")'), {
    kind: 'error',
    diagnostics: [
      {
        code: 'unknown_argument',
        message: /forge:Readme has no query or search capability/,
        hint: `its one row has no id: read it with ${sym('getReadme')!}(owner="text", repo="text")`,
      },
    ],
  });
});

t.test('the table teaches m#() forms; a singleton-only entity is read by its singleton', async (t) => {
  const table = renderWave(wave, registry, symbols);
  // A singleton-only entity's row and its singleton's row share the form: the last is the m# row.
  const line = (form: string) => table.split('\n').findLast((l) => l.startsWith(`${form}\t`));
  const entityLine = (form: string) => table.split('\n').find((l) => l.startsWith(`${form}\t`));
  t.match(line(`${sym('getMe')}()`), /\tget e1 \(the one row, no id\): The signed-in user$/);
  t.match(line(`${sym('getReadme')}(owner=$, repo=$)`), /\tget e3 \(the one row, no id\): The readme/);
  const rate = `${sym('getRateLimit')}()`;
  t.match(line(rate), /\tget e4 \(the one row, no id\): Your rate limit$/);
  t.match(entityLine(rate), /\tforge:RateLimit \| fields: limit:integer, remaining:integer$/, 'the entity row');
  t.match(table, /^e1\[\.\.\]\t.*\| one: e1\("<id>"\) \|/m, 'User keeps its get by id');
  t.notMatch(table, /"<id>"\)\[\.\.\]/, 'no entity row claims a get by id it has not');
  t.same(teachabilityCheck(cgs), []);
});

t.test('an entity with a list and a singleton but no get by id: one: m#()', async (t) => {
  const { registry: reg } = sourceRegistry(
    source
      .replace('  getUser: {kind: get, entity: User, params: [login]}\n', '')
      .replace('  getUser: GET /users/{login}\n', ''),
  );
  const syms = new SymbolTable();
  const w = syms.expose(reg, [{ api: 'forge', entity: 'User' }]);
  const me = syms.capabilitySymbol('forge', 'getMe')!.sym;
  const table = renderWave(w, reg, syms);
  t.match(table, new RegExp(`^e1\\[\\.\\.\\]\\t.*\\| one: ${me}\\(\\) \\|`, 'm'));
  t.match(table, new RegExp(`^${me}\\(\\)\\.owned\\[\\.\\.\\]\\t`, 'm'), 'its relation is taught from the singleton');
  const r = compileProgram(`${me}().owned[name]`, { registry: reg, symbols: syms });
  t.equal(r.kind, 'plan', JSON.stringify(r.kind === 'error' ? r.diagnostics : ''));
});

t.test('a one-relation followed by a singleton: the relation row teaches it (no m#)', async (t) => {
  const { cgs: c, registry: reg } = sourceRegistry(
    source.replace(
      '    fields: {id: integer, name: string, owner: string}\n',
      '    fields: {id: integer, name: string, owner: string}\n    relations:\n      readme: {target: Readme, cardinality: one, capability: getReadme, bind: {owner: owner, repo: name}}\n',
    ),
  );
  const syms = new SymbolTable();
  const w = syms.expose(reg, [
    { api: 'forge', entity: 'Repo' },
    { api: 'forge', entity: 'Readme' },
  ]);
  t.notOk(syms.capabilitySymbol('forge', 'getReadme'));
  t.match(renderWave(w, reg, syms), /^e1\(1\)\.readme\[\.\.\]\tr1 -> e2 row/m);
  const r = compileProgram('e1(7).readme[content]', { registry: reg, symbols: syms });
  t.equal(r.kind, 'plan', JSON.stringify(r.kind === 'error' ? r.diagnostics : ''));
  if (r.kind === 'plan')
    t.same(
      r.plan.steps.map((s) => s.capability),
      ['getRepo', 'getReadme'],
    );
  t.same(teachabilityCheck(c), []);
});
