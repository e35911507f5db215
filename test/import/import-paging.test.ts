/**
 * Paging conventions detected from a document (fixtures/openapi/paging.yaml and small inline
 * documents): the id of the last row with `has_more` (`starting_after`), opaque tokens from the
 * answer (`nextPageToken`, AWS `NextToken`, a string `offset` from `next_page.offset`, Slack's
 * `response_metadata.next_cursor`), next URLs in the body (`nextLink`, `_links.next.href`), a page
 * counter the first request leaves out, a `has_more` flag beside a page counter and an offset; the parameters
 * paging owns are no capability parameters, the report names each convention, and the pack check
 * refuses a cursor without its source.
 */
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importAndPack, packCheck } from '../_helpers/import.js';

const { result, cgs } = await importAndPack('paging.yaml', { entryId: 'ledger' });
const cap = (name: string) => cgs.capabilities.find((c) => c.name === name)!;
const report = result.files['import-report.md']!;

t.test('each list gets its paging convention', async (t) => {
  t.same(cap('listCustomers').http.pagination, {
    style: 'cursor',
    page_size: 10,
    max_page_size: 100,
    size_param: 'limit',
    cursor_param: 'starting_after',
    cursor_field: 'id',
    has_more: 'has_more',
  });
  t.match(cap('listEvents').http.pagination, {
    style: 'cursor',
    cursor_param: 'pageToken',
    next_cursor: 'nextPageToken',
    size_param: 'maxResults',
    page_size: 10,
    max_page_size: 50,
  });
  t.match(cap('listInvoices').http.pagination, {
    style: 'cursor',
    cursor_param: 'NextToken',
    next_cursor: 'NextToken',
  });
  t.match(
    cap('listTasks').http.pagination,
    { style: 'cursor', cursor_param: 'offset', next_cursor: 'next_page.offset' },
    'a string offset is a token the answer gives, not a counter',
  );
  t.match(cap('listLogs').http.pagination, {
    style: 'cursor',
    cursor_param: 'cursor',
    next_cursor: 'response_metadata.next_cursor',
  });
  t.match(cap('listFiles').http.pagination, { style: 'link', next_url: 'nextLink', size_param: '$top' });
  t.match(cap('listMessages').http.pagination, { style: 'link', next_url: '_links.next.href' });
  t.same(cap('listNotes').http.pagination, {
    style: 'page',
    page_size: 10,
    max_page_size: 100,
    size_param: 'per_page',
    page_param: 'page',
    first_page: 1,
    omit_first_page: true,
  });
  t.match(cap('listTags').http.pagination, {
    style: 'page',
    page_param: 'page',
    first_page: 0,
    has_more: 'meta.has_more',
  });
  t.notOk('omit_first_page' in cap('listTags').http.pagination!, 'a page with a default is sent');
  t.match(cap('listEntries').http.pagination, {
    style: 'offset',
    offset_param: 'skip',
    size_param: 'take',
    has_more: 'hasMore',
  });
  for (const c of cgs.capabilities.filter((x) => x.kind === 'query')) t.ok(c.http.pagination, `${c.name} pages`);
});

t.test('the parameters paging owns are no capability parameters', async (t) => {
  const names = (n: string) => cap(n).params.map((p) => p.name);
  t.same(names('listCustomers'), ['ending_before', 'email']);
  t.same(names('listInvoices'), [], 'NextToken and its other spelling nextToken are both paging');
  t.same(names('listFiles'), [], '$top and $skip: the next URL carries the position');
  for (const n of ['listEvents', 'listTasks', 'listLogs', 'listNotes', 'listTags', 'listEntries'])
    t.same(names(n), [], n);
});

t.test('the report names the convention of each list', async (t) => {
  const row = (name: string) => report.split('\n').find((l) => l.startsWith(`| ${name} |`)) ?? '';
  t.match(
    row('listCustomers'),
    "| query (cursor paging: after the last row's `id` in `starting_after`, size `limit`, while `has_more`) |",
  );
  t.match(row('listEvents'), '(cursor paging: token `nextPageToken` sent back as `pageToken`, size `maxResults`)');
  t.match(row('listTasks'), '(cursor paging: token `next_page.offset` sent back as `offset`, size `limit`)');
  t.match(row('listFiles'), '(link paging: next URL at `nextLink`, size `$top`)');
  t.match(row('listMessages'), '(link paging: next URL at `_links.next.href`)');
  t.match(row('listNotes'), '(page paging: `page` from 1, not sent for the first page, size `per_page`)');
  t.match(row('listTags'), '(page paging: `page` from 0, size `size`, while `meta.has_more`)');
});

