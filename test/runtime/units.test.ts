/** Pure pieces of the runtime: request building, decoding, coercion, pagination, retry timing, progress coalescing. */
import t from 'tap';
import type { Capability, Entity, FieldDef, HttpMapping, Pagination } from '../../pack/cgs.js';
import {
  atPath,
  backoffMs,
  buildRequest,
  coalesceProgress,
  coerce,
  decodeResponse,
  isResetError,
  nextLinkOf,
  nextPage,
  pageQuery,
  pageSize,
  project,
  retryAfterMs,
  shapeRow,
  shapeRows,
  vendorMessage,
  type ProgressEvent,
  type RetryPolicy,
  type Timers,
} from '../../runtime/index.js';
import type { Row } from '../../runtime/decode.js';

const BASE = 'https://api.example.test/v2';

function cap(over: Omit<Partial<Capability>, 'http'> & { http?: Partial<HttpMapping> } = {}): Capability {
  const { http, ...rest } = over;
  return {
    name: 'listItems',
    kind: 'query',
    entity: 'Item',
    description: 'test capability',
    params: [],
    returns: 'rows',
    ...rest,
    http: {
      method: 'GET',
      path: '/items',
      query: {},
      headers: {},
      array_style: 'repeat',
      response: { path: '' },
      ...http,
    },
  };
}

const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const JSON_CT = { 'content-type': 'application/json; charset=utf-8' };
/** `decodeResponse` of a 200 answer with these headers (lower-case names, as `HttpResponse` has them). */
const decode = (c: Capability, headers: Record<string, string>, body: Buffer) =>
  decodeResponse(c, { status: 200, headers, body });

t.test('buildRequest', async (t) => {
  t.test('path parameters are URL-encoded, one segment each', async (t) => {
    const req = buildRequest(BASE, cap({ http: { path: '/items/{id}/notes/{slug}' } }), { id: 'a/b c', slug: 'ü?#&' });
    t.equal(req.url, `${BASE}/items/a%2Fb%20c/notes/%C3%BC%3F%23%26`);
    t.equal(req.method, 'GET');
    t.equal(req.headers.accept, 'application/json');
    t.equal(req.body, undefined, 'a GET carries no body');
  });

  t.test('numbers and booleans are written as JSON scalars in path and query', async (t) => {
    const req = buildRequest(
      BASE,
      cap({ http: { path: '/items/{id}', query: { active: '{active}', min: '{price}' } } }),
      { id: 7, active: false, price: 2.5 },
    );
    const u = new URL(req.url);
    t.equal(u.pathname, '/v2/items/7');
    t.equal(u.searchParams.get('active'), 'false');
    t.equal(u.searchParams.get('min'), '2.5');
  });

  t.test('array_style repeat writes one pair per item', async (t) => {
    const req = buildRequest(BASE, cap({ http: { query: { tag: '{tags}' }, array_style: 'repeat' } }), {
      tags: ['a b', 'c,d', 3],
    });
    t.same(new URL(req.url).searchParams.getAll('tag'), ['a b', 'c,d', '3']);
  });

  t.test('array_style comma joins the items into one value', async (t) => {
    const req = buildRequest(BASE, cap({ http: { query: { tag: '{tags}' }, array_style: 'comma' } }), {
      tags: ['a', 'b', 3],
    });
    t.same(new URL(req.url).searchParams.getAll('tag'), ['a,b,3']);
  });

  t.test('absent optional parameters are omitted from query, headers and body', async (t) => {
    const c = cap({
      http: { query: { kind: '{kind}', q: 'name:{name}', fixed: 'yes' }, headers: { 'X-Kind': '{kind}' } },
    });
    const req = buildRequest(BASE, c, {});
    const u = new URL(req.url);
    t.same([...u.searchParams.keys()], ['fixed'], 'only the constant stays');
    t.notOk('x-kind' in req.headers);
    const nulls = buildRequest(BASE, c, { kind: null });
    t.same([...new URL(nulls.url).searchParams.keys()], ['fixed'], 'null counts as absent');
    const none = buildRequest(BASE, cap({ http: { query: { kind: '{kind}' } } }), {});
    t.equal(none.url, `${BASE}/items`, 'no dangling `?` without query parameters');
  });

  t.test('interpolated query templates keep their constant text', async (t) => {
    const req = buildRequest(BASE, cap({ http: { query: { q: 'name:{name} kind:{kind}' } } }), {
      name: 'x y',
      kind: 'alpha',
    });
    t.equal(new URL(req.url).searchParams.get('q'), 'name:x y kind:alpha');
  });

  t.test('constant and templated headers, names lower-cased', async (t) => {
    const req = buildRequest(
      BASE,
      cap({ http: { headers: { 'X-Api-Version': '2024-01-01', 'X-Tenant': 'tenant-{tenant}' } } }),
      { tenant: 'acme' },
    );
    t.equal(req.headers['x-api-version'], '2024-01-01');
    t.equal(req.headers['x-tenant'], 'tenant-acme');
    t.equal(req.headers.accept, 'application/json');
  });

  t.test('extras: pagination query overrides, auth headers are added', async (t) => {
    const req = buildRequest(
      BASE,
      cap({ http: { query: { limit: '{limit}' } } }),
      { limit: 5 },
      { query: { limit: '50', page: '2' }, headers: { authorization: 'Bearer x' } },
    );
    const u = new URL(req.url);
    t.same(u.searchParams.getAll('limit'), ['50'], 'set, not appended');
    t.equal(u.searchParams.get('page'), '2');
    t.equal(req.headers.authorization, 'Bearer x');
  });

  t.test('JSON body: whole-value templates keep types, interpolations are strings, absent keys dropped', async (t) => {
    const c = cap({
      kind: 'create',
      returns: 'row',
      http: {
        method: 'POST',
        body: {
          name: '{name}',
          price: '{price}',
          active: '{active}',
          tags: '{tags}',
          meta: '{meta}',
          label: 'item {name}',
          version: 1,
          nested: { kind: '{kind}', fixed: true },
          list: ['{name}', '{kind}'],
        },
      },
    });
    const req = buildRequest(BASE, c, { name: 'Lamp', price: 12.5, active: false, tags: ['a', 'b'], meta: { x: 1 } });
    t.equal(req.method, 'POST');
    t.equal(req.headers['content-type'], 'application/json');
    t.same(JSON.parse(req.body as string), {
      name: 'Lamp',
      price: 12.5,
      active: false,
      tags: ['a', 'b'],
      meta: { x: 1 },
      label: 'item Lamp',
      version: 1,
      nested: { fixed: true },
      list: ['Lamp'],
    });
    t.strictSame(JSON.parse(req.body as string).price, 12.5, 'a number stays a number');
  });

  t.test('a constant body is sent as is; GET never sends the body template', async (t) => {
    const post = buildRequest(
      BASE,
      cap({ kind: 'action', returns: 'none', http: { method: 'PATCH', path: '/items/{id}', body: { active: false } } }),
      { id: 3 },
    );
    t.equal(post.body, '{"active":false}');
    t.equal(post.url, `${BASE}/items/3`);
    const get = buildRequest(BASE, cap({ http: { body: { active: false } } }), {});
    t.equal(get.body, undefined);
    t.notOk('content-type' in get.headers);
  });
});

