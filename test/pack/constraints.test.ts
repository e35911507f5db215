/**
 * Parameter constraints, `many` and `at_least_one` in the authoring format: what the CGS keeps
 * (every default explicit: an update's `at_least_one`), the loader's checks of a hand-edited CGS,
 * and the shared value rules (formats, examples). The refusals with positions are the
 * fixtures/invalid/constraints case.
 */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkCgs,
  compileSource,
  type Capability,
  type Cgs,
  type ParamDef,
  type SourceText,
} from '../../pack/index.js';
import {
  constraintExample,
  constraintProblem,
  fitsFormat,
  paramValueFits,
  valueProblem,
} from '../../pack/param-constraints.js';
import { teachabilityCheck } from '../../compiler/teachable.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** A shop with one query and one update; `listParams`, `updateExtra` and `mapping` are raw YAML. */
function shop(listParams: string, updateExtra = '', mapping = 'GET /products'): SourceText[] {
  return [
    {
      file: 'catalog.yaml',
      text: 'catalog:\n  entry_id: shop\n  version: 1\n  label: Shop\n  description: A shop.\n  backend: {url: "https://api.example.com"}\n',
    },
    {
      file: 'domain.yaml',
      text: `entities:
  Product:
    description: A product.
    fields:
      id: {type: integer, description: The id}
      name: {type: string, description: The name}
      stars: {type: integer, description: Stars}
capabilities:
  listProducts:
    kind: query
    entity: Product
    description: Products.
    params:
${listParams}
  updateProduct:
    kind: update
    entity: Product
    description: Change a product.
    params: [id, name, stars]
${updateExtra}
mappings:
  listProducts: ${mapping}
  updateProduct: PATCH /products/{id}
`,
    },
  ];
}

function clean(texts: SourceText[]): Cgs {
  const r = compileSource(texts, [teachabilityCheck]);
  if (!r.cgs) throw new Error('expected a clean compile, got ' + JSON.stringify(r.diagnostics, null, 2));
  return r.cgs;
}

const cap = (cgs: Cgs, name: string): Capability => cgs.capabilities.find((c) => c.name === name)!;
const param = (c: Capability, name: string): ParamDef => c.params.find((p) => p.name === name)!;

t.test('the CGS keeps many and each constraint as written, on inherited and own types', async (t) => {
  const cgs = clean(
    shop(`      name:
        many: true
        minLength: 2
        maxLength: 40
      stars:
        minimum: 1
        maximum: 5
      code:
        type: string
        pattern: '^[A-Z]{3}$'
      email:
        type: string
        format: email
      plain:
        type: string
        many: false`),
  );
  const list = cap(cgs, 'listProducts');
  t.match(param(list, 'name'), { type: 'string', many: true, minLength: 2, maxLength: 40, description: 'The name' });
  t.match(param(list, 'stars'), { type: 'integer', minimum: 1, maximum: 5 });
  t.equal(param(list, 'code').pattern, '^[A-Z]{3}$');
  t.equal(param(list, 'email').format, 'email');
  t.notOk('many' in param(list, 'plain'), '`many: false` is the default: not written');
  t.same(checkCgs(cgs), [], 'the loader accepts what packing wrote');
});

t.test('an update gets at_least_one = its optional parameters but the id, written out', async (t) => {
  const cgs = clean(shop('      name: null'));
  t.same(cap(cgs, 'updateProduct').at_least_one, ['name', 'stars']);
  t.notOk('at_least_one' in cap(cgs, 'listProducts'), 'a query has none by default');
  const off = clean(shop('      name: null', '    at_least_one: []'));
  t.same(cap(off, 'updateProduct').at_least_one, [], 'an author turns it off with []');
  const own = clean(shop('      name: null', '    at_least_one: [stars]'));
  t.same(cap(own, 'updateProduct').at_least_one, ['stars'], 'an author list is kept as written');
});

