/** compileSource: the bundled catalogs compile clean, shorthand normalizes, output is deterministic. */
import t from 'tap';
import { createHash } from 'node:crypto';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson } from '../../common/canonical.js';
import { compileSource, readSourceDir, type Capability, type Cgs, type SourceText } from '../../pack/index.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CATALOGS = ['brewery', 'helpdesk'];

function compileClean(texts: SourceText[]): { cgs: Cgs; cgs_hash: string } {
  const r = compileSource(texts);
  if (!r.cgs || !r.cgs_hash) throw new Error('expected a clean compile, got ' + JSON.stringify(r.diagnostics, null, 2));
  return { cgs: r.cgs, cgs_hash: r.cgs_hash };
}

const cap = (cgs: Cgs, name: string): Capability => {
  const c = cgs.capabilities.find((x) => x.name === name);
  if (!c) throw new Error(`no capability ${name}`);
  return c;
};

const HEADER = `catalog:
  entry_id: shop
  version: 3
  label: Shop
  description: A small shop.
  backend: {url: "https://api.example.com/v2/"}
`;

/** One catalog that exercises the shorthand forms. */
const SHOP: SourceText[] = [
  { file: 'catalog.yaml', text: HEADER },
  {
    file: 'entities.yaml',
    text: `entities:
  Product:
    description: A product.
    fields:
      sku: {type: string, description: Stock keeping unit}
      name: string
      size: {type: enum, values: [s, m, l], description: Size class}
      tags: {type: array, items: string, description: Free tags}
      price: {type: number, description: Price in EUR}
      addedOn: date
    id: sku
`,
  },
  {
    file: 'capabilities.yaml',
    text: `capabilities:
  listProducts:
    kind: query
    entity: Product
    description: Products.
    params: [size, tags]
  getProduct: {kind: get, entity: Product, description: One product., params: [sku]}
  findProducts:
    kind: search
    entity: Product
    description: Search.
    params:
      q: {type: string, required: true, description: Words}
      size: null
      cheap: {field: price, description: At most this price}
  createProduct:
    kind: create
    entity: Product
    description: Add a product.
    params:
      name: {required: true}
      size: {default: m}
      price: {}
  replaceProduct: {kind: update, entity: Product, description: Replace., params: [sku, name, price]}
  patchProduct:
    kind: update
    entity: Product
    description: Patch by code.
    params:
      code: {type: string, required: true, description: The sku}
      name: null
  removeProduct: {kind: delete, entity: Product, description: Remove., params: [sku, size]}
  featureProduct: {kind: action, entity: Product, description: Feature it., params: [sku]}
  tagProduct:
    kind: action
    entity: Product
    description: Tag by code.
    params:
      code: {type: string, required: true, description: The sku}
  scanProduct:
    kind: get
    entity: Product
    description: Optional path parameter made explicit.
    id_param: sku
    params:
      sku: {required: true}
`,
  },
  {
    file: 'mappings.yaml',
    text: `mappings:
  listProducts:
    method: GET
    path: /products
    pagination: {style: page, page_param: page}
  getProduct: GET /products/{sku}
  findProducts:
    method: GET
    path: /search
    query: {q: "{q}", size: "{size}", max_price: "{cheap}"}
    pagination: {style: offset, offset_param: skip, size_param: take, page_size: 150}
  createProduct: POST /products
  replaceProduct: PUT /products/{sku}
  patchProduct: PATCH /products/{code}
  removeProduct: DELETE /products/{sku}
  featureProduct:
    method: POST
    path: /products/{sku}/feature
    body: {featured: true}
  tagProduct: POST /products/{code}/tags
  scanProduct: GET /scan/{sku}
`,
  },
];

t.test('the bundled catalogs compile clean', async (t) => {
  for (const name of CATALOGS) {
    const r = compileSource(await readSourceDir(join(ROOT, 'fixtures', 'catalogs', name)));
    t.same(r.diagnostics, [], `${name}: no diagnostics`);
    t.equal(r.cgs?.entry_id, name);
    t.equal(r.cgs?.format_version, 1);
    t.match(r.cgs_hash, /^[0-9a-f]{64}$/);
  }
});

