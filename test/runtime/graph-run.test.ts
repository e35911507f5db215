/**
 * The session graph in a run (runtime/graph-fetch.ts through executePlan) against a real local
 * vendor whose items name their parents by id: a fan-out naming few distinct rows sends one get
 * per row; a get of a row a list of the same program fetched is answered from the list's row when
 * it holds every field the program needs; a scoped get is always sent; a write sends the next get;
 * `graph: false` sends every get; nests never reach the graph; a shared view spans runs.
 */
import t from 'tap';
import { compileProgram } from '../../compiler/index.js';
import { executePlan, PooledHttpClient, type ExecuteOptions, type RunResult } from '../../runtime/index.js';
import { RowGraph, type GraphView } from '../../runtime/graph.js';
import { startGraphVendor } from '../_helpers/graph-vendor.js';

const g = await startGraphVendor();
const http = new PooledHttpClient();
t.teardown(async () => {
  await http.close();
  await g.close();
});

/** Runs `text`; `sent` is every vendor request of the run (`METHOD /path?query`). */
async function run(text: string, opts: ExecuteOptions = {}): Promise<RunResult & { sent: string[] }> {
  const c = compileProgram(text, { registry: g.reg });
  if (c.kind !== 'plan') throw new Error(`${text}: ${JSON.stringify(c.diagnostics)}`);
  const before = g.v.requests.length;
  const r = await executePlan(c.plan, g.reg, { http, requestTimeoutMs: 5000, accepted: true, ...opts });
  return { ...r, sent: g.v.requests.slice(before).map((q) => `${q.method} ${q.url}`) };
}

const parentGets = (sent: string[]) => sent.filter((s) => /^GET \/parents\/\d+$/.test(s));
const FANOUT = 'x = fault:Item()\nfault:Parent(x.parentId)';

t.test('a fan-out of 10 items naming 3 parents: 3 gets, 7 rows from the graph, the same rows', async (t) => {
  const on = await run(FANOUT);
  t.equal(on.status, 'succeeded', JSON.stringify(on.errors));
  t.same(parentGets(on.sent).sort(), ['GET /parents/1', 'GET /parents/2', 'GET /parents/3'], 'one get per parent');
  t.equal(on.steps.n2!.calls, 3, 'the step counts 3 calls');
  t.equal(on.steps.n2!.graph, 7, 'and 7 rows answered without one');
  const off = await run(FANOUT, { graph: false });
  t.equal(off.status, 'succeeded');
  t.equal(parentGets(off.sent).length, 10, 'graph: false sends every get');
  t.equal(off.steps.n2!.calls, 10);
  t.equal(off.steps.n2!.graph, undefined, 'and answers none from the graph');
  t.same(on.returns, off.returns, 'the rows are those of graph: false');
  t.same(
    on.returns[0]!.rows.map((r) => r.id),
    g.data.items.map((i) => i.parentId),
    'one parent per item, in item order',
  );
  const rows = on.returns[0]!.rows;
  rows[0]!.name = 'changed';
  t.not(rows[3]!.name, 'changed', 'rows of one parent are copies, not one shared object');
});

