/**
 * Parameter constraints and lists on import: JSON Schema keywords of parameters become catalog
 * constraints where the catalog has them (exclusive integer bounds made inclusive), the rest is
 * listed in import-report.md; query arrays of scalars become `many` of their item type, sent as
 * repeated keys, or comma-joined (`array_style: comma`) for `explode: false`; a required pattern
 * no example matches is left out so the capability stays teachable. Programs compile against the
 * result: a list for a `many` parameter passes, a value off the scale is `constraint_violation`.
 */
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileProgram } from '../../compiler/index.js';
import { SymbolTable } from '../../compiler/symbols.js';
import { Registry, registryEntry } from '../../pack/index.js';
import type { Capability, ParamDef } from '../../pack/cgs.js';
import { renderQuery } from '../../runtime/request.js';
import { importAndPack } from '../_helpers/import.js';

const ok = {
  '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } },
};
const many = {
  '200': {
    description: 'ok',
    content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Item' } } } },
  },
};
const q = (name: string, schema: object, more: object = {}) => ({ name, in: 'query', schema, ...more });

const DOC = {
  openapi: '3.0.3',
  info: { title: 'Shop', version: '1' },
  servers: [{ url: 'https://shop.example' }],
  paths: {
    '/items': {
      get: {
        operationId: 'listItems',
        parameters: [
          q('minPrice', { type: 'integer', minimum: 0, exclusiveMinimum: true, maximum: 1000 }),
          q('ratio', { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1 }),
          q('step', { type: 'integer', multipleOf: 5 }),
          q('code', { type: 'string', minLength: 2, maxLength: 8, pattern: '^[A-Z0-9]+$' }),
          q('contact', { type: 'string', format: 'email' }),
          q('host', { type: 'string', format: 'hostname' }),
          q('bad', { type: 'string', pattern: '[a-' }),
          q('tag', { type: 'array', items: { type: 'string', maxLength: 20 }, maxItems: 5 }),
          q(
            'color',
            { type: 'array', items: { type: 'string', enum: ['red', 'blue'] } },
            { style: 'form', explode: true },
          ),
          q('size', { type: 'array', items: { type: 'integer', minimum: 1 } }, { style: 'pipeDelimited' }),
          q('level', { type: 'integer', minimum: 1, maximum: 3, default: 7 }),
        ],
        responses: many,
      },
    },
    '/items/{itemId}': {
      get: {
        operationId: 'getItem',
        parameters: [
          {
            name: 'itemId',
            in: 'path',
            required: true,
            schema: { type: 'string', pattern: '^(?=\\d{3}\\.)\\d+\\.\\d+$' },
          },
        ],
        responses: ok,
      },
    },
    '/items/by-ids': {
      get: {
        operationId: 'listItemsByIds',
        parameters: [q('ids', { type: 'array', items: { type: 'integer' } }, { required: true, explode: false })],
        responses: many,
      },
    },
    '/items/mixed': {
      get: {
        operationId: 'listItemsMixed',
        parameters: [
          q('ids', { type: 'array', items: { type: 'integer' } }, { explode: false }),
          q('tag', { type: 'array', items: { type: 'string' } }),
        ],
        responses: many,
      },
    },
  },
  components: {
    schemas: {
      Item: {
        type: 'object',
        properties: { id: { type: 'string' }, name: { type: 'string' }, price: { type: 'integer' } },
      },
    },
  },
};

function write(doc: object): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-constraints-'));
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
  return dir;
}

const { result, cgs, cgs_hash } = await importAndPack(write(DOC), { entryId: 'shop' });
const cap = (name: string) => cgs.capabilities.find((c) => c.name === name)!;
const param = (c: string, p: string): ParamDef | undefined => cap(c).params.find((x) => x.name === p);
const report = result.files['import-report.md']!;

t.test('schema keywords become the constraints the catalog has', async (t) => {
  t.match(
    param('listItems', 'minPrice'),
    { type: 'integer', minimum: 1, maximum: 1000 },
    'exclusive 0 of an integer: ≥1',
  );
  t.match(param('listItems', 'ratio'), { type: 'number', maximum: 1 });
  t.equal(param('listItems', 'ratio')!.minimum, undefined, "a number's exclusive bound is left out");
  t.match(param('listItems', 'code'), { minLength: 2, maxLength: 8, pattern: '^[A-Z0-9]+$' });
  t.match(param('listItems', 'contact'), { type: 'string', format: 'email' });
  for (const [p, k] of [
    ['host', 'format'],
    ['bad', 'pattern'],
    ['step', 'multipleOf'],
  ] as const)
    t.equal((param('listItems', p) as unknown as Record<string, unknown>)[k], undefined, `${p}: no ${k}`);
  t.equal(param('listItems', 'level')!.default, undefined, 'a default off its own scale is left out');
  t.match(param('listItems', 'level'), { minimum: 1, maximum: 3 });
});

