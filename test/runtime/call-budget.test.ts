/**
 * The vendor-call budget of a run (`ExecuteOptions.maxCalls`): one call per page request and per
 * fan-out call, retries not counted, counted across all steps; the call that would exceed it is
 * never sent and its step fails with `call_budget_exceeded`. Against the real demo vendor
 * (json-server) and the fault vendor (retries, small pages).
 */
import t from 'tap';
import { compileProgram } from '../../compiler/index.js';
import { Registry } from '../../pack/index.js';
import { continuePage, executePlan, PooledHttpClient, type PageState } from '../../runtime/index.js';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { fixtureRegistry, sessionSymbols } from '../_helpers/registry.js';
import { faultRegistry, linkedPages, startFaultVendor } from '../_helpers/fault-vendor.js';
import { recording } from '../_helpers/recording.js';

const fixtures = await fixtureRegistry();
const symbols = sessionSymbols(fixtures);

const vendor = await startDemoVendor();
const pool = new PooledHttpClient();
t.teardown(async () => {
  await pool.close();
  await vendor.close();
});
const reg = new Registry(fixtures.list().map((e) => ({ ...e, base_url: vendor.url })));

function compiled(text: string, registry: Registry = reg) {
  const c = compileProgram(text, { registry, symbols });
  if (c.kind !== 'plan') throw new Error(`${text}: ${JSON.stringify(c.diagnostics)}`);
  return c;
}

t.test('calls across steps stop at the budget; the next call is never sent', async (t) => {
  const http = recording(pool);
  const program = ['e1(city="Berlin")', 'e1(country="BE")', 'e2(style="IPA")', 'e3(rating=5)', 'e1(kind="micro")'].join(
    '\n',
  );
  const r = await executePlan(compiled(program).plan, reg, { http, maxCalls: 3 });
  t.equal(http.sent.length, 3, 'exactly the budget reached the vendor');
  t.equal(r.status, 'failed');
  t.same(
    Object.values(r.steps).map((s) => s.status),
    ['done', 'done', 'done', 'failed', 'failed'],
    'steps in order take the budget',
  );
  t.same(
    r.errors.map((e) => [e.code, e.path]),
    [
      ['call_budget_exceeded', '/steps/n4'],
      ['call_budget_exceeded', '/steps/n5'],
    ],
  );
  t.match(r.errors[0], {
    message: /budget of 3 vendor calls; brewery listReviews \(GET \/reviews\) was not called/,
    hint: /filters, a smaller limit=, fewer statements.*pcN/,
  });
  t.same([r.steps.n4?.calls, r.steps.n5?.calls], [0, 0], 'the stopped steps sent nothing');

  const free = recording(pool);
  const all = await executePlan(compiled(program).plan, reg, { http: free });
  t.equal(all.status, 'succeeded', 'without maxCalls there is no cap');
  t.equal(free.sent.length, 5);
  const exact = recording(pool);
  t.equal(
    (await executePlan(compiled(program).plan, reg, { http: exact, maxCalls: 5 })).status,
    'succeeded',
    'a budget of exactly the calls needed is enough',
  );
});

t.test('each fan-out call takes one call of the budget', async (t) => {
  const http = recording(pool);
  const c = compiled('b = e1[id]\ne2(breweryId=b.id)[name]');
  const sources = (await executePlan(compiled('e1[id]').plan, reg, {})).returns[0]!.rows.length;
  t.ok(sources > 4, `the fan-out has ${sources} source rows`);
  const r = await executePlan(c.plan, reg, { http, maxCalls: 4, concurrency: 2 });
  t.equal(http.sent.length, 4, '1 list call + 3 fan-out calls');
  t.equal(r.steps.n1?.status, 'done');
  t.equal(r.steps.n2?.status, 'failed');
  t.equal(r.errors[0]?.code, 'call_budget_exceeded');
  t.ok(
    c.review.max_calls! >= 1 + sources,
    `the review bound (${c.review.max_calls}) covers the real calls (${1 + sources})`,
  );
});

t.test('page requests count; retries do not', async (t) => {
  const items = Array.from({ length: 10 }, (_, i) => ({ id: i + 1, name: `item ${i + 1}` }));
  const v = await startFaultVendor({
    'GET /linked': linkedPages(items),
    'GET /items': [{ status: 503 }, { status: 503 }, { json: items }],
  });
  const http = new PooledHttpClient();
  t.teardown(async () => {
    await http.close();
    await v.close();
  });
  const fault = faultRegistry(v.url);
  const plan = (text: string) => {
    const c = compileProgram(text, { registry: fault });
    if (c.kind !== 'plan') throw new Error(text);
    return c;
  };
  const paged = plan('fault:linkItems(limit=10)');
  t.equal(paged.review.max_calls, 4, 'limit 10 in pages of at most 3: 4 calls');
  const cut = await executePlan(paged.plan, fault, { http, maxCalls: 2, requestTimeoutMs: 2000 });
  t.equal(v.hits('/linked').length, 2, 'two pages, then the budget stops the third');
  t.equal(cut.errors[0]?.code, 'call_budget_exceeded');
  const whole = await executePlan(paged.plan, fault, { http, maxCalls: 4, requestTimeoutMs: 2000 });
  t.equal(whole.status, 'succeeded');
  t.equal(whole.returns[0]?.rows.length, 10);
  t.equal(v.hits('/linked').length, 6, 'the estimate is exactly the calls made');

  const retried = await executePlan(plan('fault:Item').plan, fault, {
    http,
    maxCalls: 1,
    requestTimeoutMs: 2000,
    retry: { retries: 3, baseDelayMs: 1, maxDelayMs: 5, budgetMs: 1000 },
  });
  t.equal(retried.status, 'succeeded', 'a budget of one call allows the retries of that call');
  t.equal(v.hits('/items').length, 3, 'three requests on the wire for one call');
});

t.test('a page continuation honours maxCalls too', async (t) => {
  const first = await executePlan(compiled('e1').plan, reg, { http: pool });
  const state: PageState = first.returns[0]!.page!;
  t.ok(state, 'the first page has a continuation');
  const http = recording(pool);
  const refused = await continuePage(state, reg, { http, maxCalls: 0 });
  t.equal(refused.error?.code, 'call_budget_exceeded');
  t.equal(http.sent.length, 0, 'nothing sent');
  const next = await continuePage(state, reg, { http, maxCalls: 1 });
  t.notOk(next.error);
  t.equal(next.rows.length, 10);
});
