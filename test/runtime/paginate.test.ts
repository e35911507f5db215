/**
 * Cursor and token paging (pure): a cursor from the last row (`starting_after` + `has_more`), an
 * opaque token from the body, a next URL in the body, a page counter left out of the first
 * request, and when each style says the vendor has more (has_more, total, a full page).
 */
import t from 'tap';
import type { Capability, Pagination } from '../../pack/cgs.js';
import { decodeResponse, nextPage, pageQuery } from '../../runtime/index.js';

const common = { page_size: 10, max_page_size: 100, size_param: 'limit' };
const afterId: Pagination = {
  style: 'cursor',
  cursor_param: 'starting_after',
  cursor_field: 'id',
  has_more: 'has_more',
  ...common,
};
const token: Pagination = { style: 'cursor', cursor_param: 'pageToken', next_cursor: 'meta.nextPageToken', ...common };
const bodyUrl: Pagination = { style: 'link', next_url: '_links.next.href', first_page: 1, ...common };
const omitted: Pagination = { style: 'page', page_param: 'page', first_page: 1, omit_first_page: true, ...common };

function cap(pagination: Pagination): Capability {
  return {
    name: 'listItems',
    kind: 'query',
    entity: 'Item',
    description: 'test capability',
    params: [],
    returns: 'rows',
    http: {
      method: 'GET',
      path: '/items',
      query: {},
      headers: {},
      array_style: 'repeat',
      pagination,
      response: { path: 'data' },
    },
  };
}

/** The markers `decodeResponse` reads from a 200 JSON answer with `headers`. */
function markers(pg: Pagination, body: unknown, headers: Record<string, string> = {}) {
  const d = decodeResponse(cap(pg), {
    status: 200,
    headers: { 'content-type': 'application/json', ...headers },
    body: Buffer.from(JSON.stringify(body)),
  });
  if (!d.ok) throw new Error(d.problem);
  return { nextCursor: d.nextCursor, nextLink: d.nextLink, hasMore: d.hasMore };
}

t.test('after the last row: the cursor is its id, has_more says whether there is more', async (t) => {
  const rows = [{ id: 'cus_1' }, { id: 'cus_2' }];
  t.same(markers(afterId, { data: rows, has_more: true }), { nextCursor: 'cus_2', hasMore: true });
  t.same(markers(afterId, { data: rows, has_more: false }), { nextCursor: 'cus_2', hasMore: false });
  t.same(markers(afterId, { data: [], has_more: false }), { hasMore: false }, 'an empty page has no last row');
  t.same(
    markers(afterId, { data: [{ id: 7 }], has_more: 'yes' }),
    { nextCursor: '7' },
    'a flag that is not a boolean is none',
  );
  t.same(pageQuery(afterId, 10, {}), { limit: '10' }, 'the first request sends no cursor');
  t.same(pageQuery(afterId, 10, { cursor: 'cus_2' }), { limit: '10', starting_after: 'cus_2' });
  t.same(nextPage(afterId, 10, {}, 10, 10, undefined, { nextCursor: 'c10', hasMore: true }), { cursor: 'c10' });
  t.same(
    nextPage(afterId, 15, {}, 10, 10, undefined, { nextCursor: 'c10', hasMore: true }),
    { cursor: 'c10' },
    'a page shorter than asked (the vendor caps it) goes on while has_more is true',
  );
  t.equal(nextPage(afterId, 10, {}, 10, 10, undefined, { nextCursor: 'c10', hasMore: false }), undefined);
  t.equal(nextPage(afterId, 10, {}, 0, 10, undefined, { hasMore: true }), undefined, 'no row, no cursor');
  const noFlag: Pagination = { ...afterId };
  delete noFlag.has_more;
  t.same(nextPage(noFlag, 10, {}, 10, 10, undefined, { nextCursor: 'c10' }), { cursor: 'c10' }, 'a full page: more');
  t.equal(nextPage(noFlag, 10, {}, 9, 9, undefined, { nextCursor: 'c9' }), undefined, 'a short page: the last');
  t.same(nextPage(noFlag, 10, {}, 9, 9, 30, { nextCursor: 'c9' }), { cursor: 'c9' }, 'unless the total says more');
});

