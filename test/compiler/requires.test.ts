/**
 * Parameter dependencies (`requires:` in the authoring format): a parameter that works only with
 * another is refused at compile time without it, the teaching table says so, and packing refuses a
 * `requires` that names no parameter of the capability.
 */
import t from 'tap';
import { compileProgram, SymbolTable } from '../../compiler/index.js';
import { renderWave } from '../../compiler/teaching.js';
import { compileSource, Registry, registryEntry } from '../../pack/index.js';

const source = (direction: string) => [
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
      id: {type: string, description: The id}
      name: {type: string, description: The name}
capabilities:
  listProducts:
    kind: query
    entity: Product
    description: Products.
    params:
      name: null
      orderBy: {type: string, description: Field to order by}
      direction: ${direction}
mappings:
  listProducts:
    method: GET
    path: /products
    query: {name: "{name}", order_by: "{orderBy}", dir: "{direction}"}
`,
  },
];

const good = compileSource(source('{type: enum, values: [asc, desc], description: Order, requires: [orderBy]}'));
if (!good.cgs || !good.cgs_hash) throw new Error(JSON.stringify(good.diagnostics));
const registry = new Registry([registryEntry(good.cgs, good.cgs_hash, 'shop.cgs.json')]);
const symbols = new SymbolTable();
const wave = symbols.expose(registry, [{ api: 'shop', entity: 'Product' }]);

t.test('the CGS keeps requires; the teaching table shows it', async (t) => {
  t.same(good.cgs!.capabilities[0]!.params.find((p) => p.name === 'direction')?.requires, ['orderBy']);
  t.match(renderWave(wave, registry, symbols), /direction=asc\|desc \(with orderBy\)/);
});

t.test('a parameter without the one it requires does not compile; with it, it does', async (t) => {
  const bad = compileProgram('e1(direction="desc")', { registry, symbols });
  t.equal(bad.kind, 'error');
  t.match(bad.diagnostics, [
    {
      code: 'missing_argument',
      message: '`direction` works only with `orderBy`',
      hint: /add orderBy="text", or remove direction/,
      span: { line: 1, col: 4 },
    },
  ]);
  const ok = compileProgram('e1(orderBy="name", direction="desc")', { registry, symbols });
  t.equal(ok.kind, 'plan', JSON.stringify(ok.diagnostics));
  t.equal(compileProgram('e1(orderBy="name")', { registry, symbols }).kind, 'plan', 'the other way round is free');
});

t.test('packing refuses a requires that names no parameter, or itself', async (t) => {
  const unknown = compileSource(source('{type: string, description: Order, requires: [ordreBy]}'));
  t.equal(unknown.cgs, undefined);
  t.match(unknown.diagnostics, [
    {
      code: 'unknown_parameter',
      message: '`listProducts.direction` requires `ordreBy`, which is not a parameter of `listProducts`',
      hint: /did you mean `orderBy`/,
    },
  ]);
  const self = compileSource(source('{type: string, description: Order, requires: [direction]}'));
  t.match(self.diagnostics, [{ code: 'unknown_parameter', message: '`listProducts.direction` requires itself' }]);
});
