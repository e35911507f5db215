/**
 * Value answers (fixtures/openapi/value-answers.yaml): reads whose answer declares no row shape
 * import as singleton gets of one value, held whole by `Text.text` (text, XML, CSV) or
 * `Value.value` (a JSON map, a list of strings, no content declared, `*\/*`), each with the
 * `Accept` of its declared type; a read answering a file is skipped as `file_answer`; the report
 * lists them under `## Value answers`; the result packs, every taught form compiling.
 */
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importAndPack } from '../_helpers/import.js';

const { result, cgs } = await importAndPack('value-answers.yaml');
const files = result.files;
const cap = (name: string) => cgs.capabilities.find((c) => c.name === name)!;

t.test('text answers are singleton gets of Text, asking for their declared type', async (t) => {
  for (const [name, accept] of [
    ['getReadme', 'text/plain'],
    ['getStatus', 'application/xml'],
    ['loanReport', 'text/csv'],
  ] as const)
    t.match(
      cap(name),
      {
        kind: 'get',
        singleton: true,
        entity: 'Text',
        returns: 'row',
        http: { method: 'GET', headers: { Accept: accept }, response: { path: '', value: 'text' } },
      },
      name,
    );
  t.notOk('id_param' in cap('getReadme'), 'no id parameter');
  t.same(
    cap('getReadme').params.map((p) => [p.name, p.type, p.required]),
    [['bookId', 'string', true]],
    'the path parameter stays an ordinary required parameter',
  );
  t.same(
    cap('loanReport').params.map((p) => [p.name, p.type, p.required]),
    [['year', 'integer', false]],
    'a query',
  );
  t.equal(cap('getReadme').description, 'The readme of a book, as plain text', 'meaning from the summary');
});

t.test('JSON with no row shape, no content and */* are singleton gets of Value', async (t) => {
  for (const name of ['genreCounts', 'listTags', 'health', 'getThumbnail'])
    t.match(cap(name), { kind: 'get', singleton: true, entity: 'Value', http: { response: { value: 'value' } } }, name);
  for (const name of ['genreCounts', 'listTags', 'health', 'getThumbnail'])
    t.notOk('accept' in cap(name).http.headers || 'Accept' in cap(name).http.headers, `${name}: no Accept of its own`);
});

t.test('the entities: Book as before, Text and Value with one field and no id', async (t) => {
  t.same(
    cgs.entities.map((e) => [e.name, e.fields.map((f) => `${f.name}:${f.type}`)]),
    [
      ['Book', ['bookId:string', 'title:string', 'genre:string']],
      ['Text', ['text:string']],
      ['Value', ['value:object']],
    ],
  );
  t.match(
    files['entities.yaml'],
    '  Text:\n    description: "An answer the document declares as text: the text whole."\n    fields:\n      text: string\n',
  );
  t.match(
    files['entities.yaml'],
    '  Value:\n    description: "An answer the document declares no fields for: the JSON value whole."\n    fields:\n      value:\n        type: object\n',
  );
  t.notMatch(files['entities.yaml'], /Text:\n( {4}.*\n)* {4}id:/, 'no id field written');
  t.match(cap('getBook'), { kind: 'get', entity: 'Book', id_param: 'bookId' }, 'the JSON entity is unchanged');
});

t.test('the mappings written', async (t) => {
  t.match(
    files['mappings.yaml'],
    '  loanReport:\n    method: GET\n    path: /reports/loans\n    headers:\n      Accept: text/csv\n    response:\n      value: text\n',
  );
  t.match(files['mappings.yaml'], '  health:\n    method: GET\n    path: /health\n    response:\n      value: value\n');
  t.match(files['capabilities.yaml'], '  getStatus:\n    kind: get\n    singleton: true\n    entity: Text\n');
});

t.test('a read answering a file is skipped as file_answer', async (t) => {
  t.same(result.log.skipped, [
    {
      what: 'GET /books/{bookId}/cover (getCover)',
      reason: 'file_answer',
      why: 'the answer is a file (image/png): svc reads text and JSON only',
    },
  ]);
  t.notOk(cgs.capabilities.some((c) => c.name === 'getCover'));
});

t.test('the report lists the value answers and the file skipped', async (t) => {
  const report = files['import-report.md']!;
  const section = /## Value answers\n([\s\S]*?)\n## /.exec(report)?.[1] ?? '';
  t.match(section, '| getReadme | text | `Text.text` | `text/plain` | `GET /books/{bookId}/readme (getReadme)` |');
  t.match(section, '| loanReport | text | `Text.text` | `text/csv` |');
  t.match(section, '| genreCounts | JSON value (text if the vendor answers text) | `Value.value` | - |');
  t.match(section, '| health | JSON value');
  t.notMatch(section, /getBook|listBooks|getCover/, 'rows are no value answers, a file is none');
  t.match(report, /\| `GET \/books\/\{bookId\}\/cover \(getCover\)` \| `file_answer` \|/);
  t.match(report, /- `file_answer` \(1\): a read whose answer is a file \(binary\)/);
});

t.test('a document entity named Value keeps its name; the value entity takes the next', async (t) => {
  const doc = {
    openapi: '3.0.3',
    info: { title: 'Meter', version: '1' },
    servers: [{ url: 'https://meter.example' }],
    paths: {
      '/values': {
        get: {
          operationId: 'listValues',
          responses: {
            200: {
              description: 'readings',
              content: {
                'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Value' } } },
              },
            },
          },
        },
      },
      '/version': { get: { operationId: 'getVersion', responses: { 200: { description: 'the version' } } } },
    },
    components: {
      schemas: { Value: { type: 'object', properties: { id: { type: 'string' }, reading: { type: 'number' } } } },
    },
  };
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-values-doc-'));
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
  const r = (await importAndPack(dir)).result;
  t.same(
    r.catalog.entities.map((e) => [e.name, [...e.fields.keys()]]),
    [
      ['Value', ['id', 'reading']],
      ['Value2', ['value']],
    ],
  );
  t.match(
    r.catalog.capabilities.find((c) => c.name === 'getVersion'),
    { entity: 'Value2', singleton: true },
  );
});