t.test('the helpdesk catalog has every capability kind and its relations', async (t) => {
  const { cgs } = compileClean(await readSourceDir(join(ROOT, 'fixtures', 'catalogs', 'helpdesk')));
  t.same(
    cgs.entities.map((e) => e.name),
    ['Customer', 'Ticket', 'Comment'],
  );
  t.same([...new Set(cgs.capabilities.map((c) => c.kind))].sort(), [
    'action',
    'create',
    'delete',
    'get',
    'query',
    'search',
    'update',
  ]);
  t.equal(cgs.auth.scheme, 'none');
  t.equal(cgs.backend.base_url, 'http://127.0.0.1:3000');
  const customer = cgs.entities.find((e) => e.name === 'Customer')!;
  t.match(customer.relations, [
    {
      name: 'tickets',
      target: 'Ticket',
      cardinality: 'many',
      capability: 'listCustomerTickets',
      bind: { customerId: 'id' },
    },
  ]);
  t.match(cap(cgs, 'listCustomerTickets').http, {
    method: 'GET',
    path: '/customers/{customerId}/tickets',
    query: { status: '{status}' },
  });
  const ticket = cgs.entities.find((e) => e.name === 'Ticket')!;
  t.match(ticket.relations, [
    { name: 'customer', target: 'Customer', cardinality: 'one', capability: 'getCustomer', bind: { id: 'customerId' } },
    { name: 'comments', target: 'Comment', cardinality: 'many', capability: 'listComments', bind: { ticketId: 'id' } },
  ]);
  t.match(
    ticket.fields.find((f) => f.name === 'status'),
    { type: 'enum', values: ['open', 'pending', 'closed'] },
  );
  t.match(
    ticket.fields.find((f) => f.name === 'priority'),
    { type: 'enum', values: ['low', 'normal', 'high', 'urgent'] },
  );
  t.match(
    customer.fields.find((f) => f.name === 'tier'),
    { type: 'enum', values: ['free', 'pro', 'enterprise'] },
  );
  t.match(cap(cgs, 'listTickets'), {
    params: [{ name: 'status' }, { name: 'priority' }, { name: 'customerId' }],
    http: {
      pagination: { style: 'page', page_param: '_page', size_param: '_limit', first_page: 1 },
      response: { total: { header: 'X-Total-Count' } },
    },
  });
  t.match(cap(cgs, 'closeTicket'), {
    kind: 'action',
    id_param: 'id',
    returns: 'row',
    http: { method: 'PATCH', path: '/tickets/{id}', body: { status: 'closed' } },
  });
  t.match(cap(cgs, 'updateTicket').http, { method: 'PATCH', path: '/tickets/{id}' });
  t.match(cap(cgs, 'createTicket').params, [
    { name: 'customerId', required: true },
    { name: 'subject', required: true },
    { name: 'body', required: true },
    { name: 'priority', default: 'normal' },
    { name: 'status', default: 'open' },
  ]);
  for (const e of cgs.entities) {
    t.ok(e.description, `${e.name} has a description`);
    for (const f of e.fields) t.ok(f.description, `${e.name}.${f.name} has a description`);
    for (const r of e.relations) t.ok(r.description, `${e.name}.${r.name} has a description`);
  }
  for (const c of cgs.capabilities) {
    t.ok(c.description, `${c.name} has a description`);
    for (const p of c.params) t.ok(p.description, `${c.name}.${p.name} has a description`);
  }
});