t.test('decodeResponse', async (t) => {
  t.test('rows at a dot path, JSON content types with parameters and +json', async (t) => {
    const c = cap({ http: { response: { path: 'data.items' } } });
    const d = decode(
      c,
      { 'content-type': 'application/vnd.api+json; charset=utf-8' },
      json({ data: { items: [{ id: 1 }, { id: 2 }] } }),
    );
    t.ok(d.ok);
    if (d.ok) t.same(d.rows, [{ id: 1 }, { id: 2 }]);
  });

  t.test('the body itself with path ""; non-object entries are dropped', async (t) => {
    const d = decode(cap(), JSON_CT, json([{ id: 1 }, null, 3, [4], { id: 2 }]));
    t.ok(d.ok);
    if (d.ok) t.same(d.rows, [{ id: 1 }, { id: 2 }]);
  });

  t.test('totals from a header (any case) and from the body', async (t) => {
    const h = decode(
      cap({ http: { response: { path: '', total: { header: 'X-Total-Count' } } } }),
      { ...JSON_CT, 'x-total-count': '42' },
      json([]),
    );
    t.ok(h.ok && h.total === 42, 'header total');
    const b = decode(
      cap({ http: { response: { path: 'items', total: { path: 'meta.total' } } } }),
      JSON_CT,
      json({ items: [], meta: { total: 7 } }),
    );
    t.ok(b.ok && b.total === 7, 'body total');
    const s = decode(
      cap({ http: { response: { path: 'items', total: { path: 'meta.total' } } } }),
      JSON_CT,
      json({ items: [], meta: { total: '19' } }),
    );
    t.ok(s.ok && s.total === 19, 'numeric string total');
    const bad = decode(
      cap({ http: { response: { path: '', total: { header: 'X-Total-Count' } } } }),
      { ...JSON_CT, 'x-total-count': 'many' },
      json([]),
    );
    t.ok(bad.ok && bad.total === undefined, 'an unparsable total is ignored');
  });

  t.test('one row for row-returning capabilities', async (t) => {
    const c = cap({ kind: 'get', returns: 'row', http: { path: '/items/{id}', response: { path: 'data' } } });
    const d = decode(c, JSON_CT, json({ data: { id: 9 } }));
    t.ok(d.ok);
    if (d.ok) t.same(d.rows, [{ id: 9 }]);
    const list = decode(c, JSON_CT, json({ data: [{ id: 9 }] }));
    t.notOk(list.ok);
    if (!list.ok) t.match(list.problem, /expected one row \(an object\) at `data`, found a list/);
  });

  t.test("a read's rows must carry a declared field (response_shape_mismatch)", async (t) => {
    const item: Entity = {
      name: 'Item',
      description: 'an item',
      id_field: 'id',
      fields: [
        { name: 'id', type: 'integer', description: 'id' },
        { name: 'name', type: 'string', description: 'name' },
      ],
      relations: [],
    };
    const get = cap({ kind: 'get', returns: 'row', http: { path: '/items/{id}' } });
    const read = (c: Capability, v: unknown) =>
      decodeResponse(c, { status: 200, headers: JSON_CT, body: json(v) }, item);
    const sparse = read(get, { name: 'only a name' });
    t.ok(sparse.ok, 'a sparse row with one declared field passes');
    const wrapped = read(get, { item: { id: 1, name: 'x' } });
    t.notOk(wrapped.ok);
    if (!wrapped.ok) {
      t.equal(wrapped.code, 'response_shape_mismatch');
      t.match(wrapped.problem, /the row at `\(body\)` carries none of Item's fields \(id, name\); it has `item`/);
      t.match(wrapped.hint, /set `response: \{path: item\}`/);
    }
    const empty = read(get, {});
    t.ok(!empty.ok && empty.code === 'response_shape_mismatch' && /it is empty/.test(empty.problem), '{} fails');
    const list = read(cap({ http: { response: { path: 'data' } } }), { data: [{ id: 1 }, null] });
    t.ok(!list.ok && /row 2 at `data` is null/.test(list.problem), 'a null list item fails');
    const write = read(cap({ kind: 'create', returns: 'row', http: { method: 'POST' } }), { ok: true });
    t.ok(write.ok, "a write's answer is not checked (the write has landed)");
    const noEntity = decode(get, JSON_CT, json({}));
    t.ok(noEntity.ok, 'without an entity nothing is checked');
  });

  t.test('a total that is not a count is ignored and kept as sent', async (t) => {
    const c = cap({ http: { response: { path: 'items', total: { path: 'meta.total' } } } });
    const cases: Array<[unknown, number | undefined, string | undefined]> = [
      [-75905565, undefined, '-75905565'],
      ['-3', undefined, '-3'],
      [2.5, undefined, '2.5'],
      [1e300, undefined, '1e+300'],
      ['lots', undefined, 'lots'],
      [{ n: 1 }, undefined, '{"n":1}'],
      [null, undefined, undefined],
      [0, 0, undefined],
      [' 12 ', 12, undefined],
    ];
    for (const [sent, total, ignored] of cases) {
      const d = decode(c, JSON_CT, json({ items: [], meta: { total: sent } }));
      t.ok(d.ok);
      if (d.ok) t.same([d.total, d.totalIgnored], [total, ignored], JSON.stringify(sent));
    }
  });

  t.test('shape, content type and JSON problems are reported, not thrown', async (t) => {
    const shape = decode(cap({ http: { response: { path: 'items' } } }), JSON_CT, json({ items: { id: 1 } }));
    t.notOk(shape.ok);
    if (!shape.ok) t.match(shape.problem, /expected a list of rows at `items`, found an object/);
    const missing = decode(cap({ http: { response: { path: 'items' } } }), JSON_CT, json({ other: [] }));
    if (!missing.ok) t.match(missing.problem, /found nothing/);
    else t.fail('a missing path must be a problem');
    const html = decode(cap(), { 'content-type': 'text/html' }, Buffer.from('<html>oops</html>'));
    t.notOk(html.ok);
    if (!html.ok) t.match(html.problem, /text\/html/);
    const noType = decode(cap(), {}, json([]));
    t.notOk(noType.ok, 'no content type is not JSON');
    const malformed = decode(cap(), JSON_CT, Buffer.from('[{"id": 1,'));
    t.notOk(malformed.ok);
    if (!malformed.ok) t.match(malformed.problem, /malformed JSON/);
    const empty = decode(cap(), JSON_CT, Buffer.alloc(0));
    t.notOk(empty.ok);
  });

  t.test('capabilities returning nothing accept empty and non-JSON bodies', async (t) => {
    const c = cap({ kind: 'delete', returns: 'none', http: { method: 'DELETE', path: '/items/{id}' } });
    t.ok(decode(c, {}, Buffer.alloc(0)).ok);
    t.ok(decode(c, { 'content-type': 'text/plain' }, Buffer.from('deleted')).ok);
    const d = decode(c, JSON_CT, json({ ok: true }));
    t.ok(d.ok && d.rows.length === 0);
  });

  t.test('cursor markers from the body; empty, null and absent cursors end', async (t) => {
    const pg: Pagination = {
      style: 'cursor',
      cursor_param: 'cursor',
      next_cursor: 'meta.next',
      page_size: 3,
      max_page_size: 3,
    };
    const c = cap({ http: { pagination: pg, response: { path: 'items' } } });
    const marker = (next: unknown) => {
      const d = decode(c, JSON_CT, json({ items: [{ id: 1 }], meta: { next } }));
      return d.ok ? d.nextCursor : 'error';
    };
    t.equal(marker('abc'), 'abc');
    t.equal(marker(17), '17', 'numeric cursors become strings');
    t.equal(marker(''), undefined);
    t.equal(marker(null), undefined);
    t.equal(marker(undefined), undefined);
  });

  t.test('link markers from the Link header', async (t) => {
    const c = cap({ http: { pagination: { style: 'link', first_page: 1, page_size: 10, max_page_size: 100 } } });
    const d = decode(c, { ...JSON_CT, link: '<https://api.example.test/items?page=2>; rel="next"' }, json([{ id: 1 }]));
    t.ok(d.ok && d.nextLink === 'https://api.example.test/items?page=2');
  });

  t.test('atPath', async (t) => {
    t.same(atPath({ a: { b: [1] } }, 'a.b'), [1]);
    t.equal(atPath({ a: 1 }, 'a.b'), undefined);
    t.equal(atPath(null, 'a'), undefined);
    t.same(atPath([1], ''), [1]);
  });
});

t.test('nextLinkOf parses the forms vendors send', async (t) => {
  const u = 'https://api.example.test/items?page=3';
  t.equal(
    nextLinkOf(
      `<https://api.example.test/items?page=1>; rel="prev", <${u}>; rel="next", <https://api.example.test/items?page=9>; rel="last"`,
    ),
    u,
    'GitHub style, next in the middle',
  );
  t.equal(nextLinkOf(`<${u}>; rel="next"`), u);
  t.equal(nextLinkOf(`<${u}>;rel=next`), u, 'unquoted, no blank');
  t.equal(nextLinkOf(`<${u}> ; REL="NEXT"`), u, 'case-insensitive');
  t.equal(nextLinkOf(`<${u}>; title="more"; rel="next"`), u, 'other parameters first');
  t.equal(nextLinkOf(`<${u}>; rel="last next"`), u, 'several relation types');
  t.equal(
    nextLinkOf(`<https://x.test/a?ids=1,2&page=2>; rel="next"`),
    'https://x.test/a?ids=1,2&page=2',
    'a comma inside the URL',
  );
  t.equal(nextLinkOf(`<https://x.test/a?page=1>; rel="first",<${u}>; rel="next"`), u, 'no blank after the comma');
  t.equal(nextLinkOf(`<${u}>; rel="prev"`), undefined);
  t.equal(nextLinkOf(`<${u}>; rel="prev", <${u}>; rel="last"`), undefined);
  t.equal(nextLinkOf(undefined), undefined);
  t.equal(nextLinkOf(''), undefined);
  t.equal(nextLinkOf('garbage'), undefined);
  // RFC 5005 registers `next-archive`; it is a different relation type than `next`.
  t.equal(nextLinkOf(`<${u}>; rel="next-archive"`), undefined, 'rel="next-archive" is not rel="next"');
});

t.test('coerce, shapeRow, shapeRows, project', async (t) => {
  t.equal(coerce({ type: 'integer' }, '12'), 12);
  t.equal(coerce({ type: 'integer' }, ' -3 '), -3);
  t.equal(coerce({ type: 'integer' }, '12.5'), '12.5', 'not an integer: left alone');
  t.equal(coerce({ type: 'integer' }, 'abc'), 'abc');
  t.equal(coerce({ type: 'number' }, '3.25'), 3.25);
  t.equal(coerce({ type: 'number' }, '-1e3'), -1000);
  t.equal(coerce({ type: 'number' }, ''), '', 'an empty string is not zero');
  t.equal(coerce({ type: 'number' }, 'n/a'), 'n/a');
  t.equal(coerce({ type: 'boolean' }, 'true'), true);
  t.equal(coerce({ type: 'boolean' }, 'false'), false);
  t.equal(coerce({ type: 'boolean' }, 1), true);
  t.equal(coerce({ type: 'boolean' }, '0'), false);
  t.equal(coerce({ type: 'boolean' }, 'yes'), 'yes');
  t.equal(coerce({ type: 'string' }, 42), '42');
  t.equal(coerce({ type: 'string' }, true), 'true');
  t.equal(coerce({ type: 'date' }, 20240101), '20240101');
  t.equal(coerce({ type: 'string' }, 'x'), 'x');
  t.equal(coerce({ type: 'integer' }, null), null);
  t.equal(coerce({ type: 'enum', values: [1, 2, 3] }, '2'), 2);
  t.equal(coerce({ type: 'enum', values: ['1', '2'] }, 2), '2');
  t.equal(coerce({ type: 'enum', values: ['a', 'b'] }, 'a'), 'a');
  t.same(coerce({ type: 'array', items: { type: 'integer' } }, ['1', 2, 'x']), [1, 2, 'x']);
  const fields: FieldDef[] = [
    { name: 'id', type: 'integer', description: '' },
    { name: 'price', type: 'number', description: '' },
    { name: 'active', type: 'boolean', description: '' },
    { name: 'code', type: 'string', description: '' },
    { name: 'size', type: 'object', description: '', fields: [{ name: 'w', type: 'integer', description: '' }] },
  ];
  t.strictSame(
    shapeRow(fields, {
      id: '7',
      price: '9.5',
      active: 'false',
      code: 1234,
      size: { w: '3', secret: 'x' },
      internal: 'drop me',
    }),
    { id: 7, price: 9.5, active: false, code: '1234', size: { w: 3 } },
    'declared fields only, coerced, nested objects too',
  );
  t.strictSame(shapeRow(fields, { id: 1 }), { id: 1 }, 'absent fields stay absent (no nulls invented)');
  t.strictSame(shapeRow([], { any: 1 }), { any: 1 }, 'no declared fields keeps the row');
  const entity: Entity = { name: 'Item', description: '', id_field: 'id', fields, relations: [] };
  t.strictSame(shapeRows(entity, [{ id: '1', x: 1 }, { id: 2 }]), [{ id: 1 }, { id: 2 }]);
  t.strictSame(project([{ a: 1, b: 2, c: 3 }, { a: 4 }], ['c', 'a']), [{ c: 3, a: 1 }, { a: 4 }]);
  t.same(Object.keys(project([{ a: 1, b: 2, c: 3 }], ['c', 'a'])[0]!), ['c', 'a'], 'projection order');
  const rows = [{ a: 1 }];
  t.equal(project(rows, undefined), rows, 'no projection: rows as they are');
});

/** shapeRow as it always copied: the declared fields, in their order, coerced (the reference). */
function copiedRow(fields: FieldDef[], raw: Row): Row {
  const out: Row = {};
  for (const f of fields) {
    const v = raw[f.name];
    if (v !== undefined)
      out[f.name] =
        f.type === 'object' && v !== null && typeof v === 'object' && !Array.isArray(v)
          ? copiedRow(f.fields, v)
          : coerce(f, v);
  }
  return out;
}

t.test('shapeRow answers a row already in shape as it is, and any other as a coerced copy', async (t) => {
  const fields: FieldDef[] = [
    { name: 'id', type: 'integer', description: '' },
    { name: 'name', type: 'string', description: '' },
    { name: 'at', type: 'datetime', description: '' },
    { name: 'size', type: 'object', description: '', fields: [{ name: 'w', type: 'integer', description: '' }] },
  ];
  const ready = { id: 1, name: 'Ada', at: '2026-01-01T00:00:00Z', size: { w: 3 } };
  t.equal(shapeRow(fields, ready), ready, 'declared fields in order, each of its type: the same object');
  const cases: Row[] = [
    { id: '1', name: 'Ada', at: 'x', size: { w: 3 } }, // a value to coerce
    { name: 'Ada', id: 1, at: 'x', size: { w: 3 } }, // another order
    { id: 1, name: 'Ada', at: 'x', size: { w: 3 }, extra: true }, // an undeclared field
    { id: 1, name: 'Ada', size: { w: 3 } }, // a field missing
    { id: 1, name: 'Ada', at: 'x', size: { w: '3' } }, // a nested value to coerce
    { id: 1, name: 'Ada', at: 'x', size: { w: 3, h: 4 } }, // a nested undeclared field
    { id: 1, name: undefined as unknown as string, at: 'x', size: { w: 3 } }, // undefined
    { id: 1, name: 7, at: 'x', size: null }, // a number for a string
  ];
  for (const raw of cases) {
    const shaped = shapeRow(fields, raw);
    t.not(shaped, raw, `${JSON.stringify(raw)}: a copy`);
    t.strictSame(shaped, copiedRow(fields, raw), 'equal to the copy shapeRow always made');
    t.same(Object.keys(shaped), Object.keys(copiedRow(fields, raw)), 'keys in the same order');
  }
  const nested = { id: 1, name: 'Ada', at: 'x', size: { w: 3 } };
  t.equal(shapeRow(fields, nested).size, nested.size, 'a nested object in shape is kept too');
});

t.test('pagination: pageSize, pageQuery and nextPage for every style', async (t) => {
  const page: Pagination = {
    style: 'page',
    page_param: 'p',
    first_page: 1,
    size_param: 'per',
    page_size: 10,
    max_page_size: 50,
  };
  const offset: Pagination = {
    style: 'offset',
    offset_param: '_start',
    size_param: '_limit',
    page_size: 25,
    max_page_size: 100,
  };
  const cursor: Pagination = {
    style: 'cursor',
    cursor_param: 'after',
    next_cursor: 'next',
    size_param: 'limit',
    page_size: 3,
    max_page_size: 3,
  };
  const link: Pagination = {
    style: 'link',
    page_param: '_page',
    size_param: '_limit',
    first_page: 1,
    page_size: 10,
    max_page_size: 100,
  };
  const bareLink: Pagination = { style: 'link', first_page: 1, page_size: 10, max_page_size: 100 };

  t.test('pageSize', async (t) => {
    t.equal(pageSize(page, undefined), 10, 'catalog page size');
    t.equal(pageSize(page, 30), 30, 'rows wanted');
    t.equal(pageSize(page, 500), 50, 'capped by the vendor maximum');
    t.equal(pageSize(page, 0), 1, 'at least one');
  });

  t.test('page counter', async (t) => {
    t.same(pageQuery(page, 10, {}), { per: '10', p: '1' });
    t.same(pageQuery(page, 10, { page: 4 }), { per: '10', p: '4' });
    t.same(nextPage(page, 10, {}, 10, 10, undefined, {}), { page: 2 });
    t.same(nextPage(page, 10, { page: 2 }, 10, 20, 100, {}), { page: 3 });
    t.equal(nextPage(page, 10, { page: 2 }, 7, 17, undefined, {}), undefined, 'a short page is the last');
    t.equal(nextPage(page, 10, { page: 4 }, 10, 40, 40, {}), undefined, 'the total is reached');
    const zero: Pagination = { ...page, first_page: 0 };
    t.same(pageQuery(zero, 10, {}), { per: '10', p: '0' });
    t.same(nextPage(zero, 10, {}, 10, 10, undefined, {}), { page: 1 });
  });

  t.test('offset', async (t) => {
    t.same(pageQuery(offset, 25, {}), { _limit: '25', _start: '0' });
    t.same(pageQuery(offset, 25, { offset: 50 }), { _limit: '25', _start: '50' });
    t.same(nextPage(offset, 25, { offset: 25 }, 25, 50, undefined, {}), { offset: 50 });
    t.equal(nextPage(offset, 25, { offset: 25 }, 24, 49, undefined, {}), undefined);
    t.equal(nextPage(offset, 25, {}, 25, 25, 25, {}), undefined);
  });

  t.test('cursor', async (t) => {
    t.same(pageQuery(cursor, 3, {}), { limit: '3' }, 'the first page sends no cursor');
    t.same(pageQuery(cursor, 3, { cursor: 'c3' }), { limit: '3', after: 'c3' });
    t.same(nextPage(cursor, 3, {}, 3, 3, undefined, { nextCursor: 'c3' }), { cursor: 'c3' });
    t.equal(nextPage(cursor, 3, {}, 3, 3, undefined, {}), undefined, 'no marker, no next page');
    t.equal(
      nextPage(cursor, 3, { cursor: 'c3' }, 0, 3, undefined, { nextCursor: 'c3' }),
      undefined,
      'an empty page ends even with a marker',
    );
    t.same(
      nextPage(cursor, 3, {}, 2, 2, undefined, { nextCursor: 'c2' }),
      { cursor: 'c2' },
      'a short page with a marker goes on',
    );
  });

  t.test('link', async (t) => {
    t.same(pageQuery(link, 10, {}), { _limit: '10', _page: '1' });
    t.same(pageQuery(bareLink, 10, {}), {}, 'no page or size parameter to send');
    t.same(nextPage(link, 10, {}, 10, 10, undefined, { nextLink: 'http://x.test/b?_page=2' }), {
      url: 'http://x.test/b?_page=2',
    });
    t.equal(nextPage(link, 10, {}, 10, 10, undefined, {}), undefined);
    t.equal(
      nextPage(link, 10, {}, 10, 42, 42, { nextLink: 'http://x.test/b?_page=6' }),
      undefined,
      'the total is reached',
    );
  });
});

t.test('retryAfterMs', async (t) => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  t.equal(retryAfterMs('0', now), 0);
  t.equal(retryAfterMs('1', now), 1000);
  t.equal(retryAfterMs(' 2 ', now), 2000);
  t.equal(retryAfterMs('1.5', now), 1500);
  t.equal(retryAfterMs('Wed, 01 Jan 2025 00:00:05 GMT', now), 5000, 'HTTP date in the future');
  t.equal(retryAfterMs('Tue, 31 Dec 2024 23:59:00 GMT', now), 0, 'HTTP date in the past');
  t.equal(retryAfterMs(undefined, now), undefined);
  t.equal(retryAfterMs('', now), undefined);
  t.equal(retryAfterMs('soon', now), undefined);
});