t.test('query arrays of scalars are many, repeated or comma-joined', async (t) => {
  t.match(param('listItems', 'tag'), { type: 'string', many: true, maxLength: 20 });
  t.match(param('listItems', 'color'), { type: 'enum', values: ['red', 'blue'], many: true });
  t.equal(param('listItems', 'size'), undefined, 'a pipe-delimited list cannot be sent: left out');
  t.equal(cap('listItems').http.array_style, 'repeat');
  t.match(param('listItemsByIds', 'ids'), { type: 'integer', many: true, required: true });
  t.equal(cap('listItemsByIds').http.array_style, 'comma', 'explode: false');
  t.equal(cap('listItemsMixed').http.array_style, 'repeat', 'one array_style per mapping: the lists repeat');
  const query = (c: Capability, values: Record<string, unknown>) => decodeURIComponent(renderQuery(c, values as never));
  t.equal(query(cap('listItemsByIds'), { ids: [1, 2] }), 'ids=1,2');
  t.equal(query(cap('listItems'), { tag: ['a', 'b'] }), 'tag=a&tag=b');
});

t.test('a required pattern no example matches is left out: the get stays teachable', async (t) => {
  t.match(cap('getItem'), { kind: 'get' });
  t.equal(param('getItem', 'id')!.pattern, undefined);
});

t.test('the report counts what was carried and lists what was not', async (t) => {
  t.match(
    report,
    /## Parameters\n\nConstraints carried over: minimum \d+, maximum \d+, minLength 1, maxLength 2, pattern 1, format 1\./,
  );
  t.match(report, /4 sent as repeated keys[^\n]*1 comma-joined[^\n]*`listItemsByIds\.ids`/);
  for (const line of [
    '| listItems | ratio | exclusiveMinimum 0 (a number',
    '| listItems | step | multipleOf 5 (no catalog constraint) |',
    '| listItems | host | format hostname (not one of',
    '| listItems | bad | pattern /[a-/ (not a JavaScript regular expression',
    '| listItems | tag | maxItems 5 (a `many` list has no length limit) |',
    '| listItems | level | default 7 (it breaks the parameter',
    '| getItem | id | pattern /^(?=\\d{3}\\.)\\d+\\.\\d+$/ (no example value matches it',
    '| listItemsMixed | ids | explode: false (comma-joined), but sent as repeated keys',
  ])
    t.ok(report.includes(line), line);
  t.match(result.log.review.map((r) => r.note).join('\n'), /size \(is a list in pipeDelimited style/);
});

t.test('programs: lists for many parameters, constraint_violation off the scale', async (t) => {
  const registry = new Registry([registryEntry(cgs, cgs_hash, 'shop.cgs.json')]);
  const symbols = new SymbolTable();
  symbols.expose(registry, [{ api: 'shop', entity: 'Item' }]);
  const run = (p: string) => compileProgram(p, { registry, symbols });
  const list = run('e1(tag=["a", "b"], color="red", minPrice=5)');
  t.equal(list.kind, 'plan', JSON.stringify(list.diagnostics));
  const off = run('e1(minPrice=0)');
  t.match(off.diagnostics, [{ code: 'constraint_violation', message: /`minPrice` must be at least 1/ }]);
  const code = run('e1(code="x")');
  t.match(code.diagnostics, [{ code: 'constraint_violation' }]);
});

t.test('OpenAPI 3.1: numeric exclusive bounds', async (t) => {
  const doc = structuredClone(DOC) as typeof DOC & { openapi: string };
  doc.openapi = '3.1.0';
  doc.paths['/items'].get.parameters = [
    q('minPrice', { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 100 }),
    q('ratio', { type: 'number', exclusiveMaximum: 1 }),
  ];
  const { cgs: c31, result: r31 } = await importAndPack(write(doc), { entryId: 'shop' });
  const list = c31.capabilities.find((c) => c.name === 'listItems')!;
  t.match(
    list.params.find((p) => p.name === 'minPrice'),
    { minimum: 1, maximum: 99 },
  );
  t.equal(list.params.find((p) => p.name === 'ratio')!.maximum, undefined);
  t.ok(r31.files['import-report.md']!.includes('| listItems | ratio | exclusiveMaximum 1 (a number'));
});
