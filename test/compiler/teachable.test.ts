import t from 'tap';
import { teachabilityCheck } from '../../compiler/index.js';
import { compileSource, type Cgs } from '../../pack/index.js';
import { fixtureRegistry } from '../_helpers/registry.js';

const registry = await fixtureRegistry();

const base = `
catalog: {entry_id: shop, version: 1, label: Shop, description: A shop, backend: {url: "http://127.0.0.1:1"}}
entities:
  Product:
    fields: {id: integer, name: string, price: number}
capabilities:
  listProducts: {kind: query, entity: Product, params: [name]}
  getProduct: {kind: get, entity: Product, params: [id]}
`;

function cgsOf(extra: string): Cgs {
  const c = compileSource([{ file: 'shop.yaml', text: base + extra }]);
  if (!c.cgs) throw new Error(JSON.stringify(c.diagnostics));
  return c.cgs;
}

t.test('the bundled catalogs are teachable', async (t) => {
  for (const e of registry.list()) t.same(teachabilityCheck(e.cgs), [], e.entry_id);
});

t.test('a list whose only filter is the search term is shadowed by the search', async (t) => {
  const c = compileSource([
    {
      file: 'shop.yaml',
      text:
        base.replace('params: [name]}', 'params: {name: {required: true}}}') +
        `  searchProducts: {kind: search, entity: Product, params: {name: {required: true}}}
mappings: {listProducts: GET /p, getProduct: "GET /p/{id}", searchProducts: GET /s}
`,
    },
  ]);
  const problems = teachabilityCheck(c.cgs!);
  t.equal(problems.length, 1);
  t.match(problems[0], {
    at: '/capabilities/0',
    error: { code: 'not_teachable', message: /reaches `searchProducts`, not `listProducts`/ },
  });
});

t.test('a search and a list that takes its term too are both teachable', async (t) => {
  const cgs = cgsOf(`  searchProducts: {kind: search, entity: Product, params: {name: {required: true}}}
mappings: {listProducts: GET /p, getProduct: "GET /p/{id}", searchProducts: GET /s}
`);
  t.same(teachabilityCheck(cgs), []);
});

t.test('a required parameter the language reserves cannot be taught', async (t) => {
  const cgs = cgsOf(`  createProduct: {kind: create, entity: Product, params: {p1: {type: string, required: true}}}
mappings: {listProducts: GET /p, getProduct: "GET /p/{id}", createProduct: POST /p}
`);
  const problems = teachabilityCheck(cgs);
  t.match(problems, [{ error: { code: 'not_teachable', message: /does not compile: legacy_symbol/ } }]);
});

t.test('packing runs the check with positions when asked', async (t) => {
  const c = compileSource(
    [
      {
        file: 'shop.yaml',
        text:
          base +
          `  createProduct: {kind: create, entity: Product, params: {p1: {type: string, required: true}}}
mappings: {listProducts: GET /p, getProduct: "GET /p/{id}", createProduct: POST /p}
`,
      },
    ],
    [teachabilityCheck],
  );
  t.equal(c.cgs, undefined, 'no CGS for a catalog that cannot be taught');
  t.match(c.diagnostics, [{ code: 'not_teachable', span: { file: 'shop.yaml', line: 9, col: 3 } }]);
});

t.test("a row's example id satisfies the id parameter's constraints", async (t) => {
  // Before: every example wrote the id "<id>", which breaks `format: uuid` and a pattern.
  const c = compileSource([
    {
      file: 'desk.yaml',
      text: `
catalog: {entry_id: desk, version: 1, label: Desk, description: A desk, backend: {url: "http://127.0.0.1:1"}}
entities:
  Ticket:
    fields: {id: string, subject: string}
  Code:
    fields: {id: string, label: string}
  Day:
    fields: {id: date, note: string}
capabilities:
  listTickets: {kind: query, entity: Ticket}
  getTicket: {kind: get, entity: Ticket, params: {id: {format: uuid}}}
  closeTicket: {kind: action, entity: Ticket, id_param: id, params: {id: {format: uuid}}}
  listCodes: {kind: query, entity: Code}
  getCode: {kind: get, entity: Code, params: {id: {pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'}}}
  listDays: {kind: query, entity: Day}
  getDay: {kind: get, entity: Day, params: [id]}
mappings:
  listTickets: GET /tickets
  getTicket: "GET /tickets/{id}"
  closeTicket: "POST /tickets/{id}/close"
  listCodes: GET /codes
  getCode: "GET /codes/{id}"
  listDays: GET /days
  getDay: "GET /days/{id}"
`,
    },
  ]);
  t.ok(c.cgs, JSON.stringify(c.diagnostics));
  t.same(teachabilityCheck(c.cgs!), []);
});
