/** executePlan and continuePage against the real demo vendor (json-server 0.17 over fixtures/vendor/db.json). */
import t from 'tap';
import { readSourceDir, compileSource, Registry, type RegistryEntry } from '../../pack/index.js';
import { compileProgram } from '../../compiler/index.js';
import type { SymbolTable } from '../../compiler/symbols.js';
import {
  continuePage,
  executePlan,
  PooledHttpClient,
  type ExecuteOptions,
  type HttpClient,
  type HttpRequest,
  type PageState,
  type ProgressEvent,
  type RunResult,
} from '../../runtime/index.js';
import { startDemoVendor, type DemoVendor } from '../../cli/demo-vendor.js';
import { fixtureRegistry, sessionSymbols } from '../_helpers/registry.js';
import { join } from 'node:path';
import { recording } from '../_helpers/recording.js';

type Row = Record<string, unknown>;
type Tap = { teardown(fn: () => unknown): void };

const fixtures = await fixtureRegistry();
const symbols: SymbolTable = sessionSymbols(fixtures);

function against(v: DemoVendor, reg: Registry = fixtures): Registry {
  return new Registry(reg.list().map((e) => ({ ...e, base_url: v.url })));
}

async function vendor(t: Tap): Promise<{ v: DemoVendor; reg: Registry; http: HttpClient & { sent: HttpRequest[] } }> {
  const v = await startDemoVendor();
  const http = recording(new PooledHttpClient());
  t.teardown(async () => {
    await http.close();
    await v.close();
  });
  return { v, reg: against(v), http };
}

function plan(text: string, reg: Registry) {
  const c = compileProgram(text, { registry: reg, symbols });
  if (c.kind !== 'plan') throw new Error(`${text} does not compile: ${JSON.stringify(c)}`);
  return c.plan;
}

async function run(text: string, reg: Registry, opts: ExecuteOptions): Promise<RunResult> {
  return executePlan(plan(text, reg), reg, { requestTimeoutMs: 5000, ...opts });
}

const db = (v: DemoVendor, name: string) => v.db()[name] as Row[];
const ids = (rows: Row[]) => rows.map((r) => r.id);
const query = (req: HttpRequest) => new URL(req.url).searchParams;

// One shared vendor for the read-only tests; write tests start their own.
const shared = await vendor(t);
const { v, reg } = shared;

t.test('link pagination: first page, then continuePage walks the whole collection', async (t) => {
  const http = recording(shared.http);
  const r = await run('e1', reg, { http });
  t.equal(r.status, 'succeeded');
  const [ret] = r.returns;
  t.equal(ret?.entity, 'brewery:Brewery');
  t.equal(ret?.rows.length, 10, 'one page of 10');
  t.equal(ret?.total, 42);
  t.ok(ret?.page, 'a page state for the rest');
  t.equal(query(http.sent[0]!).get('_page'), '1');
  t.equal(query(http.sent[0]!).get('_limit'), '10');
  const seen = [...ids(ret!.rows)];
  let state: PageState | undefined = ret!.page;
  let continuations = 0;
  while (state) {
    const next = await continuePage(state, reg, { http, requestTimeoutMs: 5000 });
    t.notOk(next.error, `continuation ${continuations + 1} has no error`);
    t.ok(next.rows.length > 0, 'each continuation brings rows');
    t.equal(next.total, 42);
    seen.push(...ids(next.rows));
    state = next.page;
    if (++continuations > 10) {
      t.fail('continuePage does not end');
      break;
    }
  }
  t.equal(continuations, 4, 'pages 2 to 5');
  t.equal(seen.length, 42);
  t.equal(new Set(seen).size, 42, 'no duplicates');
  t.same([...seen].sort(), ids(db(v, 'breweries')).sort(), 'exactly the vendor collection');
  t.same(
    http.sent.map((s) => query(s).get('_page')),
    ['1', '2', '3', '4', '5'],
    'the Link rel="next" pages in order',
  );
});