t.test('normalization: types, parameters, mappings and kinds', async (t) => {
  const { cgs } = compileClean(SHOP);
  t.equal(cgs.backend.base_url, 'https://api.example.com/v2', 'trailing slash dropped');
  t.same(cgs.auth, { scheme: 'none' }, 'auth defaults to none');
  t.same(cgs.tags, [], 'tags default to none');
  const product = cgs.entities[0]!;
  t.equal(product.id_field, 'sku');
  t.same(product.relations, []);

  t.test('shorthand field types', async (t) => {
    t.same(
      product.fields.find((f) => f.name === 'name'),
      { name: 'name', description: '', type: 'string' },
    );
    t.same(
      product.fields.find((f) => f.name === 'addedOn'),
      { name: 'addedOn', description: '', type: 'date' },
    );
    t.same(
      product.fields.find((f) => f.name === 'tags'),
      { name: 'tags', description: 'Free tags', type: 'array', items: { type: 'string' } },
    );
  });

  t.test('parameters take the type and description of their entity field', async (t) => {
    t.same(
      cap(cgs, 'listProducts').params,
      [
        { name: 'size', description: 'Size class', required: false, type: 'enum', values: ['s', 'm', 'l'] },
        { name: 'tags', description: 'Free tags', required: false, type: 'array', items: { type: 'string' } },
      ],
      'a list of field names',
    );
    const find = cap(cgs, 'findProducts').params;
    t.same(
      find[1],
      { name: 'size', description: 'Size class', required: false, type: 'enum', values: ['s', 'm', 'l'] },
      'null takes the field',
    );
    t.same(
      find[2],
      { name: 'cheap', description: 'At most this price', required: false, type: 'number' },
      '`field:` names another field; an own description wins',
    );
    t.same(
      find[0],
      { name: 'q', description: 'Words', required: true, type: 'string' },
      'an explicit type needs no field',
    );
    const create = cap(cgs, 'createProduct').params;
    t.same(
      create[0],
      { name: 'name', description: '', required: true, type: 'string' },
      '{required: true} keeps the field type',
    );
    t.same(create[1], {
      name: 'size',
      description: 'Size class',
      required: false,
      type: 'enum',
      values: ['s', 'm', 'l'],
      default: 'm',
    });
    t.same(
      create[2],
      { name: 'price', description: 'Price in EUR', required: false, type: 'number' },
      '{} takes the field',
    );
  });

  t.test('mapping string shorthand and terse defaults', async (t) => {
    t.same(
      cap(cgs, 'getProduct').http,
      { method: 'GET', path: '/products/{sku}', query: {}, headers: {}, array_style: 'repeat', response: { path: '' } },
      '"GET /x/{id}" is method + path',
    );
    t.same(
      cap(cgs, 'listProducts').http.query,
      { size: '{size}', tags: '{tags}' },
      'GET: leftover params go to the query',
    );
    t.same(
      cap(cgs, 'removeProduct').http.query,
      { size: '{size}' },
      'DELETE: leftover params go to the query, path params do not',
    );
    t.equal(cap(cgs, 'removeProduct').http.body, undefined, 'DELETE has no body');
    t.same(
      cap(cgs, 'findProducts').http.query,
      { q: '{q}', size: '{size}', max_price: '{cheap}' },
      'an explicit query is kept as written',
    );
    t.same(
      cap(cgs, 'createProduct').http,
      {
        method: 'POST',
        path: '/products',
        query: {},
        headers: {},
        array_style: 'repeat',
        response: { path: '' },
        body: { name: '{name}', size: '{size}', price: '{price}' },
      },
      'POST: leftover params form a JSON body',
    );
    t.same(
      cap(cgs, 'replaceProduct').http.body,
      { name: '{name}', price: '{price}' },
      'PUT: body without the path param',
    );
    t.same(cap(cgs, 'patchProduct').http.body, { name: '{name}' }, 'PATCH');
    t.same(cap(cgs, 'featureProduct').http.body, { featured: true }, 'an explicit body is kept as written');
    t.equal(cap(cgs, 'tagProduct').http.body, undefined, 'no leftover params: no body');
    t.same(cap(cgs, 'tagProduct').http.query, {}, 'POST never fills the query');
  });

  t.test('path parameters become required', async (t) => {
    t.match(cap(cgs, 'getProduct').params, [{ name: 'sku', required: true }]);
    t.match(cap(cgs, 'replaceProduct').params, [
      { name: 'sku', required: true },
      { name: 'name', required: false },
      { name: 'price', required: false },
    ]);
    t.match(cap(cgs, 'removeProduct').params, [
      { name: 'sku', required: true },
      { name: 'size', required: false },
    ]);
  });

  t.test('default returns and id_param per kind', async (t) => {
    const got = Object.fromEntries(cgs.capabilities.map((c) => [c.name, [c.kind, c.returns, c.id_param ?? null]]));
    t.same(
      got,
      {
        listProducts: ['query', 'rows', null],
        getProduct: ['get', 'row', 'sku'],
        findProducts: ['search', 'rows', null],
        createProduct: ['create', 'row', null],
        replaceProduct: ['update', 'row', 'sku'],
        patchProduct: ['update', 'row', 'code'],
        removeProduct: ['delete', 'none', 'sku'],
        featureProduct: ['action', 'row', 'sku'],
        tagProduct: ['action', 'row', null],
        scanProduct: ['get', 'row', 'sku'],
      },
      'the id-field param, else the only required one (not for actions)',
    );
  });

  t.test('pagination defaults', async (t) => {
    t.same(cap(cgs, 'listProducts').http.pagination, {
      style: 'page',
      page_param: 'page',
      page_size: 25,
      max_page_size: 100,
      first_page: 1,
    });
    t.same(
      cap(cgs, 'findProducts').http.pagination,
      { style: 'offset', offset_param: 'skip', size_param: 'take', page_size: 150, max_page_size: 150 },
      'max_page_size is at least page_size; offset has no first_page',
    );
    t.equal(cap(cgs, 'getProduct').http.pagination, undefined, 'no pagination unless declared');
  });
});

