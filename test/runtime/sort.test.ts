/**
 * Sorting against the real demo vendor (json-server 0.17 over fixtures/vendor/db.json): the order a
 * program asks for reaches the vendor on every page (page counter, Link header, offset), page
 * continuations keep it, and a mapping's default order gives way to the program's.
 */
import t from 'tap';
import { compileProgram } from '../../compiler/index.js';
import {
  continuePage,
  executePlan,
  PooledHttpClient,
  type HttpRequest,
  type PageState,
  type RunResult,
} from '../../runtime/index.js';
import { startDemoVendor, type DemoVendor } from '../../cli/demo-vendor.js';
import { Registry } from '../../pack/index.js';
import { fixtureRegistry, sessionSymbols } from '../_helpers/registry.js';
import { recording } from '../_helpers/recording.js';

type Row = Record<string, unknown>;

const fixtures = await fixtureRegistry();
const symbols = sessionSymbols(fixtures); // e1 Brewery, e2 Beer, e3 Review, e4 helpdesk:Ticket
const v: DemoVendor = await startDemoVendor();
const http = recording(new PooledHttpClient());
t.teardown(async () => {
  await http.close();
  await v.close();
});
const reg = new Registry(fixtures.list().map((e) => ({ ...e, base_url: v.url })));

async function run(text: string): Promise<RunResult> {
  const c = compileProgram(text, { registry: reg, symbols });
  if (c.kind !== 'plan') throw new Error(`${text} does not compile: ${JSON.stringify(c.diagnostics)}`);
  return executePlan(c.plan, reg, { http, requestTimeoutMs: 5000 });
}

/** The vendor's rows sorted as json-server sorts them (a stable sort: ties keep db order). */
function sorted(name: string, field: string, order: 'asc' | 'desc'): Row[] {
  const rows = [...(v.db()[name] as Row[])];
  const dir = order === 'desc' ? -1 : 1;
  return rows.sort((a, b) => {
    const x = a[field] as string | number;
    const y = b[field] as string | number;
    return x < y ? -dir : x > y ? dir : 0;
  });
}

const ids = (rows: Row[]) => rows.map((r) => r.id);
const queryOf = (req: HttpRequest) => new URL(req.url).searchParams;

/** Walk every page after the first; returns all rows and the requests sent for them. */
async function walk(first: RunResult): Promise<{ rows: Row[]; sent: HttpRequest[] }> {
  const ret = first.returns[0]!;
  const rows = [...ret.rows];
  const from = http.sent.length;
  let page: PageState | undefined = ret.page;
  while (page) {
    const r = await continuePage(page, reg, { http, requestTimeoutMs: 5000 });
    if (r.error) throw new Error(r.error.message);
    rows.push(...r.rows);
    page = r.page;
  }
  return { rows, sent: http.sent.slice(from) };
}

t.test('e4(sort="createdAt", order="desc", limit=10): the 10 newest tickets, page 2 continues the order', async (t) => {
  const from = http.sent.length;
  const r = await run('e4(sort="createdAt", order="desc", limit=10)');
  t.equal(r.status, 'succeeded');
  const newest = sorted('tickets', 'createdAt', 'desc');
  const ret = r.returns[0]!;
  t.same(ids(ret.rows), ids(newest.slice(0, 10)), 'the 10 newest tickets, newest first');
  const q = queryOf(http.sent[from]!);
  t.equal(q.get('_sort'), 'createdAt');
  t.equal(q.get('_order'), 'desc');
  t.equal(q.get('_limit'), '10', 'one request of 10 rows');
  t.ok(ret.page, 'a page state for the rest');
  t.same(ret.page!.sort, { field: 'createdAt', order: 'desc' }, 'the page state keeps the order');

  const p2 = await continuePage(ret.page!, reg, { http, requestTimeoutMs: 5000 });
  t.same(ids(p2.rows), ids(newest.slice(10, 20)), 'page 2: the next 10 newest');
  const q2 = queryOf(http.sent[http.sent.length - 1]!);
  t.same([q2.get('_sort'), q2.get('_order'), q2.get('_page')], ['createdAt', 'desc', '2']);

  const { rows } = await walk({ ...r, returns: [{ ...ret, page: p2.page! }] });
  t.same(ids([...ret.rows, ...p2.rows, ...rows.slice(10)]), ids(newest), 'every page in order, every ticket once');
});