t.test('at_least_one on a query is kept; an empty one there is the default, dropped', async (t) => {
  const src = shop('      name: null\n      stars: null');
  src[1]!.text = src[1]!.text.replace(
    '    description: Products.\n',
    '    description: Products.\n    at_least_one: [name, stars]\n',
  );
  t.same(cap(clean(src), 'listProducts').at_least_one, ['name', 'stars']);
  const empty = shop('      name: null');
  empty[1]!.text = empty[1]!.text.replace(
    '    description: Products.\n',
    '    description: Products.\n    at_least_one: []\n',
  );
  t.notOk('at_least_one' in cap(clean(empty), 'listProducts'));
});

t.test('a required parameter with constraints packs: the teachable example satisfies them', async (t) => {
  const cgs = clean(
    shop(`      code:
        type: string
        required: true
        pattern: '^[A-Z]{3}$'
      mail:
        type: string
        required: true
        format: email
      stars:
        required: true
        minimum: 3
        maximum: 5`),
  );
  t.ok(cgs, 'no not_teachable');
});

t.test('a many parameter in a query template is fine; in a path it is bad_mapping', async (t) => {
  const ok = compileSource(
    shop('      name:\n        many: true', '', '{method: GET, path: /products, query: {q: "{name}"}}'),
  );
  t.same(ok.diagnostics, []);
  const bad = compileSource(shop('      name:\n        many: true', '', 'GET /products/{name}'));
  t.match(bad.diagnostics, [
    { code: 'bad_mapping', message: /path variable `\{name\}` of `listProducts` is a `many` parameter/, hint: /query/ },
  ]);
});

t.test('the loader refuses a hand-edited CGS whose constraint does not fit (checkCgs)', async (t) => {
  const cgs = clean(shop('      name: null'));
  const edited = structuredClone(cgs);
  Object.assign(param(cap(edited, 'listProducts'), 'name'), { pattern: '(' });
  Object.assign(cap(edited, 'updateProduct'), { at_least_one: ['nmae'] });
  t.match(
    checkCgs(edited).map((l) => ({ code: l.error.code, at: l.at })),
    [
      { code: 'bad_type', at: '/capabilities/0/params/0/pattern' },
      { code: 'unknown_parameter', at: '/capabilities/1/at_least_one/0' },
    ],
  );
  t.equal(checkCgs(edited).length, 2);
});

t.test('the bundled catalogs: rating 1..5 on createReview, many filters, updates with at_least_one', async (t) => {
  const packed = join(ROOT, 'fixtures', 'packed');
  const load = (id: string) =>
    JSON.parse(
      readFileSync(
        join(
          packed,
          readdirSync(packed).find((f) => f.startsWith(`${id}.`) && f.endsWith('.cgs.json'))!,
        ),
        'utf8',
      ),
    ) as Cgs;
  const brewery = load('brewery');
  const helpdesk = load('helpdesk');
  t.match(param(cap(brewery, 'createReview'), 'rating'), { type: 'integer', minimum: 1, maximum: 5, required: true });
  t.equal(param(cap(brewery, 'listBeers'), 'style').many, true);
  t.equal(param(cap(helpdesk, 'listTickets'), 'status').many, true);
  t.same(cap(brewery, 'updateBrewery').at_least_one, ['name', 'city', 'country', 'kind', 'website']);
  t.same(cap(helpdesk, 'updateTicket').at_least_one, ['subject', 'body', 'status', 'priority']);
});

const p = (extra: Partial<ParamDef>): ParamDef =>
  ({ name: 'x', description: '', required: false, type: 'string', ...extra }) as ParamDef;

t.test('what each format accepts', async (t) => {
  const cases: Array<[Parameters<typeof fitsFormat>[0], string[], string[]]> = [
    [
      'email',
      ['ann@example.com', 'a.b+c@mail.example.co.uk'],
      ['ann', 'ann@example', 'a b@example.com', 'a@@example.com', '@example.com'],
    ],
    [
      'uri',
      ['https://example.com/x?y=1', 'mailto:ann@example.com', 'urn:isbn:0451450523'],
      ['example.com', '/relative/path', 'https://exa mple.com', ''],
    ],
    [
      'uuid',
      ['123e4567-e89b-12d3-a456-426614174000', '123E4567-E89B-12D3-A456-426614174000'],
      ['123e4567e89b12d3a456426614174000', '123e4567-e89b-12d3-a456-42661417400g'],
    ],
    ['date', ['2024-02-29'], ['2024-13-01', '2024-1-1', '31.01.2024', '2024-01-31T12:00:00Z']],
    [
      'date-time',
      ['2024-01-31T12:00:00Z', '2024-01-31T12:00+02:00', '2024-01-31T12:00:00.5-05:00'],
      ['2024-01-31', '2024-01-31 12:00:00', 'yesterday'],
    ],
  ];
  for (const [format, good, bad] of cases) {
    for (const s of good) t.ok(fitsFormat(format, s), `${format} accepts ${s}`);
    for (const s of bad) t.notOk(fitsFormat(format, s), `${format} refuses ${JSON.stringify(s)}`);
  }
});

