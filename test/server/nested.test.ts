/**
 * Nested projections over real sockets: the same run rendered as JSON (objects), TOON (the same
 * object, decoded back), plain text (dotted columns, lists as cells) and through a page handle;
 * the dry-run review accounts for the nests; a client plan whose nest was tampered with is refused
 * before any vendor call.
 */
import t from 'tap';
import { decode } from '@toon-format/toon';
import { compileProgram, SymbolTable, type Plan, type SymbolTableJson } from '../../compiler/index.js';
import { RESOLVED_PLAN_TYPE } from '../../server/execute/resolved-plan.js';
import { call, codeOf, openSession, runProgram, startStack } from '../_helpers/server.js';

const stack = await startStack(t);
const BASE = stack.url;
const { path } = await openSession(BASE, { entry_id: 'brewery' });
const vendor = async (p: string) => (await (await fetch(stack.vendorUrl + p)).json()) as Array<Record<string, any>>;
const PROGRAM = 'e2(style="IPA")[id, breweryId, brewery[name], reviews[rating]]';

t.test('JSON, TOON and plain render the same nested rows', async (t) => {
  const json = await runProgram(BASE, path, PROGRAM);
  t.equal(json.status, 200, json.text);
  const rows = json.body.rows as Array<Record<string, any>>;
  const breweries = await vendor('/breweries?_limit=100');
  const reviews = await vendor('/reviews?_limit=1000');
  t.ok(rows.length > 0);
  for (const r of rows) {
    t.same(r.brewery, { name: breweries.find((b) => b.id === r.breweryId)!.name }, `beer ${r.id}: brewery object`);
    t.same(
      r.reviews,
      reviews.filter((x) => x.beerId === r.id).map((x) => ({ rating: x.rating })),
      `beer ${r.id}: reviews array`,
    );
  }
  const toon = await runProgram(BASE, path, PROGRAM, '', { accept: 'text/toon' });
  t.equal(toon.status, 200);
  t.same((decode(toon.text) as Record<string, any>).rows, rows, 'TOON decodes to the JSON rows');
  const plain = await runProgram(BASE, path, PROGRAM, '', { accept: 'text/plain' });
  const lines = plain.text.split('\n');
  t.match(lines[1], /^id\s+breweryId\s+brewery\.name\s+reviews\.rating$/, 'dotted columns');
  const first = rows.find((r) => (r.reviews as unknown[]).length > 1)!;
  const line = lines.find((l) => l.startsWith(`${first.id} `))!;
  t.ok(line.includes(first.brewery.name), 'the brewery name in its row');
  t.ok(
    line.includes(JSON.stringify((first.reviews as Array<{ rating: number }>).map((x) => x.rating))),
    'the ratings as a list cell',
  );
  const empty = rows.find((r) => (r.reviews as unknown[]).length === 0);
  if (empty)
    t.match(
      lines.find((l) => l.startsWith(`${empty.id} `)),
      /\[\]$/,
      'a beer without reviews shows an empty list',
    );
});

t.test('a page handle keeps the nests', async (t) => {
  const first = await runProgram(BASE, path, 'e2[id, breweryId, brewery[name]]');
  t.equal(first.status, 200);
  const more = String(first.body.more);
  t.match(more, /^page\(pg\d+\)/);
  const next = await runProgram(BASE, path, more.replace('[..]', ''));
  t.equal(next.status, 200, next.text);
  const breweries = await vendor('/breweries?_limit=100');
  for (const r of next.body.rows as Array<Record<string, any>>)
    t.equal(r.brewery?.name, breweries.find((b) => b.id === r.breweryId)!.name, `beer ${r.id}`);
});

t.test('the dry-run review counts the nest calls', async (t) => {
  const a = await runProgram(BASE, path, 'e2(limit=100)[id, brewery[name]]', 'mode=plan', { accept: 'text/plain' });
  t.equal(a.status, 200, a.text);
  t.match(a.text, /\+ brewery: getBrewery\(id=\.breweryId\) \[name\] once per distinct row \(at most 50\)/);
  t.match(a.text, /flow=large_fanout/);
  t.match(a.text, /max_calls=51/, '1 list call + at most 50 distinct breweries');
});

t.test('a tampered nest in a client plan is refused before any vendor call', async (t) => {
  const sym = await call(BASE, `${path}/symbols`);
  const symbols = SymbolTable.fromJSON(sym.body as unknown as SymbolTableJson);
  const c = compileProgram('e2(style="IPA")[id, brewery[name]]', { registry: stack.app.registry, symbols });
  if (c.kind !== 'plan') throw new Error('does not compile');
  const send = (plan: Plan) =>
    call(BASE, `${path}/plan`, { method: 'POST', body: JSON.stringify({ plan }), type: RESOLVED_PLAN_TYPE });
  const good = await send(c.plan);
  t.equal(good.status, 200, good.text);
  const cases: Array<[string, (p: any) => void]> = [
    ['bound to another field', (p) => (p.steps[0].nest[0].args.id = { field: 'name' })],
    ['a write as the nest', (p) => (p.steps[0].nest[0].capability = 'createBrewery')],
    ['a relation the entity lacks', (p) => (p.steps[0].nest[0].relation = 'owner')],
    ['a max over the limit', (p) => (p.steps[0].nest[0].max = 5000)],
    ['a projection of unknown fields', (p) => (p.steps[0].nest[0].projection = ['secret'])],
  ];
  for (const [what, change] of cases) {
    const plan = structuredClone(c.plan);
    change(plan);
    const a = await send(plan);
    t.equal(a.status, 400, `${what}: refused`);
    t.equal(codeOf(a), 'bad_arguments', what);
    t.match(a.text, /nest `(brewery|owner)`/, `${what}: the message names the nest`);
  }
  const deep = structuredClone(c.plan) as any;
  deep.steps[0].nest[0].nest = [{ ...deep.steps[0].nest[0], nest: [{ ...deep.steps[0].nest[0] }] }];
  const a = await send(deep);
  t.equal(a.status, 400, 'three levels fail the plan schema');
});
