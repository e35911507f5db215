/**
 * Constraints, `many` and `at_least_one` in programs: every constraint accepted and refused at
 * compile time (`constraint_violation`, a message naming the parameter and the constraint, a hint
 * with the call fixed), a `many` parameter taking one value or a list (each item type-checked),
 * an update with no field refused (`missing_argument`), and the short teaching texts.
 */
import t from 'tap';
import { compileProgram, SymbolTable, type Compiled } from '../../compiler/index.js';
import { capabilityConstraintText, paramConstraintText } from '../../compiler/constraint-text.js';
import { teachabilityCheck } from '../../compiler/teachable.js';
import { compileSource, Registry, registryEntry, type Capability } from '../../pack/index.js';

const domain = `entities:
  Product:
    description: A product.
    fields:
      id: {type: integer, description: The id}
      name: {type: string, description: The name}
      stars: {type: integer, description: Stars}
      color: {type: enum, values: [red, green, blue], description: Colour}
capabilities:
  listProducts:
    kind: query
    entity: Product
    description: Products.
    params:
      name:
        many: true
        minLength: 2
        maxLength: 10
      color:
        many: true
      stars:
        many: true
        minimum: 1
        maximum: 5
      price:
        type: number
        minimum: 0.5
        maximum: 99.5
      code:
        type: string
        pattern: '^[A-Z]{3}$'
      email: {type: string, format: email}
      site: {type: string, format: uri}
      uid: {type: string, format: uuid}
      day: {type: string, format: date}
      at: {type: string, format: date-time}
  getProduct:
    kind: get
    entity: Product
    description: One product.
    params: [id]
  createProduct:
    kind: create
    entity: Product
    description: Add a product.
    params:
      name: {required: true}
      stars:
        required: true
        minimum: 3
        maximum: 5
  updateProduct:
    kind: update
    entity: Product
    description: Change a product.
    params:
      id: null
      name: null
      stars:
        minimum: 1
        maximum: 5
      color: null
  touchProduct:
    kind: update
    entity: Product
    description: Mark a product as seen (changes nothing else).
    at_least_one: []
    params: [id]
mappings:
  listProducts: GET /products
  getProduct: GET /products/{id}
  createProduct: POST /products
  updateProduct: PATCH /products/{id}
  touchProduct: PUT /products/{id}/seen
`;
const packed = compileSource(
  [
    {
      file: 'catalog.yaml',
      text: 'catalog:\n  entry_id: shop\n  version: 1\n  label: Shop\n  description: A shop.\n  backend: {url: "https://api.example.com"}\n',
    },
    { file: 'domain.yaml', text: domain },
  ],
  [teachabilityCheck],
);
if (!packed.cgs || !packed.cgs_hash) throw new Error(JSON.stringify(packed.diagnostics, null, 2));
const registry = new Registry([registryEntry(packed.cgs, packed.cgs_hash, 'shop.cgs.json')]);
const symbols = new SymbolTable();
symbols.expose(registry, [{ api: 'shop', entity: 'Product' }]);
const sym = (name: string) => symbols.capabilitySymbol('shop', name)!.sym;
const cap = (name: string): Capability => registry.capability('shop', name)!;

const compile = (text: string): Compiled => compileProgram(text, { registry, symbols });
function args(text: string): Record<string, unknown> {
  const c = compile(text);
  if (c.kind !== 'plan') throw new Error(`${text}: ${JSON.stringify(c.diagnostics)}`);
  return c.plan.steps[c.plan.steps.length - 1]!.args;
}

t.test('values inside the constraints compile', async (t) => {
  t.same(args('e1(stars=5, price=0.5, name="ab")'), { stars: { lit: 5 }, price: { lit: 0.5 }, name: { lit: 'ab' } });
  t.same(args('e1(code="ABC", email="ann@example.com", site="https://example.com/x")').code, { lit: 'ABC' });
  t.same(args('e1(uid="123e4567-e89b-12d3-a456-426614174000", day="2024-02-29", at="2024-01-31T12:00:00Z")').day, {
    lit: '2024-02-29',
  });
});

t.test('each constraint refused: code, the constraint in the message, a hint with a valid value', async (t) => {
  const cases: Array<[string, string, string | RegExp]> = [
    ['e1(stars=9)', '`stars` must be at most 5; got 9', 'write e1(stars=5)'],
    ['e1(stars=0)', '`stars` must be at least 1; got 0', 'write e1(stars=1)'],
    ['e1(price=100)', '`price` must be at most 99.5; got 100', 'write e1(price=99.5)'],
    ['e1(price=0.1)', '`price` must be at least 0.5; got 0.1', 'write e1(price=0.5)'],
    ['e1(name="a")', '`name` must be at least 2 characters long; got "a"', 'write e1(name="text")'],
    [
      'e1(name="abcdefghijkl")',
      '`name` must be at most 10 characters long; got "abcdefghijkl"',
      'write e1(name="abcdefghij")',
    ],
    ['e1(code="abc")', '`code` must match /^[A-Z]{3}$/; got "abc"', 'write e1(code="ABC")'],
    ['e1(email="ann")', '`email` must be an email address; got "ann"', 'write e1(email="name@example.com")'],
    [
      'e1(site="example.com")',
      '`site` must be an absolute URI; got "example.com"',
      'write e1(site="https://example.com")',
    ],
    ['e1(uid="42")', '`uid` must be a UUID; got "42"', 'write e1(uid="123e4567-e89b-12d3-a456-426614174000")'],
    ['e1(day="31.01.2024")', '`day` must be a date (YYYY-MM-DD); got "31.01.2024"', 'write e1(day="2024-01-31")'],
    [
      'e1(at="2024-01-31")',
      '`at` must be a date-time (ISO 8601); got "2024-01-31"',
      'write e1(at="2024-01-31T12:00:00Z")',
    ],
  ];
  for (const [program, message, hint] of cases) {
    const c = compile(program);
    t.match(c.diagnostics, [{ code: 'constraint_violation', message, hint, span: { line: 1 } }], program);
    t.equal(c.diagnostics.length, 1, `${program}: one diagnostic`);
  }
});

