/**
 * Truthfulness at run time (issue 42), on an authored catalog of our own over real sockets: the
 * svc server and a small vendor on 127.0.0.1 that answers as vendors do when a catalog misses
 * their conventions.
 *
 * - A read whose answer carries none of the entity's declared fields (a row wrapped in
 *   `{"widget": ...}`, `{}`, a list item that is not an object) fails with
 *   `response_shape_mismatch` and a hint naming the mapping's row path, never a row of empty
 *   fields; a sparse row that has one declared field still passes.
 * - A vendor total that is negative or not a count (header or body field) is ignored and said so
 *   in `_meta.svc.total_ignored`, never printed as "3 of -75905565".
 * - A value bound from a row that is an object or a list never goes into a URL path: `wrong_type`
 *   at compile time where the field's type says so, at run time otherwise, before any call.
 * - The `unbounded_list` review says that adding `limit=N` runs the read at once.
 */
import t, { type Test } from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileSource, readSourceDir, writeArtifacts } from '../../pack/index.js';
import { startFaultVendor, type FaultVendor, type Routes } from '../_helpers/fault-vendor.js';
import { connectMcp, errorCode, openLogical, svcMeta, textOf } from '../_helpers/mcp.js';
import { codeOf, openSession, runProgram, startStack, type Answer } from '../_helpers/server.js';
import { until } from '../_helpers/until.js';

const ENTITIES = `entities:
  Widget:
    description: A widget one maker makes.
    fields:
      id: {type: string, description: Widget id such as w-1}
      name: {type: string, description: Widget name}
      makerId: {type: string, description: The maker's id}
      spec: {type: object, fields: {size: integer}, description: Technical data}
    relations:
      maker:
        description: The maker of this widget.
        target: Maker
        cardinality: one
        capability: getMaker
        bind: {id: makerId}
      specMaker:
        description: A relation whose bind is wrong (an object field into a URL path).
        target: Maker
        cardinality: one
        capability: getMaker
        bind: {id: spec}
  Maker:
    description: A maker of widgets.
    fields:
      id: {type: string, description: Maker id such as m-1}
      name: {type: string, description: Maker name}
`;

const CAPABILITIES = `capabilities:
  listWidgets: {kind: query, entity: Widget, description: List widgets., params: []}
  getWidget: {kind: get, entity: Widget, description: One widget by id., params: [id]}
  listMakers: {kind: query, entity: Maker, description: List makers., params: []}
  getMaker: {kind: get, entity: Maker, description: One maker by id., params: [id]}
`;

const MAPPINGS = `mappings:
  listWidgets:
    method: GET
    path: /widgets
    pagination: {style: page, page_param: page, size_param: per_page, page_size: 10}
    response: {total: {header: X-Total-Count}}
  getWidget: GET /widgets/{id}
  listMakers:
    method: GET
    path: /makers
    pagination: {style: page, page_param: page, size_param: per_page, page_size: 10}
    response: {path: data, total: {path: meta.total}}
  getMaker: GET /makers/{id}
`;

