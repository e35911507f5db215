/**
 * `response.value` in the authoring format (pack/check-value.ts): a singleton get whose answer is
 * one value held whole by a field of its entity. What the CGS keeps, that a catalog without it
 * keeps its hash, and the refusals with their codes and positions: on anything but a singleton
 * get (`bad_mapping`), naming no field of the entity (`unknown_field`), beside a total (`bad_mapping`).
 */
import t from 'tap';
import { compileSource, type SourceText } from '../../pack/index.js';

/** A shelf with a readme read as text and a map of counts read as one JSON value; `extra` goes under `mappings:`. */
function shelf(
  readme = '{method: GET, path: "/books/{book}/readme", response: {value: text}}',
  extra = '',
): SourceText[] {
  return [
    {
      file: 'catalog.yaml',
      text: 'catalog: {entry_id: shelf, version: 1, label: Shelf, description: A shelf., backend: {url: "https://api.example.com"}}\n',
    },
    {
      file: 'domain.yaml',
      text: `entities:
  Book:
    id: id
    fields: {id: string, title: string}
  Text:
    description: A text answer, whole.
    fields: {text: string}
  Value:
    fields: {value: {type: object}}
capabilities:
  listBooks: {kind: query, entity: Book}
  getReadme:
    kind: get
    singleton: true
    entity: Text
    params: {book: {type: string, required: true}}
  genreCounts: {kind: get, singleton: true, entity: Value}
mappings:
  listBooks: GET /books
  getReadme: ${readme}
  genreCounts: {method: GET, path: /stats/genres, response: {value: value}}
${extra}`,
    },
  ];
}

const codes = (r: ReturnType<typeof compileSource>) =>
  r.diagnostics.map((d) => `${d.code}@${d.span?.line ?? '?'}:${d.span?.col ?? '?'}`);

t.test('a value answer packs: the CGS keeps response.value, the entities need no id field', async (t) => {
  const r = compileSource(shelf());
  t.same(r.diagnostics, []);
  const cap = (n: string) => r.cgs!.capabilities.find((c) => c.name === n)!;
  t.same(cap('getReadme').http.response, { path: '', value: 'text' });
  t.same(cap('genreCounts').http.response, { path: '', value: 'value' });
  t.same(cap('listBooks').http.response, { path: '' }, 'absent elsewhere, never written empty');
});

t.test('on a list or a get by id, response.value is bad_mapping with a hint', async (t) => {
  const r = compileSource(
    shelf(undefined, '').map((f) =>
      f.file === 'domain.yaml'
        ? {
            ...f,
            text: f.text.replace(
              'listBooks: GET /books',
              'listBooks: {method: GET, path: /books, response: {value: title}}',
            ),
          }
        : f,
    ),
  );
  t.same(codes(r), ['bad_mapping@19:60']);
  t.match(
    r.diagnostics[0]!.message,
    /`listBooks` reads its answer as one value \(`response.value`\), which only a singleton get can/,
  );
  t.match(r.diagnostics[0]!.hint, /`kind: get` with `singleton: true`/);
});

t.test('a value naming no field of the entity is unknown_field, with the nearest field', async (t) => {
  const r = compileSource(shelf('{method: GET, path: "/books/{book}/readme", response: {value: txt}}'));
  t.same(codes(r), ['unknown_field@20:76']);
  t.match(r.diagnostics[0]!.message, /`response.value` of `getReadme` names `txt`, which is not a field of Text/);
  t.match(r.diagnostics[0]!.hint, /text/);
});

t.test('a value answer has no total', async (t) => {
  const r = compileSource(
    shelf('{method: GET, path: "/books/{book}/readme", response: {value: text, total: {header: X-Total}}}'),
  );
  t.same(codes(r), ['bad_mapping@20:89']);
  t.match(r.diagnostics[0]!.hint, /remove `response.total`/);
});
