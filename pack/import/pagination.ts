/**
 * Paging and sorting of a list operation, detected from its query parameters and response:
 * a page counter (`page`/`per_page`), an offset (`offset`/`limit`), a cursor sent back from a
 * response field (`cursor` + `next_cursor`), or a `Link` response header (GitHub, json-server);
 * a total from `X-Total-Count` or a body field; a sort key plus direction (`_sort`/`_order`,
 * `sort`/`direction`) whose values are fields of the entity. Parameters these own are not
 * capability parameters.
 */
import type { ImportPagination, ImportSort } from './model.js';
import type { OpParam } from './operations.js';
import { isObj, objectShape, type Schema } from './schema.js';

const PAGE = ['page', '_page', 'pageNumber', 'page_number', 'pageNo'];
const SIZE = ['per_page', 'perPage', 'page_size', 'pageSize', 'limit', '_limit', 'size', 'max_results', 'maxResults'];
const OFFSET = ['offset', '_start', 'skip', 'start', 'startAt'];
const CURSOR = [
  'cursor',
  'after',
  'page_token',
  'pageToken',
  'next_token',
  'nextToken',
  'starting_after',
  'continuation',
];
const NEXT = [
  'next_cursor',
  'nextCursor',
  'next_page_token',
  'nextPageToken',
  'next_token',
  'nextToken',
  'cursor',
  'next',
];
/** Other slicing parameters that paging makes redundant (json-server's `_end`). */
const SLICE = ['_end', 'end'];
const SORT = ['_sort', 'sort', 'sort_by', 'sortBy', 'order_by', 'orderBy'];
const ORDER = ['_order', 'order', 'direction', 'sort_order', 'sortOrder', 'dir'];

export interface Paging {
  pagination?: ImportPagination;
  sort?: ImportSort;
  total?: { header: string } | { path: string };
  /** Query parameters (wire names) that pagination and sort own. */
  owned: Set<string>;
}

const find = (params: OpParam[], names: string[]) =>
  names.map((n) => params.find((p) => p.in === 'query' && p.name === n)).find((p) => p !== undefined);

/** The dot path of a next-cursor field in the response body (one level of nesting). */
function nextCursor(response: Schema | undefined): string | undefined {
  if (!isObj(response)) return undefined;
  const { props } = objectShape(response);
  for (const n of NEXT) if (props.has(n) && props.get(n)!.type !== 'object') return n;
  for (const [k, v] of props) {
    if (!isObj(v) || v.type === 'array') continue;
    const inner = objectShape(v).props;
    for (const n of NEXT)
      if (inner.has(n) && ['string', 'integer'].includes(String(inner.get(n)!.type))) return `${k}.${n}`;
  }
  return undefined;
}

function sizes(p: OpParam | undefined): Pick<ImportPagination, 'page_size' | 'max_page_size'> {
  if (!p) return {};
  const s = p.schema;
  const max = Number.isSafeInteger(s.maximum) && s.maximum >= 1 ? (s.maximum as number) : undefined;
  let size = Number.isSafeInteger(s.default) && s.default >= 1 ? (s.default as number) : 25;
  if (max !== undefined && size > max) size = max;
  return { page_size: size, ...(max !== undefined ? { max_page_size: Math.max(max, size) } : {}) };
}

/** Pagination style of a list operation, if it has one. */
function pagination(params: OpParam[], headers: string[], response: Schema | undefined, owned: Set<string>) {
  const link = headers.some((h) => h.toLowerCase() === 'link');
  const page = find(params, PAGE);
  const size = find(params, SIZE);
  const offset = find(params, OFFSET);
  const cursor = find(params, CURSOR);
  const next = cursor ? nextCursor(response) : undefined;
  const own = (...ps: (OpParam | undefined)[]) => ps.forEach((p) => p && owned.add(p.name));
  const sz = size ? { size_param: size.name, ...sizes(size) } : {};
  if (cursor && next) {
    own(cursor, size);
    return { style: 'cursor', cursor_param: cursor.name, next_cursor: next, ...sz } as ImportPagination;
  }
  if (page) {
    own(page, size, offset, ...SLICE.map((n) => find(params, [n])));
    const first = Number.isSafeInteger(page.schema.minimum) && page.schema.minimum === 0 ? 0 : 1;
    return { style: link ? 'link' : 'page', page_param: page.name, first_page: first, ...sz } as ImportPagination;
  }
  if (offset && size) {
    own(offset, size, ...SLICE.map((n) => find(params, [n])));
    return { style: 'offset', offset_param: offset.name, ...sz } as ImportPagination;
  }
  if (link) {
    own(size);
    return { style: 'link', ...sz } as ImportPagination;
  }
  return undefined;
}

/** A sort parameter whose values (an enum) are fields of the entity, with an asc/desc direction. */
function sort(params: OpParam[], fields: Set<string>, owned: Set<string>): ImportSort | undefined {
  const key = find(params, SORT);
  const dir = find(params, ORDER);
  if (!key || !dir) return undefined;
  const values: unknown[] = Array.isArray(key.schema.enum) ? key.schema.enum : [];
  const sortable = values.filter((v): v is string => typeof v === 'string' && fields.has(v));
  if (sortable.length === 0) return undefined;
  const dirs: unknown[] = Array.isArray(dir.schema.enum) ? dir.schema.enum : ['asc', 'desc'];
  const asc = dirs.find((v): v is string => typeof v === 'string' && /^asc/i.test(v));
  const desc = dirs.find((v): v is string => typeof v === 'string' && /^desc/i.test(v));
  if (!asc || !desc) return undefined;
  owned.add(key.name);
  owned.add(dir.name);
  return { param: key.name, order_param: dir.name, asc, desc, fields: sortable };
}

/** Paging, sorting and total of a list operation over an entity with `fields` (sortable ones). */
export function detectPaging(
  params: OpParam[],
  headers: string[],
  response: Schema | undefined,
  totalPath: string | undefined,
  fields: Set<string>,
): Paging {
  const owned = new Set<string>();
  const p = pagination(params, headers, response, owned);
  const s = sort(params, fields, owned);
  const h = headers.find((x) => /^x-total(-count)?$/i.test(x));
  const total = h ? { header: h } : totalPath ? { path: totalPath } : undefined;
  return { ...(p ? { pagination: p } : {}), ...(s ? { sort: s } : {}), ...(total ? { total } : {}), owned };
}
