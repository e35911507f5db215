/**
 * Which schemas are one entity (fixtures/openapi/entities.yaml): compact list rows and the full
 * row of their get are one entity named after the get's schema, inline schemas at different
 * resource paths are distinct (named after their parent resources) unless they have the same
 * fields, and an object with a list property that a get by id answers is one row wherever it is
 * answered. Schema wrappers (fixtures/openapi/wrappers.yaml): `allOf: [{$ref}, {description}]`,
 * `allOf: [X]` beside a description, `oneOf`/`anyOf` with `null`, 3.1 type lists and `nullable`
 * hide no field and no list. Live: a json-server vendor whose list answers compact rows and whose
 * get answers the full row, through a real svc server; the runtime's row check passes the compact rows.
 */
import t, { type Test } from 'tap';
import { copyFileSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeArtifacts } from '../../pack/index.js';
import { rowShapeProblem } from '../../runtime/row-shape.js';
import { importAndPack } from '../_helpers/import.js';
import { openSession, runProgram, startStack, PACKED, type Answer } from '../_helpers/server.js';

type Row = Record<string, unknown>;

const { result, cgs, cgs_hash } = await importAndPack('entities.yaml', { entryId: 'depot' });
const cap = (name: string) => cgs.capabilities.find((c) => c.name === name);
const entity = (name: string) => cgs.entities.find((e) => e.name === name);
const fieldsOf = (name: string) => entity(name)?.fields.map((f) => f.name);
const report = result.files['import-report.md']!;

t.test('compact list rows and the full get row of one resource are one entity, named after the get', async (t) => {
  t.match(cap('listWidgets'), { kind: 'query', entity: 'Widget' });
  t.match(cap('getWidget'), { kind: 'get', entity: 'Widget' });
  t.notOk(entity('WidgetSummary'), 'no entity for the compact schema');
  t.same(fieldsOf('Widget'), ['id', 'name', 'color', 'price', 'tags'], "the full row's fields");
  t.equal(entity('Widget')!.fields[0]!.description, "The widget's number", "the get's field wins");
  t.match(cap('listGadgets'), { kind: 'query', entity: 'Gadget' });
  t.match(cap('getGadget'), { kind: 'get', entity: 'Gadget' });
  t.same(fieldsOf('Gadget'), ['id', 'name', 'size'], 'inline compact and full rows: one entity with the fuller fields');
  const notes = result.log.review.filter((r) => /compact and full rows/.test(r.note));
  t.same(
    notes.map((n) => n.what),
    ['entity Widget', 'entity Gadget'],
  );
  t.match(
    notes[0]!.note,
    /`#\/components\/schemas\/WidgetSummary` \(id, name\), the get `#\/components\/schemas\/Widget`/,
  );
  t.match(notes[1]!.note, /`inline schema at \/gadgets` \(id, name\), the get `inline schema at \/gadgets\/\{id\}`/);
  t.match(
    report,
    /\| Widget \| id \| 5 \| .* \| #\/components\/schemas\/Widget; list rows: #\/components\/schemas\/WidgetSummary \|/,
  );
});

t.test(
  'inline schemas at different resource paths are distinct entities unless they have the same fields',
  async (t) => {
    t.notOk(entity('Item'), 'no entity merges the inline items of users and orders');
    t.same(fieldsOf('UserItem'), ['id', 'label', 'size']);
    t.same(fieldsOf('OrderItem'), ['sku', 'quantity']);
    t.match(cap('listUserItems'), { entity: 'UserItem' });
    t.match(cap('listOrderItems'), { entity: 'OrderItem' });
    t.match(cap('listCartItems'), { entity: 'OrderItem' }, "a cart's lines have the order lines' fields: one entity");
    t.notOk(entity('CartItem'));
    t.match(
      result.log.review.find((r) => r.what === 'entity UserItem')?.note,
      /named after its parent resource: .* would also be `Item`/,
    );
  },
);

t.test('an object with a list property that a get by id answers is one row wherever it is answered', async (t) => {
  t.match(cap('getBox'), { kind: 'get', entity: 'Box', returns: 'row' });
  t.same(fieldsOf('Box'), ['code', 'label', 'items']);
  t.notOk(entity('Latest'), 'GET /boxes/latest is not read as a list of its items');
  t.not(cap('getLatestBox')?.kind, 'query', 'GET /boxes/latest is no query');
  t.match(cap('createBox'), { kind: 'create', entity: 'Box', returns: 'row', http: { response: { path: '' } } });
});

