/**
 * A get whose path takes more than the id (`/repos/{owner}/{repo}/issues/{number}`, common in
 * imported specs): the entity form takes the id by position and the rest by name, the table
 * teaches `one: e1(1, owner=$, repo=$)`, and the teachability check compiles it.
 */
import t from 'tap';
import { compileProgram, renderWave, SymbolTable, teachabilityCheck } from '../../compiler/index.js';
import { sourceRegistry } from '../_helpers/registry.js';

const source = `
catalog: {entry_id: forge, version: 1, label: Forge, description: A code forge, backend: {url: "http://127.0.0.1:1"}}
entities:
  Issue:
    id: number
    fields: {number: integer, title: string, state: {type: enum, values: [open, closed]}}
capabilities:
  listIssues:
    kind: query
    entity: Issue
    params: {owner: {type: string, required: true}, repo: {type: string, required: true}, state: null}
  getIssue:
    kind: get
    entity: Issue
    params: {number: null, owner: {type: string, required: true}, repo: {type: string, required: true}}
  closeIssue:
    kind: action
    entity: Issue
    params: {number: null, owner: {type: string, required: true}, repo: {type: string, required: true}}
mappings:
  listIssues: GET /repos/{owner}/{repo}/issues
  getIssue: GET /repos/{owner}/{repo}/issues/{number}
  closeIssue: POST /repos/{owner}/{repo}/issues/{number}/close
`;

const { cgs, registry } = sourceRegistry(source, 'forge.yaml');
const symbols = new SymbolTable();
const wave = symbols.expose(registry, [{ api: 'forge', entity: 'Issue' }]);

t.test('the id by position, the other path parameters by name', async (t) => {
  const r = compileProgram('e1(7, owner="acme", repo="rockets")[title]', { registry, symbols });
  t.equal(r.kind, 'plan', JSON.stringify(r.kind === 'error' ? r.diagnostics : ''));
  if (r.kind !== 'plan') return;
  const step = r.plan.steps[0]!;
  t.equal(step.capability, 'getIssue');
  t.same(step.args, { number: { lit: 7 }, owner: { lit: 'acme' }, repo: { lit: 'rockets' } });
});

t.test('a missing path parameter is missing_argument naming it', async (t) => {
  const r = compileProgram('e1(7, owner="acme")', { registry, symbols });
  t.match(r, { kind: 'error', diagnostics: [{ code: 'missing_argument', message: /repo/ }] });
});

t.test('a get that takes only the id still refuses named arguments beside it', async (t) => {
  const { registry: reg } = sourceRegistry(
    source
      .replace(
        ', owner: {type: string, required: true}, repo: {type: string, required: true}}\n  closeIssue',
        '}\n  closeIssue',
      )
      .replace('getIssue: GET /repos/{owner}/{repo}/issues/{number}', 'getIssue: GET /issues/{number}'),
  );
  const syms = new SymbolTable();
  syms.expose(reg, [{ api: 'forge', entity: 'Issue' }]);
  t.match(compileProgram('e1(7, owner="acme")', { registry: reg, symbols: syms }), {
    kind: 'error',
    diagnostics: [{ code: 'syntax_error' }],
  });
});

t.test('the table teaches the form; every capability is teachable', async (t) => {
  const table = renderWave(wave, registry, symbols);
  t.match(table, /\| one: e1\(1, owner=\$, repo=\$\) \|/);
  t.match(table, /^e1\(1, owner=\$, repo=\$\)\.m1\b/m, 'a row action is written on that form');
  t.same(teachabilityCheck(cgs), []);
  const r = compileProgram('e1(7, owner="acme", repo="rockets").m1(owner="acme", repo="rockets")', {
    registry,
    symbols,
  });
  t.equal(r.kind, 'plan', JSON.stringify(r.kind === 'error' ? r.diagnostics : ''));
});

t.test('a row capability takes the path parameters it shares with the get from the row', async (t) => {
  const table = renderWave(wave, registry, symbols);
  t.match(table, /^e1\(1, owner=\$, repo=\$\)\.m1\t/m, 'the form leaves owner and repo out');
  const r = compileProgram('e1(7, owner="acme", repo="rockets").m1', { registry, symbols });
  t.equal(r.kind, 'plan', JSON.stringify(r.kind === 'error' ? r.diagnostics : ''));
  if (r.kind !== 'plan') return;
  t.same(r.plan.steps.at(-1)!.args, { number: { lit: 7 }, owner: { lit: 'acme' }, repo: { lit: 'rockets' } });
  const mine = compileProgram('e1(7, owner="acme", repo="rockets").m1(repo="other")', { registry, symbols });
  t.equal(
    mine.kind === 'plan' ? JSON.stringify(mine.plan.steps.at(-1)!.args.repo) : mine.kind,
    '{"lit":"other"}',
    'an argument given wins',
  );
});