t.test('page-counter pagination: reviews page by page', async (t) => {
  const http = recording(shared.http);
  const r = await run('e3', reg, { http });
  const [ret] = r.returns;
  t.equal(ret?.rows.length, 25);
  t.equal(ret?.total, 300);
  t.same(ret?.page?.cursor, { page: 2 });
  const all = [...ids(ret!.rows)];
  let state = ret!.page;
  let n = 0;
  while (state && n++ < 20) {
    const next = await continuePage(state, reg, { http, requestTimeoutMs: 5000 });
    t.notOk(next.error);
    all.push(...ids(next.rows));
    state = next.page;
  }
  t.equal(n, 11, '11 continuations after the first page');
  t.equal(all.length, 300);
  t.equal(new Set(all).size, 300, 'no duplicates');
  t.same(
    http.sent.map((s) => `${query(s).get('_page')}/${query(s).get('_limit')}`),
    Array.from({ length: 12 }, (_, i) => `${i + 1}/25`),
  );
});

t.test('offset pagination', async (t) => {
  t.test('limit=60 within the vendor maximum: one request of 60', async (t) => {
    const http = recording(shared.http);
    const r = await run('e2(style="IPA", limit=60)[name,abv]', reg, { http });
    t.equal(r.status, 'succeeded');
    const want = db(v, 'beers')
      .filter((b) => b.style === 'IPA')
      .slice(0, 60);
    t.same(
      r.returns[0]?.rows,
      want.map((b) => ({ name: b.name, abv: b.abv })),
    );
  });

  // A variant of the brewery catalog whose vendor maximum is 25 rows a page, so limit=60 needs 3 pages.
  const source = await readSourceDir(join(import.meta.dirname, '..', '..', 'fixtures', 'catalogs', 'brewery'));
  const small = source.map((s) =>
    s.file.endsWith('mappings.yaml')
      ? {
          ...s,
          text: s.text.replace(
            '{style: offset, offset_param: _start, size_param: _limit, page_size: 25}',
            '{style: offset, offset_param: _start, size_param: _limit, page_size: 25, max_page_size: 25}',
          ),
        }
      : s,
  );
  t.not(
    small.find((s) => s.file.endsWith('mappings.yaml'))?.text,
    source.find((s) => s.file.endsWith('mappings.yaml'))?.text,
    'the variant differs',
  );
  const c = compileSource(small);
  if (!c.cgs || !c.cgs_hash) throw new Error(JSON.stringify(c.diagnostics));
  const entry: RegistryEntry = {
    entry_id: 'brewery',
    label: c.cgs.label,
    tags: c.cgs.tags,
    version: 1,
    cgs: c.cgs,
    cgs_hash: c.cgs_hash,
    base_url: v.url,
    artifact: 'brewery-small.cgs.json',
  };
  const smallReg = new Registry([entry, ...reg.list().filter((e) => e.entry_id !== 'brewery')]);
  const beers = db(v, 'beers');

  t.test('limit=60 with pages of 25 follows 3 pages and returns exactly 60', async (t) => {
    const http = recording(shared.http);
    const r = await run('e2(limit=60)', smallReg, { http });
    t.equal(r.status, 'succeeded');
    t.equal(r.steps.n1?.pages, 3);
    t.same(
      http.sent.map((s) => `${query(s).get('_start')}+${query(s).get('_limit')}`),
      ['0+25', '25+25', '50+25'],
    );
    t.same(ids(r.returns[0]!.rows), ids(beers.slice(0, 60)), 'the first 60 rows in vendor order');
    t.equal(r.returns[0]?.total, 130);
  });

  t.test('continuing after limit=60 starts at row 61 (nothing skipped, nothing repeated)', async (t) => {
    const r = await run('e2(limit=60)', smallReg, { http: shared.http });
    const state = r.returns[0]?.page;
    t.ok(state, 'more rows remain');
    if (!state) return;
    const next = await continuePage(state, smallReg, { http: shared.http, requestTimeoutMs: 5000 });
    t.notOk(next.error);
    t.equal(next.rows[0]?.id, beers[60]?.id, 'the continuation starts right after the last returned row');
    const all = [...ids(r.returns[0]!.rows), ...ids(next.rows)];
    let more = next.page;
    for (let n = 0; more && n < 20; n++) {
      const p = await continuePage(more, smallReg, { http: shared.http, requestTimeoutMs: 5000 });
      t.notOk(p.error);
      all.push(...ids(p.rows));
      more = p.page;
    }
    t.same(all, ids(beers), 'walking on yields every beer once, in vendor order');
  });
});