t.test('a get of a row a list of the same program fetched', async (t) => {
  const listed = await run('ps = fault:Parent(name="parent 2")\nfault:Parent(ps.id)[name]');
  t.equal(listed.status, 'succeeded', JSON.stringify(listed.errors));
  t.same(listed.sent, ['GET /parents?name=parent+2'], 'the projection is in the list row: no get sent');
  t.equal(listed.steps.n2!.graph, 1);
  t.same(listed.returns[0]!.rows, [{ name: 'parent 2' }]);

  const code = await run('ps = fault:Parent(name="parent 2")\nfault:Parent(ps.id)[name, code]');
  t.same(code.sent, ['GET /parents?name=parent+2', 'GET /parents/2'], 'code is not in list rows: the get is sent');
  t.same(code.returns[0]!.rows, [{ name: 'parent 2', code: 'P-2' }]);
  t.equal(code.steps.n2!.graph, undefined);

  const bare = await run('ps = fault:Parent(name="parent 2")\nfault:Parent(ps.id)');
  t.same(bare.sent, ['GET /parents?name=parent+2', 'GET /parents/2'], 'no projection needs the whole row: sent');
  t.same(bare.returns[0]!.rows, [{ id: 2, name: 'parent 2', code: 'P-2' }]);

  const later = await run('ps = fault:Parent(name="parent 2")\np = fault:Parent(ps.id)[name]\nfault:Item(name=p.code)');
  t.equal(later.status, 'succeeded', JSON.stringify(later.errors));
  t.same(
    later.sent,
    ['GET /parents?name=parent+2', 'GET /parents/2', 'GET /items?name=P-2'],
    'a later line reads p.code: the get is sent, and the filter holds its value',
  );
  t.same(later.returns[0]!.rows, [], 'no item is named P-2');

  const again = await run('ps = fault:Parent(name="parent 2")\np = fault:Parent(ps.id)[name]\nfault:Parent(p.id)');
  t.same(
    again.sent,
    ['GET /parents?name=parent+2', 'GET /parents/2'],
    'a row answered from a list row is not taken for a whole row afterwards',
  );
  t.same(again.returns[0]!.rows, [{ id: 2, name: 'parent 2', code: 'P-2' }]);
  t.equal(again.steps.n2!.graph, 1);
});

t.test('a get scoped by more than the id is never answered from the graph', async (t) => {
  const r = await run('cs = fault:Child()\nfault:Child(cs.id, parentId=1)\nfault:Child(cs.id, parentId=1)[name]');
  t.equal(r.status, 'succeeded', JSON.stringify(r.errors));
  t.equal(r.sent.filter((s) => s.startsWith('GET /parents/1/children/')).length, 4, 'both gets of both children sent');
  t.equal(r.steps.n2!.graph, undefined);
  t.equal(r.steps.n3!.graph, undefined);
  t.same(r.returns[1]!.rows, [{ name: 'child 1' }, { name: 'child 2' }]);
  const view: GraphView = { graph: new RowGraph(), scope: 's', since: 0 };
  await run('cs = fault:Child()\nfault:Child(cs.id, parentId=1)', { graph: view });
  t.equal(view.graph.size, 0, 'rows of an entity without a get by id alone are not kept');
});

t.test('a write of the entity in the same program sends the next get', async (t) => {
  const upd = await run('p = fault:Parent(1)\nw = fault:updateParent(id=p.id, name="renamed")\nfault:Parent(w.id)');
  t.equal(upd.status, 'succeeded', JSON.stringify(upd.errors));
  t.same(upd.sent, ['GET /parents/1', 'PATCH /parents/1', 'GET /parents/1'], 'the get after the update is sent');
  t.same(upd.returns[0]!.rows, [{ id: 1, name: 'renamed', code: 'P-1' }], 'and answers the new name');
  t.equal(upd.steps.n3!.graph, undefined);

  const view: GraphView = { graph: new RowGraph(), scope: 's', since: 0 };
  const listed = await run('fault:Parent()', { graph: view });
  t.equal(listed.status, 'succeeded');
  t.ok(view.graph.find('s', 'fault', 'Parent', 3, 0, ['name']), 'the list rows are kept');
  const del = await run('p = fault:Parent(3)[name]\nd = fault:deleteParent(id=3)\nfault:Parent(3)[name]', {
    graph: view,
  });
  t.equal(del.steps.n2!.status, 'done', JSON.stringify(del.errors));
  t.equal(view.graph.find('s', 'fault', 'Parent', 3, 0, ['name']), undefined, 'the delete forgot the parents');
  t.equal(view.graph.find('s', 'fault', 'Parent', 1, 0, ['name']), undefined, 'all of them');
  const after = await run('fault:Parent(3)[name]', { graph: view });
  t.same(after.sent, ['GET /parents/3'], 'a get after the delete goes to the vendor');
  t.equal(after.status, 'failed', 'and learns the row is gone');
});