t.test('constraint problems name the parameter and the constraint', async (t) => {
  t.same(constraintProblem(p({ name: 'rating', type: 'integer', maximum: 5 }), 7), {
    constraint: 'maximum',
    message: '`rating` must be at most 5',
  });
  t.match(constraintProblem(p({ minimum: 1, type: 'integer' }), 0), { constraint: 'minimum', message: /at least 1$/ });
  t.match(constraintProblem(p({ minLength: 2 }), 'é'), {
    constraint: 'minLength',
    message: /at least 2 characters long/,
  });
  t.equal(constraintProblem(p({ maxLength: 2 }), 'éé'), undefined, 'length counts characters, not UTF-16 units');
  t.match(constraintProblem(p({ pattern: '^[A-Z]{3}$' }), 'abc'), {
    constraint: 'pattern',
    message: '`x` must match /^[A-Z]{3}$/',
  });
  t.equal(constraintProblem(p({ pattern: '[0-9]' }), 'a1b'), undefined, 'a pattern is unanchored, as in JSON Schema');
  t.match(constraintProblem(p({ format: 'uuid' }), 'nope'), { constraint: 'format', message: '`x` must be a UUID' });
  t.match(
    valueProblem(p({ many: true, maxLength: 3 }), ['abc', 'abcd']),
    { constraint: 'maxLength' },
    'each item of a list',
  );
});

t.test('paramValueFits: a many parameter takes one value or a non-empty list', async (t) => {
  const many = p({ many: true, type: 'integer' });
  t.ok(paramValueFits(many, 1));
  t.ok(paramValueFits(many, [1, 2]));
  t.notOk(paramValueFits(many, []));
  t.notOk(paramValueFits(many, [1, 'a']));
  t.notOk(paramValueFits(p({ type: 'integer' }), [1, 2]), 'a plain parameter takes no list');
});

t.test('constraintExample: a value that satisfies the constraints, or undefined', async (t) => {
  t.equal(constraintExample(p({ type: 'integer', minimum: 3, maximum: 5 })), 3);
  t.equal(constraintExample(p({ type: 'integer', maximum: 0 })), 0);
  t.equal(constraintExample(p({ type: 'number', minimum: 0, maximum: 1 })), 1);
  t.equal(constraintExample(p({ format: 'email' })), 'name@example.com');
  t.equal(constraintExample(p({ pattern: '^[A-Z]{3}$' })), 'ABC');
  t.equal(constraintExample(p({ pattern: '^[A-Z]{2}$' })), 'AB');
  t.equal(constraintExample(p({ minLength: 6 })), 'textxx');
  t.equal(
    constraintExample(p({ pattern: '^\\d{5}-\\d{4}$' })),
    '11111-1111',
    "no simple shape fits: the pattern's sample",
  );
  t.equal(constraintExample(p({ pattern: '^(?=\\d{3}-)\\d+-\\d+$' })), undefined, 'a lookahead: no sample, no shape');
  t.equal(constraintExample(p({ pattern: '^arn:.*', minLength: 20 })), 'arn:textxxxxxxxxxxxx', 'after a literal start');
  t.equal(constraintExample(p({ pattern: '^sk_[a-z]+$' })), 'sk_text');
  t.equal(constraintExample(p({ pattern: '^https:\\/\\/' })), 'https://text', 'escaped literals');
  t.equal(constraintExample(p({ pattern: '^v[0-9]+$' })), 'v123', 'a start before a class');
  t.equal(constraintExample(p({})), undefined, 'no constraint: the type example serves');
});
