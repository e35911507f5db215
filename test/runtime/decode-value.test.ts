/**
 * `decodeResponse` of a value answer (`response.value`), on a catalog authored and packed as
 * `svc pack` does: a string field takes the body as text whatever its type, any other field the
 * JSON value (at `response.path`) or the text of a textual answer; an empty body is `""` or null;
 * a file is refused with the vendor_bad_response-style problem; no shape check, no total.
 */
import t from 'tap';
import { compileSource, type Capability, type Entity } from '../../pack/index.js';
import { decodeResponse, shapeRows } from '../../runtime/index.js';

const packed = compileSource([
  {
    file: 'catalog.yaml',
    text: 'catalog: {entry_id: shelf, version: 1, label: Shelf, description: A shelf., backend: {url: "https://api.example.com"}}\n',
  },
  {
    file: 'domain.yaml',
    text: `entities:
  Text:
    fields: {text: string}
  Value:
    fields: {value: {type: object}}
capabilities:
  readme: {kind: get, singleton: true, entity: Text}
  counts: {kind: get, singleton: true, entity: Value}
  nested: {kind: get, singleton: true, entity: Value}
mappings:
  readme: {method: GET, path: /readme, headers: {Accept: text/plain}, response: {value: text}}
  counts: {method: GET, path: /counts, response: {value: value}}
  nested: {method: GET, path: /nested, response: {path: data.counts, value: value}}
`,
  },
]);
t.same(packed.diagnostics, [], 'the authored catalog packs');
const cgs = packed.cgs!;
const cap = (n: string): Capability => cgs.capabilities.find((c) => c.name === n)!;
const entity = (n: string): Entity => cgs.entities.find((e) => e.name === n)!;

/** Decode a 200 answer of `capName` with this content type (none when undefined) and body. */
function read(capName: string, type: string | undefined, body: string | Buffer) {
  const c = cap(capName);
  const e = entity(c.entity);
  const d = decodeResponse(
    c,
    { status: 200, headers: type === undefined ? {} : { 'content-type': type }, body: Buffer.from(body) },
    e,
  );
  return d.ok ? { ...d, rows: shapeRows(e, d.rows) } : d;
}

t.test('a string field takes the body as UTF-8 text, whatever its content type', async (t) => {
  const readme = '# Shelf\n\nBooks, in order. Ünïcode kept.\n';
  t.match(read('readme', 'text/plain; charset=utf-8', readme), { ok: true, rows: [{ text: readme }] });
  t.match(read('readme', 'application/json', '{"a": 1}'), { ok: true, rows: [{ text: '{"a": 1}' }] }, 'JSON text too');
  t.match(read('readme', undefined, 'no type'), { ok: true, rows: [{ text: 'no type' }] });
  const d = read('readme', 'text/csv', 'a,b\n1,2\n');
  t.ok(d.ok && d.total === undefined && d.nextCursor === undefined, 'no total, no paging');
});

t.test('an object field takes a JSON value whole: object, list, scalar, null', async (t) => {
  t.match(read('counts', 'application/json', '{"fiction": 12, "poetry": 3}'), {
    ok: true,
    rows: [{ value: { fiction: 12, poetry: 3 } }],
  });
  t.same(read('counts', 'application/vnd.shelf+json', '["a","b"]'), read('counts', 'application/json', '["a","b"]'));
  t.match(read('counts', 'application/json', '["a","b"]'), { rows: [{ value: ['a', 'b'] }] }, 'a list of scalars');
  t.match(read('counts', 'application/json', '42'), { rows: [{ value: 42 }] }, 'a scalar');
  t.match(read('counts', 'application/json', '"ok"'), { rows: [{ value: 'ok' }] }, 'a string');
  t.same(
    read('counts', 'application/json', 'null').ok &&
      (read('counts', 'application/json', 'null') as { rows: unknown[] }).rows,
    [{ value: null }],
  );
  t.match(
    read('counts', 'application/json', '{"unrelated": true}'),
    { ok: true, rows: [{ value: { unrelated: true } }] },
    'no row-shape check: the row holds the field by construction',
  );
});

t.test('an object field takes a textual answer that is not JSON as its text', async (t) => {
  for (const type of [
    'text/plain',
    'application/xml',
    'application/atom+xml',
    'application/yaml',
    'text/csv',
    undefined,
  ])
    t.match(
      read('counts', type, '<status>up</status>'),
      { ok: true, rows: [{ value: '<status>up</status>' }] },
      String(type),
    );
});

t.test('response.path applies to a JSON value; a path that finds nothing is response_shape_mismatch', async (t) => {
  t.match(read('nested', 'application/json', '{"data": {"counts": {"a": 1}}}'), {
    ok: true,
    rows: [{ value: { a: 1 } }],
  });
  const miss = read('nested', 'application/json', '{"data": {}}');
  t.match(miss, {
    ok: false,
    code: 'response_shape_mismatch',
    problem: /expected a value at `data.counts`, found nothing/,
  });
  t.match(read('nested', 'text/plain', 'plain'), { ok: true, rows: [{ value: 'plain' }] }, 'text has no path');
});

t.test('an empty body gives "" to a string field, null to any other', async (t) => {
  t.match(read('readme', 'text/plain', ''), { ok: true, rows: [{ text: '' }] });
  t.same((read('counts', undefined, '') as { rows: unknown[] }).rows, [{ value: null }]);
  t.same((read('counts', 'application/json', '') as { rows: unknown[] }).rows, [{ value: null }]);
});

t.test('a file is refused, saying its type and size, with a hint', async (t) => {
  const png = Buffer.alloc(12_345, 0x89);
  for (const name of ['readme', 'counts']) {
    const d = read(name, 'image/png', png);
    t.match(d, {
      ok: false,
      problem: 'the vendor answered a file (`image/png`, 12,345 bytes); svc reads text and JSON only',
      hint: /answers a file/,
    });
    t.notOk('code' in d && d.code, 'a vendor_bad_response-style problem (no code of its own)');
  }
  for (const type of ['application/pdf', 'application/octet-stream', 'application/zip', 'audio/mpeg', 'video/mp4'])
    t.match(read('counts', type, 'x'), { ok: false, problem: new RegExp(`a file \\(\`${type}\``) }, type);
});

t.test('malformed or too deep JSON into an object field fails as any JSON answer does', async (t) => {
  t.match(read('counts', 'application/json', '{"a":'), { ok: false, problem: /malformed JSON/ });
  t.match(read('counts', 'application/json', '['.repeat(300) + ']'.repeat(300)), {
    ok: false,
    problem: /nested deeper than/,
  });
});
