/**
 * Paging conventions live: fixtures/openapi/paging.yaml imported, packed and served by a real svc
 * server against a vendor on 127.0.0.1 that pages every list by at most 10 rows, whatever size is
 * asked: customers after the last row's id while `has_more`, events by an opaque token it refuses
 * empty or `0`, files by an absolute `nextLink`, messages by a relative `_links.next.href`, notes by
 * a page counter it refuses on the first request, with a total, tags by a page counter from 0
 * while `meta.has_more`, entries by `skip`/`take` while `hasMore`. For each, `limit=15` gives exactly
 * 15 rows and a `more` handle, and continuing gives the rest without a repeat; one vendor page
 * without a limit; a next URL on another origin is refused without a request.
 */
import t, { type Test } from 'tap';
import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeArtifacts } from '../../pack/index.js';
import { startFaultVendor, type RecordedRequest, type Reply } from '../_helpers/fault-vendor.js';
import { importAndPack } from '../_helpers/import.js';
import { codeOf, openSession, runProgram, startStack, PACKED, type Answer } from '../_helpers/server.js';

type Row = Record<string, unknown>;

/** The vendor's page: at most 10 rows, fewer when asked. */
const CAP = 10;
const ROWS = 23;
const customers = Array.from({ length: ROWS }, (_, i) => ({
  id: `cus_${String(i + 1).padStart(2, '0')}`,
  email: `c${i + 1}@x.test`,
}));
const numbered = (key: string) => Array.from({ length: ROWS }, (_, i) => ({ id: i + 1, [key]: `${key} ${i + 1}` }));
const events = numbered('kind');
const files = numbered('name');
const messages = numbered('text');
const notes = numbered('body');
const tags = numbered('label');
const entries = numbered('memo');

const size = (q: URLSearchParams, key: string) => Math.min(CAP, q.has(key) ? Number(q.get(key)) : CAP);
const refuse = (message: string): Reply => ({ status: 400, json: { error: { message } } });
/** A token the vendor gives out for a row offset, and the offset of one it gave. */
const tokenOf = (offset: number) => Buffer.from(`events:${offset}`).toString('base64url');
const offsetOf = (token: string) => /^events:(\d+)$/.exec(Buffer.from(token, 'base64url').toString())?.[1];

/** Set by the refusal tests: files answer a next URL on another origin (localhost for 127.0.0.1), or a bare token. */
let fileNext: 'url' | 'foreign' | 'token' = 'url';
const vendor = await startFaultVendor({
  'GET /customers': (req) => {
    const after = req.query.get('starting_after');
    const from = after === null ? 0 : customers.findIndex((c) => c.id === after) + 1;
    if (from === 0 && after !== null) return refuse(`no customer ${after}`);
    const data = customers.slice(from, from + size(req.query, 'limit'));
    return { json: { object: 'list', data, has_more: from + data.length < ROWS, url: '/v1/customers' } };
  },
  'GET /events': (req) => {
    const token = req.query.get('pageToken');
    const from = token === null ? '0' : offsetOf(token);
    if (from === undefined) return refuse(`invalid pageToken ${JSON.stringify(token)}`);
    const at = Number(from);
    const items = events.slice(at, at + size(req.query, 'maxResults'));
    const end = at + items.length;
    return { json: { items, ...(end < ROWS ? { nextPageToken: tokenOf(end) } : {}) } };
  },
  'GET /files': (req) => {
    const at = Number(req.query.get('$skiptoken') ?? 0);
    const value = files.slice(at, at + size(req.query, '$top'));
    const end = at + value.length;
    const origin = fileNext === 'foreign' ? vendor.url.replace('127.0.0.1', 'localhost') : vendor.url;
    const nextLink = fileNext === 'token' ? `skip${end}` : `${origin}/files?$skiptoken=${end}`;
    return { json: { value, ...(end < ROWS ? { nextLink } : {}) } };
  },
  'GET /messages': (req) => {
    const at = Number(req.query.get('after') ?? 0);
    const page = messages.slice(at, at + CAP);
    const end = at + page.length;
    const next = end < ROWS ? { next: { href: `/messages?after=${end}` } } : {};
    return { json: { messages: page, _links: { self: { href: req.url }, ...next } } };
  },
  'GET /notes': (req) => {
    const page = req.query.get('page');
    if (page !== null && Number(page) < 2) return refuse('leave page out for the first page');
    const n = size(req.query, 'per_page');
    const at = (Number(page ?? 1) - 1) * n;
    return { json: { notes: notes.slice(at, at + n), total: ROWS } };
  },
  'GET /tags': (req) => {
    const n = size(req.query, 'size');
    const at = Number(req.query.get('page') ?? 0) * n;
    return { json: { tags: tags.slice(at, at + n), meta: { has_more: at + n < ROWS } } };
  },
  'GET /entries': (req) => {
    const at = Number(req.query.get('skip') ?? 0);
    const page = entries.slice(at, at + size(req.query, 'take'));
    return { json: { entries: page, hasMore: at + page.length < ROWS } };
  },
});
t.teardown(() => vendor.close());

const { cgs, cgs_hash } = await importAndPack('paging.yaml', { entryId: 'ledger' });
const dir = mkdtempSync(join(tmpdir(), 'svc-import-paging-live-'));
for (const f of readdirSync(PACKED)) copyFileSync(join(PACKED, f), join(dir, f));
await writeArtifacts(cgs, cgs_hash, dir);
const stack = await startStack(t, {
  vendorUrl: vendor.url,
  catalogDir: dir,
  loadOptions: { backendOverrides: { ledger: vendor.url } },
});
const seeds = ['Customer', 'Event', 'File', 'Message', 'Note', 'Tag', 'Entry'].map((e) => `ledger:${e}`);
const { path } = await openSession(stack.url, { entry_id: 'ledger', seeds });
const run = (program: string) => runProgram(stack.url, path, program);