t.test('backoffMs bounds', async (t) => {
  const p: RetryPolicy = { retries: 5, baseDelayMs: 100, maxDelayMs: 1000, budgetMs: 5000 };
  t.equal(backoffMs(p, 0, 300), 300, 'Retry-After wins');
  t.equal(backoffMs(p, 0, 0), 0);
  t.equal(backoffMs(p, 0, 60_000), 1000, 'Retry-After is capped by maxDelayMs');
  t.equal(
    backoffMs(p, 0, undefined, () => 0),
    0,
    'full jitter may wait nothing',
  );
  t.equal(
    backoffMs(p, 0, undefined, () => 0.999999),
    100,
    'first ceiling is the base',
  );
  t.equal(
    backoffMs(p, 2, undefined, () => 0.999999),
    400,
    'doubled per attempt',
  );
  t.equal(
    backoffMs(p, 30, undefined, () => 0.999999),
    1000,
    'capped by maxDelayMs',
  );
  for (let attempt = 0; attempt < 12; attempt++) {
    for (const r of [0, 0.25, 0.5, 0.75, 0.999]) {
      const w = backoffMs(p, attempt, undefined, () => r);
      if (w < 0 || w > Math.min(p.maxDelayMs, p.baseDelayMs * 2 ** attempt))
        t.fail(`attempt ${attempt}, random ${r}: ${w} out of bounds`);
    }
  }
  t.ok(isResetError({ code: 'ECONNRESET' }));
  t.ok(isResetError({ code: 'UND_ERR_SOCKET' }));
  t.notOk(isResetError({ code: 'UND_ERR_ABORTED' }));
  t.notOk(isResetError(null));
});