t.test('filters: only given parameters reach the query', async (t) => {
  const http = recording(shared.http);
  const r = await run('e1(city="Berlin")', reg, { http });
  const rows = r.returns[0]!.rows;
  const berlin = db(v, 'breweries').filter((b) => b.city === 'Berlin');
  t.ok(berlin.length > 0);
  t.same(ids(rows), ids(berlin));
  t.ok(rows.every((b) => b.city === 'Berlin'));
  const q = query(http.sent[0]!);
  t.equal(q.get('city'), 'Berlin');
  t.notOk(q.has('country'), 'absent optional parameter not sent');
  t.notOk(q.has('kind'), 'absent optional parameter not sent');

  const http2 = recording(shared.http);
  const beers = await run('e2(style="IPA", available=true)[name,style,available]', reg, { http: http2 });
  const q2 = query(http2.sent[0]!);
  t.same([...q2.keys()].sort(), ['_limit', '_start', 'available', 'style']);
  t.equal(q2.get('available'), 'true');
  const got = beers.returns[0]!.rows;
  t.ok(got.length > 0 && got.every((b) => b.style === 'IPA' && b.available === true));
});

t.test('get by id', async (t) => {
  const r = await run('e1("b-17")', reg, { http: shared.http });
  t.equal(r.status, 'succeeded');
  t.same(r.returns[0]?.rows, [db(v, 'breweries').find((b) => b.id === 'b-17')]);
  t.equal(r.returns[0]?.page, undefined);
});

t.test('404 is a vendor_error with a hint', async (t) => {
  const r = await run('e1("b-999")', reg, { http: shared.http });
  t.equal(r.status, 'failed');
  t.equal(r.errors.length, 1);
  const e = r.errors[0]!;
  t.equal(e.code, 'vendor_error');
  t.equal(e.path, '/steps/n1');
  t.equal(e.cause, '404');
  t.match(e.message, /404/);
  t.match(e.message, /getBrewery/);
  t.match(e.hint ?? '', /`id`/, 'the hint names the id parameter');
  t.equal(r.steps.n1?.status, 'failed');
  t.same(r.returns[0]?.rows, []);
});

t.test('relation over a nested route: e1("b-1").r1', async (t) => {
  const http = recording(shared.http);
  const r = await run('e1("b-1").r1[id,breweryId,name]', reg, { http });
  t.equal(r.status, 'succeeded');
  const want = db(v, 'beers').filter((b) => b.breweryId === 'b-1');
  t.ok(want.length > 0);
  t.same(ids(r.returns[0]!.rows).sort(), ids(want).sort());
  t.ok(
    http.sent.some((s) => new URL(s.url).pathname === '/breweries/b-1/beers'),
    'the nested route was called',
  );
});

t.test('relation from a parent field: e2(7).r2', async (t) => {
  const http = recording(shared.http);
  const r = await run('e2(7).r2', reg, { http });
  t.equal(r.status, 'succeeded');
  const beer = db(v, 'beers').find((b) => b.id === 7)!;
  t.same(r.returns[0]?.rows, [db(v, 'breweries').find((b) => b.id === beer.breweryId)]);
  t.same(
    http.sent.map((s) => new URL(s.url).pathname),
    ['/beers/7', `/breweries/${String(beer.breweryId)}`],
    'the parent first, then its brewery',
  );
});

t.test('fan-out over a binding equals the union of the per-brewery lists', async (t) => {
  const http = recording(shared.http);
  const r = await run('b = e1(city="Berlin")\ne2(breweryId=b.id)', reg, { http });
  t.equal(r.status, 'succeeded');
  const berlin = db(v, 'breweries')
    .filter((b) => b.city === 'Berlin')
    .map((b) => b.id);
  t.ok(berlin.length >= 2, 'several Berlin breweries');
  const want = db(v, 'beers').filter((b) => berlin.includes(b.breweryId));
  t.same(ids(r.returns[0]!.rows).sort(), ids(want).sort());
  const perBrewery = http.sent
    .filter((s) => new URL(s.url).pathname === '/beers')
    .map((s) => query(s).get('breweryId'))
    .sort();
  t.same(perBrewery, [...berlin].sort(), 'one call per bound row');
  t.equal(r.steps.n2?.calls, berlin.length);
});

