/**
 * Envelopes (fixtures/openapi/envelopes.yaml): one row wrapped under one key (`{"widget": {...}}`,
 * `{"data": {...}}`), lists wrapped with their paging data and a total in the wrapper, request
 * bodies wrapped the same way, and a bare row with a list of its own that is not a list wrapper.
 * Imported, the mappings read each answer at its row path and send each body wrapped; packed and
 * served by a real svc server against a vendor on 127.0.0.1 that answers in those envelopes, reads
 * return the rows' fields and a create sends its body wrapped and returns the created row with its id.
 */
import t, { type Test } from 'tap';
import { copyFileSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeArtifacts } from '../../pack/index.js';
import { ENVELOPE_DATA, startEnvelopeVendor } from '../_helpers/envelope-vendor.js';
import { importAndPack } from '../_helpers/import.js';
import { openSession, runProgram, startStack, PACKED, type Answer } from '../_helpers/server.js';

type Row = Record<string, unknown>;

const { result, cgs, cgs_hash } = await importAndPack('envelopes.yaml', { entryId: 'shop' });
const cap = (name: string) => cgs.capabilities.find((c) => c.name === name)!;
const report = result.files['import-report.md']!;

t.test('wrapped answers get their row paths, a total in the wrapper its path', async (t) => {
  t.match(cap('getWidget'), { kind: 'get', entity: 'Widget', http: { response: { path: 'widget' } } });
  t.match(cap('getGadget'), { kind: 'get', entity: 'Gadget', http: { response: { path: 'data' } } });
  t.match(cap('listWidgets'), {
    kind: 'query',
    http: {
      response: { path: 'widgets', total: { path: 'meta.total' } },
      // The next URL the answer gives (`links.pages.next`) goes before the page counter.
      pagination: { style: 'link', next_url: 'links.pages.next' },
    },
  });
  t.match(cap('listGadgets'), { kind: 'query', http: { response: { path: 'data' } } });
  t.match(cap('listOrders'), { kind: 'query', http: { response: { path: 'data' }, pagination: { style: 'offset' } } });
  t.match(cap('listBoxes'), { kind: 'query', http: { response: { path: 'items', total: { path: 'total' } } } });
  t.same(
    cgs.entities.find((e) => e.name === 'Widget')!.fields.map((f) => f.name),
    ['id', 'name', 'color', 'price'],
    'the entity has the wrapped row fields, not the wrapper key',
  );
});

t.test('a get of one resource whose row has a list is one row, not a list wrapper', async (t) => {
  t.match(cap('getBox'), { kind: 'get', entity: 'Box', returns: 'row', http: { response: { path: '' } } });
  t.same(
    cgs.entities.find((e) => e.name === 'Box')!.fields.map((f) => f.name),
    ['code', 'label', 'items'],
  );
});

t.test('at a path naming one resource, a list beside paging data only is still a list', async (t) => {
  const rows = { type: 'array', items: { type: 'object', properties: { sha: { type: 'string' } } } };
  const answer = (schema: object) => ({
    '200': { description: 'ok', content: { 'application/json': { schema } } },
  });
  const param = [{ name: 'page', in: 'path', required: true, schema: { type: 'string' } }];
  const doc = {
    openapi: '3.0.3',
    info: { title: 'Wiki', version: '1' },
    servers: [{ url: 'https://wiki.example' }],
    paths: {
      '/pages/{page}': {
        get: {
          operationId: 'getPage',
          parameters: param,
          responses: answer({ type: 'object', properties: { title: { type: 'string' }, revisions: rows } }),
        },
      },
      '/revisions/{page}': {
        get: {
          operationId: 'listRevisions',
          parameters: param,
          responses: answer({ type: 'object', properties: { commits: rows, count: { type: 'integer' } } }),
        },
      },
    },
  };
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-envelopes-doc-'));
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
  const wiki = (await importAndPack(dir, { entryId: 'wiki' })).cgs;
  t.match(
    wiki.capabilities.find((c) => c.name === 'getPage'),
    { kind: 'get', http: { response: { path: '' } } },
  );
  t.match(
    wiki.capabilities.find((c) => c.name === 'listRevisions'),
    {
      kind: 'query',
      http: { response: { path: 'commits', total: { path: 'count' } } },
    },
  );
});

t.test('a wrapped create body is taught flat and sent wrapped; its wrapped answer is the row', async (t) => {
  const w = cap('createWidget');
  t.match(w, { kind: 'create', entity: 'Widget', returns: 'row' });
  t.same(
    w.params.map((p) => [p.name, p.required]),
    [
      ['name', true],
      ['color', false],
      ['price', false],
    ],
  );
  t.same(w.http.body, { widget: { name: '{name}', color: '{color}', price: '{price}' } });
  t.equal(w.http.response.path, 'widget');
  const g = cap('createGadget');
  t.same(g.http.body, { data: { name: '{name}', size: '{size}' } });
  t.equal(g.http.response.path, 'data', 'the row beside `meta`');
});