t.test('vendorMessage: short excerpts of the usual error shapes', async (t) => {
  const res = (body: unknown, raw = false) => ({
    status: 400,
    headers: {},
    body: raw ? Buffer.from(String(body)) : json(body),
  });
  t.equal(vendorMessage(res({ message: 'bad kind' })), 'bad kind');
  t.equal(vendorMessage(res({ error: 'invalid_request' })), 'invalid_request');
  t.equal(vendorMessage(res({ error: { message: 'nested' } })), 'nested');
  t.equal(vendorMessage(res({ errors: [{ message: 'first' }, { message: 'second' }] })), 'first');
  t.equal(vendorMessage(res({ detail: 'problem detail' })), 'problem detail');
  t.equal(vendorMessage(res('plain text\nwith lines', true)), 'plain text with lines');
  t.equal(vendorMessage(res({ unrelated: 1 })), '');
  const long = vendorMessage(res('x'.repeat(1000), true));
  t.equal(long.length, 200);
  t.ok(long.endsWith('...'));
});

/** Timers under test control: `advance(ms)` runs what falls due, in order. */
function fakeTimers() {
  let now = 1_000;
  let seq = 0;
  const queue: Array<{ id: number; at: number; fn: () => void }> = [];
  const timers: Timers & { advance(ms: number): void; pending(): number } = {
    now: () => now,
    setTimeout(fn, ms) {
      const id = ++seq;
      queue.push({ id, at: now + ms, fn });
      return id;
    },
    clearTimeout(h) {
      const i = queue.findIndex((x) => x.id === h);
      if (i >= 0) queue.splice(i, 1);
    },
    advance(ms) {
      const end = now + ms;
      for (;;) {
        queue.sort((a, b) => a.at - b.at || a.id - b.id);
        const next = queue[0];
        if (!next || next.at > end) break;
        queue.shift();
        now = next.at;
        next.fn();
      }
      now = end;
    },
    pending: () => queue.length,
  };
  return timers;
}