t.test('a fan-out over more rows than its plan allows: fanout_too_large, no call made', async (t) => {
  const http = recording(shared.http);
  const c = compileProgram('b = e1\ne2(breweryId=b.id)', { registry: reg, symbols, maxFanout: 5 });
  if (c.kind !== 'plan') throw new Error(JSON.stringify(c));
  const r = await executePlan(c.plan, reg, { http, requestTimeoutMs: 5000 });
  t.equal(r.status, 'failed');
  t.equal(r.steps.n1?.rows.length, 10);
  t.equal(r.errors[0]?.code, 'fanout_too_large');
  t.equal(r.errors[0]?.path, '/steps/n2');
  t.match(r.errors[0]?.message, /10 rows/);
  t.equal(http.sent.filter((s) => new URL(s.url).pathname === '/beers').length, 0, 'no beers call');
});

t.test('a plan compiled against other catalog content: catalog_mismatch, nothing sent', async (t) => {
  const http = recording(shared.http);
  const other = new Registry(
    reg.list().map((e) => (e.entry_id === 'brewery' ? { ...e, cgs_hash: 'f'.repeat(64) } : e)),
  );
  const r = await executePlan(plan('e1', reg), other, { http });
  t.equal(r.errors[0]?.code, 'catalog_mismatch');
  t.equal(http.sent.length, 0);
  const first = await run('e1', reg, { http });
  const next = await continuePage(first.returns[0]!.page!, other, { http });
  t.equal(next.error?.code, 'catalog_mismatch');
  t.equal(http.sent.length, 1, 'only the first run reached the vendor');
});

