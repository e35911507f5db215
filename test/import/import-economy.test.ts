/**
 * The importer's teaching economy (pack/import/economy.ts) and what a write answers: a description
 * that only restates the entity's name, or a capability's kind and entity, is left empty ("Replace"
 * says more than "update" and stays); a parameter with the same enum values as its field takes the
 * field's order; a long response enum is a string with its values in the description; `false`, `""`
 * and `[]` defaults are not carried; a write answering `allOf: [<row>, {more}]` returns its row.
 * A relation description that only restates the relation row is left empty. Also: an OpenAPI 3
 * document split over files is read without bundling (external $refs followed).
 */
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importAndPack } from '../_helpers/import.js';

const json = (schema: object) => ({ '200': { description: 'ok', content: { 'application/json': { schema } } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const id = { name: 'widgetId', in: 'path', required: true, schema: { type: 'integer' } };
const body = (properties: object) => ({ content: { 'application/json': { schema: { type: 'object', properties } } } });
const LEVELS = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];

const DOC = {
  openapi: '3.0.3',
  info: { title: 'Shop', version: '1' },
  servers: [{ url: 'https://shop.example' }],
  paths: {
    '/widgets': {
      get: {
        operationId: 'listWidgets',
        summary: 'List widgets',
        parameters: [
          { name: 'state', in: 'query', schema: { type: 'string', enum: ['closed', 'open'] } },
          { name: 'archived', in: 'query', schema: { type: 'boolean', default: false } },
          { name: 'q', in: 'query', schema: { type: 'string', default: '' } },
          { name: 'mine', in: 'query', schema: { type: 'boolean', default: true } },
        ],
        responses: json({ type: 'array', items: ref('WidgetItem') }),
      },
    },
    '/widgets/{widgetId}': {
      get: { operationId: 'getWidget', summary: 'Get a widget', parameters: [id], responses: json(ref('WidgetItem')) },
      put: {
        operationId: 'replaceWidget',
        summary: 'Replace a widget',
        parameters: [id],
        requestBody: body({ name: { type: 'string' } }),
        responses: json(ref('WidgetItem')),
      },
      patch: {
        operationId: 'updateWidget',
        summary: 'Update a widget item',
        parameters: [id],
        requestBody: body({ name: { type: 'string' } }),
        responses: json({ allOf: [ref('WidgetItem'), { type: 'object', properties: { hints: { type: 'object' } } }] }),
      },
    },
    '/widgets/{widgetId}/lock': {
      put: {
        operationId: 'lockWidget',
        summary: 'Lock a widget',
        parameters: [id],
        responses: json(ref('WidgetItem')),
      },
    },
  },
  components: {
    schemas: {
      WidgetItem: {
        type: 'object',
        description: 'A widget item.',
        properties: {
          id: { type: 'integer' },
          name: { type: 'string' },
          state: { type: 'string', enum: ['open', 'closed'] },
          level: { type: 'string', enum: LEVELS, description: 'How deep.' },
          size: { type: 'string', enum: ['s', 'm', 'l'] },
        },
      },
    },
  },
};

const dir = mkdtempSync(join(tmpdir(), 'svc-import-economy-'));
writeFileSync(join(dir, 'openapi.json'), JSON.stringify(DOC));
const { result, cgs } = await importAndPack(dir, { entryId: 'shop' });
const cap = (name: string) => cgs.capabilities.find((c) => c.name === name)!;
const widget = cgs.entities.find((e) => e.name === 'WidgetItem')!;
const param = (c: string, p: string) => cap(c).params.find((x) => x.name === p);

t.test('descriptions that only restate the name, or the kind and the entity, are left empty', async (t) => {
  t.equal(widget.description, '', '"A widget item." on WidgetItem');
  t.equal(cap('listWidgets').description, '', '"List widgets" on a query of WidgetItem');
  t.equal(cap('getWidget').description, '');
  t.equal(cap('updateWidget').description, '', '"Update a widget item"');
  t.equal(cap('replaceWidget').description, 'Replace a widget', 'replacing is more than the kind says');
  t.equal(cap('lockWidget').description, 'Lock a widget', 'an action says what it does');
});

t.test("a parameter with its field's enum values takes the field's order", async (t) => {
  t.match(param('listWidgets', 'state'), { type: 'enum', values: ['open', 'closed'] });
});

t.test('a response enum of more than six values is a string; its values stay in the description', async (t) => {
  const level = widget.fields.find((f) => f.name === 'level')!;
  t.equal(level.type, 'string');
  t.equal(level.description, 'How deep. (one of a, b, c, d, e, f, g)');
  t.match(
    widget.fields.find((f) => f.name === 'size'),
    { type: 'enum', values: ['s', 'm', 'l'] },
  );
  t.match(result.files['import-report.md'], /enum fields of more than 6 values typed string .*: level/);
});

t.test('defaults that say what leaving the parameter out says are not carried', async (t) => {
  t.equal(param('listWidgets', 'archived')!.default, undefined, 'false');
  t.equal(param('listWidgets', 'q')!.default, undefined, '""');
  t.equal(param('listWidgets', 'mine')!.default, true, 'true is kept');
});

t.test('a write answering its row extended by allOf returns the row', async (t) => {
  t.equal(cap('updateWidget').returns, 'row');
  t.equal(cap('replaceWidget').returns, 'row');
});

t.test('an OpenAPI 3 document split over files: external $refs are followed', async (t) => {
  const split = mkdtempSync(join(tmpdir(), 'svc-import-split-'));
  const schemas = { Gadget: { type: 'object', properties: { id: { type: 'integer' }, part: { $ref: '#/Part' } } } };
  writeFileSync(join(split, 'schemas.json'), JSON.stringify({ ...schemas, Part: { type: 'object' } }));
  const doc = {
    openapi: '3.0.3',
    info: { title: 'Split', version: '1' },
    servers: [{ url: 'https://split.example' }],
    paths: {
      '/gadgets': { get: { operationId: 'listGadgets', responses: json({ type: 'array', items: ref('Gadget') }) } },
    },
    components: { schemas: { Gadget: { $ref: './schemas.json#/Gadget' } } },
  };
  writeFileSync(join(split, 'openapi.json'), JSON.stringify(doc));
  const { cgs: s } = await importAndPack(split);
  t.same(
    s.entities.map((e) => [e.name, e.fields.map((f) => `${f.name}:${f.type}`)]),
    [['Gadget', ['id:integer', 'part:object']]],
  );
});

t.test('relation descriptions that only restate the relation row are left empty', async (t) => {
  const { cgs: demo } = await importAndPack('demo-vendor.yaml');
  const rel = (e: string, r: string) => demo.entities.find((x) => x.name === e)!.relations.find((x) => x.name === r)!;
  t.equal(rel('Brewery', 'beers').description, '', 'a nested list\'s "List a brewery\'s beers"');
  t.equal(rel('Beer', 'brewery').description, '', 'a relation from a breweryId field');
  t.equal(rel('Beer', 'reviews').description, '', 'the reverse, through a list filtering by beerId');
});