t.test('an opaque token from the body: sent back as is, never on the first request', async (t) => {
  t.same(markers(token, { data: [{ id: 1 }], meta: { nextPageToken: 'CgN0b2s=' } }), { nextCursor: 'CgN0b2s=' });
  t.same(markers(token, { data: [{ id: 1 }], meta: { nextPageToken: 20 } }), { nextCursor: '20' });
  t.same(markers(token, { data: [{ id: 1 }], meta: { nextPageToken: '' } }), {});
  t.same(pageQuery(token, 10, {}), { limit: '10' });
  t.same(pageQuery(token, 10, { cursor: 'CgN0b2s=' }), { limit: '10', pageToken: 'CgN0b2s=' });
  t.same(nextPage(token, 10, {}, 3, 3, undefined, { nextCursor: 'x' }), { cursor: 'x' }, 'a short page with a token');
  t.equal(nextPage(token, 10, {}, 10, 10, undefined, {}), undefined, 'no token: the last page');
  t.equal(
    nextPage({ ...token, has_more: 'more' }, 10, {}, 10, 10, undefined, { nextCursor: 'x', hasMore: false }),
    undefined,
    'has_more false ends even with a token',
  );
});

t.test('a next URL in the body, followed like a Link header', async (t) => {
  const body = (href: unknown) => ({ data: [{ id: 1 }], _links: { next: { href } } });
  t.same(markers(bodyUrl, body('/items?cursor=abc')), { nextLink: '/items?cursor=abc' });
  t.same(markers(bodyUrl, body(null)), {});
  t.same(
    markers(bodyUrl, body(null), { link: '<https://api.example.test/items?page=2>; rel="next"' }),
    {},
    'with next_url the Link header is not read',
  );
  t.same(pageQuery(bodyUrl, 10, {}), { limit: '10' });
  t.same(nextPage(bodyUrl, 10, {}, 10, 10, undefined, { nextLink: 'https://x.test/items?p=2' }), {
    url: 'https://x.test/items?p=2',
  });
  t.equal(nextPage(bodyUrl, 10, {}, 10, 10, undefined, {}), undefined);
});

t.test('a page counter the first request leaves out; page and offset stop at the total or has_more', async (t) => {
  t.same(pageQuery(omitted, 10, {}), { limit: '10' }, 'no page number on the first request');
  t.same(nextPage(omitted, 10, {}, 10, 10, undefined, {}), { page: 2 });
  t.same(pageQuery(omitted, 10, { page: 2 }), { limit: '10', page: '2' });
  t.same(nextPage(omitted, 15, { page: 2 }, 10, 20, 45, {}), { page: 3 }, 'a short page with a total above it: more');
  t.equal(nextPage(omitted, 10, { page: 3 }, 5, 45, 45, {}), undefined, 'the total is reached');
  const flagged: Pagination = { ...omitted, has_more: 'meta.has_more' };
  t.same(markers(flagged, { data: [{ id: 1 }], meta: { has_more: true } }), { hasMore: true });
  t.same(nextPage(flagged, 15, {}, 10, 10, undefined, { hasMore: true }), { page: 2 });
  t.equal(
    nextPage(flagged, 10, {}, 10, 10, undefined, { hasMore: false }),
    undefined,
    'a full page, but has_more false',
  );
  const offset: Pagination = { style: 'offset', offset_param: 'skip', has_more: 'hasMore', ...common };
  t.same(nextPage(offset, 15, { offset: 10 }, 10, 20, undefined, { hasMore: true }), { offset: 20 });
  t.equal(nextPage(offset, 10, { offset: 10 }, 10, 20, undefined, { hasMore: false }), undefined);
});