t.test('a handle stored without a sort (an older handle) continues unsorted', async (t) => {
  const r = await run('e4(limit=10)');
  const { sort: _none, ...old } = r.returns[0]!.page!;
  const p2 = await continuePage(old, reg, { http, requestTimeoutMs: 5000 });
  t.same(ids(p2.rows), ids((v.db().tickets as Row[]).slice(10, 20)), 'the vendor order');
  t.notOk(queryOf(http.sent[http.sent.length - 1]!).has('_sort'), 'no sort key sent');
});

t.test('Link pagination: the next links keep the order (breweries by name, descending)', async (t) => {
  const r = await run('e1(sort="name", order="desc")');
  const { rows, sent } = await walk(r);
  t.same(ids(rows), ids(sorted('breweries', 'name', 'desc')), 'all breweries by name, descending');
  t.ok(sent.length >= 4, `${sent.length} continued pages`);
  for (const req of sent) t.equal(queryOf(req).get('_sort'), 'name', `${req.url} keeps _sort`);
});

t.test('offset pagination and a relation: beers of a brewery by abv', async (t) => {
  const r = await run('e2(sort="abv", order="desc", limit=30)[id,abv]');
  t.same(
    r.returns[0]!.rows.map((x) => x.abv),
    sorted('beers', 'abv', 'desc')
      .slice(0, 30)
      .map((x) => x.abv),
    'the 30 strongest beers',
  );
  const brewery = (v.db().beers as Row[])[0]!.breweryId as string;
  const rel = await run(`e1("${brewery}").beers(sort="abv")[id,abv]`);
  const own = sorted('beers', 'abv', 'asc').filter((x) => x.breweryId === brewery);
  t.same(ids(rel.returns[0]!.rows), ids(own), 'the nested route sorts too');
});

t.test("the mapping's default order (comments oldest first) gives way to the program's", async (t) => {
  const from = http.sent.length;
  const byDefault = await run('helpdesk:Comment(limit=200)');
  t.same(ids(byDefault.returns[0]!.rows), ids(sorted('comments', 'createdAt', 'asc')), 'oldest first by default');
  const q = queryOf(http.sent[from]!);
  t.same([q.getAll('_sort'), q.getAll('_order')], [['createdAt'], ['asc']]);

  const at = http.sent.length;
  const newest = await run('helpdesk:Comment(sort="createdAt", order="desc", limit=5)');
  t.same(ids(newest.returns[0]!.rows), ids(sorted('comments', 'createdAt', 'desc').slice(0, 5)), 'newest first');
  const q2 = queryOf(http.sent[at]!);
  t.same([q2.getAll('_sort'), q2.getAll('_order')], [['createdAt'], ['desc']], 'one order, the program’s');
});

t.test('a nested list sorts too: each ticket with its comments newest first', async (t) => {
  const r = await run('e4(sort="createdAt", order="desc", limit=3)[id, comments(sort="createdAt", order="desc")[id]]');
  t.equal(r.status, 'succeeded');
  const rows = r.returns[0]!.rows;
  t.same(ids(rows), ids(sorted('tickets', 'createdAt', 'desc').slice(0, 3)));
  for (const row of rows) {
    const own = sorted('comments', 'createdAt', 'desc').filter((c) => c.ticketId === row.id);
    t.same(
      row.comments,
      own.map((c) => ({ id: c.id })),
      `${String(row.id)}: its comments, newest first`,
    );
  }
});
