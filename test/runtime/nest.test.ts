/**
 * Nested projections (`e2[id, brewery[name], reviews[rating]]`) run against the real demo vendor
 * (json-server 0.17): rows keep their related rows, calls are batched per distinct key, a dangling
 * reference gives null, page continuations keep the nests, and the bounds hold.
 */
import t from 'tap';
import { compileProgram } from '../../compiler/index.js';
import { Registry } from '../../pack/index.js';
import {
  continuePage,
  executePlan,
  PooledHttpClient,
  type ExecuteOptions,
  type HttpRequest,
  type RunResult,
} from '../../runtime/index.js';
import { startDemoVendor } from '../../cli/demo-vendor.js';
import { fixtureRegistry, sessionSymbols } from '../_helpers/registry.js';
import { recording } from '../_helpers/recording.js';

type Row = Record<string, any>;

const fixtures = await fixtureRegistry();
const symbols = sessionSymbols(fixtures);

async function vendor(t: { teardown(fn: () => unknown): void }) {
  const v = await startDemoVendor();
  const pool = new PooledHttpClient();
  t.teardown(async () => {
    await pool.close();
    await v.close();
  });
  const reg = new Registry(fixtures.list().map((e) => ({ ...e, base_url: v.url })));
  return { v, reg, pool };
}

function run(text: string, reg: Registry, opts: ExecuteOptions, maxFanout?: number): Promise<RunResult> {
  const c = compileProgram(text, { registry: reg, symbols, ...(maxFanout ? { maxFanout } : {}) });
  if (c.kind !== 'plan') throw new Error(`${text}: ${JSON.stringify(c.diagnostics)}`);
  return executePlan(c.plan, reg, { requestTimeoutMs: 5000, ...opts });
}

const path = (r: HttpRequest) => new URL(r.url).pathname;
const shared = await vendor(t);
const db = (name: string) => shared.v.db()[name] as Row[];

t.test('each beer keeps its brewery and its reviews; one call per distinct brewery', async (t) => {
  const http = recording(shared.pool);
  const r = await run('e2(style="IPA")[id, breweryId, brewery[name, city], reviews[rating]]', shared.reg, { http });
  t.equal(r.status, 'succeeded', JSON.stringify(r.errors));
  const rows = r.returns[0]!.rows as Row[];
  const beers = db('beers').filter((b) => b.style === 'IPA');
  t.same(
    rows.map((x) => x.id),
    beers.map((b) => b.id),
    'the IPAs in vendor order',
  );
  for (const row of rows) {
    const brewery = db('breweries').find((b) => b.id === row.breweryId)!;
    t.same(row.brewery, { name: brewery.name, city: brewery.city }, `beer ${row.id}: its brewery`);
    const ratings = db('reviews')
      .filter((x) => x.beerId === row.id)
      .slice(0, 25)
      .map((x) => x.rating);
    t.same(
      (row.reviews as Row[]).map((x) => x.rating),
      ratings,
      `beer ${row.id}: its reviews`,
    );
    t.same(Object.keys(row), ['id', 'breweryId', 'brewery', 'reviews'], 'projection order, nests included');
  }
  const breweryCalls = http.sent.filter((s) => path(s).startsWith('/breweries/'));
  t.equal(breweryCalls.length, new Set(beers.map((b) => b.breweryId)).size, 'one getBrewery per distinct brewery');
  t.equal(
    http.sent.filter((s) => path(s) === '/reviews').length,
    beers.length,
    'one listReviews per beer (each beer id is distinct)',
  );
  t.equal(r.steps.n1!.calls, http.sent.length, 'the step counts every call, nests included');
});

t.test('a relation name without brackets nests every field; a dangling reference is null', async (t) => {
  const { v, reg } = await vendor(t);
  const res = await fetch(`${v.url}/beers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ breweryId: 'b-nowhere', name: 'Ghost Ale', style: 'Ghost', abv: 4, available: true }),
  });
  t.equal(res.status, 201);
  const r = await run('e2(style="Ghost")[name, brewery]', reg, {});
  t.equal(r.status, 'succeeded', JSON.stringify(r.errors));
  t.same(r.returns[0]!.rows, [{ name: 'Ghost Ale', brewery: null }]);
  const whole = await run('e2(7)[id, brewery]', reg, {});
  const beer = v.db().beers!.find((b: any) => b.id === 7) as Row;
  const brewery = v.db().breweries!.find((b: any) => b.id === beer.breweryId) as Row;
  t.same((whole.returns[0]!.rows[0] as Row).brewery, brewery, 'every declared field of the brewery');
});

t.test('two levels deep, and filters inside a nest', async (t) => {
  const r = await run('e1("b-3")[name, beers[id, reviews(rating=5)[author]]]', shared.reg, {});
  t.equal(r.status, 'succeeded', JSON.stringify(r.errors));
  const row = r.returns[0]!.rows[0] as Row;
  const beers = db('beers').filter((b) => b.breweryId === 'b-3');
  t.same(
    (row.beers as Row[]).map((b) => b.id),
    beers.map((b) => b.id),
  );
  for (const b of row.beers as Row[])
    t.same(
      b.reviews,
      db('reviews')
        .filter((x) => x.beerId === b.id && x.rating === 5)
        .map((x) => ({ author: x.author })),
      `beer ${b.id}: its 5-star reviews`,
    );
});

t.test('a page continuation attaches the nests to the next page', async (t) => {
  const http = recording(shared.pool);
  const r = await run('e2[id, breweryId, brewery[name]]', shared.reg, { http });
  const first = r.returns[0]!;
  t.ok(first.page, 'more pages');
  const next = await continuePage(first.page!, shared.reg, { http, requestTimeoutMs: 5000 });
  t.notOk(next.error);
  t.ok(next.rows.length > 0);
  for (const row of next.rows as Row[])
    t.equal(row.brewery?.name, db('breweries').find((b) => b.id === row.breweryId)!.name, `beer ${row.id}`);
  // Rows beyond a limit= are buffered: served first, with their nests too.
  const limited = await run('e2(limit=30)[id, breweryId, brewery[name]]', shared.reg, {});
  const rest = await continuePage(limited.returns[0]!.page!, shared.reg, { requestTimeoutMs: 5000 });
  t.notOk(rest.error);
  t.ok(rest.rows.length > 0, 'the buffered rows');
  t.ok(
    (rest.rows as Row[]).every((x) => typeof x.brewery?.name === 'string'),
    'buffered rows get their brewery',
  );
});

t.test('bounds: distinct calls past the nest max, and the run budget', async (t) => {
  const over = await run('e2[id, brewery[name]]', shared.reg, {}, 3);
  t.equal(over.status, 'failed');
  t.equal(over.errors[0]?.code, 'fanout_too_large');
  t.match(
    over.errors[0]?.message,
    /brewery\[\.\.\] would call getBrewery once for each of \d+ distinct rows; the limit is 3/,
  );
  const budget = await run('e2[id, brewery[name]]', shared.reg, { maxCalls: 4 });
  t.equal(budget.status, 'failed');
  t.equal(budget.errors[0]?.code, 'call_budget_exceeded', 'nest calls count in the budget');
});