t.test('the report lists each envelope', async (t) => {
  t.match(report, /## Envelopes/);
  t.match(report, /\| listWidgets \| rows under `widgets` \| `meta\.total` \| - \|/);
  t.match(report, /\| getWidget \| row under `widget` \| - \| - \|/);
  t.match(report, /\| createWidget \| row under `widget` \| - \| parameters sent under `widget` \|/);
  t.match(report, /\| createGadget \| row under `data` \| - \| parameters sent under `data` \|/);
  const section = /## Envelopes([\s\S]*?)\n## /.exec(report)![1]!;
  t.notMatch(section, /getBox/, 'a bare row is no envelope');
});

t.test('live: get, list and create through the svc server against the wrapping vendor', async (t) => {
  const vendor = await startEnvelopeVendor();
  t.teardown(() => vendor.close());
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-envelopes-'));
  for (const f of readdirSync(PACKED)) copyFileSync(join(PACKED, f), join(dir, f));
  await writeArtifacts(cgs, cgs_hash, dir);
  const stack = await startStack(t, {
    vendorUrl: vendor.url,
    catalogDir: dir,
    loadOptions: { backendOverrides: { shop: vendor.url } },
  });
  const seeds = ['shop:Widget', 'shop:Gadget', 'shop:Order', 'shop:Box'];
  const { path, answer } = await openSession(stack.url, { entry_id: 'shop', seeds });
  const run = (program: string, query = '') => runProgram(stack.url, path, program, query);
  const { widgets, gadgets, orders, boxes } = ENVELOPE_DATA;

  t.same(ok(t, await run('shop:Widget(2)'), 'get widget'), [widgets[1]]);
  t.same(ok(t, await run('shop:Gadget("gd_1")'), 'get gadget'), [gadgets[0]]);
  t.same(ok(t, await run('shop:Box("bx-1")'), 'get box'), [boxes[0]]);
  const list = await run('shop:Widget');
  t.same(ok(t, list, 'list widgets'), widgets);
  t.same(ok(t, await run('shop:Widget(color="red")[id]'), 'filter'), [{ id: 1 }, { id: 3 }]);
  // Lists the vendor does not page are unbounded: run them forced (no review asked).
  t.same(ok(t, await run('shop:Gadget', 'force=true'), 'list gadgets'), gadgets);
  t.same(ok(t, await run('shop:Order'), 'list orders'), orders);
  t.same(ok(t, await run('shop:Box', 'force=true'), 'list boxes'), boxes);

  const wave = String(answer.body.wave).split('\n');
  /** The m# of the create of `entity` the wave teaches (`m1(name=$)\tcreate e1 | ...`). */
  const createOf = (entity: string) => {
    const e = /^(e\d+)/.exec(wave.find((l) => l.includes(`\t${entity} |`)) ?? '')?.[1];
    return /^(m\d+)\(/.exec(wave.find((l) => e && new RegExp(`^m\\d+\\(.*\\tcreate ${e}\\b`).test(l)) ?? '')?.[1];
  };
  const create = async (m: string | undefined, args: string) => {
    t.ok(m, 'the wave teaches the create');
    const program = `${m}(${args})`;
    const dry = await run(program, 'mode=plan');
    const ref = dry.body._meta?.svc?.plan_commit_ref as string;
    t.match(ref, /^pc\d+$/, `the dry-run of ${program} mints a pcN`);
    return run(program, `plan_commit_ref=${ref}`);
  };
  const widget = await create(createOf('shop:Widget'), 'name="Whatsit", color="green"');
  t.same(ok(t, widget, 'create widget'), [{ id: 4, name: 'Whatsit', color: 'green' }], 'the created row, its id');
  const sent = vendor.hits('/widgets', 'POST');
  t.same(
    sent.map((r) => JSON.parse(r.body) as unknown),
    [{ widget: { name: 'Whatsit', color: 'green' } }],
    'the body is sent wrapped',
  );
  t.same(ok(t, await run('shop:Widget(4)'), 'the new widget is read back'), [
    { id: 4, name: 'Whatsit', color: 'green' },
  ]);
  const gadget = await create(createOf('shop:Gadget'), 'name="Cam", size=2');
  t.same(ok(t, gadget, 'create gadget'), [{ id: 'gd_3', name: 'Cam', size: 2 }]);
  t.same(
    vendor.hits('/gadgets', 'POST').map((r) => JSON.parse(r.body) as unknown),
    [{ data: { name: 'Cam', size: 2 } }],
  );
});

function ok(t: Test, a: Answer, what: string): Row[] {
  t.equal(a.status, 200, `${what}: 200 ${a.status === 200 ? '' : a.text.slice(0, 300)}`);
  return (a.body.rows ?? []) as Row[];
}