t.test('the hint shows the whole call fixed, on a row and in a binding', async (t) => {
  const update = sym('updateProduct');
  const program = `x = e1(1).${update}(stars=7, name="Pen")`;
  t.match(compile(program).diagnostics, [
    {
      code: 'constraint_violation',
      span: { col: program.indexOf('7') + 1 },
      hint: `write x = e1(1).${update}(stars=5, name="Pen")`,
    },
  ]);
  t.match(compile(`${sym('createProduct')}(name="Pen", stars=1)`).diagnostics, [
    { code: 'constraint_violation', hint: `write ${sym('createProduct')}(name="Pen", stars=3)` },
  ]);
});

t.test('a missing constrained argument is hinted with a value inside its range', async (t) => {
  t.match(compile(`${sym('createProduct')}(name="Pen")`).diagnostics, [{ code: 'missing_argument', hint: /stars=3/ }]);
});

t.test('a many parameter takes one value or a list; each item is checked', async (t) => {
  t.same(args('e1(color="red")').color, { lit: 'red' });
  t.same(args('e1(color=["red", "blue"])').color, { lit: ['red', 'blue'] });
  t.same(args('e1(stars=[1, 5])').stars, { lit: [1, 5] });
  t.match(compile('e1(color=["red", "purple"])').diagnostics, [
    { code: 'enum_value_not_allowed', message: '"purple" is not allowed for `color`', span: { col: 18 } },
  ]);
  t.match(compile('e1(stars=[1, "2"])').diagnostics, [
    { code: 'wrong_type', message: '`stars` takes an integer; got "2"', hint: 'write stars=[1, 2]' },
  ]);
  t.match(compile('e1(stars=[1, 6])').diagnostics, [
    { code: 'constraint_violation', message: '`stars` must be at most 5; got 6', hint: 'write e1(stars=[1, 5])' },
  ]);
  t.match(compile('e1(color=[])').diagnostics, [
    {
      code: 'wrong_type',
      message: /got an empty list/,
      hint: /leave color out, or write color="red" or color=\["red"\]/,
    },
  ]);
  t.match(compile('e1(color=[["red"]])').diagnostics, [{ code: 'wrong_type', message: /a list inside the list/ }]);
  t.match(compile('e1(price=[1, 2])').diagnostics, [
    { code: 'wrong_type', message: '`price` takes a number; got a list' },
  ]);
});

t.test('an update needs at least one field; at_least_one: [] turns it off', async (t) => {
  const update = sym('updateProduct');
  for (const program of [`e1(1).${update}`, `e1(1).${update}()`]) {
    t.match(
      compile(program).diagnostics,
      [
        {
          code: 'missing_argument',
          message: `\`${update}\` needs at least one of name, stars, color`,
          hint: `add one of them: e1(1).${update}(name="text")`,
          span: { line: 1, col: 7 },
        },
      ],
      program,
    );
  }
  t.same(args(`e1(1).${update}(color="red")`), { id: { lit: 1 }, color: { lit: 'red' } });
  t.same(args(`e1(1).${sym('touchProduct')}`), { id: { lit: 1 } }, 'at_least_one: [] allows a call without fields');
  const typo = compile(`e1(1).${update}(nmae="Pen")`).diagnostics;
  t.same(
    typo.map((d) => d.code),
    ['unknown_argument'],
    'a misspelt field is reported as such, not also as missing',
  );
  t.same(
    args(`x = e1(1)\ne1(1).${update}(name=x.name)`).name,
    { ref: { step: 'n1', field: 'name' } },
    'a bound value counts',
  );
});

t.test('teaching texts for constraints, many and at_least_one', async (t) => {
  const list = cap('listProducts');
  const text = (n: string) => paramConstraintText(list.params.find((p) => p.name === n)!);
  t.equal(text('name'), 'one or [..] len 2..10');
  t.equal(text('stars'), 'one or [..] 1..5');
  t.equal(text('code'), '/^[A-Z]{3}$/');
  t.equal(text('email'), 'email');
  t.equal(paramConstraintText({ ...list.params[0]!, many: undefined, minLength: undefined, maxLength: 80 }), 'len ≤80');
  t.equal(paramConstraintText({ ...list.params[3]!, minimum: 1, maximum: undefined }), '≥1');
  t.equal(paramConstraintText(cap('getProduct').params[0]!), '');
  t.equal(capabilityConstraintText(cap('updateProduct')), 'at least one');
  t.equal(
    capabilityConstraintText({ ...cap('updateProduct'), at_least_one: ['name', 'color'] }),
    'at least one of: name, color',
  );
  t.equal(capabilityConstraintText(cap('touchProduct')), undefined);
  t.equal(capabilityConstraintText(list), undefined);
});