/** A one-list document whose GET /items takes `params` and answers `answer`; its list's pagination. */
async function pagingOf(params: object[], answer: object, headers?: object) {
  const doc = {
    openapi: '3.0.3',
    info: { title: 'Items', version: '1' },
    servers: [{ url: 'https://items.example' }],
    paths: {
      '/items': {
        get: {
          operationId: 'listItems',
          parameters: params,
          responses: {
            '200': {
              description: 'ok',
              ...(headers ? { headers } : {}),
              content: { 'application/json': { schema: answer } },
            },
          },
        },
      },
    },
  };
  const dir = mkdtempSync(join(tmpdir(), 'svc-import-paging-'));
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
  const { cgs } = await importAndPack(dir, { entryId: 'items' });
  return cgs.capabilities.find((c) => c.name === 'listItems')!;
}
const rows = { type: 'array', items: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } };
const q = (name: string, schema: object, description?: string) => ({
  name,
  in: 'query',
  schema,
  ...(description ? { description } : {}),
});

t.test('rules: dates are no cursors, page omission, has_more, next URLs, case and brackets', async (t) => {
  const dated = await pagingOf([q('after', { type: 'string', format: 'date-time' })], {
    type: 'object',
    properties: { data: rows, has_more: { type: 'boolean' } },
  });
  t.equal(dated.http.pagination, undefined, 'a date `after` is a filter, not a cursor');
  t.same(
    dated.params.map((p) => p.name),
    ['after'],
  );
  const noSize = await pagingOf([q('starting_after', { type: 'string' })], {
    type: 'object',
    properties: { data: rows },
  });
  t.equal(noSize.http.pagination, undefined, 'after the last id needs has_more or a page size to know the end');
  const nullDefault = await pagingOf([q('page', { type: 'integer', default: null, nullable: true })], {
    type: 'object',
    properties: { data: rows },
  });
  t.match(
    nullDefault.http.pagination,
    { style: 'page', omit_first_page: true },
    'an empty default: the first page omits it',
  );
  const plain = await pagingOf([q('Page', { type: 'integer' }, 'Page number.'), q('PageSize', { type: 'integer' })], {
    type: 'array',
    items: rows.items,
  });
  t.same(
    plain.http.pagination,
    { style: 'page', page_size: 25, max_page_size: 100, size_param: 'PageSize', page_param: 'Page', first_page: 1 },
    'names match without case; a page number is sent from the first page',
  );
  const bracketed = await pagingOf(
    [q('page[offset]', { type: 'integer' }), q('page[limit]', { type: 'integer', default: 10 })],
    {
      type: 'object',
      properties: { data: rows, meta: { type: 'object', properties: { count: { type: 'integer' } } } },
    },
  );
  t.match(bracketed.http.pagination, { style: 'offset', offset_param: 'page[offset]', size_param: 'page[limit]' });
  const loose = await pagingOf([q('limit', { type: 'string' }), q('offset', { type: 'string' })], {
    type: 'array',
    items: rows.items,
  });
  t.match(loose.http.pagination, { style: 'offset', offset_param: 'offset' }, 'all strings: a loosely typed counter');
  const tokenNoMarker = await pagingOf([q('limit', { type: 'integer' }), q('offset', { type: 'string' })], {
    type: 'object',
    properties: { data: rows },
  });
  t.equal(tokenNoMarker.http.pagination, undefined, 'a string offset beside a number, never given back: no paging');
  const nextUri = await pagingOf([q('cursor', { type: 'string' })], {
    type: 'object',
    properties: { data: rows, next: { type: 'string', format: 'uri' } },
  });
  t.match(
    nextUri.http.pagination,
    { style: 'link', next_url: 'next' },
    'a `next` that is a URI is followed, not sent back',
  );
  const nextToken = await pagingOf([q('cursor', { type: 'string' })], {
    type: 'object',
    properties: { data: rows, next: { type: 'string' } },
  });
  t.match(nextToken.http.pagination, { style: 'cursor', cursor_param: 'cursor', next_cursor: 'next' });
  const linkHeader = await pagingOf(
    [q('per_page', { type: 'integer' })],
    { type: 'array', items: rows.items },
    {
      Link: { schema: { type: 'string' } },
      'X-Paging-TotalResults': { schema: { type: 'integer' } },
    },
  );
  t.match(linkHeader.http, {
    pagination: { style: 'link', size_param: 'per_page' },
    response: { total: { header: 'X-Paging-TotalResults' } },
  });
});

t.test('the pack check: a cursor needs one source, a style only its own keys', async (t) => {
  const mappings = result.files['mappings.yaml']!;
  const check = (from: string, to: string) => {
    t.ok(mappings.includes(from), `the mappings hold ${from}`);
    return packCheck({ ...result.files, 'mappings.yaml': mappings.replace(from, to) });
  };
  t.same(packCheck(result.files), [], 'the import packs clean');
  const neither = check('      cursor_field: id\n', '');
  t.match(neither, [{ code: 'bad_mapping', message: /needs one of `next_cursor` and `cursor_field`/ }]);
  const both = check('cursor_field: id', 'cursor_field: id\n      next_cursor: next');
  t.match(both, [{ code: 'bad_mapping', message: /needs only one of `next_cursor` and `cursor_field`/ }]);
  const foreign = check('next_url: nextLink', 'next_url: nextLink\n      has_more: more');
  t.match(foreign, [{ code: 'bad_mapping', message: /`has_more` does not apply to link pagination/ }]);
});
