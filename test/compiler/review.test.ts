/**
 * The review's vendor-call bound (`max_calls`) and budget (`over_call_budget`): one call per get,
 * per list page (ceil(limit / page size) with `limit`, else one page), per capability returning
 * nothing; a fan-out multiplies by its source rows, at most `fanout.max`. Over the budget the
 * verdict is `review`. The review text is linear in the plan's size.
 */
import t from 'tap';
import {
  compileProgram,
  DEFAULT_MAX_VENDOR_CALLS,
  reviewPlan,
  type Compiled,
  type Plan,
} from '../../compiler/index.js';
import { fixtureRegistry, sessionSymbols } from '../_helpers/registry.js';
import { growth } from '../_helpers/growth.js';

const registry = await fixtureRegistry();
const symbols = sessionSymbols(registry);
const compile = (p: string, maxCalls?: number): Extract<Compiled, { kind: 'plan' }> => {
  const c = compileProgram(p, { registry, symbols, ...(maxCalls !== undefined ? { maxCalls } : {}) });
  if (c.kind !== 'plan') throw new Error(`${p}: ${JSON.stringify(c.diagnostics)}`);
  return c;
};
const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join('\n');

t.test('max_calls: an upper bound of the vendor calls of each form', async (t) => {
  t.equal(DEFAULT_MAX_VENDOR_CALLS, 200);
  const cases: Array<[string, number]> = [
    ['e1', 1], // one page
    ['e1("b-1")', 1], // a get
    ['e1(limit=40)', 1], // 40 rows fit one page of at most 100
    ['e1(limit=250)', 3], // pages of 100: 100, 100, 50
    ['e2(limit=10000)', 100],
    ['e1("b-1").r1', 1], // folded into one call
    ['e2(7).r2', 2], // the get, then the relation
    ['b = e1\ne2(breweryId=b.id)', 11], // 1 page of 10 rows, then 10 calls
    ['b = e1(limit=200)\ne2(breweryId=b.id)', 2 + 50], // the fan-out stops at fanout.max (50)
    ['b = e1(limit=30)\ne2(breweryId=b.id, limit=150)', 1 + 30 * 2], // each fan-out call pages too
    ['e2(7).m5', 1], // an action on a row (folded id)
    ['m1(name="X", city="Y", country="DE")', 1],
    ['e1\ne1\ne2(style="IPA")', 3],
  ];
  for (const [program, calls] of cases) t.equal(compile(program).review.max_calls, calls, JSON.stringify(program));
});

t.test('over the budget: flow over_call_budget, verdict review, a line saying how to go on', async (t) => {
  const under = compile(lines(200, () => 'e1'));
  t.match(under.review, { verdict: 'proceed', flow: 'clean', max_calls: 200 }, 'exactly the budget proceeds');
  const over = compile(lines(201, () => 'e1'));
  t.match(over.review, { verdict: 'review', flow: ['over_call_budget'], mutations: 0, max_calls: 201 });
  t.equal(
    over.review.text.split('\n')[0],
    'up to 201 vendor calls (budget 200): dry-run and accept it with its pcN, or narrow it (filters, a smaller limit=, fewer statements)',
  );
  t.equal(over.review.text.split('\n').length, 202, 'the budget line, then one line per step');
  t.match(
    compile('e1\ne1\ne1', 2).review,
    { verdict: 'review', flow: ['over_call_budget'], max_calls: 3 },
    'CompileOptions.maxCalls sets the budget',
  );
  t.match(
    compile('e2(limit=5000)', 10).review,
    { flow: ['over_call_budget', 'unbounded_list'], max_calls: 50 },
    'warnings are sorted',
  );
  t.match(
    reviewPlan(under.plan, registry, 100),
    { verdict: 'review', flow: ['over_call_budget'] },
    'reviewPlan takes the budget',
  );
  t.match(reviewPlan(under.plan, registry), { verdict: 'proceed' }, 'and defaults to DEFAULT_MAX_VENDOR_CALLS');
});

t.test('an unbounded estimate is null in JSON, never Infinity', async (t) => {
  const c = compile('b = e1\ne2(breweryId=b.id)');
  const huge: Plan = {
    ...c.plan,
    steps: c.plan.steps.map((s) => (s.fanout ? { ...s, fanout: { ...s.fanout, max: 1e308 }, limit: 1e308 } : s)),
  };
  const r = reviewPlan(huge, registry);
  t.equal(r.max_calls, null);
  t.ok(Array.isArray(r.flow) && r.flow.includes('over_call_budget'));
  t.equal(r.verdict, 'review');
  t.match(r.text, /^an unbounded number of vendor calls \(budget 200\)/);
  t.same(JSON.parse(JSON.stringify(r)).max_calls, null, 'survives JSON');
});

t.test('review is linear in the number of steps', async (t) => {
  // Plans of n bound steps, built directly (past the compiler's 1,000-step limit) to show the growth.
  const one = compile('b = e1(city="c")').plan.steps[0]!;
  const make = (n: number): Plan => {
    const steps = Array.from({ length: n }, (_, i) => ({ ...one, id: `n${i + 1}`, args: { city: { lit: `c${i}` } } }));
    return {
      version: 1,
      steps,
      bind: Object.fromEntries(steps.map((s, i) => [`b${i}`, s.id])),
      return: steps.map((s) => s.id),
    };
  };
  const small = make(1000);
  const big = make(4000);
  const g = await growth(
    () => reviewPlan(small, registry),
    () => reviewPlan(big, registry),
  );
  t.ok(
    g.ratio < 9,
    `1,000 -> 4,000 bound steps: ${g.small.toFixed(2)} -> ${g.big.toFixed(2)} ms (x${g.ratio.toFixed(1)})`,
  );
  t.match(
    reviewPlan(small, registry, 1000).text.split('\n')[999],
    /^n1000 read brewery:Brewery listBreweries\(city="c999"\) as b999 -> returned$/,
  );
});
