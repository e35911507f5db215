import t from 'tap';
import { compileProgram, planCommitId, planCatalogs, validatePlanShape, type Compiled } from '../../compiler/index.js';
import { fixtureRegistry, sessionSymbols } from '../_helpers/registry.js';

const registry = await fixtureRegistry();
const symbols = sessionSymbols(registry);
const compile = (p: string, withSymbols = true): Compiled =>
  compileProgram(p, withSymbols ? { registry, symbols } : { registry });
const id = (p: string, withSymbols = true): string => {
  const r = compile(p, withSymbols);
  if (r.kind !== 'plan') throw new Error(`${p}: ${JSON.stringify(r.diagnostics)}`);
  return r.commit_id;
};

t.test('reformatting keeps the commit id', async (t) => {
  const base = id('e1(city="Berlin", kind="micro")[name,city]');
  t.equal(id('  e1( city = "Berlin" ,kind="micro" ) [ name , city ]  '), base, 'spaces');
  t.equal(id('e1(kind="micro", city="Berlin")[name,city]'), base, 'argument order');
  t.equal(
    id('# a comment\n\ne1(\n  city="Berlin",\n  kind="micro",\n)[name,city]\n'),
    base,
    'comments, blank lines, newlines inside parentheses, trailing comma',
  );
  t.equal(id('brewery:Brewery(city="Berlin", kind="micro")[name,city]'), base, 'qualified name instead of the symbol');
  t.equal(
    id('brewery:Brewery(city="Berlin", kind="micro")[name,city]', false),
    base,
    'qualified name without any session',
  );
  const quoted = id('m6(beerId=7, rating=4, author="ana", text="Crisp.\\nGood.")');
  t.equal(
    id('m6(beerId=7, rating=4, author="ana", text=<<EOT\nCrisp.\nGood.\nEOT\n)'),
    quoted,
    'heredoc vs quoted string with the same value',
  );
  t.equal(
    id('m6(beerId=7, rating=4, author="ana", text=<<EOT\nCrisp.\nGood.\nEOT)'),
    quoted,
    'heredoc close glued before )',
  );
  t.equal(
    id('brewery:createReview(text="Crisp.\\nGood.", author="ana", rating=4, beerId=7)'),
    quoted,
    'qualified capability, other order',
  );
  t.equal(id('e1("b-1").r1[name]'), id('e1("b-1").beers[name]'), 'relation symbol vs wire name');
  t.equal(id('e1("b-1")'), id('e1(id="b-1")'), 'positional vs named id');
  t.equal(id('e2(7).m5'), id('e2(7).m5()'), 'empty parentheses');
});

t.test('any semantic change changes the commit id', async (t) => {
  const base = id('e1(city="Berlin", kind="micro")[name,city]');
  const changed = [
    'e1(city="Bonn", kind="micro")[name,city]',
    'e1(city="Berlin", kind="brewpub")[name,city]',
    'e1(city="Berlin")[name,city]',
    'e1(city="Berlin", kind="micro")[city,name]',
    'e1(city="Berlin", kind="micro")[name]',
    'e1(city="Berlin", kind="micro")',
    'e1(city="Berlin", kind="micro", limit=20)[name,city]',
    'e2(style="micro")[name]',
  ];
  const ids = new Set([base]);
  for (const p of changed) {
    const c = id(p);
    t.not(c, base, p);
    ids.add(c);
  }
  t.equal(ids.size, changed.length + 1, 'all distinct');
  t.not(id('e2(7)'), id('e2(8)'), 'another id');
  t.match(compile('e2("7")').diagnostics, [{ code: 'wrong_type' }], 'an integer id is not written as a string');
});

t.test('the commit id hashes only version, steps, bind and return', async (t) => {
  const r = compile('b = e1(city="Berlin")\ne2(breweryId=b.id)[name]');
  t.equal(r.kind, 'plan');
  if (r.kind !== 'plan') return;
  t.equal(planCommitId(r.plan), r.commit_id);
  t.equal(
    planCommitId({ ...r.plan, name: 'plan 7', summary: { ...r.review, text: 'other' } }),
    r.commit_id,
    'name and summary are not hashed',
  );
  t.not(planCommitId({ ...r.plan, bind: {} }), r.commit_id, 'bind is hashed');
  t.not(planCommitId({ ...r.plan, return: ['n1'] }), r.commit_id, 'return is hashed');
  t.same(validatePlanShape(r.plan), [], 'the plan satisfies the plan JSON Schema');
  t.same(planCatalogs(r.plan), { brewery: registry.get('brewery')!.cgs_hash }, 'catalogs are pinned by cgs_hash');
  t.match(
    validatePlanShape({ ...r.plan, steps: [{ ...r.plan.steps[0], cgs_hash: 'nope' }] }),
    [{ code: 'bad_arguments' }],
    'a tampered plan fails the schema',
  );
});

t.test('review verdicts', async (t) => {
  const review = (p: string) => {
    const r = compile(p);
    if (r.kind !== 'plan') throw new Error(p);
    return r.review;
  };
  t.match(review('e1(city="Berlin")'), { verdict: 'proceed', flow: 'clean', mutations: 0 });
  t.match(review('m1(name="X", city="Y", country="DE")'), { verdict: 'review', flow: 'clean', mutations: 1 });
  t.match(review('e2(limit=5000)'), { verdict: 'review', flow: ['unbounded_list'], mutations: 0 });
  t.match(review('b = e2(limit=200)\ne3(beerId=b.id)'), { verdict: 'review', flow: ['large_fanout'] });
  const text = review('b = e1(city="Berlin")\ne1("b-1").m2(city="Bonn")').text;
  t.match(text, /n1 read brewery:Brewery listBreweries\(city="Berlin"\) as b/);
  t.match(text, /n2 WRITE brewery:Brewery updateBrewery\(id="b-1", city="Bonn"\) -> returned/);
});

t.test('folding: a get by literal id feeding only its id is not a vendor call', async (t) => {
  const r = compile('e1("b-1").r1[name]');
  t.equal(r.kind === 'plan' && r.plan.steps.length, 1);
  const kept = compile('e2(7).r2[name]');
  t.equal(kept.kind === 'plan' && kept.plan.steps.length, 2, 'a relation binding a non-id field needs the parent row');
  const projected = compile('b = e1("b-1")[name]\nb.r1');
  t.equal(projected.kind === 'plan' && projected.plan.steps.length, 2, 'a bound parent is kept');
});

t.test('continuations are handed back, not planned', async (t) => {
  for (const p of ['wait(o3)', 'cancel(o12)', 'page(pg2)[name]']) {
    const r = compile(p);
    t.equal(r.kind, 'continuation', p);
  }
});

t.test('without symbols only qualified names resolve', async (t) => {
  const r = compile('e1', false);
  t.equal(r.kind, 'error');
  t.match(r.diagnostics[0], { code: 'unknown_symbol', hint: /no symbols yet/ });
});

t.test('every diagnostic has a code, a span, a message and a hint', async (t) => {
  const r = compile('e9\ne1(citty=1)\ne1(kind="x")\nm1()\ne1[phone]\nb.id');
  t.equal(r.kind, 'error');
  t.ok(r.diagnostics.length >= 5);
  for (const d of r.diagnostics) {
    t.ok(d.span && d.span.line >= 1 && d.span.col >= 1, `${d.code} has a span`);
    t.ok(d.message && d.hint, `${d.code} has a message and a hint`);
  }
});