t.test('projection keeps only projected fields; unknown vendor fields are dropped', async (t) => {
  const { v, reg, http } = await vendor(t);
  const res = await fetch(`${v.url}/breweries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id: 'b-x',
      name: 'Extra',
      city: 'Gent',
      country: 'BE',
      kind: 'micro',
      internalNote: 'do not leak',
      rating: 5,
    }),
  });
  t.equal(res.status, 201);
  const full = await run('e1("b-x")', reg, { http });
  t.same(
    full.returns[0]?.rows,
    [{ id: 'b-x', name: 'Extra', city: 'Gent', country: 'BE', kind: 'micro' }],
    'declared fields only',
  );
  const projected = await run('e1("b-x")[name,city]', reg, { http });
  t.strictSame(projected.returns[0]?.rows, [{ name: 'Extra', city: 'Gent' }]);
  const list = await run('e1(country="BE", limit=100)[id,name]', reg, { http });
  t.ok(list.returns[0]!.rows.every((r) => Object.keys(r).every((k) => k === 'id' || k === 'name')));
  t.ok(list.returns[0]!.rows.some((r) => r.id === 'b-x'));
});

t.test('independent steps run concurrently', async (t) => {
  const events: ProgressEvent[] = [];
  const r = await run('a = e1(city="Berlin")\ne3(rating=5)\ne2(style="IPA")', reg, {
    http: shared.http,
    onProgress: (e) => events.push(e),
  });
  t.equal(r.status, 'succeeded');
  for (const id of ['n1', 'n2', 'n3']) t.equal(r.steps[id]?.status, 'done', `${id} done`);
  t.ok(
    r.steps.n1!.rows.length > 0 && r.steps.n2!.rows.length > 0 && r.steps.n3!.rows.length > 0,
    'every step has rows',
  );
  t.equal(r.returns.length, 2, 'the two unbound expressions are returned');
  const firstDone = events.findIndex((e) => e.kind === 'step' && e.phase === 'done');
  const startedBefore = new Set(
    events
      .slice(0, firstDone)
      .filter((e) => e.kind === 'step' && e.phase === 'running')
      .map((e) => e.step),
  );
  t.same([...startedBefore].sort(), ['n1', 'n2', 'n3'], 'all three were running before any finished');
  t.equal(events[0]?.kind, 'start');
  t.equal(events.at(-1)?.kind, 'end');
  t.equal(events.at(-1)?.phase, 'succeeded');
  t.equal(
    events.at(-1)?.rows,
    r.returns.reduce((n, x) => n + x.rows.length, 0),
  );
  for (const e of events)
    t.same(
      Object.keys(e).filter((k) => !['kind', 'step', 'phase', 'pages', 'rows', 'calls', 'elapsed_ms'].includes(k)),
      [],
      'progress events carry counts, never row data',
    );
});

t.test('writes', async (t) => {
  t.test('a write without accepted is refused and sends nothing', async (t) => {
    const { v, reg, http } = await vendor(t);
    const before = JSON.stringify(v.db());
    for (const p of [
      'm1(name="Pen & Quill Brewing", city="Berlin", country="DE")',
      'e1("b-17").m2(city="Bamberg")',
      'e2(7).m4',
      'e2(7).m5()',
    ]) {
      const r = await run(p, reg, { http });
      t.equal(r.status, 'failed', p);
      t.equal(r.errors[0]?.code, 'write_not_accepted', p);
      t.match(r.errors[0]?.hint ?? '', /pc|force/);
      const again = await run(p, reg, { http, accepted: false });
      t.equal(again.errors[0]?.code, 'write_not_accepted');
    }
    t.equal(http.sent.length, 0, 'no request reached the vendor');
    t.equal(JSON.stringify(v.db()), before, 'vendor data unchanged');
  });

  t.test('create', async (t) => {
    const { v, reg, http } = await vendor(t);
    const r = await run('m1(name="Pen & Quill Brewing", city="Berlin", country="DE", founded=2020)', reg, {
      http,
      accepted: true,
    });
    t.equal(r.status, 'succeeded');
    const rows = db(v, 'breweries');
    t.equal(rows.length, 43);
    const made = rows.find((b) => b.name === 'Pen & Quill Brewing');
    t.match(made, { city: 'Berlin', country: 'DE', founded: 2020 });
    t.equal(http.sent[0]?.method, 'POST');
    t.match(
      JSON.parse(http.sent[0]!.body as string),
      { name: 'Pen & Quill Brewing', city: 'Berlin', country: 'DE', founded: 2020 },
      'the given arguments are in the body',
    );
    t.notOk(
      'website' in JSON.parse(http.sent[0]!.body as string),
      'an absent optional parameter without a default is not sent',
    );
    t.equal(r.returns[0]?.rows[0]?.id, made?.id, 'the created row comes back with its vendor id');
  });

  t.test('create without an optional parameter sends its catalog default', async (t) => {
    // createBrewery declares `kind: {default: micro}`; the teaching table shows "(default \"micro\")".
    const { v, reg, http } = await vendor(t);
    const r = await run('m1(name="Default Kind", city="Gent", country="BE")', reg, { http, accepted: true });
    t.equal(r.status, 'succeeded');
    t.equal(db(v, 'breweries').find((b) => b.name === 'Default Kind')?.kind, 'micro');
  });

  t.test('update, action and delete', async (t) => {
    const { v, reg, http } = await vendor(t);
    const before = db(v, 'breweries').find((b) => b.id === 'b-17')!;
    const u = await run('e1("b-17").m2(city="Bamberg", kind="brewpub")', reg, { http, accepted: true });
    t.equal(u.status, 'succeeded');
    t.same(
      db(v, 'breweries').find((b) => b.id === 'b-17'),
      { ...before, city: 'Bamberg', kind: 'brewpub' },
      'only the given fields changed',
    );
    t.equal(http.sent.at(-1)?.method, 'PATCH');
    t.equal(new URL(http.sent.at(-1)!.url).pathname, '/breweries/b-17');

    t.equal(db(v, 'beers').find((b) => b.id === 7)?.available, true);
    const a = await run('e2(7).m4', reg, { http, accepted: true });
    t.equal(a.status, 'succeeded');
    t.equal(db(v, 'beers').find((b) => b.id === 7)?.available, false, 'retireBeer set available=false');
    t.same(JSON.parse(http.sent.at(-1)!.body as string), { available: false });

    const d = await run('e2(7).m5()', reg, { http, accepted: true });
    t.equal(d.status, 'succeeded');
    t.equal(
      db(v, 'beers').find((b) => b.id === 7),
      undefined,
      'beer 7 is gone',
    );
    t.equal(db(v, 'beers').length, 129);
    t.equal(http.sent.at(-1)?.method, 'DELETE');
    const gone = await run('e2(7)', reg, { http });
    t.equal(gone.errors[0]?.code, 'vendor_error');
  });
});
