/**
 * Free-text search as its own capability and as a filter of the list: `e1(q="x")` uses the search
 * (its terms are given), `e1(q="x", name="y")` the list (the search does not take `name`), and the
 * teachability check accepts both.
 */
import t from 'tap';
import { compileProgram, renderWave, SymbolTable, teachabilityCheck } from '../../compiler/index.js';
import { sourceRegistry } from '../_helpers/registry.js';

const source = `
catalog: {entry_id: shop, version: 1, label: Shop, description: A shop, backend: {url: "http://127.0.0.1:1"}}
entities:
  Product:
    fields: {id: integer, name: string, price: number}
capabilities:
  listProducts: {kind: query, entity: Product, params: {q: {type: string, description: Free text}, name: null}}
  getProduct: {kind: get, entity: Product, params: [id]}
  searchProducts: {kind: search, entity: Product, params: {q: {type: string, required: true, description: Free text}}}
mappings:
  listProducts: GET /p
  getProduct: "GET /p/{id}"
  searchProducts: GET /p/search
`;

const { cgs, registry } = sourceRegistry(source, 'shop.yaml');
const symbols = new SymbolTable();
symbols.expose(registry, [{ api: 'shop', entity: 'Product' }]);

function lastCapability(program: string): string | undefined {
  const r = compileProgram(program, { registry, symbols });
  if (r.kind !== 'plan') return `${r.kind}: ${JSON.stringify(r.kind === 'error' ? r.diagnostics[0] : '')}`;
  return r.plan.steps.at(-1)?.capability;
}

t.test('the search terms pick the search; more filters pick the list', async (t) => {
  t.equal(lastCapability('e1(q="lamp")'), 'searchProducts');
  t.equal(lastCapability('e1(q="lamp", name="Desk lamp")'), 'listProducts');
  t.equal(lastCapability('e1(name="Desk lamp")'), 'listProducts');
  t.equal(lastCapability('e1()'), 'listProducts');
});

t.test('both are teachable, and the table teaches q as a list filter and the search form', async (t) => {
  t.same(teachabilityCheck(cgs), []);
  const fresh = new SymbolTable();
  const table = renderWave(fresh.expose(registry, [{ api: 'shop', entity: 'Product' }]), registry, fresh);
  t.match(table, /^e1\(name=\$\)\[\.\.\]\tshop:Product.*\| filters: q \|.*\| search: e1\(q=\$\)/m);
});
