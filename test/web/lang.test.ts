/**
 * The playground's pure helpers: reading a teaching text into rules, rows and the names each
 * symbol teaches (completion), "did you mean" hints as fixes of the program text, the SSE parser,
 * and the diagram layout.
 */
import t from 'tap';
import { parseTeaching, namesBySymbol, rowSymbol } from '../../web/src/lang/teaching.js';
import { fixesOf, offsetOf, suggestions, tokenRange } from '../../web/src/lang/fixes.js';
import { parseSse } from '../../web/src/api/sse-parse.js';
import { edgePaths, layoutNodes } from '../../web/src/components/diagram-layout.js';
import { openerBefore } from '../../web/src/editor/complete.js';

const TEACHING = [
  'svc programs: one statement per line; bare expressions return rows.',
  'page(pgN)[..] next page; wait(oN), cancel(oN) a background run',
  'form\tmeaning',
  'e1(city=$, country=$, kind=$)[..]\tbrewery:Brewery: A brewery. | list 10/page | fields: id, name, kind=micro|brewpub, founded:integer',
  'e1("<id>").beers[..]\tr1 -> brewery:Beer rows: Beers this brewery brews. | sort: any field',
  'm1(name=$, city=$, country=$)\tcreate e1: Register a new brewery. | optional: kind (default "micro"), founded',
  'e2(1).reviews(rating=$, author=$)[..]\tr3 -> brewery:Review rows: Reviews. | filters: rating:integer, author',
  'e3("<id>").m8(subject=$, status=$)\tupdate e3: Change a ticket.',
].join('\n');

t.test('a teaching text: rules above the header, rows below, names per symbol', async (t) => {
  const { rules, rows } = parseTeaching(TEACHING);
  t.equal(rules.length, 2);
  t.equal(rows.length, 5);
  t.same(rows.map(rowSymbol), ['e1', 'r1', 'm1', 'r3', 'm8']);
  const names = namesBySymbol(rows);
  t.same(names.get('e1')?.params, ['city', 'country', 'kind']);
  t.same(names.get('e1')?.fields, ['id', 'name', 'kind', 'founded']);
  t.same(names.get('e1')?.enums, { kind: ['micro', 'brewpub'] });
  t.same(names.get('m1')?.params, ['name', 'city', 'country', 'kind', 'founded']);
  t.same(names.get('r3')?.params, ['rating', 'author']);
  t.same(names.get('m8')?.params, ['subject', 'status']);
});

t.test('the bracket a cursor is in, and the symbol before it', async (t) => {
  t.same(openerBefore('e1(city="a(b", '), { bracket: '(', sym: 'e1' });
  t.same(openerBefore('e1(city="x")[na'), { bracket: '[', sym: 'e1' });
  t.same(openerBefore('x = e2(7).r3(\n  rating=5, '), { bracket: '(', sym: 'r3' });
  t.equal(openerBefore('e1(city="x")[name]'), undefined);
});

t.test('"did you mean" hints become fixes at line:col', async (t) => {
  t.same(suggestions('did you mean `city`?'), ['city']);
  t.same(suggestions('did you mean one of: `e1` (brewery:Brewery), `brewery:Review`?'), ['e1', 'brewery:Review']);
  t.same(suggestions('did you mean status="closed"? allowed: open, pending, closed'), ['status="closed"']);
  t.same(suggestions('parameters: `style`, `name`'), []);
  const apply = (text: string, e: { hint: string; line: number; col: number }) =>
    fixesOf(text, e).map((f) => text.slice(0, f.from) + f.insert + text.slice(f.to));
  t.same(apply('e1(citty="B")[name]', { hint: 'did you mean `city`?', line: 1, col: 4 }), ['e1(city="B")[name]']);
  t.same(apply('x\nbrewery:Brewer', { hint: 'did you mean one of: `e1` (a), `brewery:Review`?', line: 2, col: 1 }), [
    'x\ne1',
    'x\nbrewery:Review',
  ]);
  t.same(
    apply('e3(status="closd")', { hint: 'did you mean status="closed"? allowed: open', line: 1, col: 11 }),
    ['e3(status="closed")'],
    'a name=value suggestion at a value replaces the value',
  );
  t.equal(offsetOf('ab\ncd', 2, 2), 4);
  t.same(tokenRange('e1("b-1").r9', 10), { from: 10, to: 12 });
});

t.test('SSE: events split at blank lines, comments skipped, the rest kept for later', async (t) => {
  const { events, rest } = parseSse(
    ': keep-alive\n\nevent: snapshot\ndata: ~ o1 running\n\nevent: terminal\r\ndata: ! o1 succeeded\r\n\r\nevent: pro',
  );
  t.same(events, [
    { event: 'snapshot', data: '~ o1 running' },
    { event: 'terminal', data: '! o1 succeeded' },
  ]);
  t.equal(rest, 'event: pro');
});

t.test('the diagram: a box per entity, a path per relation, both directions of a pair apart', async (t) => {
  const { nodes, width, height } = layoutNodes(['Brewery', 'Beer', 'Review']);
  t.equal(nodes.length, 3);
  for (const n of nodes) t.ok(n.x >= 0 && n.y >= 0 && n.x + n.w <= width && n.y + n.h <= height, `${n.name} inside`);
  const paths = edgePaths(nodes, [
    { from: 'Brewery', to: 'Beer', label: 'beers', many: true },
    { from: 'Beer', to: 'Brewery', label: 'brewery', many: false },
    { from: 'Beer', to: 'Beer', label: 'self', many: false },
    { from: 'Beer', to: 'Nope', label: 'x', many: false },
  ]);
  t.equal(paths.length, 3, 'a relation to an entity not drawn is left out');
  t.not(paths[0]!.d, paths[1]!.d);
  t.not(`${paths[0]!.lx},${paths[0]!.ly}`, `${paths[1]!.lx},${paths[1]!.ly}`, 'labels of a pair apart');
});