t.test('the runtime row check passes compact list rows and still fails a row of none of the fields', async (t) => {
  const widget = entity('Widget')!;
  const list = cap('listWidgets')!;
  t.equal(rowShapeProblem(widget, list, [{ id: 1, name: 'Sprocket' }]), undefined, 'a compact row is a row');
  t.match(rowShapeProblem(widget, list, [{ widget: { id: 1 } }]), { problem: /carries none of Widget's fields/ });
});

t.test('wrappers of one schema hide no field and no list', async (t) => {
  const fleet = await importAndPack('wrappers.yaml', { entryId: 'fleet' });
  const c = (name: string) => fleet.cgs.capabilities.find((x) => x.name === name);
  t.match(c('listTrucks'), { kind: 'query', entity: 'Truck', http: { response: { path: 'Trucks' } } });
  t.match(c('getTruck'), { kind: 'get', entity: 'Truck', http: { response: { path: '' } } });
  t.match(c('listDepots'), {
    kind: 'query',
    entity: 'Depot',
    http: { response: { path: 'data', total: { path: 'total' } } },
  });
  t.match(c('getDepot'), { kind: 'get', entity: 'Depot', http: { response: { path: 'data' } } });
  const truck = fleet.cgs.entities.find((e) => e.name === 'Truck')!;
  t.same(
    truck.fields.map((f) => [f.name, f.type, f.description ?? '']),
    [
      ['TruckId', 'string', "The truck's id"],
      ['Plate', 'string', 'Its number plate'],
      ['Capacity', 'number', 'Load in tonnes'],
      ['Retired', 'boolean', ''],
      ['Depot', 'object', ''],
      ['Extra', 'object', "Whatever the fleet's system adds"],
      ['Marks', 'array', ''],
    ],
  );
  t.match(
    fleet.result.log.review.find((r) => r.what === 'entity Truck')?.note,
    /fields the document gives no type \(any JSON value\), typed object: Extra, Marks/,
  );
  t.same(
    fleet.cgs.entities.map((e) => e.name),
    ['Truck', 'Depot'],
    'component names kept through the wrappers',
  );
  // Every read found its row schema: none was left out, and none became a value answer (no `Value` above).
  t.equal(fleet.result.log.skipped.filter((s) => s.reason === 'no_fields').length, 0);
});

/** json-server over `data`, its lists answering only `id` and `name` of each row (the document's WidgetSummary). */
async function startCompactVendor(data: Record<string, Row[]>) {
  const require = createRequire(import.meta.url);
  const jsonServer = require('json-server') as {
    create(): ((req: unknown, res: unknown) => void) & { use(mw: unknown): void };
    router(db: unknown): { render: (req: { method: string }, res: CompactRes) => void };
  };
  interface CompactRes {
    locals: { data: unknown };
    jsonp(body: unknown): void;
  }
  const app = jsonServer.create();
  const router = jsonServer.router(structuredClone(data));
  router.render = (req, res) => {
    const d = res.locals.data;
    const compact = (r: Row) => ({ id: r.id, name: r.name });
    res.jsonp(req.method === 'GET' && Array.isArray(d) ? (d as Row[]).map(compact) : d);
  };
  app.use(router);
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

t.test('live: the list answers compact rows, the get the full row, one entity through the svc server', async (t) => {
  const widgets = [
    { id: 1, name: 'Sprocket', color: 'red', price: 2.5, tags: ['small'] },
    { id: 2, name: 'Gizmo', color: 'blue', price: 7, tags: [] },
  ];
  const vendor = await startCompactVendor({ widgets });
  t.teardown(() => vendor.close());
  const direct = async (path: string): Promise<unknown> => (await fetch(vendor.url + path)).json();
  t.same(await direct('/widgets'), [
    { id: 1, name: 'Sprocket' },
    { id: 2, name: 'Gizmo' },
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-entities-'));
  for (const f of readdirSync(PACKED)) copyFileSync(join(PACKED, f), join(dir, f));
  await writeArtifacts(cgs, cgs_hash, dir);
  const stack = await startStack(t, {
    vendorUrl: vendor.url,
    catalogDir: dir,
    loadOptions: { backendOverrides: { depot: vendor.url } },
  });
  const { path } = await openSession(stack.url, { entry_id: 'depot', seeds: ['depot:Widget'] });
  const run = (program: string, query = '') => runProgram(stack.url, path, program, query);
  t.same(ok(t, await run('depot:Widget', 'force=true'), 'list'), await direct('/widgets'), 'the compact rows');
  t.same(ok(t, await run('depot:Widget(2)'), 'get'), [widgets[1]], 'the full row');
  t.same(ok(t, await run('depot:Widget(1)[id,color,tags]'), 'get, projected'), [
    { id: 1, color: 'red', tags: ['small'] },
  ]);
});

function ok(t: Test, a: Answer, what: string): Row[] {
  t.equal(a.status, 200, `${what}: 200 ${a.status === 200 ? '' : a.text.slice(0, 300)}`);
  return (a.body.rows ?? []) as Row[];
}

t.test('an entity with no id field named by its get takes its first scalar field, not an object', async (t) => {
  const row = {
    type: 'object',
    properties: {
      Settings: { type: 'object', properties: { mode: { type: 'string' } } },
      Tags: { type: 'array', items: { type: 'string' } },
      Handle: { type: 'string' },
    },
  };
  const doc = {
    openapi: '3.0.3',
    info: { title: 'Consoles', version: '1' },
    servers: [{ url: 'https://consoles.example' }],
    paths: {
      '/consoles/{ref}': {
        get: {
          operationId: 'getConsole',
          parameters: [{ name: 'ref', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'ok', content: { 'application/json': { schema: row } } } },
        },
      },
    },
  };
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-entities-doc-'));
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
  const consoles = (await importAndPack(dir, { entryId: 'consoles' })).cgs;
  t.equal(consoles.entities.find((e) => e.name === 'Console')?.id_field, 'Handle');
});
