/**
 * Golden programs: fixtures/programs/plans/*.svc compile to exactly the plan, commit id and review
 * in the matching .json; fixtures/programs/errors/*.svc give exactly the diagnostics in theirs.
 * Regenerate with UPDATE_GOLDEN=1 and review the diff before committing.
 */
import t from 'tap';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileProgram } from '../../compiler/index.js';
import { fixtureRegistry, sessionSymbols } from '../_helpers/registry.js';

const DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'programs');
const update = process.env.UPDATE_GOLDEN === '1';

function cases(sub: string): string[] {
  return readdirSync(join(DIR, sub))
    .filter((f) => f.endsWith('.svc'))
    .sort();
}

function check(
  t: { equal(a: unknown, b: unknown, ...msg: [] | [string]): boolean },
  file: string,
  actual: unknown,
): void {
  const text = JSON.stringify(actual, null, 2) + '\n';
  if (update) writeFileSync(file, text);
  t.equal(text, readFileSync(file, 'utf8'), file);
}

t.test('golden plans', async (t) => {
  const registry = await fixtureRegistry();
  const names = cases('plans');
  t.ok(names.length >= 15, 'at least 15 golden plans');
  for (const f of names) {
    const program = readFileSync(join(DIR, 'plans', f), 'utf8');
    const r = compileProgram(program, { registry, symbols: sessionSymbols(registry) });
    t.equal(r.kind, 'plan', `${f} compiles (${r.diagnostics.map((d) => d.code).join(', ')})`);
    if (r.kind !== 'plan') continue;
    check(t, join(DIR, 'plans', f.replace(/\.svc$/, '.json')), {
      commit_id: r.commit_id,
      review: r.review,
      plan: { version: r.plan.version, steps: r.plan.steps, bind: r.plan.bind, return: r.plan.return },
    });
  }
});

t.test('golden diagnostics', async (t) => {
  const registry = await fixtureRegistry();
  for (const f of cases('errors')) {
    const program = readFileSync(join(DIR, 'errors', f), 'utf8');
    const r = compileProgram(program, { registry, symbols: sessionSymbols(registry) });
    t.equal(r.kind, 'error', `${f} is rejected`);
    check(t, join(DIR, 'errors', f.replace(/\.svc$/, '.json')), r.diagnostics);
  }
});

t.test('grammar.md documents every checking diagnostic with its exact message', async (t) => {
  const md = readFileSync(join(DIR, '..', '..', 'grammar.md'), 'utf8');
  const esc = (s: string) => s.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  for (const f of cases('errors')) {
    const diags = JSON.parse(readFileSync(join(DIR, 'errors', f.replace(/\.svc$/, '.json')), 'utf8')) as Array<{
      code: string;
      message: string;
    }>;
    for (const d of diags)
      t.ok(md.includes(`| \`${d.code}\` |`) && md.includes(esc(d.message)), `${f}: ${d.code} ${d.message}`);
  }
});