async function tmp(t: Test, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The gadgets catalog, authored here and packed into a directory, its backend at `url`. */
async function gadgets(t: Test, url: string): Promise<string> {
  const src = await tmp(t, 'svc-truthful-src-');
  const catalog = `catalog:\n  entry_id: gadgets\n  version: 1\n  label: Gadgets\n  tags: [test]\n  description: Widgets and the makers that make them.\n  backend:\n    url: ${url}\n  auth:\n    scheme: none\n`;
  await writeFile(join(src, 'catalog.yaml'), catalog);
  await writeFile(join(src, 'entities.yaml'), ENTITIES);
  await writeFile(join(src, 'capabilities.yaml'), CAPABILITIES);
  await writeFile(join(src, 'mappings.yaml'), MAPPINGS);
  const compiled = compileSource(await readSourceDir(src));
  t.same(compiled.diagnostics, [], 'the test catalog compiles');
  const dir = await tmp(t, 'svc-truthful-packed-');
  await writeArtifacts(compiled.cgs!, compiled.cgs_hash!, dir);
  return dir;
}

const WIDGET = { id: 'w-1', name: 'Sprocket', makerId: 'm-1', spec: { size: 3 } };

/** A vendor answering with `routes`, the svc server over the gadgets catalog, and a session (e1 Widget, e2 Maker). */
async function setUp(t: Test, routes: Routes): Promise<{ vendor: FaultVendor; url: string; path: string }> {
  const vendor = await startFaultVendor(routes);
  t.teardown(() => vendor.close());
  const stack = await startStack(t, { vendorUrl: vendor.url, catalogDir: await gadgets(t, vendor.url) });
  const { path } = await openSession(stack.url, {
    entry_id: 'gadgets',
    seeds: ['gadgets:Widget', 'gadgets:Maker'],
  });
  return { vendor, url: stack.url, path };
}

function mismatch(t: Test, a: Answer, what: string, message: RegExp, hint: RegExp): void {
  t.equal(a.status, 502, `${what}: ${a.text}`);
  t.equal(codeOf(a), 'response_shape_mismatch', what);
  const err = (a.body.errors as Array<{ message: string; hint?: string }>)[0]!;
  t.match(err.message, message, `${what}: the message`);
  t.match(err.hint, hint, `${what}: the hint names the row path`);
  const rows = ((a.body.results ?? [a.body]) as Array<{ rows?: unknown[] }>).flatMap((b) => b.rows ?? []);
  t.same(rows, [], `${what}: no row of empty fields`);
}

t.test('a read whose answer carries none of the declared fields is response_shape_mismatch', async (t) => {
  const { url, path } = await setUp(t, {
    'GET /widgets/w-1': { json: { widget: WIDGET } },
    'GET /widgets/w-2': { json: { data: WIDGET } },
    'GET /widgets/w-3': { json: {} },
    'GET /widgets/w-4': { json: { id: 'w-4' } },
    'GET /widgets': (req) =>
      req.query.get('page') === '1' && req.query.get('per_page') === '10'
        ? { json: [WIDGET, 'w-9'] }
        : { json: [{ widget: WIDGET }] },
  });
  mismatch(
    t,
    await runProgram(url, path, 'e1("w-1")'),
    'a row wrapped in widget',
    /gadgets getWidget: the row at `\(body\)` carries none of Widget's fields \(id, name, makerId, spec\); it has `widget`/,
    /reads its row at response\.path `\(body\)`; the vendor wraps the row in `widget`: set `response: \{path: widget\}`/,
  );
  mismatch(
    t,
    await runProgram(url, path, 'e1("w-2")[name]'),
    'a row wrapped in data',
    /it has `data`/,
    /set `response: \{path: data\}`/,
  );
  mismatch(t, await runProgram(url, path, 'e1("w-3")'), 'an empty object', /it is empty/, /response\.path `\(body\)`/);

  const sparse = await runProgram(url, path, 'e1("w-4")');
  t.equal(sparse.status, 200, `a sparse row with its id passes: ${sparse.text}`);
  t.same(sparse.body.rows, [{ id: 'w-4' }]);

  mismatch(
    t,
    await runProgram(url, path, 'e1'),
    'a list item that is not an object',
    /row 2 at `\(body\)` is a string, not an object of Widget's fields/,
    /reads its rows at response\.path `\(body\)`/,
  );
  mismatch(
    t,
    await runProgram(url, path, 'e1(limit=20)'),
    'list items wrapped in widget',
    /row 1 at `\(body\)` carries none of Widget's fields/,
    /wraps each row in `widget`/,
  );
});

t.test('a relation to a wrapped row fails the same way, over MCP too', async (t) => {
  const { url, vendor } = await setUp(t, {
    'GET /widgets/w-1': { json: WIDGET },
    'GET /makers/m-1': { json: { maker: { id: 'm-1', name: 'Acme' } } },
  });
  const { path } = await openSession(url, { entry_id: 'gadgets', seeds: ['gadgets:Widget', 'gadgets:Maker'] });
  mismatch(
    t,
    await runProgram(url, path, 'e1("w-1").maker'),
    'a relation',
    /gadgets getMaker: the row at `\(body\)` carries none of Maker's fields \(id, name\); it has `maker`/,
    /set `response: \{path: maker\}`/,
  );
  const c = await connectMcp(t, url);
  const { ref } = await openLogical(c, [{ api: 'gadgets', entity: 'Widget' }], 'truthful reads');
  const r = await c.tool('svc', { logical_session_ref: ref, program: 'e1("w-1")[id, maker[name]]' });
  t.equal(r.isError, true, textOf(r));
  t.equal(errorCode(r), 'response_shape_mismatch');
  t.match(textOf(r), /set `response: \{path: maker\}`/, 'the MCP text carries the hint');
  t.ok(vendor.hits('/makers/m-1').length >= 2, 'the maker was read on both surfaces');
});

t.test('a total that is negative or not a count is ignored and said so in _meta', async (t) => {
  const rows = [WIDGET, { ...WIDGET, id: 'w-2' }, { ...WIDGET, id: 'w-3' }];
  const makers = [{ id: 'm-1', name: 'Acme' }];
  const { url, path, vendor } = await setUp(t, {
    'GET /widgets': { headers: { 'x-total-count': '-75905565' }, json: rows },
    'GET /makers': (req) => ({ json: { data: makers, meta: { total: JSON.parse(req.query.get('page') ?? '1') } } }),
  });
  const neg = await runProgram(url, path, 'e1');
  t.equal(neg.status, 200, neg.text);
  t.equal(neg.body.rows.length, 3);
  t.equal(neg.body.total, undefined, 'no total');
  t.same(neg.body._meta.svc.total_ignored, [{ entity: 'gadgets:Widget', total: '-75905565' }], 'said in _meta');
  const plain = await runProgram(url, path, 'e1', '', { accept: 'text/plain' });
  t.equal(plain.status, 200, plain.text);
  t.notMatch(plain.text, /of -75905565/, 'never "3 of -75905565"');
  t.match(plain.text, /gadgets:Widget: 3 rows/);

  // A body field: negative, fractional, a word, an object are ignored; a count is kept.
  const totals: unknown[] = [-3, 2.5, 'lots', { n: 1 }, 7, '12'];
  vendor.route('GET /makers', (_req, n) => ({ json: { data: makers, meta: { total: totals[n] } } }));
  for (const bad of ['-3', '2.5', 'lots', '{"n":1}']) {
    const a = await runProgram(url, path, 'e2');
    t.equal(a.status, 200, a.text);
    t.equal(a.body.total, undefined, `${bad}: no total`);
    t.same(a.body._meta.svc.total_ignored, [{ entity: 'gadgets:Maker', total: bad }], `${bad}: said in _meta`);
  }
  for (const good of [7, 12]) {
    const a = await runProgram(url, path, 'e2');
    t.equal(a.body.total, good, `${good}: the total is kept`);
    t.notOk(a.body._meta?.svc?.total_ignored, `${good}: nothing ignored`);
  }

  const c = await connectMcp(t, url);
  const { ref } = await openLogical(c, [{ api: 'gadgets', entity: 'Widget' }], 'totals');
  const r = await c.tool('svc', { logical_session_ref: ref, program: 'e1' });
  t.notOk(r.isError, textOf(r));
  t.same(svcMeta(r).total_ignored, [{ entity: 'gadgets:Widget', total: '-75905565' }], 'MCP: said in _meta.svc');
  t.notMatch(textOf(r), /of -75905565/, 'MCP: never "3 of -75905565"');

  // A background run: its end, answered by wait(oN), says the same.
  const acc = await runProgram(url, path, 'e1', 'wait=false');
  t.equal(acc.status, 202, acc.text);
  const h = acc.body._meta.svc.op.n as string;
  const end = await until(`${h} to end`, async () => {
    const a = await runProgram(url, path, `wait(${h})`);
    return a.body._meta?.svc?.op?.['~'] === '!' ? a : undefined;
  });
  t.equal(end.body.rows.length, 3, end.text);
  t.equal(end.body.total, undefined, 'background: no total');
  t.same(end.body._meta.svc.total_ignored, [{ entity: 'gadgets:Widget', total: '-75905565' }], 'background: said');
});

t.test('a value bound from a row that is an object or a list never goes into a URL path', async (t) => {
  const { url, path, vendor } = await setUp(t, {
    'GET /widgets/w-1': { json: WIDGET },
    'GET /widgets/w-5': { json: { ...WIDGET, id: 'w-5', makerId: { id: 'm-1', name: 'Acme' } } },
    'GET /widgets': { json: [{ ...WIDGET, id: 'w-6', makerId: ['m-1', 'm-2'] }] },
    'GET /makers/:id': { json: { id: 'm-1', name: 'Acme' } },
  });
  // Compile time: the field's declared type is an object.
  for (const mode of ['', 'mode=plan']) {
    const a = await runProgram(url, path, 'w = e1("w-1")\ne2(w.spec)', mode);
    t.equal(a.status, 400, a.text);
    t.equal(codeOf(a), 'wrong_type', `${mode || 'live'}: wrong_type`);
    const err = a.body.errors[0];
    t.match(err.message, /`id` of getMaker goes into the URL path \(\/makers\/\{id\}\); `w\.spec` is an object/);
    t.match(err.hint, /a string or a number\): `id`, `name`, `makerId`/);
    t.same([err.line, err.col], [2, 4], 'at w.spec');
  }
  // A catalog relation that binds an object field into the path: refused when the program compiles.
  for (const [program, col] of [
    ['e1("w-1").specMaker', 11],
    ['e1("w-1")[id, specMaker[name]]', 15],
  ] as const) {
    const a = await runProgram(url, path, program, 'mode=plan');
    t.equal(codeOf(a), 'wrong_type', `${program}: ${a.text}`);
    t.match(
      a.body.errors[0].message,
      /^specMaker: `id` of getMaker goes into the URL path \(\/makers\/\{id\}\); `Widget\.spec` is an object/,
    );
    t.match(a.body.errors[0].hint, /the catalog binds specMaker's `id` to `spec`: fix its bind/);
    t.same([a.body.errors[0].line, a.body.errors[0].col], [1, col], `${program}: at the relation`);
  }
  t.equal(vendor.requests.length, 0, 'nothing was sent');

  // Run time: the field is declared a string, the vendor sent an object or a list.
  const cases: Array<[string, string, RegExp]> = [
    ['w = e1("w-5")\ne2(w.makerId)', 'a binding', /step n2: `id` of getMaker .*n1\.makerId holds an object/],
    ['e1("w-5").maker', 'a relation', /`id` of getMaker .*n1\.makerId holds an object/],
    ['e1("w-5")[id, maker[name]]', 'a nest', /maker\[\.\.\]: `id` of getMaker .*row\.makerId holds an object/],
    ['e1[id, maker[name]]', 'a list nest', /holds a list there \(\["m-1","m-2"\]\)/],
  ];
  for (const [program, what, message] of cases) {
    const a = await runProgram(url, path, program);
    t.equal(a.status, 400, `${what}: ${a.text}`);
    t.equal(codeOf(a), 'wrong_type', `${what}: wrong_type`);
    t.match(a.body.errors[0].message, message, what);
    t.match(a.body.errors[0].hint, /bind a field that holds the id itself \(a string or a number\)/, what);
  }
  t.equal(vendor.hits('/makers/m-1').length, 0, 'no maker was asked for');
  t.notOk(
    vendor.requests.some((r) => r.path.startsWith('/makers/%7B') || r.path.startsWith('/makers/%5B')),
    'no JSON in a path',
  );
  const ok = await runProgram(url, path, 'e1("w-1").maker');
  t.equal(ok.status, 200, ok.text);
  t.same(ok.body.rows, [{ id: 'm-1', name: 'Acme' }], 'a scalar key is followed');
});

t.test('the unbounded_list review says that limit=N runs the read at once', async (t) => {
  const { url, path } = await setUp(t, {
    'GET /widgets': { json: [WIDGET] },
  });
  const refused = await runProgram(url, path, 'e1(limit=5000)');
  t.equal(codeOf(refused), 'review_required', refused.text);
  t.match(
    refused.body.errors[0].message,
    /needs review \(unbounded_list\) before it runs; with limit=N \(N up to 1000\) on the list it runs at once/,
  );
  const dry = await runProgram(url, path, 'e1(limit=5000)', 'mode=plan');
  t.equal(dry.status, 200, dry.text);
  t.match(
    dry.body._meta.svc.dry_review.summary,
    /^n1 may return more than 1000 rows \(unbounded_list\): add limit=N \(N up to 1000\) and the read runs at once, without a pcN/,
  );
  const ok = await runProgram(url, path, 'e1(limit=1000)');
  t.equal(ok.status, 200, `with limit=1000 it runs at once: ${ok.text}`);
});