t.test('a shared view spans runs; nests attached to a graph row never reach the graph', async (t) => {
  const view: GraphView = { graph: new RowGraph(), scope: 's', since: 0 };
  const text = 'ps = fault:Parent(name="parent 2")\nfault:Parent(ps.id)[name, items[name]]';
  const first = await run(text, { graph: view });
  t.equal(first.status, 'succeeded', JSON.stringify(first.errors));
  t.same(
    first.sent,
    ['GET /parents?name=parent+2', 'GET /items?parentId=2'],
    'the get from the list row; the nest sent',
  );
  const want = g.data.items.filter((i) => i.parentId === 2).map((i) => ({ name: i.name }));
  t.same(first.returns[0]!.rows, [{ name: 'parent 2', items: want }]);
  for (const [, row] of view.graph.items('s')) t.notOk('items' in row, `no nest in the graph row ${String(row.id)}`);
  const second = await run(text, { graph: view });
  t.same(second.returns, first.returns, 'the second answer equals the first');
  t.equal(second.steps.n2!.graph, 1);
  for (const [, row] of view.graph.items('s')) t.notOk('items' in row, `still no nest in row ${String(row.id)}`);

  const get = await run('fault:Parent(2)[name, code]', { graph: view });
  t.same(get.sent, ['GET /parents/2'], 'code is in no list row: sent');
  const cached = await run('fault:Parent(2)', { graph: view });
  t.same(cached.sent, [], "an earlier run's get answers a get with no projection");
  t.same(cached.returns[0]!.rows, [{ id: 2, name: 'parent 2', code: 'P-2' }]);
  const later = await run('fault:Parent(2)', { graph: { ...view, since: Date.now() + 1 } });
  t.same(later.sent, ['GET /parents/2'], 'rows older than since are not used');
});

t.test("a view that admits no earlier row (max age 0): the run's own rows still answer", async (t) => {
  const view: GraphView = { graph: new RowGraph(), scope: 'zero', since: Infinity };
  const now = () => 7_000; // every row of every run seen in the same millisecond
  const first = await run('ps = fault:Parent(name="parent 2")\nfault:Parent(ps.id)[name]', { graph: view, now });
  t.same(first.sent, ['GET /parents?name=parent+2'], 'the list row of this run answers its get');
  t.equal(first.steps.n2!.graph, 1);
  t.ok(view.graph.find('zero', 'fault', 'Parent', 2, 0, ['name']), "the session's graph is fed all the same");
  const second = await run('fault:Parent(2)[name]', { graph: view, now });
  t.same(second.sent, ['GET /parents/2'], "an earlier run's row of the same millisecond is not used");
});

t.test('a row answered from the graph does not get younger', async (t) => {
  const view: GraphView = { graph: new RowGraph(), scope: 'age', since: 0 };
  let clock = 1_000;
  const now = () => clock;
  await run('fault:Parent(1)', { graph: view, now });
  t.equal(view.graph.items('age')[0]![2], 1_000, 'seen at 1000');
  clock = 5_000;
  const again = await run('fault:Parent(1)', { graph: view, now });
  t.same(again.sent, [], 'answered from the graph');
  t.equal(view.graph.items('age')[0]![2], 1_000, 'still seen at 1000: its age counts from the vendor call');
  const stale = await run('fault:Parent(1)', { graph: { ...view, since: 2_000 }, now });
  t.same(stale.sent, ['GET /parents/1'], 'so a max age past it sends the get');
});

t.test('a get that fails, shared by several rows of a fan-out, counts its calls once', async (t) => {
  // Parent 3 was deleted above: the items naming it share one failing get.
  const naming3 = g.data.items.filter((i) => i.parentId === 3).length;
  t.ok(naming3 > 1, `${naming3} items name parent 3`);
  const r = await run(FANOUT);
  const sent = parentGets(r.sent);
  t.equal(sent.filter((s) => s === 'GET /parents/3').length, 1, 'one get of parent 3, failing');
  t.equal(r.status, 'failed', 'the missing parent fails the run');
  t.equal(r.steps.n2!.calls, sent.length, `the step counts the ${sent.length} gets it sent, not one per waiter`);
});