t.test('auth and backend normalization', async (t) => {
  const oauth = compileClean([
    {
      file: 'c.yaml',
      text:
        HEADER +
        '  auth: {scheme: oauth2_client_credentials, token_url: "https://id.example.com/token", client_id_env: SHOP_ID, client_secret_env: SHOP_SECRET}\n',
    },
    ...SHOP.slice(1),
  ]);
  t.same(
    oauth.cgs.auth,
    {
      scheme: 'oauth2_client_credentials',
      token_url: 'https://id.example.com/token',
      client_id_env: 'SHOP_ID',
      client_secret_env: 'SHOP_SECRET',
      scopes: [],
    },
    'scopes default to []',
  );
  const key = compileClean([
    { file: 'c.yaml', text: HEADER + '  auth: {scheme: api_key, in: header, name: X-Key, env: SHOP_KEY}\n' },
    ...SHOP.slice(1),
  ]);
  t.same(key.cgs.auth, { scheme: 'api_key', in: 'header', name: 'X-Key', env: 'SHOP_KEY' });
});

t.test('a catalog URL with user:password is refused, and the refusal does not repeat it', async (t) => {
  const backend = compileSource([
    {
      file: 'catalog.yaml',
      text: HEADER.replace('https://api.example.com/v2/', 'https://admin:pw-SECRET@api.example.com/v2/'),
    },
    ...SHOP.slice(1),
  ]);
  t.notOk(backend.cgs, 'nothing is packed');
  t.same(
    backend.diagnostics.map((d) => d.code),
    ['bad_backend'],
  );
  t.match(backend.diagnostics[0]!.message, /carries user:password/);
  t.notMatch(JSON.stringify(backend.diagnostics), /pw-SECRET|admin/, 'the credential is not echoed');
  const token = compileSource([
    {
      file: 'c.yaml',
      text:
        HEADER +
        '  auth: {scheme: oauth2_client_credentials, token_url: "https://id:pw-SECRET@id.example.com/token", client_id_env: SHOP_ID, client_secret_env: SHOP_SECRET}\n',
    },
    ...SHOP.slice(1),
  ]);
  t.same(
    token.diagnostics.map((d) => d.code),
    ['bad_auth'],
  );
  t.notMatch(JSON.stringify(token.diagnostics), /pw-SECRET/);
});

t.test('determinism: file order does not change the CGS or its hash', async (t) => {
  for (const name of CATALOGS) {
    const texts = await readSourceDir(join(ROOT, 'fixtures', 'catalogs', name));
    const a = compileClean(texts);
    const b = compileClean([...texts].reverse());
    const c = compileClean([texts[2]!, texts[0]!, texts[3]!, texts[1]!]);
    t.same(b.cgs, a.cgs, `${name}: same CGS reversed`);
    t.equal(canonicalJson(b.cgs), canonicalJson(a.cgs));
    t.equal(b.cgs_hash, a.cgs_hash, `${name}: same hash reversed`);
    t.equal(c.cgs_hash, a.cgs_hash, `${name}: same hash shuffled`);
  }
  const shop = compileClean(SHOP);
  t.equal(compileClean([...SHOP].reverse()).cgs_hash, shop.cgs_hash);
  t.equal(compileClean(SHOP).cgs_hash, shop.cgs_hash, 'same input, same hash on a second run');
});

t.test('the CGS holds no absolute path, timestamp or platform', async (t) => {
  for (const name of CATALOGS) {
    const dir = join(ROOT, 'fixtures', 'catalogs', name);
    const { cgs } = compileClean(await readSourceDir(dir));
    const text = JSON.stringify(cgs);
    for (const s of [ROOT, dir, tmpdir(), process.cwd(), '.yaml', ...(hostname().length >= 6 ? [hostname()] : [])])
      t.notOk(text.includes(s), `${name}: no ${JSON.stringify(s)}`);
    t.notMatch(text, /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/, `${name}: no timestamp`);
    t.notMatch(text, /\b(linux|darwin|win32|x64|arm64|node)\b/i, `${name}: no platform string`);
    t.same(Object.keys(cgs).sort(), [
      'auth',
      'backend',
      'capabilities',
      'description',
      'entities',
      'entry_id',
      'format_version',
      'label',
      'tags',
      'version',
    ]);
  }
});

t.test('cgs_hash is the SHA-256 of the canonical JSON of the CGS', async (t) => {
  for (const name of CATALOGS) {
    const { cgs, cgs_hash } = compileClean(await readSourceDir(join(ROOT, 'fixtures', 'catalogs', name)));
    t.equal(cgs_hash, createHash('sha256').update(canonicalJson(cgs), 'utf8').digest('hex'), name);
    const changed = structuredClone(cgs);
    changed.description += '.';
    t.not(createHash('sha256').update(canonicalJson(changed)).digest('hex'), cgs_hash, 'any change changes the hash');
  }
});