function ok(t: Test, a: Answer, what: string): Row[] {
  t.equal(a.status, 200, `${what}: 200 ${a.status === 200 ? '' : a.text.slice(0, 300)}`);
  return (a.body.rows ?? []) as Row[];
}
const handle = (a: Answer) => /^page\((pg\d+)\)/.exec(String(a.body.more ?? ''))?.[1];

/** Runs `program`, then continues with page(pgN) until no `more`; the first answer's rows and all rows. */
async function walk(t: Test, program: string): Promise<{ first: Row[]; firstMore?: string; all: Row[] }> {
  let a = await run(program);
  const first = ok(t, a, program);
  const firstMore = handle(a);
  const all = [...first];
  for (let i = 0; i < 10 && handle(a); i++) {
    a = await run(`page(${handle(a)})[id]`);
    all.push(...ok(t, a, `${program}: page ${i + 2}`));
  }
  t.notOk(handle(a), `${program}: the pages end`);
  return { first, ...(firstMore ? { firstMore } : {}), all };
}

const ids = (rows: Row[]) => rows.map((r) => r.id);
const sent = (reqs: RecordedRequest[], key: string) => reqs.map((r) => r.query.get(key));

/** For one list: limit=15 gives 15 rows and more, continuing gives the rest once each, in order. */
async function limitAcrossPages(t: Test, entity: string, rows: Row[]) {
  const { first, firstMore, all } = await walk(t, `ledger:${entity}(limit=15)[id]`);
  t.same(ids(first), ids(rows.slice(0, 15)), `${entity}: limit=15 gives the first 15 rows, over two vendor pages`);
  t.ok(firstMore, `${entity}: limit=15 says there is more`);
  t.same(ids(all), ids(rows), `${entity}: continuing gives the other ${ROWS - 15} rows, none twice`);
  const one = await run(`ledger:${entity}[id]`);
  t.same(ids(ok(t, one, `${entity}: one page`)), ids(rows.slice(0, CAP)), `${entity}: no limit, one vendor page`);
  t.ok(handle(one), `${entity}: one page says there is more`);
}

t.test('after the last row while has_more (starting_after)', async (t) => {
  const before = vendor.hits('/customers').length;
  await limitAcrossPages(t, 'Customer', customers);
  const reqs = vendor.hits('/customers').slice(before, before + 3);
  t.same(sent(reqs, 'starting_after'), [null, 'cus_10', 'cus_20'], 'no cursor first, then the last id of each page');
  t.same(sent(reqs, 'limit'), ['15', '15', '15'], 'the continuation keeps the size of the first request');
});

t.test('an opaque token from the answer, never sent empty or 0', async (t) => {
  const before = vendor.hits('/events').length;
  await limitAcrossPages(t, 'Event', events);
  const reqs = vendor.hits('/events').slice(before);
  t.equal(reqs[0]!.query.has('pageToken'), false, 'the first request sends no token');
  t.same(sent(reqs.slice(1, 3), 'pageToken'), [tokenOf(10), tokenOf(20)], 'then the tokens as given');
  t.ok(
    reqs.every((r) => r.query.get('pageToken') !== '' && r.query.get('pageToken') !== '0'),
    'no empty token',
  );
});

t.test('a next URL in the body: absolute (nextLink) and relative (_links.next.href)', async (t) => {
  const before = vendor.hits('/files').length;
  await limitAcrossPages(t, 'File', files);
  t.same(sent(vendor.hits('/files').slice(before, before + 3), '$skiptoken'), [null, '10', '20']);
  const m = vendor.hits('/messages').length;
  await limitAcrossPages(t, 'Message', messages);
  t.same(sent(vendor.hits('/messages').slice(m, m + 3), 'after'), [null, '10', '20']);
});

t.test('a page counter the first request leaves out, paged to the total', async (t) => {
  const before = vendor.hits('/notes').length;
  await limitAcrossPages(t, 'Note', notes);
  const reqs = vendor.hits('/notes').slice(before, before + 3);
  t.same(sent(reqs, 'page'), [null, '2', '3'], 'no page first (the vendor refuses page=1), then 2 and 3');
});

t.test('a page counter from 0 and an offset, each while the answer says has_more', async (t) => {
  const before = vendor.hits('/tags').length;
  await limitAcrossPages(t, 'Tag', tags);
  t.same(sent(vendor.hits('/tags').slice(before, before + 3), 'page'), ['0', '1', '2']);
  const e = vendor.hits('/entries').length;
  await limitAcrossPages(t, 'Entry', entries);
  t.same(
    sent(vendor.hits('/entries').slice(e, e + 3), 'skip'),
    ['0', '10', '20'],
    'each offset after the rows received',
  );
});

for (const [mode, what] of [
  ['foreign', 'on another origin'],
  ['token', 'that is a bare word, no URL'],
] as const)
  t.test(`a next URL ${what} is refused, and nothing is sent there`, async (t) => {
    fileNext = mode;
    t.teardown(() => {
      fileNext = 'url';
    });
    const before = vendor.requests.length;
    const a = await run('ledger:File(limit=15)[id]');
    t.equal(codeOf(a), 'vendor_bad_response', `refused: ${a.text.slice(0, 300)}`);
    t.match(a.text, /another origin or an invalid URL/);
    t.same(
      vendor.requests.slice(before).map((r) => r.url),
      ['/files?%24top=15'],
      'one request: the first page only',
    );
  });