t.test('coalesceProgress with fake timers', async (t) => {
  const ev = (kind: ProgressEvent['kind'], phase: ProgressEvent['phase'], step?: string, rows = 0): ProgressEvent => ({
    kind,
    phase,
    ...(step ? { step } : {}),
    pages: 0,
    rows,
    calls: 0,
    elapsed_ms: 0,
  });

  t.test(
    'start and terminal events pass at once; running updates at most once per interval per step, latest wins',
    async (t) => {
      const timers = fakeTimers();
      const out: ProgressEvent[] = [];
      const p = coalesceProgress((e) => out.push(e), 2000, timers);
      p.push(ev('start', 'started'));
      t.equal(out.length, 1, 'start is immediate');
      p.push(ev('step', 'running', 'n1', 0));
      t.equal(out.length, 2, 'the first running update of a step is immediate');
      p.push(ev('step', 'running', 'n1', 10));
      p.push(ev('step', 'running', 'n1', 20));
      p.push(ev('step', 'running', 'n1', 30));
      t.equal(out.length, 2, 'updates inside the interval wait');
      t.equal(timers.pending(), 1, 'one timer per step, not one per update');
      p.push(ev('step', 'running', 'n2', 5));
      t.equal(out.length, 3, 'another step is not held back');
      timers.advance(1999);
      t.equal(out.length, 3);
      timers.advance(1);
      t.equal(out.length, 4, 'flushed when the interval is over');
      t.equal(out[3]!.step, 'n1');
      t.equal(out[3]!.rows, 30, 'the latest update wins');
      timers.advance(10_000);
      t.equal(out.length, 4, 'nothing more without new updates');
      p.push(ev('step', 'running', 'n1', 40));
      t.equal(out.length, 5, 'after a quiet interval an update passes at once');
      p.push(ev('step', 'running', 'n1', 50));
      t.equal(out.length, 5);
      p.push(ev('step', 'done', 'n1', 60));
      t.equal(out.length, 6, 'a terminal event is immediate');
      t.equal(out[5]!.phase, 'done');
      t.equal(timers.pending(), 0, 'the pending running update of the finished step is dropped');
      timers.advance(5000);
      t.equal(out.length, 6, 'no stale running update after done');
      p.push(ev('end', 'succeeded'));
      t.equal(out.length, 7);
      t.same(
        out.map((e) => `${e.kind}:${e.step ?? ''}:${e.phase}:${e.rows}`),
        [
          'start::started:0',
          'step:n1:running:0',
          'step:n2:running:5',
          'step:n1:running:30',
          'step:n1:running:40',
          'step:n1:done:60',
          'end::succeeded:0',
        ],
      );
      p.close();
    },
  );

  t.test('failed, skipped and cancelled steps are terminal too', async (t) => {
    const timers = fakeTimers();
    const out: ProgressEvent[] = [];
    const p = coalesceProgress((e) => out.push(e), 1000, timers);
    for (const phase of ['failed', 'skipped', 'cancelled'] as const) {
      p.push(ev('step', 'running', phase, 1));
      p.push(ev('step', 'running', phase, 2));
      p.push(ev('step', phase, phase, 3));
    }
    t.same(
      out.map((e) => `${e.step}:${e.phase}`),
      [
        'failed:running',
        'failed:failed',
        'skipped:running',
        'skipped:skipped',
        'cancelled:running',
        'cancelled:cancelled',
      ],
    );
    timers.advance(5000);
    t.equal(out.length, 6);
  });

  t.test('close() cancels pending timers', async (t) => {
    const timers = fakeTimers();
    const out: ProgressEvent[] = [];
    const p = coalesceProgress((e) => out.push(e), 2000, timers);
    p.push(ev('step', 'running', 'a', 1));
    p.push(ev('step', 'running', 'a', 2));
    p.push(ev('step', 'running', 'b', 1));
    p.push(ev('step', 'running', 'b', 2));
    t.equal(timers.pending(), 2);
    p.close();
    t.equal(timers.pending(), 0);
    timers.advance(10_000);
    t.equal(out.length, 2, 'nothing is emitted after close');
  });
});
